// Reading NVIDIA's dcgm-exporter: a parser of the Prometheus text exposition format (version
// 0.0.4: "# HELP"/"# TYPE" lines, `name{label="value",...} value [timestamp_ms]`, escaped label
// values) and the mapping of the DCGM fields gpurent meters onto GPU samples:
//
//   DCGM_FI_DEV_GPU_UTIL           %            -> utilization_pct
//   DCGM_FI_DEV_FB_USED            MiB          -> memory_used_mib
//   DCGM_FI_DEV_POWER_USAGE        W (float)    -> power_mw (x1000, rounded)
//   DCGM_FI_DEV_SM_CLOCK           MHz          -> sm_clock_mhz
//   DCGM_FI_PROF_GR_ENGINE_ACTIVE  ratio 0..1   -> gr_engine_active_pct (x100, rounded)
//
// Series are grouped per GPU by the exporter's `UUID` label (older exporters: `uuid`), else by
// (`Hostname`, `gpu`). MIG-instance series (a non-empty `GPU_I_ID` label) are left out: samples
// are per physical GPU. Other metrics are ignored. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "meter/usage.h"

namespace gpurent {

struct PromLabel {
  std::string name;
  std::string value;  // unescaped
  bool operator==(const PromLabel&) const = default;
};

struct PromSample {
  std::string name;
  std::vector<PromLabel> labels;  // in the order written
  double value = 0;               // may be NaN or +-Inf
  std::optional<int64_t> timestamp_ms;
  size_t line = 0;  // 1-based line in the exposition

  // The label's value, or nullptr when the series has no such label.
  const std::string* label(std::string_view name) const;
};

// Parses a whole exposition. A malformed line is an error (kInvalid) whose field is "line N".
Result<std::vector<PromSample>> parse_prometheus_text(std::string_view text);

// One GPU's readings from one scrape.
struct DcgmGpuReading {
  std::string uuid;            // "" when the exporter gave none
  std::optional<int64_t> gpu;  // the exporter's `gpu` label: the index nvidia-smi uses
  std::string hostname;        // `Hostname` label ("" when absent)
  std::string model_name;      // `modelName` label
  std::optional<TimeMs> at;    // the exposition's timestamp, when every mapped series had one
  GpuMetrics metrics;          // utilization_pct from GPU_UTIL, else from GR_ENGINE_ACTIVE

  bool operator==(const DcgmGpuReading&) const = default;
};

struct DcgmReadings {
  std::vector<DcgmGpuReading> gpus;  // in order of first appearance
  std::vector<std::string> skipped;  // GPUs left out, with why (e.g. no utilization reported)
};

// Maps the DCGM series of a parsed exposition to one reading per GPU. A value outside its
// metric's range (e.g. utilization 130, negative power) is an error naming the line; NaN values
// are treated as absent. Repeated series of one GPU and field (dcgm-exporter repeats a shared
// GPU once per pod) keep the first value.
Result<DcgmReadings> map_dcgm(std::span<const PromSample> samples);

}  // namespace gpurent
