// The SQL behind SqliteStore, as free functions over one connection. The same functions serve
// the writer inside a transaction (StoreTx) and the read-only reader connections (Store reads);
// PostgreSQL's overloads (pg_queries.h) have the same names, so one Store shell calls either
// (backend_store.h). Checks and error wording come from store_checks.h.
// Every value is bound, never spliced into SQL text; the only identifiers spliced in are filter
// column names, and only after they are checked against a fixed allow-list.
// Not thread-safe: the caller owns `db` for the duration of the call.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/sqlite_db.h"
#include "store/store.h"
#include "store/store_checks.h"

namespace gpurent {

// objects (sqlite_objects.cc)
Status insert_object(Db& db, const Record& r);
Status update_object(Db& db, const Record& r);
Status remove_object(Db& db, const std::string& kind, const std::string& id);
Result<Record> get_object(Db& db, const std::string& kind, const std::string& id);
// get_object: the one writer's transaction holds the database, so nobody else changes the row.
inline Result<Record> get_object_locked(Db& db, const std::string& kind, const std::string& id) {
  return get_object(db, kind, id);
}
inline Result<Record> get_object_shared(Db& db, const std::string& kind, const std::string& id) {
  return get_object(db, kind, id);
}
Result<Page> list_objects(Db& db, const ListQuery& q);
Result<int64_t> select_tenant_stored_bytes(Db& db, const std::string& tenant_id);
// Adds delta (may be negative; 0 writes nothing) to the tenant's row of tenant_storage.
Status add_tenant_storage(Db& db, const std::string& tenant_id, int64_t delta);
Result<int64_t> count_objects(Db& db, const std::string& kind, const std::map<std::string, std::string>& eq);
Result<std::vector<std::string>> list_object_ids(Db& db, const std::string& kind,
                                                 const std::map<std::string, std::string>& eq);

// api_tokens, job_events, audit_log (sqlite_logs.cc)
Status insert_token_row(Db& db, const TokenRow& t);
Status revoke_token_row(Db& db, const std::string& token_id);
Status revoke_tokens_of_user(Db& db, const std::string& user_id);
Result<int64_t> delete_dead_tokens(Db& db, const std::string& user_id, TimeMs now, int64_t keep);
Result<std::optional<TokenRow>> find_token_by_hash(Db& db, const std::string& secret_hash);
// Filters: "user_id", "tenant_id", "supplier_id". Ordered by created_at, then id.
Result<std::vector<TokenRow>> select_tokens(Db& db, const std::map<std::string, std::string>& eq);
Status insert_job_event(Db& db, const JobEvent& e);
// In the order they were appended.
Result<std::vector<JobEvent>> list_job_events(Db& db, const std::string& job_id);
Status insert_audit_entry(Db& db, const AuditEntry& a);
// The `limit` (1..1000) most recent entries for `kind` ("" = every kind), newest first.
Result<std::vector<AuditEntry>> list_audit(Db& db, const std::string& kind, int limit);

// job_metric_points (sqlite_metrics.cc). Insert must run inside a write transaction.
Status upsert_job_metrics(Db& db, const std::vector<JobMetricRow>& rows);
Result<std::vector<JobMetricRow>> query_job_metrics(Db& db, const JobMetricFilter& f);

}  // namespace gpurent
