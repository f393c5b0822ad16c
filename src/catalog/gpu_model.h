// One accelerator model as its datasheet describes it (GPU, or an NPU such as Huawei's Ascend),
// with the source of every figure. Entries of the GPU catalog (gpu_catalog.h) and the "hardware
// truth" offers and contracts refer to ("H100 SXM5 80GB, no substitution"; minimum FP16 TFLOPS).
// All figures are integers: TFLOPS in tenths, bandwidth in GB/s (1e9 B/s).
// Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/fields.h"
#include "core/result.h"

namespace gpurent {

using json = nlohmann::json;

enum class Vendor { kNvidia, kHuawei };
enum class FormFactor { kPcie, kSxm, kOam };
enum class MemoryType { kHbm2, kHbm2e, kHbm3, kHbm3e, kGddr6 };

inline constexpr EnumEntry<Vendor> kVendorNames[] = {{Vendor::kNvidia, "nvidia"}, {Vendor::kHuawei, "huawei"}};
inline constexpr EnumEntry<FormFactor> kFormFactorNames[] = {
    {FormFactor::kPcie, "pcie"}, {FormFactor::kSxm, "sxm"}, {FormFactor::kOam, "oam"}};
inline constexpr EnumEntry<MemoryType> kMemoryTypeNames[] = {{MemoryType::kHbm2, "hbm2"},
                                                             {MemoryType::kHbm2e, "hbm2e"},
                                                             {MemoryType::kHbm3, "hbm3"},
                                                             {MemoryType::kHbm3e, "hbm3e"},
                                                             {MemoryType::kGddr6, "gddr6"}};

// A figure that may be unpublished is a std::optional: nullopt = not published (sources says
// so), 0 = the part lacks it (no BF16 on Volta, no NVLink on a T4).
struct GpuModel {
  std::string id;    // slug, e.g. "h100-sxm5-80gb"
  std::string name;  // "NVIDIA H100 SXM5 80GB"
  Vendor vendor = Vendor::kNvidia;
  FormFactor form_factor = FormFactor::kPcie;
  int64_t memory_gib = 0;  // nominal capacity as the vendor states it
  MemoryType memory_type = MemoryType::kHbm2;
  std::optional<int64_t> memory_bandwidth_gbps;
  std::optional<int64_t> fp16_tflops_x10;  // dense (no sparsity), tensor cores where present; 312 -> 3120
  std::optional<int64_t> bf16_tflops_x10;
  std::optional<int64_t> fp8_tflops_x10;
  std::optional<int64_t> nvlink_gbps;  // NVLink or the vendor's equivalent, bidirectional total
  std::optional<int64_t> pcie_gen;
  std::optional<int64_t> tdp_watts;
  bool verified = true;  // false: figures come from third-party material only
  std::vector<std::string> aliases;  // spellings used by traces, price lists, nvidia-smi
  // Figure name ("memory_bandwidth_gbps", ...) or "default" -> where the figure comes from, or
  // why it is absent.
  std::map<std::string, std::string> sources;

  // The source of one figure: its own entry, else "default", else "".
  const std::string& source_of(const std::string& figure) const;

  bool operator==(const GpuModel&) const = default;
};

// Names of the figures a source may be given for (the keys of `sources` besides "default").
const std::vector<std::string>& gpu_figure_names();

// Reads one catalog entry. Errors go to `f`'s FieldErrors with full paths ("models[3].pcie_gen").
// Checks every figure's range, that every present figure has a source and every absent optional
// figure has a note in sources saying why.
GpuModel read_gpu_model(Fields& f);

// The entry as the catalog file spells it; read_gpu_model(to_json(m)) == m. TFLOPS are decimal
// strings ("312", "18.7"); unpublished figures are left out.
json to_json(const GpuModel& m);

// "312" / 312 -> 3120, "18.7" -> 187; at most one decimal, not negative. Also used for
// contract minimums.
Result<int64_t> parse_tflops_x10(const json& v);
std::string format_tflops_x10(int64_t x10);

}  // namespace gpurent
