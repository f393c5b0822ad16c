#include "model/user.h"

#include "core/json_put.h"

#include "model/tenant.h"

namespace gpurent {
namespace {

constexpr EnumEntry<Role> kRoleNames[] = {{Role::kOperatorAdmin, "operator_admin"},
                                          {Role::kSupplier, "supplier"},
                                          {Role::kTenantAdmin, "tenant_admin"},
                                          {Role::kTenantMember, "tenant_member"},
                                          {Role::kViewer, "viewer"}};

constexpr EnumEntry<ObjectKind> kKindNames[] = {
    {ObjectKind::kCatalog, "catalog"}, {ObjectKind::kSupplier, "suppliers"}, {ObjectKind::kNode, "nodes"},
    {ObjectKind::kOffer, "offers"},    {ObjectKind::kTenant, "tenants"},     {ObjectKind::kProject, "projects"},
    {ObjectKind::kQuota, "quotas"},    {ObjectKind::kUser, "users"},         {ObjectKind::kToken, "tokens"},
    {ObjectKind::kJob, "jobs"},        {ObjectKind::kAlert, "alerts"},     {ObjectKind::kWebhook, "webhooks"},
    {ObjectKind::kGpuTelemetry, "gpu_telemetry"}, {ObjectKind::kJobUsage, "job_usage"},
    {ObjectKind::kUtilization, "utilization"}, {ObjectKind::kMeasurement, "measurements"},
    {ObjectKind::kMarketOrder, "market_orders"}, {ObjectKind::kMarketTrade, "market_trades"}};

constexpr EnumEntry<Scope> kScopeNames[] = {{Scope::kNone, "none"},
                                            {Scope::kSelf, "self"},
                                            {Scope::kOwnSupplier, "own_supplier"},
                                            {Scope::kOwnTenant, "own_tenant"},
                                            {Scope::kAll, "all"}};

// The matrix, one row per kind; columns in Role order: operator_admin, supplier, tenant_admin,
// tenant_member, viewer. Mirrors the table in docs/resources/users.md.
constexpr Scope N = Scope::kNone, S = Scope::kSelf, OS = Scope::kOwnSupplier, OT = Scope::kOwnTenant,
                A = Scope::kAll;
struct MatrixRow {
  ObjectKind kind;
  Scope read[5];
  Scope write[5];
};
constexpr MatrixRow kMatrix[] = {
    //                         read: op sup tadm tmem view     write: op sup tadm tmem view
    {ObjectKind::kCatalog,  {A, A, A, A, A},                 {A, N, N, N, N}},
    // The market is public to every signed-in user: tenants compare suppliers, their hardware and
    // their price sheets before they rent.
    {ObjectKind::kSupplier, {A, A, A, A, A},                 {A, N, N, N, N}},
    {ObjectKind::kNode,     {A, A, A, A, A},                 {A, OS, N, N, N}},
    {ObjectKind::kOffer,    {A, A, A, A, A},                 {A, OS, N, N, N}},
    {ObjectKind::kTenant,   {A, N, OT, OT, OT},              {A, N, N, N, N}},
    {ObjectKind::kProject,  {A, N, OT, OT, OT},              {A, N, OT, N, N}},
    {ObjectKind::kQuota,    {A, N, OT, OT, OT},              {A, N, OT, N, N}},
    {ObjectKind::kUser,     {A, S, OT, OT, OT},              {A, N, OT, N, N}},
    {ObjectKind::kToken,    {A, S, OT, S, S},                {A, S, OT, S, S}},
    {ObjectKind::kJob,      {A, N, OT, OT, OT},              {A, N, OT, OT, N}},
    {ObjectKind::kAlert,    {A, N, OT, OT, OT},              {A, N, OT, N, N}},
    {ObjectKind::kWebhook,  {A, N, N, N, N},                 {A, N, N, N, N}},
    {ObjectKind::kGpuTelemetry, {A, OS, N, N, N},            {A, OS, N, N, N}},
    {ObjectKind::kJobUsage, {A, N, OT, OT, OT},              {A, N, N, N, N}},
    // Dashboards read from telemetry and the ledger: a supplier sees its own nodes' cards, a tenant
    // the cards its jobs held. Nothing to write.
    {ObjectKind::kUtilization, {A, OS, OT, OT, OT},          {N, N, N, N, N}},
    // Measurements are public facts about the market's hardware; a tenant's admin files disputes
    // (its own tenant's), which count once the node's supplier or an operator accepts them.
    {ObjectKind::kMeasurement, {A, A, A, A, A},              {A, OS, OT, N, N}},
    // The market: a supplier sells its capacity, a tenant's admin buys; each sees its own orders and
    // trades (the books' aggregate prices are public: GET /api/v1/market/quote, …/depth, …/prints).
    {ObjectKind::kMarketOrder, {A, OS, OT, OT, OT},           {A, OS, OT, N, N}},
    {ObjectKind::kMarketTrade, {A, OS, OT, OT, OT},           {N, N, N, N, N}},
};

}  // namespace

const char* role_name(Role r) { return enum_name(kRoleNames, r); }
std::optional<Role> parse_role(std::string_view s) { return enum_parse(kRoleNames, s); }
const char* object_kind_name(ObjectKind k) { return enum_name(kKindNames, k); }
const char* scope_name(Scope s) { return enum_name(kScopeNames, s); }

Scope role_scope(Role r, ObjectKind kind, Verb verb) {
  const auto col = static_cast<size_t>(r);
  for (const auto& row : kMatrix)
    if (row.kind == kind) return verb == Verb::kRead ? row.read[col] : row.write[col];
  return Scope::kNone;
}

bool is_operator_role(Role r) { return r == Role::kOperatorAdmin; }
bool is_supplier_role(Role r) { return r == Role::kSupplier; }
bool is_tenant_role(Role r) { return r == Role::kTenantAdmin || r == Role::kTenantMember || r == Role::kViewer; }

static bool reaches_tenant(Scope s) { return s == Scope::kOwnTenant || s == Scope::kAll; }

bool role_can_write_tenant_objects(Role r) { return reaches_tenant(role_scope(r, ObjectKind::kProject, Verb::kWrite)); }

bool role_can_submit_jobs(Role r) { return reaches_tenant(role_scope(r, ObjectKind::kJob, Verb::kWrite)); }

bool role_can_grant(Role actor, Role target) {
  if (actor == Role::kOperatorAdmin) return true;
  return actor == Role::kTenantAdmin && is_tenant_role(target);
}

Result<Role> stored_user_role(const json& body) {
  auto it = body.is_object() ? body.find("role") : body.end();
  const std::string s = it != body.end() && it->is_string() ? it->get<std::string>() : "";
  auto r = parse_role(s);
  if (!r) return Error::invalid("role", Message("user.role.unknown").arg("role", s));
  return *r;
}

Result<User> parse_user(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  User u;
  u.name = f.str("name", {.max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
  u.display_name = f.opt_str("display_name", kDisplayNameRule).value_or(u.name);
  u.email = f.str("email", kEmailRule);
  // Remember whether the role was readable: the scope checks below only make sense then.
  const bool role_given = f.has("role");
  const size_t errs_before = errs.list().size();
  u.role = f.enumeration("role", kRoleNames);
  const bool role_ok = role_given && errs.list().size() == errs_before;
  const StrRule ref{.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp};
  u.tenant = f.opt_str("tenant", ref).value_or("");
  u.supplier = f.opt_str("supplier", ref).value_or("");
  if (role_ok) {
    const std::string role = role_name(u.role);
    if (is_tenant_role(u.role)) {
      if (!f.has("tenant")) f.error("tenant", Message("user.tenant.required_for_role").arg("role", role));
      if (f.has("supplier")) f.error("supplier", Message("user.supplier.only_for_supplier").arg("role", role));
    } else if (is_supplier_role(u.role)) {
      if (!f.has("supplier")) f.error("supplier", Message("user.supplier.required"));
      if (f.has("tenant")) f.error("tenant", Message("user.tenant.not_for_supplier"));
    } else {
      if (f.has("tenant")) f.error("tenant", Message("user.tenant.spans_all").arg("role", role));
      if (f.has("supplier")) f.error("supplier", Message("user.supplier.spans_all").arg("role", role));
    }
  }
  ignore_server_keys(f);
  f.ignore({"tenant_id", "supplier_id"});
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return u;
}

json to_json(const User& u) {
  json j = {{"name", u.name}, {"display_name", u.display_name}, {"email", u.email}, {"role", role_name(u.role)}};
  if (!u.tenant.empty()) j["tenant"] = u.tenant;
  if (!u.supplier.empty()) j["supplier"] = u.supplier;
  if (!u.tenant_id.empty()) j["tenant_id"] = u.tenant_id;
  if (!u.supplier_id.empty()) j["supplier_id"] = u.supplier_id;
  return j;
}

IndexCols index_of(const User& u) {
  IndexCols c;
  c.name = u.name;
  c.tenant_id = u.tenant_id;
  c.supplier_id = u.supplier_id;
  return c;
}

Result<TokenRequest> parse_token_request(const json& body, TimeMs now) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  TokenRequest t;
  t.user = f.str("user", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
  t.name = f.str("name", {.max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
  t.expires_at = f.opt_time("expires_at");
  if (t.expires_at && *t.expires_at <= now)
    f.error("expires_at", Message("user.token.expires_in_past").arg("now", format_rfc3339(now)));
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return t;
}

json to_json(const TokenRequest& t) {
  json j = {{"user", t.user}, {"name", t.name}};
  put_opt_time(j, "expires_at", t.expires_at);
  return j;
}

}  // namespace gpurent
