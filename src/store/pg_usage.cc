// Usage on PostgreSQL, the write side: idempotent batch insert into the month-partitioned raw
// sample tables and the per-minute rollup. Same contract as the SQLite twin (sqlite_usage.cc).
// A batch's rows travel as a few array parameters and are spread by unnest(), so a batch of any
// size is a handful of round trips, not one per sample; one batch is the caller's transaction.
#include <string>
#include <utility>
#include <vector>

#include "store/pg_queries.h"
#include "store/store_checks.h"

namespace gpurent {
namespace {

const std::string kFindBatch =
    "SELECT content_sha256, gpu_samples, job_samples, received_at FROM usage_batches"
    " WHERE scope = $1 AND idempotency_key = $2";
const std::string kInsertBatch =
    "INSERT INTO usage_batches (idempotency_key, content_sha256, received_at, submitted_by, gpu_samples, job_samples,"
    " scope) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT ON CONSTRAINT usage_batches_key DO NOTHING RETURNING seq";
const std::string kEnsurePartitions = "SELECT usage_ensure_month_partitions($1::text, $2::bigint[])";
// The samples, and the GPUs' earliest raw sample (NULL-free least() keeps the older).
const std::string kInsertGpu =
    "WITH r AS (SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[],"
    " $6::bigint[], $7::bigint[], $8::bigint[]) AS t(node_id, gpu, at, util, mem, power, clock, gr)),"
    " ins AS (INSERT INTO usage_gpu_samples (node_id, gpu, at, batch, utilization_pct, memory_used_mib, power_mw,"
    " sm_clock_mhz, gr_engine_active_pct) SELECT node_id, gpu, at, $9::bigint, util, mem, power, clock, gr FROM r)"
    " INSERT INTO usage_gpus (node_id, gpu, raw_from) SELECT node_id, gpu, min(at) FROM r GROUP BY node_id, gpu"
    " ON CONFLICT (node_id, gpu) DO UPDATE SET raw_from = least(usage_gpus.raw_from, excluded.raw_from)";
// The samples (ord: the row's place in the batch), and each job's tenant and project as its first
// row of the batch gives them (kept when the job is already known) and earliest raw sample.
const std::string kInsertJob =
    "WITH r AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[],"
    " $7::bigint[], $8::bigint[], $9::bigint[]) WITH ORDINALITY"
    " AS t(job_id, tenant_id, project_id, at, io, egress, tokens_in, tokens_out, requests, ord)),"
    " ins AS (INSERT INTO usage_job_samples (job_id, at, batch, ord, storage_io_bytes, egress_bytes, input_tokens,"
    " output_tokens, requests) SELECT job_id, at, $10::bigint, ord - 1, io, egress, tokens_in, tokens_out, requests"
    " FROM r)"
    " INSERT INTO usage_jobs (job_id, tenant_id, project_id, raw_from)"
    " SELECT DISTINCT ON (job_id) job_id, tenant_id, project_id, min(at) OVER (PARTITION BY job_id) FROM r"
    " ORDER BY job_id, ord"
    " ON CONFLICT (job_id) DO UPDATE SET raw_from = least(usage_jobs.raw_from, excluded.raw_from)";

Status check_times(const UsageBatchRows& b) {
  auto outside = [](TimeMs at) { return !partitionable(at); };
  const std::string why = kPartitionableRange;
  for (size_t i = 0; i < b.gpu.size(); ++i)
    if (outside(b.gpu[i].at)) return Error::invalid("gpu[" + std::to_string(i) + "].at", why);
  for (size_t i = 0; i < b.jobs.size(); ++i)
    if (outside(b.jobs[i].at)) return Error::invalid("jobs[" + std::to_string(i) + "].at", why);
  return ok_status();
}

Status insert_gpu_rows(PgConn& db, const std::vector<GpuUsageRow>& rows, int64_t seq) {
  if (rows.empty()) return ok_status();
  std::vector<std::string> nodes;
  std::vector<int64_t> gpus, ats, util;
  std::vector<std::optional<int64_t>> mem, power, clock, gr;
  for (const GpuUsageRow& r : rows) {
    nodes.push_back(r.node_id);
    gpus.push_back(r.gpu);
    ats.push_back(r.at);
    util.push_back(r.utilization_pct);
    mem.push_back(r.memory_used_mib);
    power.push_back(r.power_mw);
    clock.push_back(r.sm_clock_mhz);
    gr.push_back(r.gr_engine_active_pct);
  }
  auto made = db.query(kEnsurePartitions, PgParams().add("usage_gpu_samples").add_array(ats),
                       "creating the month partitions of GPU usage samples");
  if (!made) return made.error();
  PgParams p;
  p.add_array(nodes).add_array(gpus).add_array(ats).add_array(util).add_array(mem).add_array(power).add_array(clock);
  p.add_array(gr).add(seq);
  auto n = db.exec(kInsertGpu, p, "storing GPU usage samples");
  return n ? ok_status() : Status(n.error());
}

Status insert_job_rows(PgConn& db, const std::vector<JobUsageRow>& rows, int64_t seq) {
  if (rows.empty()) return ok_status();
  std::vector<std::string> jobs, tenants, projects;
  std::vector<int64_t> ats, io, egress, tokens_in, tokens_out, requests;
  for (const JobUsageRow& r : rows) {
    jobs.push_back(r.job_id);
    tenants.push_back(r.tenant_id);
    projects.push_back(r.project_id);
    ats.push_back(r.at);
    io.push_back(r.storage_io_bytes);
    egress.push_back(r.egress_bytes);
    tokens_in.push_back(r.input_tokens);
    tokens_out.push_back(r.output_tokens);
    requests.push_back(r.requests);
  }
  auto made = db.query(kEnsurePartitions, PgParams().add("usage_job_samples").add_array(ats),
                       "creating the month partitions of job usage samples");
  if (!made) return made.error();
  PgParams p;
  p.add_array(jobs).add_array(tenants).add_array(projects).add_array(ats).add_array(io).add_array(egress);
  p.add_array(tokens_in).add_array(tokens_out).add_array(requests).add(seq);
  auto n = db.exec(kInsertJob, p, "storing job usage samples");
  return n ? ok_status() : Status(n.error());
}

}  // namespace

Result<UsageIngestOutcome> store_usage_batch(PgConn& db, const UsageBatchRows& b) {
  if (db.tx_status() != PQTRANS_INTRANS) return needs_write_transaction("insert_usage_batch");
  // The batch already stored under its key: the same content is a duplicate, other content a conflict.
  auto stored = [&]() -> Result<std::optional<UsageIngestOutcome>> {
    auto row = db.query(kFindBatch, PgParams().add(b.scope).add(b.idempotency_key), "looking up an idempotency key");
    if (!row) return row.error();
    if (row->size() == 0) return std::optional<UsageIngestOutcome>();
    if (row->text(0, 0) != b.content_sha256) return idempotency_conflict(b.idempotency_key);
    return std::optional<UsageIngestOutcome>(
        UsageIngestOutcome{true, row->integer(0, 1), row->integer(0, 2), row->integer(0, 3)});
  };
  {
    auto before = stored();
    if (!before) return before.error();
    if (*before) return **before;
  }
  if (auto s = check_times(b); !s) return s.error();
  PgParams p;
  p.add(b.idempotency_key).add(b.content_sha256).add(b.received_at).add(b.submitted_by);
  p.add(static_cast<int64_t>(b.gpu.size())).add(static_cast<int64_t>(b.jobs.size())).add(b.scope);
  auto row = db.query(kInsertBatch, p, "storing a usage batch");
  if (!row) return row.error();
  if (row->size() == 0) {  // another server committed the same key meanwhile (a retry sent to both)
    auto after = stored();
    if (!after) return after.error();
    if (*after) return **after;
    return Error::make(Code::kInternal, "storing a usage batch: its key was taken and then not found");
  }
  if (row->size() != 1) return Error::make(Code::kInternal, "storing a usage batch: no sequence number returned");
  const int64_t seq = row->integer(0, 0);
  if (auto s = insert_gpu_rows(db, b.gpu, seq); !s) return s.error();
  if (auto s = insert_job_rows(db, b.jobs, seq); !s) return s.error();
  return UsageIngestOutcome{false, static_cast<int64_t>(b.gpu.size()), static_cast<int64_t>(b.jobs.size()),
                            b.received_at};
}

namespace {

// The rollup works on every raw row before the cut at once (one statement per step rather than
// one per GPU as on SQLite): the rows before the cut are the oldest partitions' rows, which a
// range scan of them reads in one pass. `at - at % 60000` is SQLite's minute expression, so the
// two backends put every sample in the same minute. Each fold is one statement that deletes the
// raw rows and folds exactly the rows it deleted: as a fold then a delete, a late sample another
// server committed between the two would be deleted without being folded.
const std::string kFoldGpu =
    "WITH gone AS (DELETE FROM usage_gpu_samples WHERE at < $1 RETURNING node_id, gpu, at, utilization_pct,"
    " memory_used_mib, power_mw, sm_clock_mhz, gr_engine_active_pct),"
    " folded AS (INSERT INTO usage_gpu_minutes AS m (node_id, gpu, minute, samples, util_sum, util_max, mem_n, mem_sum, mem_max,"
    " power_n, power_sum, power_max, clock_n, clock_sum, clock_max, gr_n, gr_sum, gr_max)"
    " SELECT node_id, gpu, at - at % 60000 AS minute, count(*), sum(utilization_pct), max(utilization_pct),"
    " count(memory_used_mib), coalesce(sum(memory_used_mib), 0), coalesce(max(memory_used_mib), 0),"
    " count(power_mw), coalesce(sum(power_mw), 0), coalesce(max(power_mw), 0),"
    " count(sm_clock_mhz), coalesce(sum(sm_clock_mhz), 0), coalesce(max(sm_clock_mhz), 0),"
    " count(gr_engine_active_pct), coalesce(sum(gr_engine_active_pct), 0), coalesce(max(gr_engine_active_pct), 0)"
    " FROM gone GROUP BY node_id, gpu, at - at % 60000"
    " ON CONFLICT (node_id, gpu, minute) DO UPDATE SET samples = m.samples + excluded.samples,"
    " util_sum = m.util_sum + excluded.util_sum, util_max = greatest(m.util_max, excluded.util_max),"
    " mem_n = m.mem_n + excluded.mem_n, mem_sum = m.mem_sum + excluded.mem_sum,"
    " mem_max = greatest(m.mem_max, excluded.mem_max),"
    " power_n = m.power_n + excluded.power_n, power_sum = m.power_sum + excluded.power_sum,"
    " power_max = greatest(m.power_max, excluded.power_max),"
    " clock_n = m.clock_n + excluded.clock_n, clock_sum = m.clock_sum + excluded.clock_sum,"
    " clock_max = greatest(m.clock_max, excluded.clock_max),"
    " gr_n = m.gr_n + excluded.gr_n, gr_sum = m.gr_sum + excluded.gr_sum, gr_max = greatest(m.gr_max, excluded.gr_max)"
    " RETURNING 1)"
    " SELECT count(*) FROM gone";
const std::string kRetrackGpu =
    "UPDATE usage_gpus g SET raw_from = (SELECT min(at) FROM usage_gpu_samples s"
    " WHERE s.node_id = g.node_id AND s.gpu = g.gpu) WHERE raw_from < $1";

const std::string kFoldJob =
    "WITH gone AS (DELETE FROM usage_job_samples WHERE at < $1 RETURNING job_id, at, storage_io_bytes, egress_bytes,"
    " input_tokens, output_tokens, requests),"
    " folded AS (INSERT INTO usage_job_minutes AS m (job_id, minute, samples, storage_io_bytes, egress_bytes,"
    " input_tokens, output_tokens, requests)"
    " SELECT job_id, at - at % 60000 AS minute, count(*), sum(storage_io_bytes), sum(egress_bytes), sum(input_tokens),"
    " sum(output_tokens), sum(requests) FROM gone GROUP BY job_id, at - at % 60000"
    " ON CONFLICT (job_id, minute) DO UPDATE SET samples = m.samples + excluded.samples,"
    " storage_io_bytes = m.storage_io_bytes + excluded.storage_io_bytes,"
    " egress_bytes = m.egress_bytes + excluded.egress_bytes, input_tokens = m.input_tokens + excluded.input_tokens,"
    " output_tokens = m.output_tokens + excluded.output_tokens, requests = m.requests + excluded.requests"
    " RETURNING 1)"
    " SELECT count(*) FROM gone";
const std::string kRetrackJob =
    "UPDATE usage_jobs j SET raw_from = (SELECT min(at) FROM usage_job_samples s WHERE s.job_id = j.job_id)"
    " WHERE raw_from < $1";
const std::string kDropEmptied = "SELECT usage_drop_empty_partitions($1::bigint)";
const std::string kForgetBatches = "DELETE FROM usage_batches WHERE received_at < $1";

}  // namespace

Result<UsageRollupStats> roll_up_usage_rows(PgConn& db, TimeMs raw_before, TimeMs keys_before) {
  if (db.tx_status() != PQTRANS_INTRANS) return needs_write_transaction("roll_up_usage");
  const TimeMs cut = floor_to_minute(raw_before);
  const PgParams at_cut = PgParams().add(cut);
  UsageRollupStats st;
  const std::pair<const std::string*, const char*> folds[] = {{&kFoldGpu, "rolling up GPU usage"},
                                                              {&kFoldJob, "rolling up job usage"}};
  for (const auto& [sql, what] : folds) {
    auto n = db.query(*sql, at_cut, what);
    if (!n) return n.error();
    (sql == &kFoldGpu ? st.gpu_samples : st.job_samples) = n->integer(0, 0);
  }
  for (const auto& [sql, what] : {std::pair{&kRetrackGpu, "tracking GPUs' raw usage"},
                                  std::pair{&kRetrackJob, "tracking jobs' raw usage"}})
    if (auto n = db.exec(*sql, at_cut, what); !n) return n.error();
  // Every raw row before the cut is gone: the months that end by then are empty tables.
  if (auto r = db.query(kDropEmptied, at_cut, "dropping emptied month partitions"); !r) return r.error();
  auto forgot = db.exec(kForgetBatches, PgParams().add(keys_before), "forgetting old idempotency keys");
  if (!forgot) return forgot.error();
  st.batches_forgotten = *forgot;
  return st;
}

}  // namespace gpurent
