// The SQL behind PostgresStore, as free functions over one connection: the writer inside its
// transaction (StoreTx) and the read-only reader connections (Store reads) share them. Each
// mirrors its SQLite twin in sqlite_queries.h / sqlite_usage.h: same checks, same errors, same
// order of results. Every value is a parameter ($1, ...); the only identifiers spliced into SQL
// are filter column names checked against fixed allow-lists.
// Not thread-safe: the caller owns `db` for the duration of the call.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "store/migrations.h"
#include "store/pg_db.h"
#include "store/store.h"

namespace gpurent {

// objects (pg_objects.cc)
Status pg_insert_object(PgConn& db, const Record& r);
Status pg_update_object(PgConn& db, const Record& r);
Status pg_remove_object(PgConn& db, const std::string& kind, const std::string& id);
Result<Record> pg_get_object(PgConn& db, const std::string& kind, const std::string& id);
Result<Page> pg_list_objects(PgConn& db, const ListQuery& q);
Result<int64_t> pg_count_objects(PgConn& db, const std::string& kind, const std::map<std::string, std::string>& eq);
// "limit" must lie in 1..1000 (lists and the audit log).
Status pg_check_limit(int limit);

// api_tokens, job_events, audit_log (pg_logs.cc)
Status pg_insert_token(PgConn& db, const TokenRow& t);
Status pg_revoke_token(PgConn& db, const std::string& token_id);
Status pg_revoke_user_tokens(PgConn& db, const std::string& user_id);
Result<std::optional<TokenRow>> pg_find_token_by_hash(PgConn& db, const std::string& secret_hash);
Result<std::vector<TokenRow>> pg_list_tokens(PgConn& db, const std::map<std::string, std::string>& eq);
Status pg_append_job_event(PgConn& db, const JobEvent& e);
Result<std::vector<JobEvent>> pg_list_job_events(PgConn& db, const std::string& job_id);
Status pg_append_audit(PgConn& db, const AuditEntry& a);
Result<std::vector<AuditEntry>> pg_list_audit(PgConn& db, const std::string& kind, int limit);

// usage (pg_usage.cc, pg_usage_queries.cc). Insert and rollup run inside the write transaction.
Result<UsageIngestOutcome> pg_insert_usage_batch(PgConn& db, const UsageBatchRows& b);
Result<UsageRollupStats> pg_roll_up_usage(PgConn& db, TimeMs raw_before, TimeMs keys_before);
Result<std::vector<GpuUsagePoint>> pg_gpu_usage(PgConn& db, const std::string& node_id, int64_t gpu, TimeMs from,
                                                TimeMs to, int limit);
Result<std::vector<JobUsagePoint>> pg_job_usage(PgConn& db, const std::string& job_id, TimeMs from, TimeMs to,
                                                int limit);
Result<std::vector<std::pair<std::string, JobUsagePoint>>> pg_tenant_job_usage(PgConn& db, const std::string& tenant_id,
                                                                               TimeMs from, TimeMs to, int limit);
Result<std::vector<JobUsageTotals>> pg_job_usage_totals(PgConn& db, const JobUsageFilter& f);
Result<std::vector<GpuBucket>> pg_gpu_usage_buckets(PgConn& db, const GpuBucketQuery& q);

// job_metric_points (pg_metrics.cc)
Status pg_insert_job_metrics(PgConn& db, const std::vector<JobMetricRow>& rows);
Result<std::vector<JobMetricRow>> pg_job_metrics(PgConn& db, const JobMetricFilter& f);

// Schema (pg_migrations.cc): the PostgreSQL schema's own versions, oldest first (numbered apart
// from SQLite's: the two schemas differ in their SQL, not in what they store).
std::span<const Migration> postgres_migrations();
// Applies every migration newer than the database's version, each in its own transaction under
// an advisory lock (two servers opening one database at once apply each migration once).
// Returns the resulting version; a database newer than `migrations` is refused.
Result<int> pg_apply_migrations(PgConn& db, std::span<const Migration> migrations, TimeMs now);
Result<int> pg_applied_schema_version(PgConn& db);

}  // namespace gpurent
