// /api/v1/projects: a tenant's projects and their resource and cost firewall (GPUs per model, GPUs
// per job, concurrent jobs, monthly budget); the quota's own routes are in project_quota.cc. A
// write that sets a budget re-checks it at once (project_quota.h: quota_recheck) and answers the
// quota's warnings.
#include "core/fields.h"
#include "model/project.h"
#include "model/tenant.h"
#include "server/api/project_quota.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/cost_firewall.h"
#include "server/services/record_faults.h"

namespace gpurent {

namespace {

// POST/PUT /api/v1/projects: the project in its tenant's currency, its quota's models checked;
// the tenant of an existing project does not change. `rated`: the tenant's month to date, rated
// before an update's write when it changes the budget (prepare_project_update).
Result<Built> build_project(App& app, const json& body, const Principal& p, StoreTx& tx, const Record* existing,
                            const MonthToDate* rated = nullptr) {
  std::string ref = body.is_object() && body.contains("tenant") && body["tenant"].is_string()
                        ? body["tenant"].get<std::string>()
                        : (existing ? existing->tenant_id : "");
  auto tenant = owning_tenant(tx, p, ref);
  if (!tenant) return tenant.error();
  if (existing && tenant->id != existing->tenant_id)
    return Error::invalid("tenant", Message("api.projects.tenant_fixed"));
  if (!existing) {  // every scheduler pass reads every project; one writer at a time per tenant
    if (auto l = take_write_lock(tx, "projects-of-" + tenant->id, "the projects of " + tenant->id); !l)
      return l.error();
    auto held = tx.count("projects", {{"tenant_id", tenant->id}});
    if (!held) return held.error();
    if (*held >= app.opts.tenant_max_projects)
      return Error::invalid("tenant", Message("api.projects.too_many")
                                          .arg("tenant", tenant->name)
                                          .arg("max", std::to_string(app.opts.tenant_max_projects)));
  }
  auto cur = tenant_currency(*tenant);
  if (!cur) return cur.error();
  auto pr = parse_project(body, *cur);
  if (!pr) return pr.error();
  if (auto s = check_quota_models(pr->quota, app.catalog, "quota."); !s) return s.error();
  pr->tenant_id = tenant->id;
  if (pr->tenant.empty()) pr->tenant = tenant->id;
  if (existing) {  // a new project's budget is checked once it has an id (after_create)
    auto old = decode_project(existing->body, *cur);
    if (auto s = quota_recheck(app, tx, tenant->id, existing->id, pr->name, old ? &old->quota : nullptr, pr->quota,
                               false, rated);
        !s)
      return s.error();
  }
  return Built{to_json(*pr), index_of(*pr)};
}

// Before a PUT's write, off the control loop: the month to date its budget re-check needs, rated
// only when the body changes the budget or its action (a body that does not parse gets nothing:
// the build inside the write reports it). A budget changed meanwhile by another write is rated
// inside the write after all (quota_recheck).
Result<std::any> prepare_project_update(App& app, const json& body, const Record& existing) {
  auto tenant = app.store.get("tenants", existing.tenant_id);
  if (!tenant) return tenant.error();
  auto cur = tenant_currency(*tenant);
  if (!cur) return cur.error();
  auto pr = parse_project(body, *cur);
  if (!pr) return std::any();
  auto old = decode_project(existing.body, *cur);
  auto rated = rate_for_recheck(app, existing.tenant_id, old ? &old->quota : nullptr, pr->quota);
  if (!rated) return rated.error();
  if (!*rated) return std::any();
  return std::any(std::move(**rated));
}

// The stored project's quota and its tenant's currency.
Result<std::pair<Quota, Currency>> stored_quota(StoreReader& store, const Record& r) {
  auto tenant = store.get("tenants", r.tenant_id);
  if (!tenant) return tenant.error();
  auto cur = tenant_currency(*tenant);
  if (!cur) return cur.error();
  auto project = decode_record(
      r, [&](const json& b) { return decode_project(b, *cur); }, "its quota cannot be read");
  if (!project) return project.error();
  return std::make_pair(project->quota, *cur);
}

}  // namespace

void register_project_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "projects";
  spec.id_prefix = "prj";
  spec.object_kind = ObjectKind::kProject;
  spec.filters = {{"tenant", "tenant_id"}, {"name", "name"}};
  spec.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record* existing) {
    return build_project(app, body, p, tx, existing);
  };
  spec.prepare_update = [&app](const json& body, const Principal&, const Record& existing) {
    return prepare_project_update(app, body, existing);
  };
  spec.build_update = [&app](const json& body, const Principal& p, StoreTx& tx, const Record& existing,
                             const std::any& prepared) {
    return build_project(app, body, p, tx, &existing, std::any_cast<MonthToDate>(&prepared));
  };
  spec.on_delete = [](const Principal&, const Record& r, StoreTx& tx) -> Status {
    auto n = tx.count("jobs", {{"project_id", r.id}});
    if (!n) return n.error();
    if (*n > 0)
      return Error::make(Code::kConflict,
                         Message("api.projects.has_jobs").arg("project", r.name).arg("n", std::to_string(*n)));
    // Its artifacts are deleted one by one first (their content files are shared by digest).
    auto arts = tx.count("artifacts", {{"project_id", r.id}});
    if (!arts) return arts.error();
    if (*arts > 0)
      return Error::make(Code::kConflict,
                         Message("api.projects.has_artifacts").arg("project", r.name).arg("n", std::to_string(*arts)));
    // Its secrets go with it (values included): nothing else can reach them.
    for (;;) {
      auto secrets = tx.list({"secrets", {{"project_id", r.id}}, "", 500});
      if (!secrets) return secrets.error();
      if (secrets->items.empty()) return ok_status();
      for (const Record& sec : secrets->items)
        if (auto s = tx.remove("secrets", sec.id); !s) return s;
    }
  };
  // A new project's budget: nothing spent yet, so only a zero budget fires.
  spec.after_create = [&app](const Principal&, const Record& r, StoreTx& tx) -> Status {
    auto tenant = tx.get("tenants", r.tenant_id);
    if (!tenant) return tenant.error();
    auto cur = tenant_currency(*tenant);
    if (!cur) return cur.error();
    auto project = decode_project(r.body, *cur);
    if (!project) return project.error();
    return quota_recheck(app, tx, r.tenant_id, r.id, r.name, nullptr, project->quota, true);
  };
  spec.warnings = [&app](StoreReader& store, const Record& r) {
    auto q = stored_quota(store, r);
    return q ? quota_warnings(app, r, q->first, q->second) : std::vector<Message>{};
  };
  register_crud(app, srv, spec);
  register_project_quota_routes(app, srv);
}

}  // namespace gpurent
