// Usage on PostgreSQL, the read side: series of raw samples and rolled-up minutes merged in time
// order, totals per job, and GPU utilization per time bucket aggregated in SQL. Same contract as
// sqlite_usage.cc and sqlite_usage_buckets.cc. PostgreSQL sums bigints as numeric: the sums are
// cast back to bigint, so one past int64 is an error, as on SQLite, not a number no reader holds.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "store/pg_queries.h"
#include "store/store_rows.h"

namespace gpurent {
namespace {

const std::string kGpuSeries =
    "SELECT minute AS t, 1 AS rolled, samples, samples, util_sum, util_max, mem_n, mem_sum, mem_max, power_n,"
    " power_sum, power_max, clock_n, clock_sum, clock_max, gr_n, gr_sum, gr_max FROM usage_gpu_minutes"
    " WHERE node_id = $1 AND gpu = $2 AND minute >= $3 AND minute < $4"
    " UNION ALL SELECT at, 0, 1, 1, utilization_pct, utilization_pct,"
    " (memory_used_mib IS NOT NULL)::int, coalesce(memory_used_mib, 0), coalesce(memory_used_mib, 0),"
    " (power_mw IS NOT NULL)::int, coalesce(power_mw, 0), coalesce(power_mw, 0),"
    " (sm_clock_mhz IS NOT NULL)::int, coalesce(sm_clock_mhz, 0), coalesce(sm_clock_mhz, 0),"
    " (gr_engine_active_pct IS NOT NULL)::int, coalesce(gr_engine_active_pct, 0), coalesce(gr_engine_active_pct, 0)"
    " FROM usage_gpu_samples WHERE node_id = $1 AND gpu = $2 AND at >= $3 AND at < $4"
    " ORDER BY 1, 2 DESC LIMIT $5";
const std::string kJobSeries =
    "SELECT minute AS t, 1 AS rolled, samples, storage_io_bytes, egress_bytes, input_tokens, output_tokens, requests"
    " FROM usage_job_minutes WHERE job_id = $1 AND minute >= $2 AND minute < $3"
    " UNION ALL SELECT at, 0, 1, storage_io_bytes, egress_bytes, input_tokens, output_tokens, requests"
    " FROM usage_job_samples WHERE job_id = $1 AND at >= $2 AND at < $3 ORDER BY 1, 2 DESC LIMIT $4";
const std::string kTenantJobSeries =
    "SELECT j.job_id, m.minute, 1, m.samples, m.storage_io_bytes, m.egress_bytes, m.input_tokens, m.output_tokens,"
    " m.requests FROM usage_jobs j JOIN usage_job_minutes m ON m.job_id = j.job_id"
    " WHERE j.tenant_id = $1 AND m.minute >= $2 AND m.minute < $3"
    " UNION ALL SELECT j.job_id, s.at, 0, 1, s.storage_io_bytes, s.egress_bytes, s.input_tokens, s.output_tokens,"
    " s.requests FROM usage_jobs j JOIN usage_job_samples s ON s.job_id = j.job_id"
    " WHERE j.tenant_id = $1 AND s.at >= $2 AND s.at < $3 ORDER BY 1, 2, 3 DESC LIMIT $4";
// One statement for every job of the filter (SQLite asks per job); HAVING drops the jobs with no
// usage in the range, as SQLite's loop does.
std::string totals_sql(const char* column) {
  return std::string(
             "SELECT j.job_id, j.tenant_id, j.project_id, sum(u.n)::bigint, sum(u.s)::bigint, sum(u.e)::bigint,"
             " sum(u.i)::bigint, sum(u.o)::bigint, sum(u.r)::bigint"
             " FROM usage_jobs j JOIN ("
             " SELECT job_id, samples AS n, storage_io_bytes AS s, egress_bytes AS e, input_tokens AS i,"
             " output_tokens AS o, requests AS r FROM usage_job_minutes WHERE minute >= $2 AND minute < $3"
             " UNION ALL SELECT job_id, 1, storage_io_bytes, egress_bytes, input_tokens, output_tokens, requests"
             " FROM usage_job_samples WHERE at >= $2 AND at < $3) u ON u.job_id = j.job_id WHERE j.") +
         column + " = $1 GROUP BY j.job_id, j.tenant_id, j.project_id HAVING sum(u.n) > 0 ORDER BY j.job_id";
}
const std::array<std::string, 3> kTotals = {totals_sql("job_id"), totals_sql("project_id"), totals_sql("tenant_id")};

// As sqlite_usage_buckets.cc: one statement text per filter shape; ((t % b) + b) % b floors
// negative times too.
std::string bucket_sql(bool node, bool gpu) {
  std::string where;
  if (node) where += " node_id = $4 AND";
  if (gpu) where += " gpu = $5 AND";
  const std::string minutes =
      "SELECT node_id, gpu, minute - ((minute % $3) + $3) % $3 AS b, samples AS n, util_sum AS s, util_max AS m"
      " FROM usage_gpu_minutes WHERE" +
      where + " minute >= $1 AND minute < $2";
  const std::string raw =
      "SELECT node_id, gpu, at - ((at % $3) + $3) % $3, 1, utilization_pct, utilization_pct"
      " FROM usage_gpu_samples WHERE" +
      where + " at >= $1 AND at < $2";
  return "SELECT node_id, gpu, b, sum(n)::bigint, sum(s)::bigint, max(m) FROM (" + minutes + " UNION ALL " + raw +
         ") x GROUP BY node_id, gpu, b ORDER BY node_id, gpu, b";
}

const std::array<std::string, 3> kBucketSql = {bucket_sql(false, false), bucket_sql(true, false),
                                               bucket_sql(true, true)};

}  // namespace

Result<std::vector<GpuUsagePoint>> query_gpu_usage(PgConn& db, const std::string& node_id, int64_t gpu, TimeMs from,
                                                   TimeMs to, int limit) {
  if (auto s = check_series_range(from, to, limit); !s) return s.error();
  auto q =
      db.query(kGpuSeries, PgParams().add(node_id).add(gpu).add(from).add(to).add(int64_t{limit}), "reading GPU usage");
  if (!q) return q.error();
  return q->collect([](const PgRow& r) { return read_gpu_point(r); });
}

Result<std::vector<JobUsagePoint>> query_job_usage(PgConn& db, const std::string& job_id, TimeMs from, TimeMs to,
                                                   int limit) {
  if (auto s = check_series_range(from, to, limit); !s) return s.error();
  auto q = db.query(kJobSeries, PgParams().add(job_id).add(from).add(to).add(int64_t{limit}), "reading job usage");
  if (!q) return q.error();
  return q->collect([](const PgRow& r) { return read_job_point(r); });
}

Result<std::vector<std::pair<std::string, JobUsagePoint>>> query_tenant_job_usage(PgConn& db,
                                                                                  const std::string& tenant_id,
                                                                                  TimeMs from, TimeMs to, int limit) {
  if (auto s = check_tenant_series_range(from, to, limit); !s) return s.error();
  auto q = db.query(kTenantJobSeries, PgParams().add(tenant_id).add(from).add(to).add(int64_t{limit}),
                    "reading the tenant's job usage");
  if (!q) return q.error();
  return q->collect([](const PgRow& r) { return std::make_pair(r.text(0), read_job_point(r, 1)); });
}

Result<std::vector<JobUsageTotals>> query_job_usage_totals(PgConn& db, const JobUsageFilter& f) {
  if (auto s = check_totals_filter(f); !s) return s.error();
  auto q = db.query(kTotals[totals_filter_column(f)], PgParams().add(totals_filter_value(f)).add(f.from).add(f.to),
                    "summing job usage");
  if (!q) return q.error();
  return q->collect([](const PgRow& r) {
    JobUsageTotals t = read_metered_job(r);
    read_totals(r, 3, t);
    return t;
  });
}

Result<std::vector<GpuBucket>> query_gpu_usage_buckets(PgConn& db, const GpuBucketQuery& q) {
  if (auto s = check_bucket_query(q); !s) return s.error();
  const std::string& sql = q.node_id.empty() ? kBucketSql[0] : q.gpu < 0 ? kBucketSql[1] : kBucketSql[2];
  PgParams p;
  p.add(q.from).add(q.to).add(q.bucket_ms);
  if (!q.node_id.empty()) p.add(q.node_id);
  if (q.gpu >= 0) p.add(q.gpu);
  auto rows = db.query(sql, p, "summing GPU usage per bucket");
  if (!rows) return rows.error();
  return rows->collect([](const PgRow& r) { return read_bucket(r); });
}

}  // namespace gpurent
