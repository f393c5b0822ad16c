// /api/v1/tokens: API tokens. The secret is returned once at creation; only its SHA-256 is kept.
// Anyone may create and revoke tokens for themselves; tenant admins for their tenant's users;
// operators for anyone.
#include "core/ids.h"
#include "model/user.h"
#include "server/http/http_util.h"
#include "server/api/resources.h"
#include "server/services/record_faults.h"

namespace gpurent {

static json token_json(const TokenRow& t) {
  json j = {{"id", t.id},           {"user_id", t.user_id},  {"name", t.name}, {"role", t.role},
            {"created_at", format_rfc3339(t.created_at)}, {"revoked", t.revoked}};
  j["expires_at"] = t.expires_at ? json(format_rfc3339(t.expires_at)) : json(nullptr);
  if (!t.tenant_id.empty()) j["tenant_id"] = t.tenant_id;
  if (!t.supplier_id.empty()) j["supplier_id"] = t.supplier_id;
  return j;
}

// Live tokens a user may hold: rate limits are per token, so an unbounded number would multiply them.
constexpr int64_t kMaxLiveTokensPerUser = 50;
// Dead tokens (revoked or expired) kept per user for the list; older ones are deleted at the next
// mint, so minting short-lived tokens in a loop cannot grow the table (and each mint's scan).
constexpr int64_t kDeadTokensKeptPerUser = 100;

// Whether p may manage tokens of user record u.
static bool may_manage(const Principal& p, const Record& u) {
  Scope s = write_scope(p, ObjectKind::kToken);
  if (s == Scope::kAll) return true;
  if (u.id == p.user_id) return s != Scope::kNone;
  return s == Scope::kOwnTenant && !p.tenant_id.empty() && u.tenant_id == p.tenant_id;
}

void register_token_routes(App& app, Router& srv) {
  route(app, srv, "POST", "/api/v1/tokens", "/api/v1/tokens",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          auto body = parse_body(req);
          if (!body) return send_problem(res, body.error(), req.path);
          auto tr = parse_token_request(*body, app.clock.now());
          if (!tr) return send_problem(res, tr.error(), req.path);
          std::string secret = new_token_secret();
          TokenRow row;
          Status st = app.loop.run([&](StoreTx& tx) -> Status {
            auto u = resolve_ref(tx, "users", tr->user, {}, "user");
            if (!u || !may_manage(p, *u))
              return Error::invalid("user", Message("api.tokens.no_user").arg("user", tr->user));
            // The user's row locked: one mint per user at a time (several servers on one database),
            // the name and the live count checked against what the other mint committed, and a
            // delete of the user (which locks it too) either comes first (no user) or after.
            if (auto l = tx.get_locked("users", u->id); !l)
              return l.error().code == Code::kNotFound
                         ? Error::invalid("user", Message("api.tokens.no_user").arg("user", tr->user))
                         : Status(l.error());
            auto existing = tx.list_tokens({{"user_id", u->id}});
            if (!existing) return existing.error();
            const TimeMs now = app.clock.now();
            int64_t live = 0;  // not revoked, not expired: each one a rate-limit bucket of its own
            for (const auto& t : *existing) {
              if (t.revoked || (t.expires_at != 0 && t.expires_at <= now)) continue;
              if (t.name == tr->name)
                return error_with_field(Code::kConflict, Message("api.tokens.name_taken").arg("name", tr->name), "name",
                                        Message("api.tokens.name_in_use"));
              ++live;
            }
            if (live >= kMaxLiveTokensPerUser)
              return Error::invalid("user", Message("api.tokens.too_many")
                                                .arg("user", u->name)
                                                .arg("max", std::to_string(kMaxLiveTokensPerUser)));
            auto role = decode_record(*u, stored_user_role, "no token can be made for this user");
            if (!role) return role.error();
            // A tenant's admin mints for itself and for its tenant's members and viewers (robots,
            // CI), never as another admin: that token's actions would read as the other admin's.
            if (u->id != p.user_id && *role == Role::kTenantAdmin && write_scope(p, ObjectKind::kToken) != Scope::kAll)
              return forbidden(Message("api.tokens.peer_admin").arg("user", u->name));
            row = TokenRow{new_id("tok"),
                           u->id,
                           u->tenant_id,
                           u->supplier_id,
                           role_name(*role),
                           tr->name,
                           token_hash(secret),
                           now,
                           tr->expires_at.value_or(0),
                           false};
            if (auto s = tx.insert_token(row); !s) return s;
            if (auto pruned = tx.prune_dead_tokens(u->id, now, kDeadTokensKeptPerUser); !pruned) return pruned.error();
            return tx.append_audit({row.created_at, p.user_id, "create", "tokens", row.id, tr->name});
          });
          if (!st) return send_problem(res, st.error(), req.path);
          app.metrics.count_write("tokens", "create");
          json out = token_json(row);
          out["token"] = secret;
          send_json(res, 201, out);
        });

  route(app, srv, "GET", "/api/v1/tokens", "/api/v1/tokens",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          if (auto st = only_params(req, {"user"}); !st) return send_problem(res, st.error(), req.path);
          std::map<std::string, std::string> eq;
          Scope s = read_scope(p, ObjectKind::kToken);
          if (s == Scope::kOwnTenant) eq["tenant_id"] = p.tenant_id.empty() ? "-" : p.tenant_id;
          if (s == Scope::kSelf || s == Scope::kNone) eq["user_id"] = p.user_id;
          if (req.has_param("user")) {
            auto id = resolve_filter_ref(app, p, "user", "users", req.get_param_value("user"));
            if (!id) return send_problem(res, id.error(), req.path);
            std::string u = *id;
            if (eq.count("user_id") && eq["user_id"] != u) u = "-";
            eq["user_id"] = u;
          }
          auto rows = app.store.tokens(eq);
          if (!rows) return send_problem(res, rows.error(), req.path);
          json items = json::array();
          for (const auto& t : *rows) items.push_back(token_json(t));
          send_json(res, 200, {{"items", items}, {"next_after", nullptr}});
        });

  route(app, srv, "DELETE", "/api/v1/tokens/([^/]+)", "/api/v1/tokens/{id}",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          const std::string id = req.matches[1];
          Status st = app.loop.run([&](StoreTx& tx) -> Status {
            auto rows = tx.list_tokens({{"id", id}});
            if (!rows) return rows.error();
            auto not_found = not_found_error("tokens", id);
            if (rows->empty()) return not_found;
            auto u = tx.get("users", (*rows)[0].user_id);
            if (!u || !may_manage(p, *u)) return not_found;
            if (auto s = tx.revoke_token(id); !s) return s;
            return tx.append_audit({app.clock.now(), p.user_id, "revoke", "tokens", id, (*rows)[0].name});
          });
          if (!st) return send_problem(res, st.error(), req.path);
          app.metrics.count_write("tokens", "revoke");
          res.status = 204;
        });
}

}  // namespace gpurent
