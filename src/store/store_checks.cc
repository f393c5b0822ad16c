#include "store/store_checks.h"

#include <array>
#include <cmath>
#include <utility>

#include "core/fields.h"

namespace gpurent {
namespace {

constexpr std::array<std::string_view, 9> kObjectFilters = {"name",   "tenant_id", "supplier_id", "project_id", "state",
                                                            "region", "gpu_model", "sha256",      "corrects"};
// Not columns: a body key of some kinds, as both backends index it (a partial index each:
// migrations.cc 7 and 8) and spell it alike. filter_sql writes " AND <this> = ?": the index's own
// condition comes first, which both planners need to see to use a partial index, and keeps other
// kinds out.
constexpr std::pair<std::string_view, std::string_view> kBodyFilters[] = {
    {"sha256", "kind IN ('artifacts', 'images') AND (body ->> 'sha256')"},  // content digest
    {"corrects", "kind = 'measurements' AND (body ->> 'corrects')"},        // the measurement it corrects
};
constexpr std::array<std::string_view, 4> kTokenFilters = {"id", "user_id", "tenant_id", "supplier_id"};

template <size_t N>
Result<std::string_view> allowed(const std::array<std::string_view, N>& columns, const std::string& column) {
  for (const auto& c : columns)
    if (c == column) return c;
  std::string expected;
  for (const auto& c : columns) expected += (expected.empty() ? "" : ", ") + std::string(c);
  return Error::invalid(column, "is not a filterable column (expected one of: " + expected + ")");
}

std::string row_field(size_t i, const char* field) { return "rows[" + std::to_string(i) + "]." + field; }

const char* bool_text(bool b) { return b ? "true" : "false"; }

Status check_metric_row(const JobMetricRow& r, size_t i) {
  if (r.job_id.empty()) return Error::invalid(row_field(i, "job_id"), "is required");
  if (r.tenant_id.empty()) return Error::invalid(row_field(i, "tenant_id"), "is required");
  if (r.name.empty()) return Error::invalid(row_field(i, "name"), "is required");
  if (!std::isfinite(r.value)) return Error::invalid(row_field(i, "value"), "must be a finite number");
  return ok_status();
}

Error direction_conflict(const JobMetricRow& r, size_t i, bool recorded, const char* where) {
  return field_conflict(row_field(i, "higher_is_better"),
                        std::string("is ") + bool_text(r.higher_is_better) + " but metric '" + r.name + "' of job " +
                            r.job_id + " is " + where + " with higher_is_better " + bool_text(recorded));
}

}  // namespace

// ---- objects ----

std::string object_path(const std::string& kind, const std::string& id) { return kind + "/" + id; }

Error object_not_found(const std::string& kind, const std::string& id) {
  return Error::make(Code::kNotFound, object_path(kind, id) + " not found");
}

Error field_conflict(std::string field, std::string reason) {
  Error e{Code::kConflict, field + ": " + reason, {}, {}};
  e.fields.push_back({std::move(field), std::move(reason), {}});
  return e;
}

Error object_id_taken(const Record& r) { return field_conflict("id", object_path(r.kind, r.id) + " already exists"); }

Error object_name_taken(const Record& r) { return field_conflict("name", "'" + r.name + "' already exists"); }

Error stale_version(int64_t given, int64_t current) {
  return field_conflict("version",
                        "version " + std::to_string(given) + " is stale; current is " + std::to_string(current));
}

Status check_object_key(const std::string& kind, const std::string& id) {
  if (auto s = check_kind(kind); !s) return s;
  if (id.empty()) return Error::invalid("id", "is required");
  return ok_status();
}

Status check_kind(const std::string& kind) {
  if (kind.empty()) return Error::invalid("kind", "is required");
  return ok_status();
}

Status check_list_limit(int limit) {
  if (limit < 1 || limit > 1000)
    return Error::invalid("limit", "must be between 1 and 1000 (got " + std::to_string(limit) + ")");
  return ok_status();
}

Result<std::string> dump_body(const nlohmann::json& body) {
  try {
    return body.dump();
  } catch (const nlohmann::json::exception& e) {  // e.g. a string that is not valid UTF-8
    return Error::invalid("body", e.what());
  }
}

Result<std::string> checked_body(const Record& r) {
  if (auto s = check_object_key(r.kind, r.id); !s) return s.error();
  return dump_body(r.body);
}

Result<nlohmann::json> parse_body(const std::string& kind, const std::string& id, const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return Error::make(Code::kInternal, "stored body of " + object_path(kind, id) + " is not JSON: " + e.what());
  }
}

int64_t declared_bytes(const nlohmann::json& body) {
  if (!body.is_object()) return 0;
  auto it = body.find("size_bytes");
  if (it == body.end()) return 0;
  if (it->is_number_integer() && !it->is_number_unsigned()) return it->get<int64_t>();
  // An unsigned one within int64 (nlohmann's parser reads every non-negative integer so).
  if (it->is_number_unsigned() && it->get<uint64_t>() <= uint64_t{INT64_MAX})
    return static_cast<int64_t>(it->get<uint64_t>());
  return 0;
}

Result<std::string_view> object_filter_column(const std::string& column) {
  auto known = allowed(kObjectFilters, column);
  if (known)
    for (const auto& [name, expression] : kBodyFilters)
      if (*known == name) return expression;
  return known;
}

Result<std::string_view> token_filter_column(const std::string& column) { return allowed(kTokenFilters, column); }

// ---- tokens, job events, audit ----

Status check_token(const TokenRow& t) {
  if (t.id.empty()) return Error::invalid("id", "is required");
  if (t.user_id.empty()) return Error::invalid("user_id", "is required");
  if (t.secret_hash.empty()) return Error::invalid("secret_hash", "is required");
  return ok_status();
}

