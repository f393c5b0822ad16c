// The SQL behind SqliteStore, as free functions over one connection. The same functions serve
// the writer inside a transaction (StoreTx) and the read-only reader connections (Store reads).
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

namespace gpurent {

// objects (sqlite_objects.cc)
Status insert_object(Db& db, const Record& r);
Status update_object(Db& db, const Record& r);
Status remove_object(Db& db, const std::string& kind, const std::string& id);
Result<Record> get_object(Db& db, const std::string& kind, const std::string& id);
Result<Page> list_objects(Db& db, const ListQuery& q);
Result<int64_t> count_objects(Db& db, const std::string& kind, const std::map<std::string, std::string>& eq);

// api_tokens, job_events, audit_log (sqlite_logs.cc)
Status insert_token(Db& db, const TokenRow& t);
Status revoke_token(Db& db, const std::string& token_id);
Status revoke_user_tokens(Db& db, const std::string& user_id);
Result<std::optional<TokenRow>> find_token_by_hash(Db& db, const std::string& secret_hash);
// Filters: "user_id", "tenant_id", "supplier_id". Ordered by created_at, then id.
Result<std::vector<TokenRow>> list_tokens(Db& db, const std::map<std::string, std::string>& eq);
Status append_job_event(Db& db, const JobEvent& e);
// In the order they were appended.
Result<std::vector<JobEvent>> list_job_events(Db& db, const std::string& job_id);
Status append_audit(Db& db, const AuditEntry& a);
// The `limit` (1..1000) most recent entries for `kind` ("" = every kind), newest first.
Result<std::vector<AuditEntry>> list_audit(Db& db, const std::string& kind, int limit);

// job_metric_points (sqlite_metrics.cc). Insert must run inside a write transaction.
Status insert_job_metrics(Db& db, const std::vector<JobMetricRow>& rows);
Result<std::vector<JobMetricRow>> query_job_metrics(Db& db, const JobMetricFilter& f);

// Shared by both files: "limit" must lie in 1..1000.
Status check_limit(int limit);

}  // namespace gpurent
