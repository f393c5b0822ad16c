// Workload fingerprint: from one job's profile (GPU model and count, utilization or achieved
// FLOP/s, memory traffic, communication and data-loader shares, CPU use, step time, price) it
// names the bottleneck (compute, memory bandwidth, communication, I/O, CPU) with roofline
// arithmetic against the GPU catalog's datasheet peaks, and recommends GPU model, count,
// interconnect, storage and CPU cores with the expected step time and cost per step before and
// after. Every number comes with its arithmetic (to_json's "steps"). docs/advisor/fingerprint.md
// states the step-time model, the thresholds and the JSON schema.
//
// Units: shares and utilizations in per-mille (350 = 35.0 %), time in microseconds, FLOP/s in
// TFLOPS x10 (the catalog's unit), memory traffic in GB/s (1e9 B/s), storage I/O in bytes/s.
// Ratios of physical quantities are integer ratios (no floating point); money is exact
// (core/money.h) and rounded half to even once, at the micro-unit, per reported amount.
// Pure functions and value types; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advisor/advisor_step.h"
#include "catalog/gpu_catalog.h"
#include "core/clock.h"
#include "core/fields.h"
#include "core/money.h"
#include "core/result.h"

namespace gpurent {

using json = nlohmann::json;

// The part of a step that is the largest loss (at least kLossThresholdPermille of the step), or,
// when no loss is that large, what bounds the GPU's own work (compute or memory bandwidth).
enum class WorkloadBottleneck { kCompute, kMemoryBandwidth, kCommunication, kIo, kCpu, kUndetermined };
inline constexpr EnumEntry<WorkloadBottleneck> kWorkloadBottleneckNames[] = {
    {WorkloadBottleneck::kCompute, "compute"},
    {WorkloadBottleneck::kMemoryBandwidth, "memory_bandwidth"},
    {WorkloadBottleneck::kCommunication, "communication"},
    {WorkloadBottleneck::kIo, "io"},
    {WorkloadBottleneck::kCpu, "cpu"},
    {WorkloadBottleneck::kUndetermined, "undetermined"}};

enum class GpuInterconnect { kPcie, kNvlink };
inline constexpr EnumEntry<GpuInterconnect> kGpuInterconnectNames[] = {{GpuInterconnect::kPcie, "pcie"},
                                                                       {GpuInterconnect::kNvlink, "nvlink"}};

// Thresholds (per-mille) the classification uses; docs/advisor/fingerprint.md explains each.
inline constexpr int64_t kLossThresholdPermille = 200;         // a loss this large is "the" bottleneck
inline constexpr int64_t kCpuSaturatedPermille = 900;          // host CPU this busy is saturated
inline constexpr int64_t kMemoryBoundBandwidthPermille = 600;  // bytes/s this close to peak: memory-bound
inline constexpr int64_t kStorageSaturatedPermille = 900;      // storage read this close to capacity
inline constexpr int64_t kCostTieBp = 100;                     // options within 1 % cost the same
inline constexpr int64_t kMinChangeGainBp = 500;               // a change must save 5 % or be 5 % faster
inline constexpr int64_t kDefaultNetworkGbpsPerGpu = 50;       // 200 Gb/s InfiniBand HDR, both ways
inline constexpr int64_t kDefaultMaxCpuCoresPerGpu = 16;
inline constexpr int64_t kDefaultGpusPerNode = 8;
inline constexpr int64_t kMaxFingerprintOffers = 64;

// A GPU model someone offers at a price per GPU-hour (in the input's currency).
struct FingerprintOffer {
  std::string name;       // label shown in the output; defaults to "offers[i]"
  std::string gpu_model;  // catalog id (aliases are resolved when parsing)
  Money price_per_gpu_hour;
};

// Storage faster than the current one; read_bytes_per_s absent = sized to what the job needs.
struct FingerprintStorage {
  std::optional<int64_t> read_bytes_per_s;
  Money price_per_hour;  // for the whole job; zero = included in the GPU price
};

struct FingerprintInput {
  Currency currency = Currency::kUSD;
  std::string source = "profile";  // "profile" (given) or "metered" (fingerprint_input_from_metered)
  std::string gpu_model;           // catalog id
  int64_t gpu_count = 1;
  int64_t gpus_per_node = kDefaultGpusPerNode;
  std::optional<GpuInterconnect> interconnect;  // absent: what the model's form factor gives
  std::optional<int64_t> peak_memory_mib;       // per GPU
  std::optional<int64_t> gpu_utilization_permille;
  std::optional<int64_t> achieved_tflops_x10;         // per GPU, FP16
  std::optional<int64_t> memory_bandwidth_used_gbps;  // per GPU, achieved
  std::optional<int64_t> nccl_share_permille;         // exposed communication, of step time
  std::optional<int64_t> data_wait_share_permille;    // exposed data-loader wait, of step time
  std::optional<int64_t> io_bytes_per_s;              // the job's storage reads
  std::optional<int64_t> storage_read_bytes_per_s;    // what the current storage can deliver
  std::optional<int64_t> cpu_utilization_permille;    // of the cores the job holds
  std::optional<int64_t> cpu_cores_per_gpu;
  int64_t max_cpu_cores_per_gpu = kDefaultMaxCpuCoresPerGpu;
  std::optional<Money> price_per_cpu_core_hour;  // absent: cores come with the GPU price
  std::optional<int64_t> step_time_ms;           // absent: the unit is one hour of today's work
  // Metered: the output tokens the job produced per hour of its runs (an inference job's); not
  // used by the fingerprint itself, only carried to the quotes advisor's cost per million tokens.
  std::optional<int64_t> output_tokens_per_hour;
  Money price_per_gpu_hour;
  std::optional<FingerprintStorage> faster_storage;
  int64_t network_gbps_per_gpu = kDefaultNetworkGbpsPerGpu;  // inter-node, bidirectional
  std::vector<FingerprintOffer> offers;
};

// Validates a profile (schema: docs/advisor/fingerprint.md). GPU models are resolved against
// `catalog` (ids or aliases); errors name the full field path and the reason.
Result<FingerprintInput> parse_fingerprint_input(const json& body, const GpuCatalog& catalog);

// What the meter and the usage store know about a finished or running job.
struct MeteredJobUsage {
  int64_t avg_gpu_utilization_permille = 0;  // mean over the job's GPUs and samples
  int64_t peak_memory_mib = 0;               // highest framebuffer use of any of its GPUs
  int64_t storage_io_bytes = 0;              // sum of the job's storage I/O deltas
  DurationMs duration_ms = 0;                // the span those sums cover
};

// A profile derived from metered samples: utilization, peak memory and I/O rate (bytes over the
// duration, rounded half to even to a byte per second). Shares and step time stay unknown; the
// caller may fill them (and offers) before compute_fingerprint. Checks ranges and the model.
Result<FingerprintInput> fingerprint_input_from_metered(const std::string& gpu_model, int64_t gpu_count,
                                                        Money price_per_gpu_hour, const MeteredJobUsage& usage,
                                                        const GpuCatalog& catalog);

// One line of arithmetic the output shows: what it computes (a message code, rendered in the
// reader's language), the arithmetic itself (language-neutral) and its value.
using FingerprintStep = AdvisorStep;

// The step split into parts, per-mille of today's step time (sum 1000).
struct FingerprintParts {
  int64_t gpu = 0;            // GPU busy on kernels
  int64_t data_wait = 0;      // exposed data-loader wait
  int64_t communication = 0;  // exposed NCCL time
  int64_t host = 0;           // exposed host-side (CPU) time
  int64_t unattributed = 0;   // idle time no measurement explains
};

struct FingerprintRoofline {
  std::optional<int64_t> peak_tflops_x10, peak_bandwidth_gbps;
  std::optional<int64_t> compute_efficiency_permille;    // achieved / peak FP16
  std::optional<int64_t> bandwidth_efficiency_permille;  // bytes/s / peak bandwidth
  std::optional<int64_t> arithmetic_intensity_x10;       // FLOP per byte, tenths
  std::optional<int64_t> ridge_point_x10;                // peak FLOP/s / peak bytes/s, tenths
  bool memory_bound = false;
};

// One configuration the advisor evaluated.
struct FingerprintOption {
  std::string label;  // where the price comes from: "current_price" (today's), an offer's name or "offers[i]"
  std::string gpu_model;
  int64_t gpu_count = 0;
  GpuInterconnect interconnect = GpuInterconnect::kPcie;
  int64_t link_gbps = 0;  // the slowest link the all-reduce crosses, GB/s bidirectional
  bool faster_storage = false;
  std::optional<int64_t> required_read_bytes_per_s;  // with faster storage, when the I/O rate is known
  int64_t required_read_speedup_permille = 0;        // read time now / read time needed (faster storage)
  std::optional<int64_t> cpu_cores_per_gpu;
  int64_t gpu_us = 0, host_us = 0, read_us = 0, communication_us = 0;  // parts of the new step
  int64_t step_us = 0;                                                 // max(gpu + host, read) + communication
  Money cost_per_hour;                                                 // GPUs + extra cores + faster storage
  Money cost_per_step;                                                 // cost_per_hour x step / 1 h, half to even
  Money cost_per_1000_steps;
};

// A catalog model no offer prices, not slower than today: its step time at today's count, and the
// price per GPU-hour at which it would cost what today's configuration costs per step. At most 8,
// fastest first.
struct UnpricedAlternative {
  std::string gpu_model;
  int64_t step_us = 0;
  int64_t speedup_permille = 0;  // today's step / its step
  Money break_even_price_per_gpu_hour;
};

struct FingerprintResult {
  FingerprintInput input;
  bool step_time_given = false;  // false: "step" = one hour of today's work
  int64_t step_us = 0;
  FingerprintParts parts;
  std::string data_wait_cause;  // "storage", "cpu" or "" (no data wait)
  FingerprintRoofline roofline;
  WorkloadBottleneck bottleneck = WorkloadBottleneck::kUndetermined;
  std::vector<WorkloadBottleneck> secondary;  // other losses of at least the threshold
  GpuInterconnect interconnect_advice = GpuInterconnect::kPcie;
  Message interconnect_reason;
  FingerprintOption current;
  FingerprintOption recommended;
  std::optional<FingerprintOption> fastest_at_same_cost;  // a faster option as cheap as the recommended
  std::vector<FingerprintOption> options;                 // cheapest first, at most 12, feasible ones only
  int64_t options_evaluated = 0;
  std::vector<UnpricedAlternative> alternatives;
  // The modelled time of today's unit of work at today's GPU count on every catalog model the job
  // fits (slower ones too; today's model is step_us): the quotes advisor prices offers per unit
  // of work with it (docs/advisor/quotes.md).
  std::map<std::string, int64_t> step_us_by_model;
  int64_t speedup_permille = 1000;  // current step / recommended step
  int64_t cost_change_bp = 0;       // (recommended - current) / current cost per step; < 0 cheaper
  Message summary;
  std::vector<Message> notes;  // what the numbers cannot say by themselves, one sentence each
  std::vector<FingerprintStep> steps;
};

// Classifies and recommends; deterministic. Errors: the model is not in `catalog`, no GPU
// activity measure (utilization or achieved FLOP/s) was given, or money overflows.
Result<FingerprintResult> compute_fingerprint(const FingerprintInput& in, const GpuCatalog& catalog);

json to_json(const FingerprintResult& r);

}  // namespace gpurent
