// The demo world: a few hundred GPUs across suppliers whose offers come from the public price
// lists in ../shared/data/prices (a small built-in set when that folder is absent), two tenants
// with projects, users and quotas, and sample jobs. Pure: it produces API documents; the server
// creates them through the same validated path as POST requests.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "core/result.h"

namespace gpurent {

struct DemoObject {
  std::string kind;       // "suppliers", "nodes", "offers", "measurements", "tenants", "projects", "users", "reservations", "contracts", "jobs"
  nlohmann::json body;    // the POST body
  std::string as_tenant;  // empty: created by the operator; else by the named tenant's admin user
};

struct DemoWorld {
  std::vector<DemoObject> objects;  // in creation order (referenced objects first)
  std::string price_source;         // e.g. "../shared/data/prices (lambda_vms.csv, runpod_vms.csv)" or "built-in"
};

// data_dir: a folder laid out like ../shared/data (prices/…); empty or missing -> built-in prices.
Result<DemoWorld> build_demo_world(const std::string& data_dir, const GpuCatalog& catalog);

// $GPURENT_DATA_DIR if set, else "<source dir>/../shared/data" when it exists, else "".
std::string default_data_dir();

}  // namespace gpurent
