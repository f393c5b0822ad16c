// The mapping of SQLite schema version 9 (migrations.cc) onto PostgreSQL schema version 8
// (pg_migrations.cc). A new SQLite table, or a new column, needs its line here: migrate_store
// refuses a SQLite file with a table that is neither mapped nor listed as not copied, and the
// PostgreSQL COPY fails on a column the target lacks.
#include "store/migrate_tables.h"

namespace gpurent {
namespace {

using T = ColumnType;

std::vector<TableMap> build() {
  std::vector<TableMap> out;
  // objects: `scope` is a generated column on both sides (VIRTUAL in SQLite, STORED in PostgreSQL)
  // and is not copied; body TEXT becomes jsonb (the document is checked to be JSON on the way in;
  // the character U+0000, which jsonb cannot hold, fails the copy naming the table).
  out.push_back({"objects",
                 {{"kind", T::kText},
                  {"id", T::kText},
                  {"name", T::kNullableText},  // NULL for unnamed objects on both sides
                  {"tenant_id", T::kText},
                  {"supplier_id", T::kText},
                  {"project_id", T::kText},
                  {"state", T::kText},
                  {"region", T::kText},
                  {"gpu_model", T::kText},
                  {"created_at", T::kInteger},
                  {"updated_at", T::kInteger},
                  {"version", T::kInteger},
                  {"body", T::kJson}},
                 "kind, id"});
  // api_tokens: revoked is INTEGER 0/1 in SQLite, boolean in PostgreSQL.
  out.push_back({"api_tokens",
                 {{"id", T::kText},
                  {"user_id", T::kText},
                  {"tenant_id", T::kText},
                  {"supplier_id", T::kText},
                  {"role", T::kText},
                  {"name", T::kText},
                  {"secret_hash", T::kText},
                  {"created_at", T::kInteger},
                  {"expires_at", T::kInteger},
                  {"revoked", T::kBoolean}},
                 "id"});
  // job_events and audit_log: seq (SQLite's rowid, the append order) becomes an identity column;
  // the values are kept, so the order of events and of audit entries is the same.
  out.push_back({"job_events",
                 {{"seq", T::kInteger},
                  {"job_id", T::kText},
                  {"at", T::kInteger},
                  {"from_state", T::kText},
                  {"to_state", T::kText},
                  {"reason", T::kText},
                  {"reason_message", T::kText}},
                 "seq",
                 "seq"});
  out.push_back({"audit_log",
                 {{"seq", T::kInteger},
                  {"at", T::kInteger},
                  {"actor", T::kText},
                  {"action", T::kText},
                  {"kind", T::kText},
                  {"object_id", T::kText},
                  {"detail", T::kText}},
                 "seq",
                 "seq"});
  // usage_batches: seq becomes an identity column too, and keeps its values: the raw samples'
  // `batch` column refers to it.
  out.push_back({"usage_batches",
                 {{"seq", T::kInteger},
                  {"scope", T::kText},
                  {"idempotency_key", T::kText},
                  {"content_sha256", T::kText},
                  {"received_at", T::kInteger},
                  {"submitted_by", T::kText},
                  {"gpu_samples", T::kInteger},
                  {"job_samples", T::kInteger}},
                 "seq",
                 "seq"});
  // The raw samples: one table each in SQLite (WITHOUT ROWID), partitioned by month in PostgreSQL.
  out.push_back({"usage_gpu_samples",
                 {{"node_id", T::kText},
                  {"gpu", T::kInteger},
                  {"at", T::kInteger},
                  {"batch", T::kInteger},
                  {"utilization_pct", T::kInteger},
                  {"memory_used_mib", T::kNullableInteger},
                  {"power_mw", T::kNullableInteger},
                  {"sm_clock_mhz", T::kNullableInteger},
                  {"gr_engine_active_pct", T::kNullableInteger}},
                 "node_id, gpu, at, batch",
                 "",
                 true});
  out.push_back({"usage_job_samples",
                 {{"job_id", T::kText},
                  {"at", T::kInteger},
                  {"batch", T::kInteger},
                  {"ord", T::kInteger},
                  {"storage_io_bytes", T::kInteger},
                  {"egress_bytes", T::kInteger},
                  {"input_tokens", T::kInteger},
                  {"output_tokens", T::kInteger},
                  {"requests", T::kInteger}},
                 "job_id, at, batch, ord",
                 "",
                 true});
  out.push_back(
      {"usage_gpus", {{"node_id", T::kText}, {"gpu", T::kInteger}, {"raw_from", T::kNullableInteger}}, "node_id, gpu"});
  out.push_back(
      {"usage_jobs",
       {{"job_id", T::kText}, {"tenant_id", T::kText}, {"project_id", T::kText}, {"raw_from", T::kNullableInteger}},
       "job_id"});
  TableMap gpu_minutes{"usage_gpu_minutes",
                       {{"node_id", T::kText}, {"gpu", T::kInteger}, {"minute", T::kInteger}},
                       "node_id, gpu, minute"};
  for (const char* c : {"samples", "util_sum", "util_max", "mem_n", "mem_sum", "mem_max", "power_n", "power_sum",
                        "power_max", "clock_n", "clock_sum", "clock_max", "gr_n", "gr_sum", "gr_max"})
    gpu_minutes.columns.push_back({c, T::kInteger});
  out.push_back(std::move(gpu_minutes));
  TableMap job_minutes{"usage_job_minutes", {{"job_id", T::kText}, {"minute", T::kInteger}}, "job_id, minute"};
  for (const char* c : {"samples", "storage_io_bytes", "egress_bytes", "input_tokens", "output_tokens", "requests"})
    job_minutes.columns.push_back({c, T::kInteger});
  out.push_back(std::move(job_minutes));
  // job_metric_points: value REAL -> double precision (both IEEE doubles: exact); higher_is_better
  // INTEGER 0/1 -> boolean.
  out.push_back({"job_metric_points",
                 {{"job_id", T::kText},
                  {"name", T::kText},
                  {"at", T::kInteger},
                  {"tenant_id", T::kText},
                  {"project_id", T::kText},
                  {"value", T::kReal},
                  {"higher_is_better", T::kBoolean}},
                 "job_id, name, at"});
  // tenant_storage: each tenant's stored bytes, kept by the object writes (backend_store.h), so
  // copied as it is, like the objects it sums.
  out.push_back({"tenant_storage", {{"tenant_id", T::kText}, {"bytes", T::kInteger}}, "tenant_id"});
  return out;
}

}  // namespace

const std::vector<TableMap>& migration_tables() {
  static const std::vector<TableMap> tables = build();
  return tables;
}

const std::vector<SkippedTable>& tables_not_copied() {
  // PostgreSQL's usage_partitions has no SQLite twin: usage_ensure_month_partitions fills it as the
  // copy creates the partitions.
  static const std::vector<SkippedTable> skipped = {
      {"schema_migrations",
       "each backend records its own schema versions, numbered apart; the target's are those its own "
       "migrations wrote"},
  };
  return skipped;
}

}  // namespace gpurent
