// job_metric_points (schema version 3): the quality metrics jobs report, and the reads the job
// metrics routes and the cost-performance dashboard make. Statements are prepared once per
// connection (Db's cache) and bound per row; one batch is the caller's one transaction. The rows
// are checked (store_checks.h) before the first is written, so a refused batch writes nothing.
#include <optional>
#include <set>
#include <utility>

#include "store/sqlite_queries.h"
#include "store/store_rows.h"

namespace gpurent {
namespace {

const std::string kDirection = "SELECT higher_is_better FROM job_metric_points WHERE job_id = ?1 AND name = ?2 LIMIT 1";
const std::string kUpsert =
    "INSERT INTO job_metric_points (job_id, name, at, tenant_id, project_id, value, higher_is_better)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (job_id, name, at) DO UPDATE SET value = excluded.value";
const MetricReads kReads('?');
const std::string kJobTotals = "SELECT count(*), count(DISTINCT name) FROM job_metric_points WHERE job_id = ?1";

}  // namespace

Status upsert_job_metrics(Db& db, const std::vector<JobMetricRow>& rows) {
  if (!db.in_transaction()) return needs_write_transaction("insert_job_metrics");
  auto stored = [&](const std::string& job_id, const std::string& name) -> Result<std::optional<bool>> {
    auto q = db.query(kDirection);
    if (!q) return q.error();
    q->bind(1, job_id).bind(2, name);
    auto row = q->step("reading a job metric's direction");
    if (!row) return row.error();
    return *row ? std::optional<bool>(q->flag(0)) : std::nullopt;
  };
  if (auto s = check_metric_rows(rows, stored); !s) return s;
  for (const JobMetricRow& r : rows) {
    auto q = db.query(kUpsert);
    if (!q) return q.error();
    q->bind(1, r.job_id).bind(2, r.name).bind(3, r.at).bind(4, r.tenant_id).bind(5, r.project_id);
    q->bind_real(6, r.value).bind(7, int64_t{r.higher_is_better ? 1 : 0});
    if (auto s = q->run("storing a job metric point"); !s) return s;
  }
  std::set<std::string> jobs;
  for (const JobMetricRow& r : rows) jobs.insert(r.job_id);
  for (const std::string& job : jobs) {
    auto q = db.query(kJobTotals);
    if (!q) return q.error();
    q->bind(1, job);
    auto row = q->step("counting a job's metric points");
    if (!row) return row.error();
    if (auto s = check_metric_totals(job, q->integer(0), q->integer(1)); !s) return s;
  }
  return ok_status();
}

Result<std::vector<JobMetricRow>> query_job_metrics(Db& db, const JobMetricFilter& f) {
  auto sql = kReads.pick(f);
  if (!sql) return sql.error();
  auto q = db.query(**sql);
  if (!q) return q.error();
  q->bind(1, f.job_id.empty() ? f.tenant_id : f.job_id).bind(2, f.from).bind(3, f.to);
  if (!f.job_id.empty() && !f.tenant_id.empty()) q->bind(4, f.tenant_id);
  return q->collect("reading job metrics", [](Query& r) { return read_metric(r); });
}

}  // namespace gpurent
