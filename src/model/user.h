// User: a person or robot that calls the API, with one role and (by role) a tenant or a supplier
// it belongs to. Also the role permission matrix and the API token request.
//
// Permission model (docs/resources/users.md): role_scope(role, kind, verb) says how far a role
// reaches for one kind of object; the server then compares the object's tenant / supplier / user
// with the caller's. Values and pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "model/resource.h"

namespace gpurent {

enum class Role {
  kOperatorAdmin,  // runs the platform: everything
  kSupplier,       // a supplier's staff or agent: its own nodes and offers
  kTenantAdmin,    // a tenant's administrator: its projects, quotas, users, tokens, jobs
  kTenantMember,   // submits and cancels jobs in its tenant, reads the tenant
  kViewer,         // reads its tenant
};

inline constexpr Role kAllRoles[] = {Role::kOperatorAdmin, Role::kSupplier, Role::kTenantAdmin,
                                     Role::kTenantMember, Role::kViewer};

// "operator_admin", "supplier", "tenant_admin", "tenant_member", "viewer".
const char* role_name(Role r);
std::optional<Role> parse_role(std::string_view s);

// --- permission matrix -------------------------------------------------------------------------

enum class ObjectKind {
  kCatalog, kSupplier, kNode, kOffer, kTenant, kProject, kQuota, kUser, kToken, kJob,
  kAlert,         // the cost firewall's alerts; write = lift
  kWebhook,       // where alerts are delivered
  kGpuTelemetry,  // GPU samples of a node (write = report them: the node's supplier agent)
  kJobUsage,      // job usage samples (write = report them: the platform's own meters)
  kUtilization,   // the utilization and supplier-health dashboards (read only): whose cards they show
  kMeasurement,   // SLA measurements: recorded by operators and the node's supplier; disputes filed by a tenant's admin
  kMarketOrder,   // orders in the GPU-hour market: suppliers sell, tenants' admins buy
  kMarketTrade,   // the market's trades: read by their two parties (made only by matching)
};
enum class Verb {
  kRead,   // get, list
  kWrite,  // create, update, delete; for jobs also cancel; for tokens also revoke; alerts: lift
};
// How far a permission reaches. The server checks the object against the caller:
enum class Scope {
  kNone,         // refused (403, or 404 where existence must not leak)
  kSelf,         // only the caller's own user object and its own tokens
  kOwnSupplier,  // objects whose supplier_id is the caller's supplier
  kOwnTenant,    // objects whose tenant_id is the caller's tenant
  kAll,          // any object
};
const char* object_kind_name(ObjectKind k);
const char* scope_name(Scope s);

Scope role_scope(Role r, ObjectKind kind, Verb verb);

bool is_operator_role(Role r);  // operator_admin
bool is_supplier_role(Role r);  // supplier
bool is_tenant_role(Role r);    // tenant_admin, tenant_member, viewer
// Projects, quotas, users and tokens of a tenant (its own, or any for the operator).
bool role_can_write_tenant_objects(Role r);
// Submit and cancel jobs.
bool role_can_submit_jobs(Role r);
// May `actor` create a user holding `target`, or give a user that role? operator_admin: any role;
// tenant_admin: tenant roles (in its tenant); nobody else.
bool role_can_grant(Role actor, Role target);

// --- users -------------------------------------------------------------------------------------

struct User {
  std::string name;          // slug, globally unique (it is the login name)
  std::string display_name;  // defaults to name
  std::string email;
  Role role = Role::kViewer;
  std::string tenant;    // reference; required for tenant roles, forbidden otherwise
  std::string supplier;  // reference; required for role supplier, forbidden otherwise

  // Set by the server from the resolved references (or the stored record's columns); parse
  // ignores these keys.
  std::string tenant_id;
  std::string supplier_id;

  bool operator==(const User&) const = default;
};

Result<User> parse_user(const json& body);
// The role a stored user has, by parse_user's rule; the one reader of it for everyone who needs
// only the role (every request's authentication). An unknown one is an error on "role".
Result<Role> stored_user_role(const json& body);
json to_json(const User& u);
IndexCols index_of(const User& u);

// --- API tokens --------------------------------------------------------------------------------

// Body of POST /tokens. The token acts with its user's role and scope; the secret is returned once.
struct TokenRequest {
  std::string user;                 // reference to the user the token acts as
  std::string name;                 // slug, unique per user ("laptop", "ci")
  std::optional<TimeMs> expires_at; // absent: never expires

  bool operator==(const TokenRequest&) const = default;
};

// `now` rejects an expiry that is not in the future.
Result<TokenRequest> parse_token_request(const json& body, TimeMs now);
json to_json(const TokenRequest& t);

}  // namespace gpurent
