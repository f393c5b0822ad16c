// What both store backends check and say: argument validation and the wording of the errors the
// Store contract promises (store.h), so SQLite and PostgreSQL give byte-identical errors for the
// same call. Internal to src/store (sqlite_*.cc and pg_*.cc include it; nothing outside does).
// Pure functions over values; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/message.h"
#include "core/result.h"
#include "store/store.h"

namespace gpurent {

// ---- objects ----

// "kind/id", as errors name an object.
std::string object_path(const std::string& kind, const std::string& id);
Error object_not_found(const std::string& kind, const std::string& id);
// kConflict whose message is "field: reason" and whose field list names `field`.
Error field_conflict(std::string field, std::string reason);
Error object_id_taken(const Record& r);    // "id: kind/id already exists"
Error object_name_taken(const Record& r);  // "name: 'name' already exists"
Error stale_version(int64_t given, int64_t current);
// kind and id are both required.
Status check_object_key(const std::string& kind, const std::string& id);
Status check_kind(const std::string& kind);
// Lists and the audit log: `limit` in 1..1000.
Status check_list_limit(int limit);
// The body as stored text; kInvalid "body" when it cannot be written (a string not valid UTF-8).
Result<std::string> dump_body(const nlohmann::json& body);
// What an insert or update checks first: the key (check_object_key), then the body as stored text.
Result<std::string> checked_body(const Record& r);
// A stored body read back; kInternal naming the object when it is not JSON.
Result<nlohmann::json> parse_body(const std::string& kind, const std::string& id, const std::string& text);

// The bytes an artifact's or image's body declares: its size_bytes when that is an integer, else
// 0; the schema's fill of tenant_storage (migrations.cc 7, pg_migrations.cc 6) counts the same for
// every size the model accepts (integers up to --artifact-max-gib, at most 2^50 bytes; they part
// only past 10^18 or, on PostgreSQL, for an exponent such as 1e+16, which jsonb keeps as a number).
int64_t declared_bytes(const nlohmann::json& body);

// The index column a ListQuery/count filter names, from the fixed allow-list (so only these
// strings are ever spliced into SQL), or for "sha256" and "corrects" the indexed expression
// reading that body key; kInvalid naming the column otherwise.
Result<std::string_view> object_filter_column(const std::string& column);
// The same for token filters (Store::tokens, StoreTx::list_tokens): id, user_id, tenant_id, supplier_id.
Result<std::string_view> token_filter_column(const std::string& column);

// ---- tokens, job events, audit ----

Status check_token(const TokenRow& t);
Error token_id_taken(const std::string& id);
Error token_secret_taken();
Error token_not_found(const std::string& id);
Status check_job_event(const JobEvent& e);
// A job event's reason as stored: its English text, and its message as JSON ("" when none).
std::string reason_text(const Message& reason);
std::string reason_message_json(const Message& reason);
// The reason read back: the message when `message_json` decodes, else the English text (an
// event from before messages were stored, or whose message no longer decodes).
Message decode_reason(const std::string& text, const std::string& message_json);
Status check_audit(const AuditEntry& a);

// ---- job metrics ----

Status check_metric_filter(const JobMetricFilter& f);
// The stored direction (higher_is_better) of a job's metric, nullopt when it has no point yet.
using StoredDirection = std::function<Result<std::optional<bool>>(const std::string& job_id, const std::string& name)>;
// Checks the rows in order: each complete and finite, and its higher_is_better equal to the
// stored points' of its job and name (asked once per pair) and to the batch's earlier rows'.
// The first bad row is named: kInvalid rows[i].<field> or kConflict rows[i].higher_is_better.
Status check_metric_rows(const std::vector<JobMetricRow>& rows, const StoredDirection& stored);
// A job's stored points and metric names after a batch, against kMaxJobMetricPoints/Names.
Status check_metric_totals(const std::string& job_id, int64_t points, int64_t names);

// ---- usage ----

// Series reads (gpu_usage, job_usage): to after from, limit in 1..1000000.
Status check_series_range(TimeMs from, TimeMs to, int limit);
// tenant_job_usage: to after from, limit in 1..10000000.
Status check_tenant_series_range(TimeMs from, TimeMs to, int limit);
// job_usage_totals: to after from, exactly one of job_id, project_id, tenant_id.
Status check_totals_filter(const JobUsageFilter& f);
// Which of the filter's keys is set: 0 job_id, 1 project_id, 2 tenant_id; and its value.
int totals_filter_column(const JobUsageFilter& f);
const std::string& totals_filter_value(const JobUsageFilter& f);
Status check_bucket_query(const GpuBucketQuery& q);
// A stored idempotency key sent again with other content.
Error idempotency_conflict(const std::string& key);
// `t` floored to a whole minute (negative times too).
TimeMs floor_to_minute(TimeMs t);
// A write-side operation called outside a write transaction (a bug in the caller).
Error needs_write_transaction(const char* operation);

}  // namespace gpurent
