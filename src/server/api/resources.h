// Generic CRUD over a resource kind: list (filters, keyset paging), get (by id or name), create,
// update (optimistic concurrency through "version"), delete. Each route file describes its kind
// with a KindSpec; validation and reference checks run inside the writer's transaction so they see
// the same state the write commits against.
#pragma once

#include <any>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/enum_names.h"
#include "model/resource.h"
#include "server/api/app.h"
#include "server/services/access.h"

namespace gpurent {

struct Built {
  json body;      // canonical document (without server-set keys)
  IndexCols idx;  // columns the store indexes
};

struct KindSpec {
  std::string kind;        // URL segment and store kind, e.g. "nodes"
  std::string id_prefix;   // e.g. "nod"
  ObjectKind object_kind = ObjectKind::kCatalog;  // row of the permission matrix (model/user.h)
  // Self-scoped kinds: a tenant's tenant_id column (a supplier's supplier_id) is its own id, so
  // "own tenant"/"own supplier" scopes apply to the object itself.
  bool self_tenant = false;
  bool self_supplier = false;
  // Names unique across the whole kind (suppliers, tenants, users), checked in the transaction.
  bool global_names = false;
  std::map<std::string, std::string> filters;  // query parameter -> index column
  // Filters that take one of a fixed set of values (?state=running): anything else is a 400 naming
  // the allowed values, not an empty list.
  std::map<std::string, std::vector<std::string>> filter_values;
  // ?updated_since=<RFC 3339>: only records written at or after it (a job's last state change, a
  // run's close), for views that show the recent past without reading all of it.
  bool updated_since = false;
  // Validate + resolve references; `existing` is null on create.
  std::function<Result<Built>(const json& body, const Principal&, StoreTx&, const Record* existing)> build;
  // Updates only, optional: runs before the write, off the control loop, for reads too slow for the
  // single writer (a project's month to date, rated when its budget changes). What it returns is
  // handed to build_update, used instead of build for the update.
  std::function<Result<std::any>(const json& body, const Principal&, const Record& existing)> prepare_update;
  std::function<Result<Built>(const json& body, const Principal&, StoreTx&, const Record& existing,
                              const std::any& prepared)>
      build_update;
  // Creates only, optional: the same as prepare_update for a create (a job's log read for an
  // acceptance run), handed to build_create, used instead of build when the route creates.
  std::function<Result<std::any>(const json& body, const Principal&)> prepare_create;
  std::function<Result<Built>(const json& body, const Principal&, StoreTx&, const std::any& prepared)> build_create;
  // The same for objects the server makes itself (an instance's start's job), which may hold what
  // a request may not (the label gpurent.io/instance). Optional: build when absent.
  std::function<Result<Built>(const json& body, const Principal&, StoreTx&, const Record* existing)> build_by_server;
  // Before delete: referential checks (kConflict) and cascades. Optional.
  std::function<Status(const Principal&, const Record&, StoreTx&)> on_delete;
  // What a read by the principal adds to (or hides from) the stored object (an instance's state,
  // derived from its job). Optional.
  std::function<void(StoreReader&, const Record&, const Principal&, json& out)> decorate;
  // Instead of removing the object, DELETE changes it to what it becomes (an instance released:
  // kept to be read): sets `r`, a copy of the current record, which the caller stores. Optional.
  std::function<Status(const Principal&, Record& r, StoreTx&)> soft_delete;
  // After a delete committed: what lives outside the store (a volume's folder). Optional.
  std::function<void(const Record& removed)> after_delete;
  // After insert, same transaction (e.g. a job's first state event). Optional.
  std::function<Status(const Principal&, const Record&, StoreTx&)> after_create;
  // After a create or update succeeded: what the caller should know that is not an error (a node
  // no offer sells). Answered as "warnings": [{"text", "text_message"}]. Optional.
  std::function<std::vector<Message>(StoreReader&, const Record&)> warnings;
  bool updatable = true;
  bool deletable = true;
  bool creatable = true;
  // POST /api/v1/<kind> is the route file's own handler (market orders: matched at once, idempotency
  // keys): register_crud registers neither a create route nor a 405 for it. creatable stays false.
  bool create_elsewhere = false;
};

// Registers the routes and records the spec in app.kinds.
void register_crud(App& app, Router& srv, const KindSpec& spec);
// A route on one object of a registered kind: METHOD /api/v1/<kind>/{id}/<action>, its handler given
// the kind's spec (jobs' cancel and events, projects' quota).
using ItemHandler = void (*)(App&, const KindSpec&, const httplib::Request&, httplib::Response&, const Principal&);
void item_route(App& app, Router& srv, const char* method, const std::string& kind, const std::string& action,
                ItemHandler h);
// The create path of POST /api/v1/<kind>, also used to seed the demo world: same checks, same writes.
Result<Record> create_object(App& app, const KindSpec& spec, const json& body, const Principal& p);
// The same inside the caller's transaction (an instance's start creates its job with it, `by_server`:
// through spec.build_by_server). `prepared`: what spec.prepare_create returned (create_object asks
// it before the transaction), for spec.build_create.
Result<Record> create_in(App& app, const KindSpec& spec, const json& body, const Principal& p, StoreTx& tx,
                         bool by_server = false, const std::any* prepared = nullptr);
// Holds row (kind, id) shared until the transaction ends (StoreTx::get_shared): a write that puts
// something in it holds it so that its delete cannot miss what is written. Gone: a 409
// (api.resources.parent_gone) when must_exist, else nothing to hold. create_in, updates and
// deletes through register_crud hold their record's supplier, tenant and project this way.
Status hold_parent(StoreTx& tx, const char* kind, const std::string& id, bool must_exist);

// Shared helpers for route files (and services/access.h: scopes, references).
json present(const Record& r);  // body + id, created_at, updated_at, version
// An action's optional body (POST …/{id}/pay): the parsed JSON object, or {} when none was sent.
Result<json> body_or_empty(const httplib::Request& req);
// Inside the writer's transaction: stores `r`, a changed copy of `cur`, at `now` with an audit
// entry (action, detail) by `p`, and gives `r` its new version.
Status store_change(StoreTx& tx, const Record& cur, Record& r, const Principal& p, const std::string& action,
                    const std::string& detail, TimeMs now);
// Finds an object visible to p by id or by name (names are looked up in p's tenant for
// tenant-scoped kinds). kNotFound for missing objects and for objects out of the caller's read scope.
Result<Record> find_visible(StoreReader& store, const KindSpec& spec, const Principal& p, const std::string& ref);
// Whether any run of the tenant held cards on the node: a tenant's dispute (a measurement, an
// acceptance run) is about hardware it rented (measurements.cc).
Result<bool> tenant_used_node(StoreTx& tx, const std::string& tenant_id, const std::string& node_id);
// The id of the object of `kind` that a list filter (?tenant=, ?user=) names by id or name, as
// find_visible finds it; a missing or invisible object is a 404 whose field is the parameter, so a
// typo is an error and not an empty list.
Result<std::string> resolve_filter_ref(App& app, const Principal& p, const std::string& param,
                                       const std::string& kind, const std::string& ref);
// A 400 naming `param`, the value and the allowed values unless `v` is one of `allowed`.
Status check_one_of(const std::string& param, const std::string& v, const std::vector<std::string>& allowed);
// "<kind>/<ref> not found" (kNotFound), as the API words a missing object.
Error not_found_error(const std::string& kind, const std::string& ref);
// The project a route's path names first (/api/v1/projects/{ref}/...), visible to p; for a write,
// p must also be within write_scope(p, writers), else 403 with the message `forbidden` naming the role.
Result<Record> path_project(App& app, const httplib::Request& req, const Principal& p, bool write, ObjectKind writers,
                            const char* forbidden);
// A project's own object of `kind` (secrets, artifacts: their name column is "<project id>/<name>").
template <class Reader>
Result<Record> find_in_project(Reader& store, const std::string& kind, const std::string& project_id,
                               const std::string& name) {
  auto found = store.list({kind, {{"project_id", project_id}, {"name", project_id + "/" + name}}, "", 2});
  if (!found) return found.error();
  if (found->items.empty()) return not_found_error(kind, name);
  return found->items.front();
}
// PUT /api/v1/tenants/{ref}/<setting> (billing, procurement): operators, or the tenant's own admin
// (else 403 with message `forbidden` naming the role). Inside the writer's transaction `edit`
// changes the decoded tenant from the request's body and answers the audit entry's detail; the
// tenant is stored (audited as `action`). The stored record, or none once the problem is sent.
struct Tenant;
using TenantEdit = std::function<Result<std::string>(StoreTx&, Tenant&, const json& body)>;
std::optional<Record> change_tenant_setting(App& app, const KindSpec& spec, const httplib::Request& req,
                                            httplib::Response& res, const Principal& p, const char* forbidden,
                                            const std::string& action, const TenantEdit& edit);
// Pending disputes (measurements a tenant's admin filed, waiting for the supplier or an operator)
// are at most 100 per tenant, so filing them in a loop, one by one or as an acceptance run's
// measurements, cannot grow without bound what every correction, invoice and supplier report
// reads. kInvalid on `field` when `adding` more would pass that.
Status check_dispute_room(StoreTx& tx, const std::string& tenant_id, int64_t adding, const std::string& field);
// What one tenant may hold of a kind that nothing else bounds (users, secrets, volumes: the
// caps of `gpurent serve --tenant-max-*`, docs/security.md#what-one-tenant-may-hold): before an
// insert of `kind` for tenant_id, kInvalid on `field` with message `code` ({tenant}, {max}) when
// the tenant already holds `max`. Counted through the tenant index column, so it costs the same
// however many the tenant holds, under a write lock per tenant and kind, so two writes (or two
// servers sharing a PostgreSQL database) cannot pass the cap together.
Status check_tenant_room(StoreTx& tx, const std::string& kind, const std::string& tenant_id, int64_t max,
                         const std::string& field, const char* code);
// An error whose summary and one field's reason are both message codes (a 409 naming the field
// that conflicts, a 403 naming the field refused).
Error error_with_field(Code c, Message detail, std::string field, Message reason);

}  // namespace gpurent
