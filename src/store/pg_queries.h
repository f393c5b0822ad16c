// The SQL behind PostgresStore, as free functions over one connection: the writer inside its
// transaction (StoreTx) and the read-only reader connections (Store reads) share them. Each is
// an overload of its SQLite twin in sqlite_queries.h / sqlite_usage.h (same name, PgConn& for
// Db&), so one Store shell calls either (backend_store.h): same checks and errors (store_checks.h),
// same order of results. Every value is a parameter ($1, ...); the only identifiers spliced into SQL
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
#include "store/store_checks.h"

namespace gpurent {

// objects (pg_objects.cc)
Status insert_object(PgConn& db, const Record& r);
Status update_object(PgConn& db, const Record& r);
Status remove_object(PgConn& db, const std::string& kind, const std::string& id);
Result<Record> get_object(PgConn& db, const std::string& kind, const std::string& id);
Result<Record> get_object_locked(PgConn& db, const std::string& kind, const std::string& id);
Result<Record> get_object_shared(PgConn& db, const std::string& kind, const std::string& id);
Result<Page> list_objects(PgConn& db, const ListQuery& q);
Result<int64_t> select_tenant_stored_bytes(PgConn& db, const std::string& tenant_id);
// Adds delta (may be negative; 0 writes nothing) to the tenant's row of tenant_storage.
Status add_tenant_storage(PgConn& db, const std::string& tenant_id, int64_t delta);
Result<int64_t> count_objects(PgConn& db, const std::string& kind, const std::map<std::string, std::string>& eq);
Result<std::vector<std::string>> list_object_ids(PgConn& db, const std::string& kind,
                                                 const std::map<std::string, std::string>& eq);

// api_tokens, job_events, audit_log (pg_logs.cc)
Status insert_token_row(PgConn& db, const TokenRow& t);
Status revoke_token_row(PgConn& db, const std::string& token_id);
Status revoke_tokens_of_user(PgConn& db, const std::string& user_id);
Result<int64_t> delete_dead_tokens(PgConn& db, const std::string& user_id, TimeMs now, int64_t keep);
Result<std::optional<TokenRow>> find_token_by_hash(PgConn& db, const std::string& secret_hash);
Result<std::vector<TokenRow>> select_tokens(PgConn& db, const std::map<std::string, std::string>& eq);
Status insert_job_event(PgConn& db, const JobEvent& e);
Result<std::vector<JobEvent>> list_job_events(PgConn& db, const std::string& job_id);
Status insert_audit_entry(PgConn& db, const AuditEntry& a);
Result<std::vector<AuditEntry>> list_audit(PgConn& db, const std::string& kind, int limit);

// usage (pg_usage.cc, pg_usage_queries.cc). Insert and rollup run inside the write transaction.
Result<UsageIngestOutcome> store_usage_batch(PgConn& db, const UsageBatchRows& b);
Result<UsageRollupStats> roll_up_usage_rows(PgConn& db, TimeMs raw_before, TimeMs keys_before);
Result<std::vector<GpuUsagePoint>> query_gpu_usage(PgConn& db, const std::string& node_id, int64_t gpu, TimeMs from,
                                                   TimeMs to, int limit);
Result<std::vector<JobUsagePoint>> query_job_usage(PgConn& db, const std::string& job_id, TimeMs from, TimeMs to,
                                                   int limit);
Result<std::vector<std::pair<std::string, JobUsagePoint>>> query_tenant_job_usage(PgConn& db,
                                                                                  const std::string& tenant_id,
                                                                                  TimeMs from, TimeMs to, int limit);
Result<std::vector<JobUsageTotals>> query_job_usage_totals(PgConn& db, const JobUsageFilter& f);
Result<std::vector<GpuBucket>> query_gpu_usage_buckets(PgConn& db, const GpuBucketQuery& q);

// Raw samples are partitioned by month, each partition named by its year (pg_migrations.cc):
// a sample's time must lie in the years 1 to 9999 (milliseconds since the epoch). The meter
// accepts only samples near the present, far inside this.
inline constexpr TimeMs kFirstPartitionable = -62'135'596'800'000;  // 0001-01-01T00:00:00Z
inline constexpr TimeMs kEndPartitionable = 253'402'300'800'000;    // 10000-01-01T00:00:00Z
inline constexpr const char* kPartitionableRange =
    "must lie between the years 1 and 9999 (the raw samples are partitioned by month)";
inline bool partitionable(TimeMs at) { return at >= kFirstPartitionable && at < kEndPartitionable; }

// job_metric_points (pg_metrics.cc)
Status upsert_job_metrics(PgConn& db, const std::vector<JobMetricRow>& rows);
Result<std::vector<JobMetricRow>> query_job_metrics(PgConn& db, const JobMetricFilter& f);

// Schema (pg_migrations.cc): the PostgreSQL schema's own versions, oldest first (numbered apart
// from SQLite's: the two schemas differ in their SQL, not in what they store).
std::span<const Migration> postgres_migrations();
// Applies every migration newer than the database's version, each in its own transaction under
// an advisory lock (two servers opening one database at once apply each migration once).
// Returns the resulting version; a database newer than `migrations` is refused.
Result<int> apply_migrations(PgConn& db, std::span<const Migration> migrations, TimeMs now);
Result<int> applied_schema_version(PgConn& db);

}  // namespace gpurent
