// Usage on PostgreSQL, the read side: series of raw samples and rolled-up minutes merged in time
// order, totals per job, and GPU utilization per time bucket aggregated in SQL. Same contract as
// sqlite_usage.cc and sqlite_usage_buckets.cc. PostgreSQL sums bigints as numeric: the sums are
// cast back to bigint, so one past int64 is an error, as on SQLite, not a number no reader holds.
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "core/fields.h"
#include "store/pg_queries.h"

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

Status check_range(TimeMs from, TimeMs to, int limit) {
  if (to <= from) return Error::invalid("to", "must be after from");
  if (limit < 1 || limit > 1'000'000) return Error::invalid("limit", "must be between 1 and 1000000");
  return ok_status();
}

UsageStat stat(const PgRows& q, int i, int col) {
  return {q.integer(i, col), q.integer(i, col + 1), q.integer(i, col + 2)};
}

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

Status check_buckets(const GpuBucketQuery& q) {
  FieldErrors errs;
  if (q.to <= q.from) errs.add("to", "must be after from");
  if (q.bucket_ms <= 0 || q.bucket_ms % kMsPerMinute != 0)
    errs.add("bucket_ms",
             "must be a positive whole number of minutes in milliseconds (got " + std::to_string(q.bucket_ms) + ")");
  if (q.gpu < -1) errs.add("gpu", "must be a GPU index, or -1 for every GPU");
  if (q.gpu >= 0 && q.node_id.empty()) errs.add("gpu", "a GPU index needs a node_id");
  if (!errs.empty()) return errs.to_error();
  return ok_status();
}

}  // namespace

Result<std::vector<GpuUsagePoint>> pg_gpu_usage(PgConn& db, const std::string& node_id, int64_t gpu, TimeMs from,
                                                TimeMs to, int limit) {
  if (auto s = check_range(from, to, limit); !s) return s.error();
  auto q =
      db.query(kGpuSeries, PgParams().add(node_id).add(gpu).add(from).add(to).add(int64_t{limit}), "reading GPU usage");
  if (!q) return q.error();
  std::vector<GpuUsagePoint> out;
  for (int i = 0; i < q->size(); ++i) {
    GpuUsagePoint p;
    p.at = q->integer(i, 0);
    p.minute = q->integer(i, 1) != 0;
    p.samples = q->integer(i, 2);
    p.utilization_pct = stat(*q, i, 3);
    p.memory_used_mib = stat(*q, i, 6);
    p.power_mw = stat(*q, i, 9);
    p.sm_clock_mhz = stat(*q, i, 12);
    p.gr_engine_active_pct = stat(*q, i, 15);
    out.push_back(p);
  }
  return out;
}

Result<std::vector<JobUsagePoint>> pg_job_usage(PgConn& db, const std::string& job_id, TimeMs from, TimeMs to,
                                                int limit) {
  if (auto s = check_range(from, to, limit); !s) return s.error();
  auto q = db.query(kJobSeries, PgParams().add(job_id).add(from).add(to).add(int64_t{limit}), "reading job usage");
  if (!q) return q.error();
  std::vector<JobUsagePoint> out;
  for (int i = 0; i < q->size(); ++i) {
    out.push_back({q->integer(i, 0), q->integer(i, 1) != 0, q->integer(i, 2), q->integer(i, 3), q->integer(i, 4),
                   q->integer(i, 5), q->integer(i, 6), q->integer(i, 7)});
  }
  return out;
}

Result<std::vector<std::pair<std::string, JobUsagePoint>>> pg_tenant_job_usage(PgConn& db, const std::string& tenant_id,
                                                                               TimeMs from, TimeMs to, int limit) {
  if (to <= from) return Error::invalid("to", "must be after from");
  if (limit < 1 || limit > 10'000'000) return Error::invalid("limit", "must be 1..10000000");
  auto q = db.query(kTenantJobSeries, PgParams().add(tenant_id).add(from).add(to).add(int64_t{limit}),
                    "reading the tenant's job usage");
  if (!q) return q.error();
  std::vector<std::pair<std::string, JobUsagePoint>> out;
  for (int i = 0; i < q->size(); ++i) {
    out.emplace_back(q->text(i, 0),
                     JobUsagePoint{q->integer(i, 1), q->integer(i, 2) != 0, q->integer(i, 3), q->integer(i, 4),
                                   q->integer(i, 5), q->integer(i, 6), q->integer(i, 7), q->integer(i, 8)});
  }
  return out;
}

Result<std::vector<JobUsageTotals>> pg_job_usage_totals(PgConn& db, const JobUsageFilter& f) {
  if (f.to <= f.from) return Error::invalid("to", "must be after from");
  const int given = !f.job_id.empty() + !f.project_id.empty() + !f.tenant_id.empty();
  if (given != 1) return Error::invalid("", "exactly one of job_id, project_id, tenant_id must be given");
  const std::string& sql = !f.job_id.empty() ? kTotals[0] : !f.project_id.empty() ? kTotals[1] : kTotals[2];
  const std::string& key = !f.job_id.empty() ? f.job_id : !f.project_id.empty() ? f.project_id : f.tenant_id;
  auto q = db.query(sql, PgParams().add(key).add(f.from).add(f.to), "summing job usage");
  if (!q) return q.error();
  std::vector<JobUsageTotals> out;
  for (int i = 0; i < q->size(); ++i) {
    JobUsageTotals t;
    t.job_id = q->text(i, 0);
    t.tenant_id = q->text(i, 1);
    t.project_id = q->text(i, 2);
    t.samples = q->integer(i, 3);
    t.storage_io_bytes = q->integer(i, 4);
    t.egress_bytes = q->integer(i, 5);
    t.input_tokens = q->integer(i, 6);
    t.output_tokens = q->integer(i, 7);
    t.requests = q->integer(i, 8);
    out.push_back(std::move(t));
  }
  return out;
}

Result<std::vector<GpuBucket>> pg_gpu_usage_buckets(PgConn& db, const GpuBucketQuery& q) {
  if (auto s = check_buckets(q); !s) return s.error();
  const std::string& sql = q.node_id.empty() ? kBucketSql[0] : q.gpu < 0 ? kBucketSql[1] : kBucketSql[2];
  PgParams p;
  p.add(q.from).add(q.to).add(q.bucket_ms);
  if (!q.node_id.empty()) p.add(q.node_id);
  if (q.gpu >= 0) p.add(q.gpu);
  auto rows = db.query(sql, p, "summing GPU usage per bucket");
  if (!rows) return rows.error();
  std::vector<GpuBucket> out;
  for (int i = 0; i < rows->size(); ++i) {
    out.push_back({rows->text(i, 0), rows->integer(i, 1), rows->integer(i, 2), rows->integer(i, 3), rows->integer(i, 4),
                   rows->integer(i, 5)});
  }
  return out;
}

}  // namespace gpurent
