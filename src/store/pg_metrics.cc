// job_metric_points on PostgreSQL. Same contract as sqlite_metrics.cc, the same checks
// (store_checks.h): rows checked in order (the first bad row is the one named), the direction of
// a (job, metric) fixed by its stored points or by its first row in the batch, a point at a
// stored instant replacing its value. The stored directions are read in one statement, then the
// batch is written in one (arrays spread by unnest()).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "store/pg_queries.h"
#include "store/store_rows.h"

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
const MetricReads kReads('$');
const std::string kJobTotals =
    "SELECT job_id, count(*), count(DISTINCT name) FROM job_metric_points WHERE job_id = ANY($1::text[]) GROUP BY job_id";

using Key = std::pair<std::string, std::string>;

Result<std::map<Key, bool>> stored_directions(PgConn& db, const std::vector<JobMetricRow>& rows) {
  std::vector<std::string> jobs, names;
  std::set<Key> asked;
  for (const JobMetricRow& r : rows)
    if (asked.insert({r.job_id, r.name}).second) {
      jobs.push_back(r.job_id);
      names.push_back(r.name);
    }
  auto stored = db.query(kDirections, PgParams().add_array(jobs).add_array(names), "reading job metrics' directions");
  if (!stored) return stored.error();
  std::map<Key, bool> out;
  for (int i = 0; i < stored->size(); ++i) out[{stored->text(i, 0), stored->text(i, 1)}] = stored->boolean(i, 2);
  return out;
}

}  // namespace

Status upsert_job_metrics(PgConn& db, const std::vector<JobMetricRow>& rows) {
  if (db.tx_status() != PQTRANS_INTRANS) return needs_write_transaction("insert_job_metrics");
  if (rows.empty()) return ok_status();
  auto directions = stored_directions(db, rows);
  if (!directions) return directions.error();
  auto stored = [&](const std::string& job_id, const std::string& name) -> Result<std::optional<bool>> {
    auto it = directions->find({job_id, name});
    return it == directions->end() ? std::nullopt : std::optional<bool>(it->second);
  };
  if (auto s = check_metric_rows(rows, stored); !s) return s;
  // One row per (job, name, at): a later row of the batch replaces an earlier one's value, as the
  // SQLite store's row-by-row upsert does (ON CONFLICT cannot touch a row twice in one statement).
  std::map<std::tuple<std::string, std::string, TimeMs>, size_t> slot;
  std::vector<std::string> jobs, names, tenants, projects;
  std::vector<int64_t> ats;
  std::vector<double> values;
  std::vector<bool> dirs;
  for (const JobMetricRow& r : rows) {
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
  if (!n) return n.error();
  std::vector<std::string> batch_jobs;
  for (const JobMetricRow& r : rows)
    if (std::find(batch_jobs.begin(), batch_jobs.end(), r.job_id) == batch_jobs.end()) batch_jobs.push_back(r.job_id);
  auto totals = db.query(kJobTotals, PgParams().add_array(batch_jobs), "counting jobs' metric points");
  if (!totals) return totals.error();
  for (int i = 0; i < totals->size(); ++i)
    if (auto s = check_metric_totals(totals->text(i, 0), totals->integer(i, 1), totals->integer(i, 2)); !s) return s;
  return ok_status();
}

Result<std::vector<JobMetricRow>> query_job_metrics(PgConn& db, const JobMetricFilter& f) {
  auto sql = kReads.pick(f);
  if (!sql) return sql.error();
  PgParams p;
  p.add(f.job_id.empty() ? f.tenant_id : f.job_id).add(f.from).add(f.to);
  if (!f.job_id.empty() && !f.tenant_id.empty()) p.add(f.tenant_id);
  auto q = db.query(**sql, p, "reading job metrics");
  if (!q) return q.error();
  return q->collect([](const PgRow& r) { return read_metric(r); });
}

}  // namespace gpurent
