// api_tokens, job_events and audit_log on PostgreSQL (pg_migrations.cc for the tables). Same
// contract as sqlite_logs.cc.
#include "store/pg_queries.h"
#include "store/store_rows.h"

namespace gpurent {

Status insert_token_row(PgConn& db, const TokenRow& t) {
  if (auto s = check_token(t); !s) return s;
  PgParams p;
  p.add(t.id).add(t.user_id).add(t.tenant_id).add(t.supplier_id).add(t.role).add(t.name).add(t.secret_hash);
  p.add(t.created_at).add(t.expires_at).add_bool(t.revoked);
  auto n = db.exec(
      "INSERT INTO api_tokens (id, user_id, tenant_id, supplier_id, role, name, secret_hash, created_at,"
      " expires_at, revoked) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
      p, "inserting token " + t.id);
  if (!n) {
    if (db.last_sqlstate() == "23505" && db.last_constraint() == "api_tokens_pkey") return token_id_taken(t.id);
    if (db.last_sqlstate() == "23505" && db.last_constraint() == "api_tokens_secret_hash_key")
      return token_secret_taken();
    return n.error();
  }
  return ok_status();
}

Status revoke_token_row(PgConn& db, const std::string& token_id) {
  auto n = db.exec("UPDATE api_tokens SET revoked = true WHERE id = $1", PgParams().add(token_id),
                   "revoking token " + token_id);
  if (!n) return n.error();
  if (*n == 0) return token_not_found(token_id);
  return ok_status();
}

Status revoke_tokens_of_user(PgConn& db, const std::string& user_id) {
  auto n = db.exec("UPDATE api_tokens SET revoked = true WHERE user_id = $1", PgParams().add(user_id),
                   "revoking the tokens of user " + user_id);
  return n ? ok_status() : Status(n.error());
}

Result<int64_t> delete_dead_tokens(PgConn& db, const std::string& user_id, TimeMs now, int64_t keep) {
  return db.exec(
      "DELETE FROM api_tokens WHERE id IN (SELECT id FROM api_tokens WHERE user_id = $1 AND (revoked OR"
      " (expires_at <> 0 AND expires_at <= $2)) ORDER BY created_at DESC, id DESC OFFSET $3)",
      PgParams().add(user_id).add(now).add(keep), "deleting the dead tokens of user " + user_id);
}

Result<std::optional<TokenRow>> find_token_by_hash(PgConn& db, const std::string& secret_hash) {
  auto rows = db.query(std::string(kTokenSelect) + " WHERE secret_hash = $1", PgParams().add(secret_hash),
                       "looking up a token");
  if (!rows) return rows.error();
  if (rows->size() == 0) return std::optional<TokenRow>();
  return std::optional<TokenRow>(read_token(rows->row(0)));
}

Result<std::vector<TokenRow>> select_tokens(PgConn& db, const std::map<std::string, std::string>& eq) {
  PgParams p;
  auto where = filter_sql(eq, token_filter_column, [&](std::string_view, const std::string& value) {
    p.add(value);
    return " = $" + std::to_string(p.size());
  });
  if (!where) return where.error();
  auto rows =
      db.query(std::string(kTokenSelect) + " WHERE true" + *where + " ORDER BY created_at, id", p, "listing tokens");
  if (!rows) return rows.error();
  return rows->collect([](const PgRow& r) { return read_token(r); });
}

Status insert_job_event(PgConn& db, const JobEvent& e) {
  if (auto s = check_job_event(e); !s) return s;
  PgParams p;
  p.add(e.job_id).add(e.at).add(e.from_state).add(e.to_state).add(reason_text(e.reason));
  p.add(reason_message_json(e.reason));
  auto n = db.exec(
      "INSERT INTO job_events (job_id, at, from_state, to_state, reason, reason_message)"
      " VALUES ($1, $2, $3, $4, $5, $6)",
      p, "appending an event of job " + e.job_id);
  return n ? ok_status() : Status(n.error());
}

Result<std::vector<JobEvent>> list_job_events(PgConn& db, const std::string& job_id) {
  auto rows = db.query(std::string(kJobEventSelect) + " WHERE job_id = $1 ORDER BY seq", PgParams().add(job_id),
                       "reading the events of job " + job_id);
  if (!rows) return rows.error();
  return rows->collect([](const PgRow& r) { return read_job_event(r); });
}

Status insert_audit_entry(PgConn& db, const AuditEntry& a) {
  if (auto s = check_audit(a); !s) return s;
  PgParams p;
  p.add(a.at).add(a.actor).add(a.action).add(a.kind).add(a.object_id).add(a.detail);
  auto n = db.exec("INSERT INTO audit_log (at, actor, action, kind, object_id, detail) VALUES ($1, $2, $3, $4, $5, $6)",
                   p, "appending an audit entry");
  return n ? ok_status() : Status(n.error());
}

Result<std::vector<AuditEntry>> list_audit(PgConn& db, const std::string& kind, int limit) {
  if (auto s = check_list_limit(limit); !s) return s.error();
  const std::string columns = kAuditSelect;
  PgParams p;
  p.add(int64_t{limit});
  if (!kind.empty()) p.add(kind);
  auto rows = db.query(
      kind.empty() ? columns + " ORDER BY seq DESC LIMIT $1" : columns + " WHERE kind = $2 ORDER BY seq DESC LIMIT $1",
      p, "reading the audit log");
  if (!rows) return rows.error();
  return rows->collect([](const PgRow& r) { return read_audit(r); });
}

}  // namespace gpurent
