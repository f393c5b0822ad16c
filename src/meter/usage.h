// Usage samples as agents and scrapers report them, and the validation of one ingest batch
// (POST /api/v1/usage; schema in docs/resources/usage.md). Pure: no I/O, time is passed in.
// GPU samples are gauges read at `at`; job samples are counters as DELTAS for the interval that
// ends at `at` (so summing them over a period gives the period's usage). Integers only: the API
// refuses JSON floats for usage as it does for money.
// Value types and free functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace gpurent {

// Hard limits of one batch and of the times it may carry. A sample older than kSampleMaxAgeMs is
// refused; the store forgets idempotency keys kIdempotencyKeyMemoryMs after their batch arrived,
// which is longer than any accepted sample can be old, so a re-sent batch is never counted twice.
inline constexpr size_t kMaxSamplesPerBatch = 100'000;
inline constexpr DurationMs kSampleMaxAgeMs = 30LL * 24 * 3600 * 1000;
inline constexpr DurationMs kSampleMaxAheadMs = 10LL * 60 * 1000;  // agent clock skew tolerated
inline constexpr DurationMs kIdempotencyKeyMemoryMs = 31LL * 24 * 3600 * 1000;
static_assert(kIdempotencyKeyMemoryMs > kSampleMaxAgeMs + kSampleMaxAheadMs);

// Upper bounds of the metrics (generous: they catch unit mistakes, not real hardware).
inline constexpr int64_t kMaxMemoryMib = int64_t{1} << 24;  // 16 TiB
inline constexpr int64_t kMaxPowerMw = 10'000'000;          // 10 kW
inline constexpr int64_t kMaxClockMhz = 100'000;
inline constexpr int64_t kMaxGpuIndex = 1023;
// 10^15 (1 PB, a quadrillion tokens) per sample — a meter may report a day's delta at once — and
// per job and minute over all its samples (the server's ingest): a minute's roll-up row holds at
// most this, so folding the minute never overflows, whatever a faulty meter sends.
inline constexpr int64_t kMaxCounterDelta = 1'000'000'000'000'000;

struct GpuMetrics {
  int64_t utilization_pct = 0;             // 0..100, required
  std::optional<int64_t> memory_used_mib;  // framebuffer in use
  std::optional<int64_t> power_mw;         // board power, milliwatts
  std::optional<int64_t> sm_clock_mhz;
  std::optional<int64_t> gr_engine_active_pct;  // DCGM's GR_ENGINE_ACTIVE as 0..100

  bool operator==(const GpuMetrics&) const = default;
};

// One GPU reading. The GPU is named either by node (id or name) + index, or by its UUID; the
// server resolves both to (node id, index).
struct GpuSample {
  TimeMs at = 0;
  std::string node;  // empty when uuid is used
  std::optional<int64_t> gpu;
  std::string uuid;  // empty when node + gpu are used
  GpuMetrics metrics;

  bool operator==(const GpuSample&) const = default;
};

struct JobCounters {
  int64_t storage_io_bytes = 0;
  int64_t egress_bytes = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t requests = 0;

  JobCounters& operator+=(const JobCounters& o);
  bool operator==(const JobCounters&) const = default;
};

struct JobSample {
  TimeMs at = 0;    // end of the interval the deltas cover
  std::string job;  // job id (or name, resolved by the server)
  JobCounters delta;

  bool operator==(const JobSample&) const = default;
};

struct UsageBatch {
  std::string idempotency_key;  // 1..128 of [A-Za-z0-9._:-]
  std::vector<GpuSample> gpu_samples;
  std::vector<JobSample> job_samples;

  size_t size() const { return gpu_samples.size() + job_samples.size(); }
};

struct UsageParseOptions {
  TimeMs now = 0;  // samples must lie in [now - kSampleMaxAgeMs, now + kSampleMaxAheadMs]
  size_t max_samples = kMaxSamplesPerBatch;
  // And not before this: earlier samples fall in a month closed for invoicing (its invoices are
  // issued, or due), where no invoice would ever bill them.
  TimeMs not_before = INT64_MIN;
};

// Validates a batch body. Errors are kInvalid and name each offending field with its full path
// ("gpu_samples[3].utilization_pct: must be at most 100 (got 130)"); unknown keys are errors.
// Two GPU samples of one batch for the same GPU (as written) and time are an error.
Result<UsageBatch> parse_usage_batch(const nlohmann::json& body, const UsageParseOptions& opts);

// The same validation straight from JSON text without building a document (several times
// faster: the ingest hot path). Returns the batch exactly when parse_usage_batch would accept the
// parsed text, and the same batch; nullopt for anything else (invalid, or a form it leaves to the
// DOM path such as nulls or repeated keys): then run parse_usage_batch for the errors.
std::optional<UsageBatch> parse_usage_batch_fast(std::string_view json_text, const UsageParseOptions& opts);

// True when s is a valid idempotency key.
bool valid_idempotency_key(std::string_view s);

// Lowercase hex SHA-256 of a canonical encoding of the batch's samples (order-sensitive; the
// key itself is not part of it). Two sends of the same batch hash equal whatever their JSON
// spacing or key order; any changed value changes the digest.
std::string usage_batch_digest(const UsageBatch& b);

}  // namespace gpurent
