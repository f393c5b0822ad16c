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
// (host, `gpu`); the host label is `hostname` as current dcgm-exporter releases write it (its
// PR #655), else the older `Hostname`. Other metrics are ignored. Pure; thread-safe.
//
// MIG: a MIG-enabled GPU has no DCGM_FI_DEV_GPU_UTIL; dcgm-exporter reports it per GPU instance
// (series with a non-empty `GPU_I_ID`, its profile in `GPU_I_PROFILE`, e.g. "3g.40gb", and the
// physical GPU's `gpu` and `UUID`). Samples stay per physical GPU, each instance counted as the
// fraction it is: utilization_pct and gr_engine_active_pct = the instances' GR_ENGINE_ACTIVE
// weighted by their compute slices (the profile's "Ng") over the GPU's slices (7; 4 on an A30), so
// idle slices count as idle; memory_used_mib = the instances' FB_USED summed. Power and SM clock
// are the device's own. A GPU an instance of which has no activity or no readable profile is left
// out (skipped, with why): its utilization cannot be known.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "meter/gpu_health.h"
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

// Limits on what one exposition may hold (an exporter is not trusted to be sane).
inline constexpr size_t kMaxPromLabels = 64;     // labels on one series
inline constexpr size_t kMaxDcgmGpus = 1024;     // distinct GPUs
inline constexpr size_t kMaxMigInstances = 64;   // GPU_I_ID values on one GPU

// Parses a whole exposition. A malformed line is an error (kInvalid) whose field is "line N".
// With `keep`, every line is still checked but only the samples whose metric it keeps are
// returned (a scrape keeps what map_dcgm reads, not the exporter's every other series).
Result<std::vector<PromSample>> parse_prometheus_text(std::string_view text,
                                                      bool (*keep)(std::string_view name) = nullptr);

// Whether map_dcgm reads the metric (a `keep` for parse_prometheus_text).
bool dcgm_metric_read(std::string_view name);

// One MIG GPU instance of a reading.
struct DcgmMigInstance {
  std::string id;       // GPU_I_ID
  std::string profile;  // GPU_I_PROFILE, e.g. "1g.10gb"
  int64_t slices = 0;   // compute slices of the profile (the "1" of "1g.10gb")
  int64_t gr_engine_active_pct = 0;
  std::optional<int64_t> memory_used_mib;

  bool operator==(const DcgmMigInstance&) const = default;
};

// One GPU's readings from one scrape.
struct DcgmGpuReading {
  std::string uuid;            // "" when the exporter gave none
  std::optional<int64_t> gpu;  // the exporter's `gpu` label: the index nvidia-smi uses
  std::string hostname;        // `Hostname` (or `hostname`) label ("" when absent)
  std::string model_name;      // `modelName` label
  std::optional<TimeMs> at;    // the exposition's timestamp, when every mapped series had one
  GpuMetrics metrics;          // utilization_pct from GPU_UTIL, else from GR_ENGINE_ACTIVE
  std::vector<DcgmMigInstance> mig;  // a MIG-enabled GPU's instances (metrics are their sum)
  int64_t mig_slices = 0;            // the GPU's compute slices when mig is not empty
  GpuHealth health;                  // XID, ECC, retired pages… (meter/gpu_health.h)

  bool operator==(const DcgmGpuReading&) const = default;
};

struct DcgmReadings {
  std::vector<DcgmGpuReading> gpus;  // in order of first appearance
  std::vector<std::string> skipped;  // GPUs left out, with why (e.g. no utilization reported)
  // Every GPU that reported a health field (meter/gpu_health.h), metered or not: identity and health.
  std::vector<DcgmGpuReading> health;
};

// The compute slices of a MIG profile ("3g.40gb" -> 3, "1g.10gb+me" -> 1), 0 when unreadable; and
// of a GPU model by its exporter name (an A30 has 4, the A100, H100, H200 and B200 have 7).
int64_t mig_profile_slices(std::string_view profile);
int64_t mig_gpu_slices(std::string_view model_name);

// Maps the DCGM series of a parsed exposition to one reading per GPU (and the health fields of
// the table in meter/gpu_health.h, device-level also on MIG). A value outside its
// metric's range (e.g. utilization 130, negative power) is an error naming the line; NaN values
// are treated as absent. Repeated series of one GPU and field (dcgm-exporter repeats a shared
// GPU once per pod) keep the first value.
Result<DcgmReadings> map_dcgm(std::span<const PromSample> samples);

}  // namespace gpurent
