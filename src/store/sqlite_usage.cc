// Usage tables: idempotent batch insert, the per-minute rollup, and series/totals queries.
// Every statement is prepared once per connection (Db's cache) and bound per row; one batch is
// one transaction (the caller's), which is what makes ingest fast.
#include "store/sqlite_usage.h"

#include <algorithm>
#include <map>
#include <utility>

#include "store/store_rows.h"

namespace gpurent {
namespace {

const std::string kFindBatch =
    "SELECT content_sha256, gpu_samples, job_samples, received_at FROM usage_batches WHERE scope = ?1 AND "
    "idempotency_key = ?2";
const std::string kInsertBatch =
    "INSERT INTO usage_batches (idempotency_key, content_sha256, received_at, submitted_by, gpu_samples, job_samples,"
    " scope) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING seq";
const std::string kInsertGpu =
    "INSERT INTO usage_gpu_samples (node_id, gpu, at, batch, utilization_pct, memory_used_mib, power_mw,"
    " sm_clock_mhz, gr_engine_active_pct) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
const std::string kInsertJob =
    "INSERT INTO usage_job_samples (job_id, at, batch, ord, storage_io_bytes, egress_bytes, input_tokens,"
    " output_tokens, requests) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
const std::string kTrackGpu =
    "INSERT INTO usage_gpus (node_id, gpu, raw_from) VALUES (?1, ?2, ?3) ON CONFLICT (node_id, gpu) DO UPDATE SET"
    " raw_from = CASE WHEN raw_from IS NULL OR excluded.raw_from < raw_from THEN excluded.raw_from ELSE raw_from END";
const std::string kTrackJob =
    "INSERT INTO usage_jobs (job_id, tenant_id, project_id, raw_from) VALUES (?1, ?2, ?3, ?4)"
    " ON CONFLICT (job_id) DO UPDATE SET"
    " raw_from = CASE WHEN raw_from IS NULL OR excluded.raw_from < raw_from THEN excluded.raw_from ELSE raw_from END";

Query& bind_opt(Query& q, int i, const std::optional<int64_t>& v) { return v ? q.bind(i, *v) : q.bind_null(i); }

Status insert_rows(Db& db, const UsageBatchRows& b, int64_t seq) {
  std::map<std::pair<std::string, int64_t>, TimeMs> gpus;  // GPU -> earliest raw sample of the batch
  for (const GpuUsageRow& r : b.gpu) {
    auto q = db.query(kInsertGpu);
    if (!q) return q.error();
    q->bind(1, r.node_id).bind(2, r.gpu).bind(3, r.at).bind(4, seq).bind(5, r.utilization_pct);
    bind_opt(*q, 6, r.memory_used_mib);
    bind_opt(*q, 7, r.power_mw);
    bind_opt(*q, 8, r.sm_clock_mhz);
    bind_opt(*q, 9, r.gr_engine_active_pct);
    if (auto s = q->run("storing a GPU usage sample"); !s) return s;
    auto [it, fresh] = gpus.emplace(std::make_pair(r.node_id, r.gpu), r.at);
    if (!fresh && r.at < it->second) it->second = r.at;
  }
  std::map<std::string, std::pair<const JobUsageRow*, TimeMs>> jobs;
  for (size_t i = 0; i < b.jobs.size(); ++i) {
    const JobUsageRow& r = b.jobs[i];
    auto q = db.query(kInsertJob);
    if (!q) return q.error();
    q->bind(1, r.job_id).bind(2, r.at).bind(3, seq).bind(4, static_cast<int64_t>(i)).bind(5, r.storage_io_bytes);
    q->bind(6, r.egress_bytes).bind(7, r.input_tokens).bind(8, r.output_tokens).bind(9, r.requests);
    if (auto s = q->run("storing a job usage sample"); !s) return s;
    auto [it, fresh] = jobs.emplace(r.job_id, std::make_pair(&r, r.at));
    if (!fresh && r.at < it->second.second) it->second.second = r.at;
  }
  for (const auto& [g, from] : gpus) {
    auto q = db.query(kTrackGpu);
    if (!q) return q.error();
    q->bind(1, g.first).bind(2, g.second).bind(3, from);
    if (auto s = q->run("tracking a GPU's raw usage"); !s) return s;
  }
  for (const auto& [id, row_from] : jobs) {
    auto q = db.query(kTrackJob);
    if (!q) return q.error();
    q->bind(1, id).bind(2, row_from.first->tenant_id).bind(3, row_from.first->project_id).bind(4, row_from.second);
    if (auto s = q->run("tracking a job's raw usage"); !s) return s;
  }
  return ok_status();
}

}  // namespace

Result<UsageIngestOutcome> store_usage_batch(Db& db, const UsageBatchRows& b) {
  if (!db.in_transaction()) return needs_write_transaction("insert_usage_batch");
  {
    auto q = db.query(kFindBatch);
    if (!q) return q.error();
    q->bind(1, b.scope).bind(2, b.idempotency_key);
    auto row = q->step("looking up an idempotency key");
    if (!row) return row.error();
    if (*row) {
      if (q->text(0) != b.content_sha256) return idempotency_conflict(b.idempotency_key);
      return UsageIngestOutcome{true, q->integer(1), q->integer(2), q->integer(3)};
    }
  }
  int64_t seq = 0;
  {
    auto q = db.query(kInsertBatch);
    if (!q) return q.error();
    q->bind(1, b.idempotency_key).bind(2, b.content_sha256).bind(3, b.received_at).bind(4, b.submitted_by);
    q->bind(5, static_cast<int64_t>(b.gpu.size())).bind(6, static_cast<int64_t>(b.jobs.size())).bind(7, b.scope);
    auto row = q->step("storing a usage batch");
    if (!row) return row.error();
    if (!*row) return Error::make(Code::kInternal, "storing a usage batch: no sequence number returned");
    seq = q->integer(0);
    if (auto done = q->step("storing a usage batch"); !done) return done.error();
  }
  if (auto s = insert_rows(db, b, seq); !s) return s.error();
  return UsageIngestOutcome{false, static_cast<int64_t>(b.gpu.size()), static_cast<int64_t>(b.jobs.size()),
                            b.received_at};
}

namespace {

const std::string kGpusDue = "SELECT node_id, gpu FROM usage_gpus WHERE raw_from < ?1";
const std::string kFoldGpu =
    "INSERT INTO usage_gpu_minutes (node_id, gpu, minute, samples, util_sum, util_max, mem_n, mem_sum, mem_max,"
    " power_n, power_sum, power_max, clock_n, clock_sum, clock_max, gr_n, gr_sum, gr_max)"
    " SELECT node_id, gpu, at - at % 60000 AS m, count(*), sum(utilization_pct), max(utilization_pct),"
    " count(memory_used_mib), coalesce(sum(memory_used_mib), 0), coalesce(max(memory_used_mib), 0),"
    " count(power_mw), coalesce(sum(power_mw), 0), coalesce(max(power_mw), 0),"
    " count(sm_clock_mhz), coalesce(sum(sm_clock_mhz), 0), coalesce(max(sm_clock_mhz), 0),"
    " count(gr_engine_active_pct), coalesce(sum(gr_engine_active_pct), 0), coalesce(max(gr_engine_active_pct), 0)"
    " FROM usage_gpu_samples WHERE node_id = ?1 AND gpu = ?2 AND at < ?3 GROUP BY m"
    " ON CONFLICT (node_id, gpu, minute) DO UPDATE SET samples = samples + excluded.samples,"
    " util_sum = util_sum + excluded.util_sum, util_max = max(util_max, excluded.util_max),"
    " mem_n = mem_n + excluded.mem_n, mem_sum = mem_sum + excluded.mem_sum, mem_max = max(mem_max, excluded.mem_max),"
    " power_n = power_n + excluded.power_n, power_sum = power_sum + excluded.power_sum,"
    " power_max = max(power_max, excluded.power_max),"
    " clock_n = clock_n + excluded.clock_n, clock_sum = clock_sum + excluded.clock_sum,"
    " clock_max = max(clock_max, excluded.clock_max),"
    " gr_n = gr_n + excluded.gr_n, gr_sum = gr_sum + excluded.gr_sum, gr_max = max(gr_max, excluded.gr_max)";
const std::string kDropGpuRaw = "DELETE FROM usage_gpu_samples WHERE node_id = ?1 AND gpu = ?2 AND at < ?3";
const std::string kRetrackGpu =
    "UPDATE usage_gpus SET raw_from = (SELECT min(at) FROM usage_gpu_samples WHERE node_id = ?1 AND gpu = ?2)"
    " WHERE node_id = ?1 AND gpu = ?2";

const std::string kJobsDue = "SELECT job_id FROM usage_jobs WHERE raw_from < ?1";
const std::string kFoldJob =
    "INSERT INTO usage_job_minutes (job_id, minute, samples, storage_io_bytes, egress_bytes, input_tokens,"
    " output_tokens, requests)"
    " SELECT job_id, at - at % 60000 AS m, count(*), sum(storage_io_bytes), sum(egress_bytes), sum(input_tokens),"
    " sum(output_tokens), sum(requests) FROM usage_job_samples WHERE job_id = ?1 AND at < ?2 GROUP BY m"
    " ON CONFLICT (job_id, minute) DO UPDATE SET samples = samples + excluded.samples,"
    " storage_io_bytes = storage_io_bytes + excluded.storage_io_bytes,"
    " egress_bytes = egress_bytes + excluded.egress_bytes, input_tokens = input_tokens + excluded.input_tokens,"
    " output_tokens = output_tokens + excluded.output_tokens, requests = requests + excluded.requests";
const std::string kDropJobRaw = "DELETE FROM usage_job_samples WHERE job_id = ?1 AND at < ?2";
const std::string kRetrackJob =
    "UPDATE usage_jobs SET raw_from = (SELECT min(at) FROM usage_job_samples WHERE job_id = ?1) WHERE job_id = ?1";
const std::string kForgetBatches = "DELETE FROM usage_batches WHERE received_at < ?1";

// Runs a statement bound by `bind`, returning the rows it changed.
template <class Bind>
Result<int64_t> exec_counted(Db& db, const std::string& sql, const char* what, Bind&& bind) {
  auto q = db.query(sql);
  if (!q) return q.error();
  bind(*q);
  if (auto s = q->run(what); !s) return s.error();
  return db.changes();
}

}  // namespace

Result<UsageRollupStats> roll_up_usage_rows(Db& db, TimeMs raw_before, TimeMs keys_before) {
  if (!db.in_transaction()) return needs_write_transaction("roll_up_usage");
  const TimeMs cut = floor_to_minute(raw_before);
  UsageRollupStats st;
  auto due_gpus = db.query(kGpusDue);
  if (!due_gpus) return due_gpus.error();
  due_gpus->bind(1, cut);
  auto gpus =
      due_gpus->collect("listing GPUs to roll up", [](Query& r) { return std::make_pair(r.text(0), r.integer(1)); });
  if (!gpus) return gpus.error();
  for (const auto& [node, gpu] : *gpus) {
    auto bind = [&](Query& q) { q.bind(1, node).bind(2, gpu).bind(3, cut); };
    if (auto n = exec_counted(db, kFoldGpu, "rolling up GPU usage", bind); !n) return n.error();
    auto dropped = exec_counted(db, kDropGpuRaw, "dropping rolled-up GPU samples", bind);
    if (!dropped) return dropped.error();
    st.gpu_samples += *dropped;
    auto re =
        exec_counted(db, kRetrackGpu, "tracking a GPU's raw usage", [&](Query& q) { q.bind(1, node).bind(2, gpu); });
    if (!re) return re.error();
  }
  auto due_jobs = db.query(kJobsDue);
  if (!due_jobs) return due_jobs.error();
  due_jobs->bind(1, cut);
  auto jobs = due_jobs->collect("listing jobs to roll up", [](Query& r) { return r.text(0); });
  if (!jobs) return jobs.error();
  for (const auto& job : *jobs) {
    auto bind = [&](Query& q) { q.bind(1, job).bind(2, cut); };
    if (auto n = exec_counted(db, kFoldJob, "rolling up job usage", bind); !n) return n.error();
    auto dropped = exec_counted(db, kDropJobRaw, "dropping rolled-up job samples", bind);
    if (!dropped) return dropped.error();
    st.job_samples += *dropped;
    auto re = exec_counted(db, kRetrackJob, "tracking a job's raw usage", [&](Query& q) { q.bind(1, job); });
    if (!re) return re.error();
  }
  auto forgot =
      exec_counted(db, kForgetBatches, "forgetting old idempotency keys", [&](Query& q) { q.bind(1, keys_before); });
  if (!forgot) return forgot.error();
  st.batches_forgotten = *forgot;
  return st;
}

namespace {

// A series is read as two queries, each in its table's primary-key order (no sort), merged here:
// one UNION ALL ... ORDER BY t, rolled DESC made SQLite sort the raw samples in a temporary B-tree,
// which took three quarters of the read (bench/run usage_series).
const std::string kGpuMinutes =
    "SELECT minute, 1, samples, samples, util_sum, util_max, mem_n, mem_sum, mem_max, power_n, power_sum, power_max,"
    " clock_n, clock_sum, clock_max, gr_n, gr_sum, gr_max FROM usage_gpu_minutes"
    " WHERE node_id = ?1 AND gpu = ?2 AND minute >= ?3 AND minute < ?4 ORDER BY minute LIMIT ?5";
const std::string kGpuRaw =
    "SELECT at, 0, 1, 1, utilization_pct, utilization_pct,"
    " memory_used_mib IS NOT NULL, coalesce(memory_used_mib, 0), coalesce(memory_used_mib, 0),"
    " power_mw IS NOT NULL, coalesce(power_mw, 0), coalesce(power_mw, 0),"
    " sm_clock_mhz IS NOT NULL, coalesce(sm_clock_mhz, 0), coalesce(sm_clock_mhz, 0),"
    " gr_engine_active_pct IS NOT NULL, coalesce(gr_engine_active_pct, 0), coalesce(gr_engine_active_pct, 0)"
    " FROM usage_gpu_samples WHERE node_id = ?1 AND gpu = ?2 AND at >= ?3 AND at < ?4 ORDER BY at, batch LIMIT ?5";
const std::string kJobMinutes =
    "SELECT minute, 1, samples, storage_io_bytes, egress_bytes, input_tokens, output_tokens, requests"
    " FROM usage_job_minutes WHERE job_id = ?1 AND minute >= ?2 AND minute < ?3 ORDER BY minute LIMIT ?4";
const std::string kJobRaw =
    "SELECT at, 0, 1, storage_io_bytes, egress_bytes, input_tokens, output_tokens, requests"
    " FROM usage_job_samples WHERE job_id = ?1 AND at >= ?2 AND at < ?3 ORDER BY at, batch, ord LIMIT ?4";

// Runs read() in one read transaction: a rollup committed between a series' two queries would
// otherwise move points out of the first one's view into the second's (or back).
template <class F>
auto in_one_snapshot(Db& db, F&& read) -> decltype(read()) {
  if (db.in_transaction()) return read();
  static const std::string kBegin = "BEGIN", kCommit = "COMMIT", kRollback = "ROLLBACK";
  if (auto s = db.run(kBegin); !s) return s.error();
  auto out = read();
  if (!out) {  // its own error, not COMMIT's (SQLite may have rolled back already: BUSY, IOERR)
    if (db.in_transaction()) (void)db.run(kRollback);
    return out;
  }
  if (auto s = db.run(kCommit); !s) {
    if (db.in_transaction()) (void)db.run(kRollback);
    return s.error();
  }
  return out;
}

// The first `limit` points of the rolled-up minutes and the raw samples (each sorted by time)
// together, by time; a minute before a raw sample of the same instant.
template <class Point>
std::vector<Point> merge_series(std::vector<Point> minutes, std::vector<Point> raw, int limit) {
  if (minutes.empty()) return raw;
  if (raw.empty()) return minutes;
  const size_t n = std::min(minutes.size() + raw.size(), static_cast<size_t>(limit));
  std::vector<Point> out;
  out.reserve(n);
  auto m = minutes.begin(), r = raw.begin();
  while (out.size() < n) {
    if (r == raw.end() || (m != minutes.end() && m->at <= r->at))
      out.push_back(std::move(*m++));
    else
      out.push_back(std::move(*r++));
  }
  return out;
}

const std::string kTenantJobSeries =
    "SELECT j.job_id, m.minute, 1, m.samples, m.storage_io_bytes, m.egress_bytes, m.input_tokens, m.output_tokens,"
    " m.requests FROM usage_jobs j JOIN usage_job_minutes m ON m.job_id = j.job_id"
    " WHERE j.tenant_id = ?1 AND m.minute >= ?2 AND m.minute < ?3"
    " UNION ALL SELECT j.job_id, s.at, 0, 1, s.storage_io_bytes, s.egress_bytes, s.input_tokens, s.output_tokens,"
    " s.requests FROM usage_jobs j JOIN usage_job_samples s ON s.job_id = j.job_id"
    " WHERE j.tenant_id = ?1 AND s.at >= ?2 AND s.at < ?3 ORDER BY 1, 2, 3 DESC LIMIT ?4";
const std::string kUsageJobTotals =
    "SELECT coalesce(sum(n), 0), coalesce(sum(s), 0), coalesce(sum(e), 0), coalesce(sum(i), 0), coalesce(sum(o), 0),"
    " coalesce(sum(r), 0) FROM ("
    " SELECT samples AS n, storage_io_bytes AS s, egress_bytes AS e, input_tokens AS i, output_tokens AS o,"
    " requests AS r FROM usage_job_minutes WHERE job_id = ?1 AND minute >= ?2 AND minute < ?3"
    " UNION ALL SELECT 1, storage_io_bytes, egress_bytes, input_tokens, output_tokens, requests"
    " FROM usage_job_samples WHERE job_id = ?1 AND at >= ?2 AND at < ?3)";

}  // namespace

Result<std::vector<GpuUsagePoint>> query_gpu_usage(Db& db, const std::string& node_id, int64_t gpu, TimeMs from,
                                                   TimeMs to, int limit) {
  if (auto s = check_series_range(from, to, limit); !s) return s.error();
  auto read = [&](const std::string& sql) -> Result<std::vector<GpuUsagePoint>> {
    auto q = db.query(sql);
    if (!q) return q.error();
    q->bind(1, node_id).bind(2, gpu).bind(3, from).bind(4, to).bind(5, int64_t{limit});
    return q->collect("reading GPU usage", [](Query& r) { return read_gpu_point(r); });
  };
  return in_one_snapshot(db, [&]() -> Result<std::vector<GpuUsagePoint>> {
    auto minutes = read(kGpuMinutes);
    if (!minutes) return minutes.error();
    auto raw = read(kGpuRaw);
    if (!raw) return raw.error();
    return merge_series(std::move(*minutes), std::move(*raw), limit);
  });
}

Result<std::vector<JobUsagePoint>> query_job_usage(Db& db, const std::string& job_id, TimeMs from, TimeMs to,
                                                   int limit) {
  if (auto s = check_series_range(from, to, limit); !s) return s.error();
  auto read = [&](const std::string& sql) -> Result<std::vector<JobUsagePoint>> {
    auto q = db.query(sql);
    if (!q) return q.error();
    q->bind(1, job_id).bind(2, from).bind(3, to).bind(4, int64_t{limit});
    return q->collect("reading job usage", [](Query& r) { return read_job_point(r); });
  };
  return in_one_snapshot(db, [&]() -> Result<std::vector<JobUsagePoint>> {
    auto minutes = read(kJobMinutes);
    if (!minutes) return minutes.error();
    auto raw = read(kJobRaw);
    if (!raw) return raw.error();
    return merge_series(std::move(*minutes), std::move(*raw), limit);
  });
}

Result<std::vector<std::pair<std::string, JobUsagePoint>>> query_tenant_job_usage(Db& db, const std::string& tenant_id,
                                                                                  TimeMs from, TimeMs to, int limit) {
  if (auto s = check_tenant_series_range(from, to, limit); !s) return s.error();
  auto q = db.query(kTenantJobSeries);
  if (!q) return q.error();
  q->bind(1, tenant_id).bind(2, from).bind(3, to).bind(4, int64_t{limit});
  return q->collect("reading the tenant's job usage",
                    [](Query& r) { return std::make_pair(r.text(0), read_job_point(r, 1)); });
}

Result<std::vector<JobUsageTotals>> query_job_usage_totals(Db& db, const JobUsageFilter& f) {
  if (auto s = check_totals_filter(f); !s) return s.error();
  static const std::string kColumns[] = {"job_id", "project_id", "tenant_id"};
  const std::string sql = "SELECT job_id, tenant_id, project_id FROM usage_jobs WHERE " +
                          kColumns[totals_filter_column(f)] + " = ?1 ORDER BY job_id";
  auto metered = db.query(sql);
  if (!metered) return metered.error();
  metered->bind(1, totals_filter_value(f));
  auto jobs = metered->collect("listing metered jobs", [](Query& r) { return read_metered_job(r); });
  if (!jobs) return jobs.error();
  std::vector<JobUsageTotals> out;
  for (JobUsageTotals& t : *jobs) {
    auto q = db.query(kUsageJobTotals);
    if (!q) return q.error();
    q->bind(1, t.job_id).bind(2, f.from).bind(3, f.to);
    auto row = q->step("summing job usage");
    if (!row) return row.error();
    if (!*row) continue;
    read_totals(*q, 0, t);
    if (t.samples == 0) continue;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace gpurent
