// The SELECT lists both store backends read their rows with, and the one reader of each row
// shape, so a column's place and its decoding are written once. The statements around them (the
// WHERE, the parameters: ?N on SQLite, $N on PostgreSQL) stay in each backend.
//
// A Row is anything with text(col), integer(col), real(col) and flag(col), columns 0-based:
// SQLite's Query (sqlite_db.h) or one row of a PostgreSQL result (PgRow, pg_db.h). Internal to
// src/store; header-only templates, thread-compatible.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "store/store.h"
#include "store/store_checks.h"

namespace gpurent {

// The filters of a list, count or token query as SQL: " AND <column><comparison>" for each
// (column, value) of `eq`, the column taken from the allow-list `allowed` (object_filter_column,
// token_filter_column: only those strings ever reach SQL), `compare(column, value)` giving the
// comparison in the backend's parameter syntax (" = ?3", " = $2", " IS NULL") and binding the value.
template <class Compare>
Result<std::string> filter_sql(const std::map<std::string, std::string>& eq,
                               Result<std::string_view> (*allowed)(const std::string&), Compare&& compare) {
  std::string sql;
  for (const auto& [column, value] : eq) {
    auto known = allowed(column);
    if (!known) return known.error();
    sql += " AND ";
    sql += *known;
    sql += compare(*known, value);
  }
  return sql;
}

// ---- objects: read by read_record ----
inline constexpr const char* kObjectSelect =
    "SELECT kind, id, coalesce(name, ''), tenant_id, supplier_id, project_id, state, region, gpu_model,"
    " created_at, updated_at, version, body FROM objects";

template <class Row>
Result<Record> read_record(const Row& q) {
  Record r;
  r.kind = q.text(0);
  r.id = q.text(1);
  r.name = q.text(2);
  r.tenant_id = q.text(3);
  r.supplier_id = q.text(4);
  r.project_id = q.text(5);
  r.state = q.text(6);
  r.region = q.text(7);
  r.gpu_model = q.text(8);
  r.created_at = q.integer(9);
  r.updated_at = q.integer(10);
  r.version = q.integer(11);
  auto body = parse_body(r.kind, r.id, q.text(12));
  if (!body) return body.error();
  r.body = std::move(body).value();
  return r;
}

// ---- api_tokens: read by read_token ----
inline constexpr const char* kTokenSelect =
    "SELECT id, user_id, tenant_id, supplier_id, role, name, secret_hash, created_at, expires_at, revoked"
    " FROM api_tokens";

template <class Row>
TokenRow read_token(const Row& q) {
  TokenRow t;
  t.id = q.text(0);
  t.user_id = q.text(1);
  t.tenant_id = q.text(2);
  t.supplier_id = q.text(3);
  t.role = q.text(4);
  t.name = q.text(5);
  t.secret_hash = q.text(6);
  t.created_at = q.integer(7);
  t.expires_at = q.integer(8);
  t.revoked = q.flag(9);
  return t;
}

// ---- job_events, audit_log ----
inline constexpr const char* kJobEventSelect =
    "SELECT job_id, at, from_state, to_state, reason, reason_message FROM job_events";

template <class Row>
JobEvent read_job_event(const Row& q) {
  return JobEvent{q.text(0), q.integer(1), q.text(2), q.text(3), decode_reason(q.text(4), q.text(5))};
}

inline constexpr const char* kAuditSelect = "SELECT at, actor, action, kind, object_id, detail FROM audit_log";

template <class Row>
AuditEntry read_audit(const Row& q) {
  return AuditEntry{q.integer(0), q.text(1), q.text(2), q.text(3), q.text(4), q.text(5)};
}

// ---- job_metric_points ----
inline constexpr const char* kMetricSelect =
    "SELECT job_id, tenant_id, project_id, name, at, value, higher_is_better FROM job_metric_points";

// The reads of job metric points in one backend's placeholders (`mark`: '?' on SQLite, '$' on
// PostgreSQL), all in kMetricSelect's columns: $1 the job (or the tenant), $2 from, $3 to, $4 the
// tenant of a job. ends: the first and last point of each (job, name) series in [from, to)
// (JobMetricFilter::ends_only), aggregated in the database.
struct MetricReads {
  std::string by_job, by_job_of_tenant, by_tenant, ends_by_job, ends_by_tenant;

