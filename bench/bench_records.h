// Records the store benchmarks write: a job's document as the API stores one, and a record with its
// id made from a number. Header-only; for bench/ only.
#pragma once

#include <cstdio>
#include <string>

#include "store/store.h"

namespace gpurent::bench {

inline nlohmann::json job_body(int i) {
  return {{"name", "job-" + std::to_string(i)},
          {"project", "vision"},
          {"kind", "training"},
          {"workers", 4},
          {"gpus_per_worker", 8},
          {"image", "nvcr.io/nvidia/pytorch:24.10-py3"},
          {"command", {"python", "train.py"}}};
}

// `kind` record number i: id "<prefix>_<i as 16 hex digits>", created and updated at 1.
inline Record numbered_record(const std::string& kind, const char* prefix, int i, std::string name,
                              std::string tenant_id, std::string state, nlohmann::json body) {
  Record r;
  r.kind = kind;
  char id[40];
  std::snprintf(id, sizeof id, "%s_%016x", prefix, i);
  r.id = id;
  r.name = std::move(name);
  r.tenant_id = std::move(tenant_id);
  r.state = std::move(state);
  r.created_at = r.updated_at = 1;
  r.body = std::move(body);
  return r;
}

}  // namespace gpurent::bench
