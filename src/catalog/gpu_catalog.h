// The GPU catalog: the datasheet figures of every accelerator model gpurent knows
// (data/gpu_catalog.yaml), looked up by id or by any alias traces, price lists and nvidia-smi
// use ("V100M32", "H100-SXM", "Tesla T4"), case-insensitively.
// File format: a map with one key, `models`, a list of entries as gpu_model.h describes.
// Loading validates every entry (errors name the field, e.g. "models[3].memory_bandwidth_gbps")
// and rejects an id or alias used twice, ignoring case.
// The shell reads the file (io/files.h load_catalog_file); this module reads no file.
// Thread-safety: immutable after load; safe to share for concurrent reads. Pointers returned by
// find() stay valid as long as the catalog object they came from.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "catalog/gpu_model.h"
#include "core/result.h"

namespace gpurent {

class GpuCatalog {
 public:
  GpuCatalog() = default;  // empty

  // YAML (or JSON) catalog text.
  static Result<GpuCatalog> parse(const std::string& yaml_text);
  // An already-parsed document ({"models": [...]}).
  static Result<GpuCatalog> from_json(const json& doc);

  // The model with this id or alias (ASCII case-insensitive), or nullptr.
  const GpuModel* find(std::string_view id_or_alias) const;
  // In file order.
  const std::vector<GpuModel>& models() const { return models_; }

 private:
  std::vector<GpuModel> models_;
  std::unordered_map<std::string, size_t> index_;  // lowercased id or alias -> position in models_
};

// Reads the required string field `key` of f as a catalog model id or alias; records "is
// required" or "unknown GPU model" on the field and returns nullptr when it is not one.
const GpuModel* read_gpu_model_ref(Fields& f, const GpuCatalog& catalog, const char* key);

}  // namespace gpurent