  explicit MetricReads(char mark) {
    auto p = [&](int n) { return std::string(1, mark) + std::to_string(n); };
    const std::string range = " AND at >= " + p(2) + " AND at < " + p(3);
    by_job = std::string(kMetricSelect) + " WHERE job_id = " + p(1) + range + " ORDER BY name, at";
    by_job_of_tenant =
        std::string(kMetricSelect) + " WHERE job_id = " + p(1) + range + " AND tenant_id = " + p(4) + " ORDER BY name, at";
    by_tenant = std::string(kMetricSelect) + " WHERE tenant_id = " + p(1) + range + " ORDER BY job_id, name, at";
    auto ends = [&](const char* by) {
      return std::string("SELECT p.job_id, p.tenant_id, p.project_id, p.name, p.at, p.value, p.higher_is_better") +
             " FROM job_metric_points p JOIN (SELECT job_id, name, min(at) AS a0, max(at) AS a1 FROM job_metric_points" +
             " WHERE " + by + " = " + p(1) + range + " GROUP BY job_id, name) s ON p.job_id = s.job_id" +
             " AND p.name = s.name AND (p.at = s.a0 OR p.at = s.a1) ORDER BY p.job_id, p.name, p.at";
    };
    ends_by_job = ends("job_id");
    ends_by_tenant = ends("tenant_id");
  }

  // The statement a filter asks for (checked: check_metric_filter; ends_only names one job or one
  // tenant); the caller binds $4 only when job_id and tenant_id are both given.
  Result<const std::string*> pick(const JobMetricFilter& f) const {
    if (auto s = check_metric_filter(f); !s) return s.error();
    if (f.ends_only) {
      if (!f.job_id.empty() && !f.tenant_id.empty()) return Error::invalid("ends_only", "give job_id or tenant_id, not both");
      return f.job_id.empty() ? &ends_by_tenant : &ends_by_job;
    }
    return f.job_id.empty() ? &by_tenant : f.tenant_id.empty() ? &by_job : &by_job_of_tenant;
  }
};

template <class Row>
JobMetricRow read_metric(const Row& q) {
  JobMetricRow r;
  r.job_id = q.text(0);
  r.tenant_id = q.text(1);
  r.project_id = q.text(2);
  r.name = q.text(3);
  r.at = q.integer(4);
  r.value = q.real(5);
  r.higher_is_better = q.flag(6);
  return r;
}

// ---- usage series and buckets ----

// A GPU series row: t, rolled (0/1), samples, then (n, sum, max) for utilization, memory, power,
// SM clock and graphics engine activity (columns 3..17).
template <class Row>
GpuUsagePoint read_gpu_point(const Row& q) {
  auto stat = [&](int col) { return UsageStat{q.integer(col), q.integer(col + 1), q.integer(col + 2)}; };
  GpuUsagePoint p;
  p.at = q.integer(0);
  p.minute = q.flag(1);
  p.samples = q.integer(2);
  p.utilization_pct = stat(3);
  p.memory_used_mib = stat(6);
  p.power_mw = stat(9);
  p.sm_clock_mhz = stat(12);
  p.gr_engine_active_pct = stat(15);
  return p;
}

// A job series row from column `first`: t, rolled (0/1), samples, storage I/O, egress, input
// tokens, output tokens, requests.
template <class Row>
JobUsagePoint read_job_point(const Row& q, int first = 0) {
  return JobUsagePoint{q.integer(first),     q.flag(first + 1),    q.integer(first + 2), q.integer(first + 3),
                       q.integer(first + 4), q.integer(first + 5), q.integer(first + 6), q.integer(first + 7)};
}

// node_id, gpu, bucket, samples, util_sum, util_max.
template <class Row>
GpuBucket read_bucket(const Row& q) {
  return GpuBucket{q.text(0), q.integer(1), q.integer(2), q.integer(3), q.integer(4), q.integer(5)};
}

// A metered job (usage_jobs): job_id, tenant_id, project_id; its totals zero.
template <class Row>
JobUsageTotals read_metered_job(const Row& q) {
  JobUsageTotals t;
  t.job_id = q.text(0);
  t.tenant_id = q.text(1);
  t.project_id = q.text(2);
  return t;
}

// Totals from column `first`: samples, storage I/O, egress, input tokens, output tokens, requests.
template <class Row>
void read_totals(const Row& q, int first, JobUsageTotals& t) {
  t.samples = q.integer(first);
  t.storage_io_bytes = q.integer(first + 1);
  t.egress_bytes = q.integer(first + 2);
  t.input_tokens = q.integer(first + 3);
  t.output_tokens = q.integer(first + 4);
  t.requests = q.integer(first + 5);
}

}  // namespace gpurent
