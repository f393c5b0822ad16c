// api_tokens, job_events and audit_log on PostgreSQL (pg_migrations.cc for the tables). Same
// contract as sqlite_logs.cc.
#include <array>
#include <string_view>

#include "store/pg_queries.h"

namespace gpurent {
namespace {

constexpr const char* kTokenColumns =
    "SELECT id, user_id, tenant_id, supplier_id, role, name, secret_hash, created_at, expires_at, revoked"
    " FROM api_tokens";

constexpr std::array<std::string_view, 4> kTokenFilters = {"id", "user_id", "tenant_id", "supplier_id"};

TokenRow read_token(const PgRows& q, int i) {
  TokenRow t;
  t.id = q.text(i, 0);
  t.user_id = q.text(i, 1);
  t.tenant_id = q.text(i, 2);
  t.supplier_id = q.text(i, 3);
  t.role = q.text(i, 4);
  t.name = q.text(i, 5);
  t.secret_hash = q.text(i, 6);
  t.created_at = q.integer(i, 7);
  t.expires_at = q.integer(i, 8);
  t.revoked = q.boolean(i, 9);
  return t;
}

}  // namespace

Status pg_insert_token(PgConn& db, const TokenRow& t) {
  if (t.id.empty()) return Error::invalid("id", "is required");
  if (t.user_id.empty()) return Error::invalid("user_id", "is required");
  if (t.secret_hash.empty()) return Error::invalid("secret_hash", "is required");
  PgParams p;
  p.add(t.id).add(t.user_id).add(t.tenant_id).add(t.supplier_id).add(t.role).add(t.name).add(t.secret_hash);
  p.add(t.created_at).add(t.expires_at).add_bool(t.revoked);
  auto n = db.exec(
      "INSERT INTO api_tokens (id, user_id, tenant_id, supplier_id, role, name, secret_hash, created_at,"
      " expires_at, revoked) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
      p, "inserting token " + t.id);
  if (!n) {
    if (db.last_sqlstate() == "23505" && db.last_constraint() == "api_tokens_pkey")
      return Error{Code::kConflict, "id: tokens/" + t.id + " already exists", {{"id", "already exists", {}}}, {}};
    if (db.last_sqlstate() == "23505" && db.last_constraint() == "api_tokens_secret_hash_key")
      return Error{Code::kConflict, "secret_hash: already in use", {{"secret_hash", "already in use", {}}}, {}};
    return n.error();
  }
  return ok_status();
}

Status pg_revoke_token(PgConn& db, const std::string& token_id) {
  auto n = db.exec("UPDATE api_tokens SET revoked = true WHERE id = $1", PgParams().add(token_id),
                   "revoking token " + token_id);
  if (!n) return n.error();
  if (*n == 0) return Error::make(Code::kNotFound, "tokens/" + token_id + " not found");
  return ok_status();
}

Status pg_revoke_user_tokens(PgConn& db, const std::string& user_id) {
  auto n = db.exec("UPDATE api_tokens SET revoked = true WHERE user_id = $1", PgParams().add(user_id),
                   "revoking the tokens of user " + user_id);
  return n ? ok_status() : Status(n.error());
}

Result<std::optional<TokenRow>> pg_find_token_by_hash(PgConn& db, const std::string& secret_hash) {
  auto rows = db.query(std::string(kTokenColumns) + " WHERE secret_hash = $1", PgParams().add(secret_hash),
                       "looking up a token");
  if (!rows) return rows.error();
  if (rows->size() == 0) return std::optional<TokenRow>();
  return std::optional<TokenRow>(read_token(*rows, 0));
}

Result<std::vector<TokenRow>> pg_list_tokens(PgConn& db, const std::map<std::string, std::string>& eq) {
  std::string sql = std::string(kTokenColumns) + " WHERE true";
  PgParams p;
  for (const auto& [column, value] : eq) {
    const std::string_view* known = nullptr;
    for (const auto& c : kTokenFilters)
      if (c == column) known = &c;
    if (known == nullptr)
      return Error::invalid(column,
                            "is not a filterable column (expected one of: id, user_id, tenant_id, supplier_id)");
    p.add(value);
    sql += " AND ";
    sql += *known;
    sql += " = $" + std::to_string(p.size());
  }
  sql += " ORDER BY created_at, id";
  auto rows = db.query(sql, p, "listing tokens");
  if (!rows) return rows.error();
  std::vector<TokenRow> out;
  for (int i = 0; i < rows->size(); ++i) out.push_back(read_token(*rows, i));
  return out;
}

Status pg_append_job_event(PgConn& db, const JobEvent& e) {
  if (e.job_id.empty()) return Error::invalid("job_id", "is required");
  PgParams p;
  p.add(e.job_id).add(e.at).add(e.from_state).add(e.to_state).add(render_en(e.reason));
  p.add(e.reason.empty() ? std::string() : message_to_json(e.reason).dump());
  auto n = db.exec(
      "INSERT INTO job_events (job_id, at, from_state, to_state, reason, reason_message)"
      " VALUES ($1, $2, $3, $4, $5, $6)",
      p, "appending an event of job " + e.job_id);
  return n ? ok_status() : Status(n.error());
}

Result<std::vector<JobEvent>> pg_list_job_events(PgConn& db, const std::string& job_id) {
  auto rows = db.query(
      "SELECT job_id, at, from_state, to_state, reason, reason_message FROM job_events WHERE job_id = $1 ORDER BY seq",
      PgParams().add(job_id), "reading the events of job " + job_id);
  if (!rows) return rows.error();
  std::vector<JobEvent> out;
  for (int i = 0; i < rows->size(); ++i) {
    // As in sqlite_logs.cc: a message that no longer decodes keeps its English text.
    Message reason = rows->text(i, 4).empty() ? Message() : verbatim(rows->text(i, 4));
    if (const std::string m = rows->text(i, 5); !m.empty()) {
      auto j = nlohmann::json::parse(m, nullptr, false);
      if (auto msg = j.is_discarded() ? Result<Message>(Error::invalid("reason_message", "is not JSON"))
                                      : message_from_json(j))
        reason = std::move(msg.value());
    }
    out.push_back(
        JobEvent{rows->text(i, 0), rows->integer(i, 1), rows->text(i, 2), rows->text(i, 3), std::move(reason)});
  }
  return out;
}

Status pg_append_audit(PgConn& db, const AuditEntry& a) {
  if (a.action.empty()) return Error::invalid("action", "is required");
  PgParams p;
  p.add(a.at).add(a.actor).add(a.action).add(a.kind).add(a.object_id).add(a.detail);
  auto n = db.exec("INSERT INTO audit_log (at, actor, action, kind, object_id, detail) VALUES ($1, $2, $3, $4, $5, $6)",
                   p, "appending an audit entry");
  return n ? ok_status() : Status(n.error());
}

Result<std::vector<AuditEntry>> pg_list_audit(PgConn& db, const std::string& kind, int limit) {
  if (auto s = pg_check_limit(limit); !s) return s.error();
  const std::string columns = "SELECT at, actor, action, kind, object_id, detail FROM audit_log";
  PgParams p;
  p.add(int64_t{limit});
  if (!kind.empty()) p.add(kind);
  auto rows = db.query(
      kind.empty() ? columns + " ORDER BY seq DESC LIMIT $1" : columns + " WHERE kind = $2 ORDER BY seq DESC LIMIT $1",
      p, "reading the audit log");
  if (!rows) return rows.error();
  std::vector<AuditEntry> out;
  for (int i = 0; i < rows->size(); ++i) {
    out.push_back(AuditEntry{rows->integer(i, 0), rows->text(i, 1), rows->text(i, 2), rows->text(i, 3),
                             rows->text(i, 4), rows->text(i, 5)});
  }
  return out;
}

}  // namespace gpurent
