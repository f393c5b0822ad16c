// api_tokens, job_events and audit_log (see migrations.cc for the tables).
#include <array>
#include <string_view>

#include "store/sqlite_queries.h"

namespace gpurent {
namespace {

constexpr const char* kTokenColumns =
    "SELECT id, user_id, tenant_id, supplier_id, role, name, secret_hash, created_at, expires_at, revoked"
    " FROM api_tokens";

constexpr std::array<std::string_view, 4> kTokenFilters = {"id", "user_id", "tenant_id", "supplier_id"};

TokenRow read_token(const Query& q) {
  TokenRow t;
  t.id = q.text(0);
  t.user_id = q.text(1);
  t.tenant_id = q.text(2);
  t.supplier_id = q.text(3);
  t.role = q.text(4);
  t.name = q.text(5);
  t.secret_hash = q.text(6);
  t.created_at = q.integer(7);
  t.expires_at = q.integer(8);
  t.revoked = q.integer(9) != 0;
  return t;
}

}  // namespace

Status insert_token(Db& db, const TokenRow& t) {
  if (t.id.empty()) return Error::invalid("id", "is required");
  if (t.user_id.empty()) return Error::invalid("user_id", "is required");
  if (t.secret_hash.empty()) return Error::invalid("secret_hash", "is required");
  auto q = db.query(
      "INSERT INTO api_tokens (id, user_id, tenant_id, supplier_id, role, name, secret_hash, created_at,"
      " expires_at, revoked) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  if (!q) return q.error();
  q->bind(1, t.id).bind(2, t.user_id).bind(3, t.tenant_id).bind(4, t.supplier_id).bind(5, t.role);
  q->bind(6, t.name).bind(7, t.secret_hash).bind(8, t.created_at).bind(9, t.expires_at);
  q->bind(10, int64_t{t.revoked ? 1 : 0});
  if (auto s = q->run("inserting token " + t.id); !s) {
    if (q->rc() == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return Error{Code::kConflict, "id: tokens/" + t.id + " already exists", {{"id", "already exists"}}};
    }
    if (q->rc() == SQLITE_CONSTRAINT_UNIQUE) {
      return Error{Code::kConflict, "secret_hash: already in use", {{"secret_hash", "already in use"}}};
    }
    return s;
  }
  return ok_status();
}

Status revoke_token(Db& db, const std::string& token_id) {
  auto q = db.query("UPDATE api_tokens SET revoked = 1 WHERE id = ?1");
  if (!q) return q.error();
  q->bind(1, token_id);
  if (auto s = q->run("revoking token " + token_id); !s) return s;
  if (db.changes() == 0) return Error::make(Code::kNotFound, "tokens/" + token_id + " not found");
  return ok_status();
}

Status revoke_user_tokens(Db& db, const std::string& user_id) {
  auto q = db.query("UPDATE api_tokens SET revoked = 1 WHERE user_id = ?1");
  if (!q) return q.error();
  q->bind(1, user_id);
  return q->run("revoking the tokens of user " + user_id);
}

Result<std::optional<TokenRow>> find_token_by_hash(Db& db, const std::string& secret_hash) {
  auto q = db.query(std::string(kTokenColumns) + " WHERE secret_hash = ?1");
  if (!q) return q.error();
  q->bind(1, secret_hash);
  auto row = q->step("looking up a token");
  if (!row) return row.error();
  if (!*row) return std::optional<TokenRow>();
  return std::optional<TokenRow>(read_token(*q));
}

Result<std::vector<TokenRow>> list_tokens(Db& db, const std::map<std::string, std::string>& eq) {
  std::string sql = std::string(kTokenColumns) + " WHERE 1";
  int param = 1;
  for (const auto& [column, value] : eq) {
    const std::string_view* known = nullptr;
    for (const auto& c : kTokenFilters)
      if (c == column) known = &c;
    if (known == nullptr)
      return Error::invalid(column, "is not a filterable column (expected one of: id, user_id, tenant_id, supplier_id)");
    sql += " AND ";
    sql += *known;
    sql += " = ?" + std::to_string(param++);
  }
  sql += " ORDER BY created_at, id";
  auto q = db.query(sql);
  if (!q) return q.error();
  param = 1;
  for (const auto& [column, value] : eq) q->bind(param++, value);
  std::vector<TokenRow> out;
  for (;;) {
    auto row = q->step("listing tokens");
    if (!row) return row.error();
    if (!*row) break;
    out.push_back(read_token(*q));
  }
  return out;
}

Status append_job_event(Db& db, const JobEvent& e) {
  if (e.job_id.empty()) return Error::invalid("job_id", "is required");
  auto q = db.query(
      "INSERT INTO job_events (job_id, at, from_state, to_state, reason, reason_message) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!q) return q.error();
  q->bind(1, e.job_id).bind(2, e.at).bind(3, e.from_state).bind(4, e.to_state).bind(5, render_en(e.reason));
  q->bind(6, e.reason.empty() ? std::string() : message_to_json(e.reason).dump());
  return q->run("appending an event of job " + e.job_id);
}

Result<std::vector<JobEvent>> list_job_events(Db& db, const std::string& job_id) {
  auto q = db.query(
      "SELECT job_id, at, from_state, to_state, reason, reason_message FROM job_events WHERE job_id = ?1 ORDER BY seq");
  if (!q) return q.error();
  q->bind(1, job_id);
  std::vector<JobEvent> out;
  for (;;) {
    auto row = q->step("reading the events of job " + job_id);
    if (!row) return row.error();
    if (!*row) break;
    // An event from before schema 5 has only its English text; a message that no longer decodes
    // keeps that text too (it is what was shown when the event was written).
    Message reason = q->text(4).empty() ? Message() : verbatim(q->text(4));
    if (const std::string m = q->text(5); !m.empty()) {
      auto j = nlohmann::json::parse(m, nullptr, false);
      if (auto msg = j.is_discarded() ? Result<Message>(Error::invalid("reason_message", "is not JSON"))
                                      : message_from_json(j))
        reason = std::move(msg.value());
    }
    out.push_back(JobEvent{q->text(0), q->integer(1), q->text(2), q->text(3), std::move(reason)});
  }
  return out;
}

Status append_audit(Db& db, const AuditEntry& a) {
  if (a.action.empty()) return Error::invalid("action", "is required");
  auto q = db.query(
      "INSERT INTO audit_log (at, actor, action, kind, object_id, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!q) return q.error();
  q->bind(1, a.at).bind(2, a.actor).bind(3, a.action).bind(4, a.kind).bind(5, a.object_id).bind(6, a.detail);
  return q->run("appending an audit entry");
}

Result<std::vector<AuditEntry>> list_audit(Db& db, const std::string& kind, int limit) {
  if (auto s = check_limit(limit); !s) return s.error();
  const std::string columns = "SELECT at, actor, action, kind, object_id, detail FROM audit_log";
  auto q = db.query(kind.empty() ? columns + " ORDER BY seq DESC LIMIT ?1"
                                 : columns + " WHERE kind = ?2 ORDER BY seq DESC LIMIT ?1");
  if (!q) return q.error();
  q->bind(1, int64_t{limit});
  if (!kind.empty()) q->bind(2, kind);
  std::vector<AuditEntry> out;
  for (;;) {
    auto row = q->step("reading the audit log");
    if (!row) return row.error();
    if (!*row) break;
    out.push_back(AuditEntry{q->integer(0), q->text(1), q->text(2), q->text(3), q->text(4), q->text(5)});
  }
  return out;
}

}  // namespace gpurent
