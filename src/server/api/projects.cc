// /api/v1/projects and /api/v1/projects/{id}/quota: a tenant's projects and their resource and
// cost firewall (GPUs per model, GPUs per job, concurrent jobs, monthly budget).
#include "core/fields.h"
#include "model/project.h"
#include "model/tenant.h"
#include "server/services/record_faults.h"
#include "server/http/http_util.h"
#include "server/api/resources.h"

namespace gpurent {

static Result<Record> project_tenant(StoreTx& tx, const Principal& p, const std::string& ref) {
  if (!p.is_operator()) {
    std::string own = p.tenant_id.empty() ? "-" : p.tenant_id;
    if (ref.empty()) {
      auto t = tx.get("tenants", own);
      if (!t) return Error::invalid("tenant", Message("api.projects.tenant_gone"));
      return t;
    }
    return resolve_ref(tx, "tenants", ref, {{"tenant_id", own}}, "tenant");
  }
  if (ref.empty()) return Error::invalid("tenant", Message("api.projects.tenant_required"));
  return resolve_ref(tx, "tenants", ref, {}, "tenant");
}

static Result<Currency> tenant_currency(const Record& tenant) {
  return decode_record(tenant, stored_tenant_currency, "its projects' budgets cannot be read");
}

// Checks every model of the quota against the catalog and rewrites aliases to catalog ids, so the
// scheduler and the submission checks compare like with like.
static Status check_quota_models(Quota& q, const GpuCatalog& catalog, const std::string& path) {
  std::map<std::string, int64_t> canonical;
  for (const auto& [model, n] : q.gpus_per_model) {
    std::string id = model;
    if (model != kAnyGpuModel) {
      const GpuModel* m = catalog.find(model);
      if (!m) return Error::invalid(path + "gpus_per_model." + model, Message("api.projects.unknown_gpu_model"));
      id = m->id;
    }
    if (!canonical.emplace(id, n).second)
      return Error::invalid(path + "gpus_per_model." + model, Message("api.projects.same_gpu_model").arg("model", id));
  }
  q.gpus_per_model = std::move(canonical);
  return ok_status();
}

namespace {

// POST/PUT /api/v1/projects: the project in its tenant's currency, its quota's models checked;
// the tenant of an existing project does not change.
Result<Built> build_project(App& app, const json& body, const Principal& p, StoreTx& tx, const Record* existing) {
  std::string ref = body.is_object() && body.contains("tenant") && body["tenant"].is_string()
                        ? body["tenant"].get<std::string>()
                        : (existing ? existing->tenant_id : "");
  auto tenant = project_tenant(tx, p, ref);
  if (!tenant) return tenant.error();
  if (existing && tenant->id != existing->tenant_id)
    return Error::invalid("tenant", Message("api.projects.tenant_fixed"));
  auto cur = tenant_currency(*tenant);
  if (!cur) return cur.error();
  auto pr = parse_project(body, *cur);
  if (!pr) return pr.error();
  if (auto s = check_quota_models(pr->quota, app.catalog, "quota."); !s) return s.error();
  pr->tenant_id = tenant->id;
  if (pr->tenant.empty()) pr->tenant = tenant->id;
  return Built{to_json(*pr), index_of(*pr)};
}

// GET /api/v1/projects/{id}/quota.
void get_quota(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto r = find_visible(app.store, spec, p, req.matches[1]);
  if (!r) return send_problem(res, r.error(), req.path);
  auto tenant = app.store.get("tenants", r->tenant_id);
  if (!tenant) return send_problem(res, tenant.error(), req.path);
  auto cur = tenant_currency(*tenant);
  if (!cur) return send_problem(res, cur.error(), req.path);
  auto project = decode_record(*r, [&](const json& b) { return decode_project(b, *cur); }, "its quota cannot be read");
  if (!project) return send_problem(res, project.error(), req.path);
  send_json(res, 200, to_json(project->quota));
}

// PUT /api/v1/projects/{id}/quota: the quota replaced (tenant admins and operators), audited.
void put_quota(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto existing = find_visible(app.store, spec, p, req.matches[1]);
  if (!existing) return send_problem(res, existing.error(), req.path);
  if (!in_scope(write_scope(p, ObjectKind::kQuota), p, *existing))
    return send_problem(
        res,
        Error::make(Code::kForbidden, Message("api.projects.quota_forbidden").arg("role", role_name(p.role))),
        req.path);
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  json quota;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get("projects", existing->id);
    if (!cur) return cur.error();
    auto tenant = tx.get("tenants", cur->tenant_id);
    if (!tenant) return tenant.error();
    auto currency = tenant_currency(*tenant);
    if (!currency) return currency.error();
    auto q = parse_quota(*body, *currency, "");
    if (!q) return q.error();
    if (auto s = check_quota_models(*q, app.catalog, ""); !s) return s;
    auto project = decode_record(*cur, [&](const json& b) { return decode_project(b, *currency); }, "its quota cannot be changed");
    if (!project) return project.error();
    project->quota = *q;
    Record r = *cur;
    r.body = to_json(*project);
    r.updated_at = app.clock.now();
    if (auto s = tx.update(r); !s) return s;
    if (auto s = tx.append_audit({r.updated_at, p.user_id, "update_quota", "projects", r.id, to_json(*q).dump()}); !s)
      return s;
    quota = to_json(project->quota);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  app.metrics.count_write("projects", "update_quota");
  send_json(res, 200, quota);
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
  spec.on_delete = [](const Principal&, const Record& r, StoreTx& tx) -> Status {
    auto n = tx.count("jobs", {{"project_id", r.id}});
    if (!n) return n.error();
    if (*n > 0)
      return Error::make(Code::kConflict,
                         Message("api.projects.has_jobs").arg("project", r.name).arg("n", std::to_string(*n)));
    return ok_status();
  };
  register_crud(app, srv, spec);
  const KindSpec* sp = &app.kinds["projects"];

  route(app, srv, "GET", "/api/v1/projects/([^/]+)/quota", "/api/v1/projects/{id}/quota",
        [&app, sp](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          get_quota(app, *sp, req, res, p);
        });

  route(app, srv, "PUT", "/api/v1/projects/([^/]+)/quota", "/api/v1/projects/{id}/quota",
        [&app, sp](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          put_quota(app, *sp, req, res, p);
        });
}

}  // namespace gpurent
