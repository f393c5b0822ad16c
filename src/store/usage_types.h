// Rows of the usage store (see Store::insert_usage_batch and the usage_* tables of schema
// version 2): resolved samples — node ids and GPU indexes, job ids with their tenant and project —
// as the server hands them over after validation (meter/usage.h) and reference checks, and the
// points and totals the queries give back. Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"

namespace gpurent {

struct GpuUsageRow {
  std::string node_id;
  int64_t gpu = 0;  // index on the node
  TimeMs at = 0;
  int64_t utilization_pct = 0;
  std::optional<int64_t> memory_used_mib, power_mw, sm_clock_mhz, gr_engine_active_pct;
};

struct JobUsageRow {
  std::string job_id;
  std::string tenant_id;  // the job's, denormalized so per-tenant/project queries stay cheap
  std::string project_id;
  TimeMs at = 0;  // end of the interval the deltas cover
  int64_t storage_io_bytes = 0, egress_bytes = 0, input_tokens = 0, output_tokens = 0, requests = 0;
};

struct UsageBatchRows {
  std::string idempotency_key;
  std::string content_sha256;  // meter's usage_batch_digest: same key + other digest = conflict
  TimeMs received_at = 0;
  std::string submitted_by;  // user id
  std::vector<GpuUsageRow> gpu;
  std::vector<JobUsageRow> jobs;
  std::string scope = "platform";  // whose key: "tenant:<id>", "supplier:<id>" or "platform"; unique within it
};

struct UsageIngestOutcome {
  bool duplicate = false;   // the key was known with the same content: nothing was stored
  int64_t gpu_samples = 0;  // of the stored batch (the first one, for a duplicate)
  int64_t job_samples = 0;
  TimeMs received_at = 0;  // when the stored batch arrived
};

// Per metric over a point: samples that carried it, their sum and maximum (0 when n == 0).
struct UsageStat {
  int64_t n = 0, sum = 0, max = 0;
  bool operator==(const UsageStat&) const = default;
};

// One point of a GPU's series: a raw sample (minute = false, samples = 1) or a rolled-up minute
// (at = the minute's start).
struct GpuUsagePoint {
  TimeMs at = 0;
  bool minute = false;
  int64_t samples = 0;
  UsageStat utilization_pct, memory_used_mib, power_mw, sm_clock_mhz, gr_engine_active_pct;
  bool operator==(const GpuUsagePoint&) const = default;
};

struct JobUsagePoint {
  TimeMs at = 0;
  bool minute = false;
  int64_t samples = 0;
  int64_t storage_io_bytes = 0, egress_bytes = 0, input_tokens = 0, output_tokens = 0, requests = 0;
  bool operator==(const JobUsagePoint&) const = default;
};

// Sums of one job's deltas over a range (raw and rolled-up together).
struct JobUsageTotals {
  std::string job_id, tenant_id, project_id;
  int64_t samples = 0;
  int64_t storage_io_bytes = 0, egress_bytes = 0, input_tokens = 0, output_tokens = 0, requests = 0;
  bool operator==(const JobUsageTotals&) const = default;
};

// Which jobs: exactly one of job_id, project_id, tenant_id. Range [from, to); a rolled-up
// minute counts when its start lies in the range.
struct JobUsageFilter {
  std::string job_id, project_id, tenant_id;
  TimeMs from = 0, to = 0;
};

// Which GPUs and when, for Store::gpu_usage_buckets. node_id empty = every node; gpu -1 = every
// GPU of the node (a GPU index needs a node). Range [from, to): a raw sample counts when its time
// lies in it, a rolled-up minute when its start does. Buckets are [k × bucket_ms, (k+1) × bucket_ms)
// from the epoch (3600000: UTC hours); bucket_ms is a positive multiple of a minute, so every
// rolled-up minute falls in exactly one bucket.
struct GpuBucketQuery {
  std::string node_id;
  int64_t gpu = -1;
  TimeMs from = 0, to = 0;
  int64_t bucket_ms = kMsPerHour;
};

// One (node, GPU, bucket) with samples: how many utilization samples (a minute row adds its n),
// their sum and their maximum. The mean is util_sum / samples.
struct GpuBucket {
  std::string node_id;
  int64_t gpu = 0;
  TimeMs bucket = 0;  // the bucket's start
  int64_t samples = 0, util_sum = 0, util_max = 0;
  bool operator==(const GpuBucket&) const = default;
};

struct UsageRollupStats {
  int64_t gpu_samples = 0;  // raw rows folded into minutes (and deleted)
  int64_t job_samples = 0;
  int64_t batches_forgotten = 0;  // idempotency keys dropped
};

}  // namespace gpurent
