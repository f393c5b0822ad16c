// job_metric_points on PostgreSQL. Same contract as sqlite_metrics.cc: rows checked in order (the
// first bad row is the one named), the direction of a (job, metric) fixed by its stored points or
// by its first row in the batch, a point at a stored instant replacing its value. The batch is
// checked first and then written in one statement (arrays spread by unnest()).
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "store/pg_queries.h"

namespace gpurent {
namespace {

// The stored direction of each (job, name) the batch names.
const std::string kDirections =
    "SELECT DISTINCT ON (p.job_id, p.name) p.job_id, p.name, p.higher_is_better FROM job_metric_points p"
    " JOIN unnest($1::text[], $2::text[]) AS k(job_id, name) ON p.job_id = k.job_id AND p.name = k.name"
    " ORDER BY p.job_id, p.name";
const std::string kUpsert =
    "INSERT INTO job_metric_points (job_id, name, at, tenant_id, project_id, value, higher_is_better)"
    " SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::float8[], $7::boolean[])"
    " ON CONFLICT (job_id, name, at) DO UPDATE SET value = excluded.value";
const std::string kColumns = "SELECT job_id, tenant_id, project_id, name, at, value, higher_is_better";
const std::string kByJob = kColumns +
                           " FROM job_metric_points WHERE job_id = $1 AND at >= $2 AND at < $3"
                           " ORDER BY name, at";
const std::string kByJobOfTenant = kColumns +
                                   " FROM job_metric_points WHERE job_id = $1 AND at >= $2 AND at < $3"
                                   " AND tenant_id = $4 ORDER BY name, at";
const std::string kByTenant = kColumns +
                              " FROM job_metric_points WHERE tenant_id = $1 AND at >= $2 AND at < $3"
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
                             "' of job " + r.job_id + " is " + where + " with higher_is_better " + bool_text(recorded);
  Error e = Error::make(Code::kConflict, field + ": " + reason);
  e.fields.push_back({field, reason, {}});
  return e;
}

}  // namespace

Status pg_insert_job_metrics(PgConn& db, const std::vector<JobMetricRow>& rows) {
  if (db.tx_status() != PQTRANS_INTRANS)
    return Error::make(Code::kInternal, "insert_job_metrics needs a write transaction");
  if (rows.empty()) return ok_status();
  using Key = std::pair<std::string, std::string>;
  std::map<Key, std::pair<bool, bool>> directions;  // (job, name) -> direction, whether the batch set it
  {
    std::vector<std::string> jobs, names;
    std::set<Key> asked;
    for (const JobMetricRow& r : rows)
      if (asked.insert({r.job_id, r.name}).second) {
        jobs.push_back(r.job_id);
        names.push_back(r.name);
      }
    auto stored = db.query(kDirections, PgParams().add_array(jobs).add_array(names), "reading job metrics' directions");
    if (!stored) return stored.error();
    for (int i = 0; i < stored->size(); ++i)
      directions[{stored->text(i, 0), stored->text(i, 1)}] = {stored->boolean(i, 2), false};
  }
  // One row per (job, name, at): a later row of the batch replaces an earlier one's value, as the
  // SQLite store's row-by-row upsert does (ON CONFLICT cannot touch a row twice in one statement).
  std::map<std::tuple<std::string, std::string, TimeMs>, size_t> slot;
  std::vector<std::string> jobs, names, tenants, projects;
  std::vector<int64_t> ats;
  std::vector<double> values;
  std::vector<bool> dirs;
  for (size_t i = 0; i < rows.size(); ++i) {
    const JobMetricRow& r = rows[i];
    if (auto s = check_row(r, i); !s) return s;
    auto it = directions.try_emplace({r.job_id, r.name}, r.higher_is_better, true).first;
    const auto [recorded, from_batch] = it->second;
    if (recorded != r.higher_is_better)
      return direction_conflict(r, i, recorded, from_batch ? "reported earlier in this batch" : "recorded");
    auto [pos, fresh] = slot.try_emplace({r.job_id, r.name, r.at}, jobs.size());
    if (!fresh) {
      values[pos->second] = r.value;
      continue;
    }
    jobs.push_back(r.job_id);
    names.push_back(r.name);
    ats.push_back(r.at);
    tenants.push_back(r.tenant_id);
    projects.push_back(r.project_id);
    values.push_back(r.value);
    dirs.push_back(r.higher_is_better);
  }
  PgParams p;
  p.add_array(jobs).add_array(names).add_array(ats).add_array(tenants).add_array(projects);
  p.add_array(values).add_array(dirs);
  auto n = db.exec(kUpsert, p, "storing job metric points");
  return n ? ok_status() : Status(n.error());
}

Result<std::vector<JobMetricRow>> pg_job_metrics(PgConn& db, const JobMetricFilter& f) {
  if (f.job_id.empty() && f.tenant_id.empty()) return Error::invalid("job_id", "give job_id or tenant_id");
  if (f.to <= f.from) return Error::invalid("to", "must be after from");
  const std::string& sql = f.job_id.empty() ? kByTenant : f.tenant_id.empty() ? kByJob : kByJobOfTenant;
  PgParams p;
  p.add(f.job_id.empty() ? f.tenant_id : f.job_id).add(f.from).add(f.to);
  if (!f.job_id.empty() && !f.tenant_id.empty()) p.add(f.tenant_id);
  auto q = db.query(sql, p, "reading job metrics");
  if (!q) return q.error();
  std::vector<JobMetricRow> out;
  for (int i = 0; i < q->size(); ++i) {
    JobMetricRow r;
    r.job_id = q->text(i, 0);
    r.tenant_id = q->text(i, 1);
    r.project_id = q->text(i, 2);
    r.name = q->text(i, 3);
    r.at = q->integer(i, 4);
    r.value = q->real(i, 5);
    r.higher_is_better = q->boolean(i, 6);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gpurent
