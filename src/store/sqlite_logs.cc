// api_tokens, job_events and audit_log (see migrations.cc for the tables).
#include "store/sqlite_queries.h"
#include "store/store_rows.h"

namespace gpurent {

Status insert_token_row(Db& db, const TokenRow& t) {
  if (auto s = check_token(t); !s) return s;
  auto q = db.query(
      "INSERT INTO api_tokens (id, user_id, tenant_id, supplier_id, role, name, secret_hash, created_at,"
      " expires_at, revoked) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  if (!q) return q.error();
  q->bind(1, t.id).bind(2, t.user_id).bind(3, t.tenant_id).bind(4, t.supplier_id).bind(5, t.role);
  q->bind(6, t.name).bind(7, t.secret_hash).bind(8, t.created_at).bind(9, t.expires_at);
  q->bind(10, int64_t{t.revoked ? 1 : 0});
  if (auto s = q->run("inserting token " + t.id); !s) {
    if (q->rc() == SQLITE_CONSTRAINT_PRIMARYKEY) return token_id_taken(t.id);
    if (q->rc() == SQLITE_CONSTRAINT_UNIQUE) return token_secret_taken();
    return s;
  }
  return ok_status();
}

Status revoke_token_row(Db& db, const std::string& token_id) {
  auto q = db.query("UPDATE api_tokens SET revoked = 1 WHERE id = ?1");
  if (!q) return q.error();
  q->bind(1, token_id);
  if (auto s = q->run("revoking token " + token_id); !s) return s;
  if (db.changes() == 0) return token_not_found(token_id);
  return ok_status();
}

Status revoke_tokens_of_user(Db& db, const std::string& user_id) {
  auto q = db.query("UPDATE api_tokens SET revoked = 1 WHERE user_id = ?1");
  if (!q) return q.error();
  q->bind(1, user_id);
  return q->run("revoking the tokens of user " + user_id);
}

Result<int64_t> delete_dead_tokens(Db& db, const std::string& user_id, TimeMs now, int64_t keep) {
  auto q = db.query(
      "DELETE FROM api_tokens WHERE id IN (SELECT id FROM api_tokens WHERE user_id = ?1 AND (revoked = 1 OR"
      " (expires_at <> 0 AND expires_at <= ?2)) ORDER BY created_at DESC, id DESC LIMIT -1 OFFSET ?3)");
  if (!q) return q.error();
  q->bind(1, user_id).bind(2, now).bind(3, keep);
  if (auto s = q->run("deleting the dead tokens of user " + user_id); !s) return s.error();
  return db.changes();
}

Result<std::optional<TokenRow>> find_token_by_hash(Db& db, const std::string& secret_hash) {
  auto q = db.query(std::string(kTokenSelect) + " WHERE secret_hash = ?1");
  if (!q) return q.error();
  q->bind(1, secret_hash);
  auto row = q->step("looking up a token");
  if (!row) return row.error();
  if (!*row) return std::optional<TokenRow>();
  return std::optional<TokenRow>(read_token(*q));
}

Result<std::vector<TokenRow>> select_tokens(Db& db, const std::map<std::string, std::string>& eq) {
  int param = 1;
  auto where = filter_sql(eq, token_filter_column,
                          [&](std::string_view, const std::string&) { return " = ?" + std::to_string(param++); });
  if (!where) return where.error();
  auto q = db.query(std::string(kTokenSelect) + " WHERE 1" + *where + " ORDER BY created_at, id");
  if (!q) return q.error();
  param = 1;
  for (const auto& [column, value] : eq) q->bind(param++, value);
  return q->collect("listing tokens", [](Query& r) { return read_token(r); });
}

Status insert_job_event(Db& db, const JobEvent& e) {
  if (auto s = check_job_event(e); !s) return s;
  auto q = db.query(
      "INSERT INTO job_events (job_id, at, from_state, to_state, reason, reason_message) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!q) return q.error();
  q->bind(1, e.job_id).bind(2, e.at).bind(3, e.from_state).bind(4, e.to_state).bind(5, reason_text(e.reason));
  q->bind(6, reason_message_json(e.reason));
  return q->run("appending an event of job " + e.job_id);
}

// In the order they were appended. An event from before schema 5 has only its English text.
Result<std::vector<JobEvent>> list_job_events(Db& db, const std::string& job_id) {
  auto q = db.query(std::string(kJobEventSelect) + " WHERE job_id = ?1 ORDER BY seq");
  if (!q) return q.error();
  q->bind(1, job_id);
  return q->collect("reading the events of job " + job_id, [](Query& r) { return read_job_event(r); });
}

Status insert_audit_entry(Db& db, const AuditEntry& a) {
  if (auto s = check_audit(a); !s) return s;
  auto q =
      db.query("INSERT INTO audit_log (at, actor, action, kind, object_id, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!q) return q.error();
  q->bind(1, a.at).bind(2, a.actor).bind(3, a.action).bind(4, a.kind).bind(5, a.object_id).bind(6, a.detail);
  return q->run("appending an audit entry");
}

Result<std::vector<AuditEntry>> list_audit(Db& db, const std::string& kind, int limit) {
  if (auto s = check_list_limit(limit); !s) return s.error();
  const std::string columns = kAuditSelect;
  auto q = db.query(kind.empty() ? columns + " ORDER BY seq DESC LIMIT ?1"
                                 : columns + " WHERE kind = ?2 ORDER BY seq DESC LIMIT ?1");
  if (!q) return q.error();
  q->bind(1, int64_t{limit});
  if (!kind.empty()) q->bind(2, kind);
  return q->collect("reading the audit log", [](Query& r) { return read_audit(r); });
}

}  // namespace gpurent
