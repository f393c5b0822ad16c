// job_metric_points (schema version 3): the quality metrics jobs report, and the reads the job
// metrics routes and the cost-performance dashboard make. Statements are prepared once per
// connection (Db's cache) and bound per row; one batch is the caller's one transaction.
#include <cmath>
#include <map>
#include <utility>

#include "store/sqlite_queries.h"

namespace gpurent {
namespace {

const std::string kDirection =
    "SELECT higher_is_better FROM job_metric_points WHERE job_id = ?1 AND name = ?2 LIMIT 1";
const std::string kUpsert =
    "INSERT INTO job_metric_points (job_id, name, at, tenant_id, project_id, value, higher_is_better)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (job_id, name, at) DO UPDATE SET value = excluded.value";
const std::string kColumns = "SELECT job_id, tenant_id, project_id, name, at, value, higher_is_better";
const std::string kByJob = kColumns +
                           " FROM job_metric_points WHERE job_id = ?1 AND at >= ?2 AND at < ?3"
                           " ORDER BY name, at";
const std::string kByJobOfTenant = kColumns +
                                   " FROM job_metric_points WHERE job_id = ?1 AND at >= ?2 AND at < ?3"
                                   " AND tenant_id = ?4 ORDER BY name, at";
const std::string kByTenant = kColumns +
                              " FROM job_metric_points WHERE tenant_id = ?1 AND at >= ?2 AND at < ?3"
                              " ORDER BY job_id, name, at";

std::string row_field(size_t i, const char* field) { return "rows[" + std::to_string(i) + "]." + field; }

const char* bool_text(bool b) { return b ? "true" : "false"; }

Status check_row(const JobMetricRow& r, size_t i) {
  if (r.job_id.empty()) return Error::invalid(row_field(i, "job_id"), "is required");
  if (r.tenant_id.empty()) return Error::invalid(row_field(i, "tenant_id"), "is required");
  if (r.name.empty()) return Error::invalid(row_field(i, "name"), "is required");
  if (!std::isfinite(r.value)) return Error::invalid(row_field(i, "value"), "must be a finite number");
  return ok_status();
}

Error direction_conflict(const JobMetricRow& r, size_t i, bool recorded, const std::string& where) {
  const std::string field = row_field(i, "higher_is_better");
  const std::string reason = std::string("is ") + bool_text(r.higher_is_better) + " but metric '" + r.name +
                             "' of job " + r.job_id + " is " + where + " with higher_is_better " +
                             bool_text(recorded);
  Error e = Error::make(Code::kConflict, field + ": " + reason);
  e.fields.push_back({field, reason});
  return e;
}

}  // namespace

Status insert_job_metrics(Db& db, const std::vector<JobMetricRow>& rows) {
  if (!db.in_transaction()) return Error::make(Code::kInternal, "insert_job_metrics needs a write transaction");
  // (job, name) -> direction, from the store or the batch's first row, and whether the batch set it.
  std::map<std::pair<std::string, std::string>, std::pair<bool, bool>> directions;
  for (size_t i = 0; i < rows.size(); ++i) {
    const JobMetricRow& r = rows[i];
    if (auto s = check_row(r, i); !s) return s;
    auto key = std::make_pair(r.job_id, r.name);
    auto it = directions.find(key);
    if (it == directions.end()) {
      auto q = db.query(kDirection);
      if (!q) return q.error();
      q->bind(1, r.job_id).bind(2, r.name);
      auto row = q->step("reading a job metric's direction");
      if (!row) return row.error();
      const bool stored = *row;
      it = directions.emplace(key, std::make_pair(stored ? q->integer(0) != 0 : r.higher_is_better, !stored)).first;
    }
    const auto [recorded, from_batch] = it->second;
    if (recorded != r.higher_is_better)
      return direction_conflict(r, i, recorded, from_batch ? "reported earlier in this batch" : "recorded");
    auto q = db.query(kUpsert);
    if (!q) return q.error();
    q->bind(1, r.job_id).bind(2, r.name).bind(3, r.at).bind(4, r.tenant_id).bind(5, r.project_id);
    q->bind_real(6, r.value).bind(7, int64_t{r.higher_is_better ? 1 : 0});
    if (auto s = q->run("storing a job metric point"); !s) return s;
  }
  return ok_status();
}

Result<std::vector<JobMetricRow>> query_job_metrics(Db& db, const JobMetricFilter& f) {
  if (f.job_id.empty() && f.tenant_id.empty()) return Error::invalid("job_id", "give job_id or tenant_id");
  if (f.to <= f.from) return Error::invalid("to", "must be after from");
  const std::string& sql = f.job_id.empty() ? kByTenant : f.tenant_id.empty() ? kByJob : kByJobOfTenant;
  auto q = db.query(sql);
  if (!q) return q.error();
  q->bind(1, f.job_id.empty() ? f.tenant_id : f.job_id).bind(2, f.from).bind(3, f.to);
  if (!f.job_id.empty() && !f.tenant_id.empty()) q->bind(4, f.tenant_id);
  std::vector<JobMetricRow> out;
  for (;;) {
    auto row = q->step("reading job metrics");
    if (!row) return row.error();
    if (!*row) return out;
    JobMetricRow r;
    r.job_id = q->text(0);
    r.tenant_id = q->text(1);
    r.project_id = q->text(2);
    r.name = q->text(3);
    r.at = q->integer(4);
    r.value = q->real(5);
    r.higher_is_better = q->integer(6) != 0;
    out.push_back(std::move(r));
  }
}

}  // namespace gpurent
