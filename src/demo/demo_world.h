// The demo world: a few hundred GPUs across suppliers whose offers come from the public price
// lists in ../shared/data/prices (a small built-in set when that folder is absent), two tenants
// with projects, users and quotas, and sample jobs. Pure (reads no file: the shell passes the price
// lists in): it produces API documents; the server creates them through the same validated path
// as POST requests.
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

// The public price lists the demo prices its offers from, as the shell read them
// (io/files.h read_demo_price_files: <data dir>/prices/<provider>_vms.csv).
struct DemoPriceFile {
  std::string provider;  // one of demo_price_providers()
  std::string name;      // the file's name, for the price source ("lambda_vms.csv")
  std::string text;      // its CSV
};
struct DemoPriceFiles {
  std::string dir;  // where they came from, for the price source; "" when none was read
  std::vector<DemoPriceFile> files;
};

// The providers whose public lists the demo reads ("lambda", "runpod").
const std::vector<std::string>& demo_price_providers();

// A provider without a file is priced from the built-in excerpt (as is a model its list lacks);
// a file that does not parse is an error, not a silent fallback.
Result<DemoWorld> build_demo_world(const DemoPriceFiles& prices, const GpuCatalog& catalog);

}  // namespace gpurent
