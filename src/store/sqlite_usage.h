// The SQL behind the Store's usage methods (tables of schema version 2), as free functions over
// one connection: the writer inside a transaction for insert and rollup, reader connections for
// the queries. Not thread-safe: the caller owns `db` for the duration of the call.
#pragma once

#include <string>
#include <vector>

#include "store/sqlite_db.h"
#include "store/usage_types.h"

namespace gpurent {

// Must run inside a write transaction (it is several statements).
Result<UsageIngestOutcome> store_usage_batch(Db& db, const UsageBatchRows& b);
Result<UsageRollupStats> roll_up_usage_rows(Db& db, TimeMs raw_before, TimeMs keys_before);

Result<std::vector<GpuUsagePoint>> query_gpu_usage(Db& db, const std::string& node_id, int64_t gpu, TimeMs from,
                                                   TimeMs to, int limit);
Result<std::vector<JobUsagePoint>> query_job_usage(Db& db, const std::string& job_id, TimeMs from, TimeMs to,
                                                   int limit);
Result<std::vector<std::pair<std::string, JobUsagePoint>>> query_tenant_job_usage(Db& db, const std::string& tenant_id,
                                                                                  TimeMs from, TimeMs to, int limit);
Result<std::vector<JobUsageTotals>> query_job_usage_totals(Db& db, const JobUsageFilter& f);
// Utilization per (node, GPU, bucket) (sqlite_usage_buckets.cc), ordered by node, GPU, bucket.
Result<std::vector<GpuBucket>> query_gpu_usage_buckets(Db& db, const GpuBucketQuery& q);

}  // namespace gpurent
