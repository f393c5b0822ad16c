// /api/v1/users: people and robots. Operators create any user; tenant admins create tenant-role
// users in their own tenant (the default when the document names no tenant), at most
// --tenant-max-users of them. Deleting a user revokes its tokens.
// /api/v1/me: the caller, as the request acts: its user's current role and scope, and the token.
#include "model/user.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"

namespace gpurent {
namespace {

// The name of `kind` record `id`, "" when there is none (or it is gone).
Result<std::string> caller_record_name(App& app, const char* kind, const std::string& id) {
  if (id.empty()) return std::string();
  auto r = app.store.get(kind, id);
  if (!r && r.error().code == Code::kNotFound) return std::string();
  if (!r) return r.error();
  return r->name;
}

void whoami(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  if (auto st = only_params(req, {}); !st) return send_problem(res, st.error(), req.path);
  auto user = caller_record_name(app, "users", p.user_id);
  if (!user) return send_problem(res, user.error(), req.path);
  auto tenant = caller_record_name(app, "tenants", p.tenant_id);
  if (!tenant) return send_problem(res, tenant.error(), req.path);
  auto supplier = caller_record_name(app, "suppliers", p.supplier_id);
  if (!supplier) return send_problem(res, supplier.error(), req.path);
  auto tokens = app.store.tokens({{"id", p.token_id}});
  if (!tokens) return send_problem(res, tokens.error(), req.path);
  json out = {{"user_id", p.user_id}, {"user", *user}, {"role", role_name(p.role)}, {"token_id", p.token_id}};
  if (!p.tenant_id.empty()) out["tenant_id"] = p.tenant_id, out["tenant"] = *tenant;
  if (!p.supplier_id.empty()) out["supplier_id"] = p.supplier_id, out["supplier"] = *supplier;
  if (!tokens->empty()) {
    out["token"] = tokens->front().name;
    const TimeMs at = tokens->front().expires_at;
    out["expires_at"] = at ? json(format_rfc3339(at)) : json(nullptr);
  }
  send_json(res, 200, out);
}

}  // namespace

void register_user_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "users";
  spec.id_prefix = "usr";
  spec.object_kind = ObjectKind::kUser;
  spec.global_names = true;
  spec.filters = {{"tenant", "tenant_id"}, {"supplier", "supplier_id"}, {"name", "name"}};
  spec.build = [&app](const json& given, const Principal& p, StoreTx& tx, const Record* existing) -> Result<Built> {
    // A tenant admin's new user belongs to the admin's tenant unless the document names one.
    json body = given;
    std::optional<Role> role;
    if (body.is_object() && body.contains("role") && body["role"].is_string())
      role = parse_role(body["role"].get<std::string>());
    const bool tenant_role = role && is_tenant_role(*role);
    if (!existing && tenant_role && !body.contains("tenant") && !p.tenant_id.empty()) {
      auto own = tx.get("tenants", p.tenant_id);
      if (own) body["tenant"] = own->name;
    }
    auto u = parse_user(body);
    if (!u) return u.error();
    if (!role_can_grant(p.role, u->role))
      return error_with_field(
          Code::kForbidden,
          Message("api.users.may_not_grant").arg("role", role_name(p.role)).arg("granted", role_name(u->role)), "role",
          Message("api.users.role_not_grantable"));
    if (existing && existing->id == p.user_id && u->role != p.role)
      return Error::invalid("role", Message("api.users.own_role"));
    if (!u->tenant.empty()) {
      std::map<std::string, std::string> scope;
      if (!p.is_operator()) scope["tenant_id"] = p.tenant_id.empty() ? "-" : p.tenant_id;
      auto t = resolve_ref(tx, "tenants", u->tenant, scope, "tenant");
      if (!t) return t.error();
      u->tenant_id = t->id;
      if (!existing)  // a tenant's users and their tokens cannot grow without end
        if (auto room =
                check_tenant_room(tx, "users", t->id, app.opts.tenant_max_users, "tenant", "api.users.too_many");
            !room)
          return room.error();
    }
    if (!u->supplier.empty()) {
      auto s = resolve_ref(tx, "suppliers", u->supplier, {}, "supplier");
      if (!s) return s.error();
      u->supplier_id = s->id;
    }
    // A user's tenant and supplier are fixed at creation (docs/resources/users.md): its tokens
    // carry them as scope columns, and moving a user would leave those behind.
    if (existing && u->tenant_id != existing->tenant_id)
      return Error::invalid("tenant", Message("api.users.scope_fixed"));
    if (existing && u->supplier_id != existing->supplier_id)
      return Error::invalid("supplier", Message("api.users.scope_fixed"));
    return Built{to_json(*u), index_of(*u)};
  };
  spec.on_delete = [](const Principal& p, const Record& r, StoreTx& tx) -> Status {
    if (r.id == p.user_id) return Error::make(Code::kConflict, Message("api.users.delete_self"));
    if (auto s = tx.revoke_user_tokens(r.id); !s) return s;
    // Nobody can mint for a deleted user, so its tokens would stay listed forever: they go (the
    // audit log keeps their mints and this delete).
    auto gone = tx.prune_dead_tokens(r.id, INT64_MAX, 0);
    return gone ? ok_status() : Status(gone.error());
  };
  register_crud(app, srv, spec);
  route(app, srv, "GET", "/api/v1/me", "/api/v1/me",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) { whoami(app, req, res, p); });
}

}  // namespace gpurent