Error token_id_taken(const std::string& id) {
  Error e = field_conflict("id", "already exists");
  e.message = "id: tokens/" + id + " already exists";
  return e;
}

Error token_secret_taken() { return field_conflict("secret_hash", "already in use"); }

Error token_not_found(const std::string& id) { return Error::make(Code::kNotFound, "tokens/" + id + " not found"); }

Status check_job_event(const JobEvent& e) {
  if (e.job_id.empty()) return Error::invalid("job_id", "is required");
  return ok_status();
}

std::string reason_text(const Message& reason) { return render_en(reason); }

std::string reason_message_json(const Message& reason) {
  return reason.empty() ? std::string() : message_to_json(reason).dump();
}

Message decode_reason(const std::string& text, const std::string& message_json) {
  Message reason = text.empty() ? Message() : verbatim(text);
  if (message_json.empty()) return reason;
  auto j = nlohmann::json::parse(message_json, nullptr, false);
  if (j.is_discarded()) return reason;
  if (auto msg = message_from_json(j)) return std::move(msg).value();
  return reason;
}

Status check_audit(const AuditEntry& a) {
  if (a.action.empty()) return Error::invalid("action", "is required");
  return ok_status();
}

// ---- job metrics ----

Status check_metric_filter(const JobMetricFilter& f) {
  if (f.job_id.empty() && f.tenant_id.empty()) return Error::invalid("job_id", "give job_id or tenant_id");
  if (f.to <= f.from) return Error::invalid("to", "must be after from");
  return ok_status();
}

Status check_metric_rows(const std::vector<JobMetricRow>& rows, const StoredDirection& stored) {
  // (job, name) -> its direction, and whether this batch set it (no stored point).
  std::map<std::pair<std::string, std::string>, std::pair<bool, bool>> directions;
  for (size_t i = 0; i < rows.size(); ++i) {
    const JobMetricRow& r = rows[i];
    if (auto s = check_metric_row(r, i); !s) return s;
    auto key = std::make_pair(r.job_id, r.name);
    auto it = directions.find(key);
    if (it == directions.end()) {
      auto known = stored(r.job_id, r.name);
      if (!known) return known.error();
      it = directions.emplace(key, std::make_pair(known->value_or(r.higher_is_better), !known->has_value())).first;
    }
    const auto [recorded, from_batch] = it->second;
    if (recorded != r.higher_is_better)
      return direction_conflict(r, i, recorded, from_batch ? "reported earlier in this batch" : "recorded");
  }
  return ok_status();
}

Status check_metric_totals(const std::string& job_id, int64_t points, int64_t names) {
  if (points > kMaxJobMetricPoints)
    return Error::invalid("points", Message("api.job_metrics.too_many_points")
                                        .arg("job", job_id)
                                        .arg("max", std::to_string(kMaxJobMetricPoints)));
  if (names > kMaxJobMetricNames)
    return Error::invalid("points", Message("api.job_metrics.too_many_names")
                                        .arg("job", job_id)
                                        .arg("max", std::to_string(kMaxJobMetricNames)));
  return ok_status();
}

// ---- usage ----

Status check_series_range(TimeMs from, TimeMs to, int limit) {
  if (to <= from) return Error::invalid("to", "must be after from");
  if (limit < 1 || limit > 1'000'000) return Error::invalid("limit", "must be between 1 and 1000000");
  return ok_status();
}

Status check_tenant_series_range(TimeMs from, TimeMs to, int limit) {
  if (to <= from) return Error::invalid("to", "must be after from");
  if (limit < 1 || limit > 10'000'000) return Error::invalid("limit", "must be 1..10000000");
  return ok_status();
}

Status check_totals_filter(const JobUsageFilter& f) {
  if (f.to <= f.from) return Error::invalid("to", "must be after from");
  const int given = !f.job_id.empty() + !f.project_id.empty() + !f.tenant_id.empty();
  if (given != 1) return Error::invalid("", "exactly one of job_id, project_id, tenant_id must be given");
  return ok_status();
}

int totals_filter_column(const JobUsageFilter& f) { return !f.job_id.empty() ? 0 : !f.project_id.empty() ? 1 : 2; }

const std::string& totals_filter_value(const JobUsageFilter& f) {
  return !f.job_id.empty() ? f.job_id : !f.project_id.empty() ? f.project_id : f.tenant_id;
}

Status check_bucket_query(const GpuBucketQuery& q) {
  FieldErrors errs;
  if (q.to <= q.from) errs.add("to", "must be after from");
  if (q.bucket_ms <= 0 || q.bucket_ms % kMsPerMinute != 0)
    errs.add("bucket_ms",
             "must be a positive whole number of minutes in milliseconds (got " + std::to_string(q.bucket_ms) + ")");
  if (q.gpu < -1) errs.add("gpu", "must be a GPU index, or -1 for every GPU");
  if (q.gpu >= 0 && q.node_id.empty()) errs.add("gpu", "a GPU index needs a node_id");
  if (!errs.empty()) return errs.to_error();
  return ok_status();
}

Error idempotency_conflict(const std::string& key) {
  return Error::make(Code::kConflict,
                     "idempotency_key '" + key + "' was already used for a batch with different content");
}

TimeMs floor_to_minute(TimeMs t) { return t - ((t % kMsPerMinute) + kMsPerMinute) % kMsPerMinute; }

Error needs_write_transaction(const char* operation) {
  return Error::make(Code::kInternal, std::string(operation) + " needs a write transaction");
}

}  // namespace gpurent
