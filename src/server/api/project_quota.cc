// GET and PUT /api/v1/projects/{id}/quota (docs/api.md "Projects and quotas"): the quota with this
// month's spending against its budget and the budget hold in force; a change re-checks the
// project's budget in its own write and answers warnings where a limit is now below present use.
#include "server/api/project_quota.h"

#include "billing/rating.h"
#include "model/alert.h"
#include "model/job.h"
#include "model/tenant.h"
#include "server/dashboard/costs.h"
#include "server/http/http_util.h"
#include "server/services/cost_firewall.h"
#include "server/services/record_faults.h"

namespace gpurent {

Result<Currency> tenant_currency(const Record& tenant) {
  return decode_record(tenant, stored_tenant_currency, "its projects' budgets cannot be read");
}

namespace {

// This month's burn-down of the project's budget as of `now` (none without a budget): the costs
// dashboard's computation, on the same day invoices.
Result<std::optional<BudgetBurn>> month_burn(App& app, const Record& project, const Quota& q, TimeMs now) {
  if (!q.monthly_budget) return std::optional<BudgetBurn>();
  DayInvoices invoices(app.store, app.catalog, project.tenant_id, now);
  auto burns = budget_burns(invoices, {{project.name, *q.monthly_budget}}, month_start(now), now);
  if (!burns) return burns.error();
  return std::optional<BudgetBurn>(burns->at(project.name));
}

// The project's active budget alerts (those of other kinds and those that no longer decode left
// out; the latter are reported).
Result<std::vector<StoredAlert>> active_budget_alerts(App& app, const Record& project) {
  auto active = list_all(app.store, "alerts",
                         {{"tenant_id", project.tenant_id}, {"project_id", project.id}, {"state", "active"}});
  if (!active) return active.error();
  std::vector<StoredAlert> out;
  for (const Record& r : *active) {
    auto a = decode_record(r, decode_stored_alert, "the project's quota does not show it");
    if (a && a->alert.kind == AlertKind::kBudgetBreach) out.push_back(std::move(*a));
  }
  return out;
}

// "16", "0.5": GPUs from milli-GPUs.
std::string quota_gpus_text(int64_t milli) { return format_scaled(milli, 3); }

// What the project's admitted and running jobs hold: milli-GPUs per catalog model, how many jobs,
// and how many ask for more GPUs than `max_per_job`.
struct PresentUse {
  std::map<std::string, int64_t> milli_by_model;
  int64_t jobs = 0;
  int64_t larger_than_job_limit = 0;
};

Result<PresentUse> present_use(App& app, const Record& project, const Quota& q, Currency currency) {
  PresentUse use;
  std::map<std::string, std::string> node_models;  // node id -> catalog model
  for (const char* state : {"admitted", "running"}) {
    auto jobs = list_all(app.store, "jobs", {{"project_id", project.id}, {"state", state}});
    if (!jobs) return jobs.error();
    for (const Record& r : *jobs) {
      auto job = decode_record(
          r, [&](const json& b) { return parse_job(b, currency); }, "the quota's warnings leave it out");
      if (!job) continue;
      auto status = stored_job_status(r.body);
      if (!status) continue;
      ++use.jobs;
      // As the scheduler counts a job against max_gpus_per_job: inference at replicas.max.
      const int64_t replicas = job->replicas ? job->replicas->max : 1;
      const int64_t gpus = (job->gpu_milli_per_worker() * job->workers * replicas + 999) / 1000;
      if (q.max_gpus_per_job && gpus > *q.max_gpus_per_job) ++use.larger_than_job_limit;
      for (const WorkerPlacement& w : status->placement) {
        auto it = node_models.find(w.node);
        if (it == node_models.end()) {
          auto node = app.store.get("nodes", w.node);
          it = node_models.emplace(w.node, node ? node->gpu_model : "").first;
        }
        if (it->second.empty()) continue;
        use.milli_by_model[it->second] += w.gpu_milli > 0 ? w.gpu_milli : static_cast<int64_t>(w.gpus.size()) * 1000;
      }
    }
  }
  return use;
}

// The warnings, with the budget's burn-down when the caller has it (else computed if needed).
Result<std::vector<Message>> warnings_for(App& app, const Record& project, const Quota& q, Currency currency,
                                          const std::optional<BudgetBurn>* known_burn) {
  std::vector<Message> out;
  auto use = present_use(app, project, q, currency);
  if (!use) return use.error();
  for (const auto& [model, milli] : use->milli_by_model) {
    const int64_t limit = q.gpu_limit(model);
    if (milli <= limit * 1000) continue;
    const GpuModel* m = app.catalog.find(model);
    out.push_back(Message("api.quota.warn.gpus")
                      .arg("project", project.name)
                      .arg("used", quota_gpus_text(milli))
                      .arg("model", m ? m->name : model)
                      .arg("limit", std::to_string(limit)));
  }
  if (q.max_concurrent_jobs && use->jobs > *q.max_concurrent_jobs)
    out.push_back((*q.max_concurrent_jobs == 0 ? Message("api.quota.warn.jobs_frozen") : Message("api.quota.warn.jobs"))
                      .arg("project", project.name)
                      .arg("running", std::to_string(use->jobs))
                      .arg("limit", std::to_string(*q.max_concurrent_jobs)));
  if (use->larger_than_job_limit > 0)
    out.push_back(Message("api.quota.warn.per_job")
                      .arg("project", project.name)
                      .arg("n", std::to_string(use->larger_than_job_limit))
                      .arg("limit", std::to_string(*q.max_gpus_per_job)));
  if (!q.monthly_budget) return out;
  const std::string budget = q.monthly_budget->to_string();
  if (cost_firewall_running(app)) {
    // What the firewall decided (the write re-checked it): its figure and its effect.
    auto alerts = active_budget_alerts(app, project);
    if (!alerts) return alerts.error();
    for (const StoredAlert& a : *alerts)
      out.push_back(
          (a.alert.hold_submissions ? Message("api.quota.warn.budget_hold") : Message("api.quota.warn.budget_alert"))
              .arg("project", project.name)
              .arg("spent", a.alert.measured + " " + a.alert.unit)
              .arg("budget", budget));
    return out;
  }
  std::optional<BudgetBurn> computed;
  if (!known_burn) {
    auto burn = month_burn(app, project, q, app.clock.now());
    if (!burn) return burn.error();
    computed = std::move(*burn);
    known_burn = &computed;
  }
  if (*known_burn && (*known_burn)->spent.micros() >= q.monthly_budget->micros())
    out.push_back(Message("api.quota.warn.budget_off")
                      .arg("project", project.name)
                      .arg("spent", (*known_burn)->spent.to_string())
                      .arg("budget", budget));
  return out;
}

// The answer of GET and PUT: the quota, "currency" (the tenant's: the budget's), "budget" (this
// month's spending against monthly_budget, null without one) and "budget_hold" (the reason the
// project's jobs wait, null when none).
Result<json> quota_document(App& app, const Record& project, const Quota& q, Currency currency,
                            const std::optional<BudgetBurn>& burn) {
  json out = to_json(q);
  out["currency"] = currency_code(currency);
  out["budget"] = burn ? to_json(*burn) : json(nullptr);
  out["budget_hold"] = nullptr;
  auto alerts = active_budget_alerts(app, project);
  if (!alerts) return alerts.error();
  for (const StoredAlert& a : *alerts)
    if (a.alert.hold_submissions)
      out["budget_hold"] = text_json(Message("sched.hold.budget").arg("alert", a.alert.message));
  return out;
}

// GET /api/v1/projects/{id}/quota.
void get_quota(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
               const Principal& p) {
  auto r = find_visible(app.store, spec, p, req.matches[1]);
  if (!r) return send_problem(res, r.error(), req.path);
  auto tenant = app.store.get("tenants", r->tenant_id);
  if (!tenant) return send_problem(res, tenant.error(), req.path);
  auto cur = tenant_currency(*tenant);
  if (!cur) return send_problem(res, cur.error(), req.path);
  auto project = decode_record(
      *r, [&](const json& b) { return decode_project(b, *cur); }, "its quota cannot be read");
  if (!project) return send_problem(res, project.error(), req.path);
  auto burn = month_burn(app, *r, project->quota, app.clock.now());
  if (!burn) return send_problem(res, burn.error(), req.path);
  auto doc = quota_document(app, *r, project->quota, *cur, *burn);
  if (!doc) return send_problem(res, doc.error(), req.path);
  send_json(res, 200, *doc);
}

// PUT /api/v1/projects/{id}/quota: the quota replaced (tenant admins and operators), audited, the
// budget re-checked in the same write; the answer is GET's, with warnings.
void put_quota(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
               const Principal& p) {
  auto existing = find_visible(app.store, spec, p, req.matches[1]);
  if (!existing) return send_problem(res, existing.error(), req.path);
  if (!in_scope(write_scope(p, ObjectKind::kQuota), p, *existing))
    return send_problem(
        res, Error::make(Code::kForbidden, Message("api.projects.quota_forbidden").arg("role", role_name(p.role))),
        req.path);
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  // What GET answers beside the quota is read-only: a GET answer may be sent back as it came (its
  // currency must still be the tenant's, checked below).
  std::optional<json> stated_currency;
  if (body->is_object()) {
    if (body->contains("currency")) stated_currency = (*body)["currency"];
    for (const char* k : {"currency", "budget", "budget_hold", "warnings"}) body->erase(k);
  }
  // The month to date is rated before the write, off the control loop (reads only).
  std::optional<MonthToDate> mtd;
  if (cost_firewall_running(app)) {
    auto m = rate_month_to_date(app, existing->tenant_id, app.clock.now());
    if (!m) return send_problem(res, m.error(), req.path);
    mtd = std::move(*m);
  }
  Record written;
  Quota quota;
  Currency currency = Currency::kUSD;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get("projects", existing->id);
    if (!cur) return cur.error();
    auto tenant = tx.get("tenants", cur->tenant_id);
    if (!tenant) return tenant.error();
    auto c = tenant_currency(*tenant);
    if (!c) return c.error();
    currency = *c;
    if (stated_currency && *stated_currency != currency_code(currency))
      return Error::invalid("currency", Message("api.quota.currency_fixed").arg("currency", currency_code(currency)));
    auto q = parse_quota(*body, currency, "");
    if (!q) return q.error();
    if (auto s = check_quota_models(*q, app.catalog, ""); !s) return s;
    auto project = decode_record(
        *cur, [&](const json& b) { return decode_project(b, currency); }, "its quota cannot be changed");
    if (!project) return project.error();
    const Quota before = project->quota;
    project->quota = *q;
    Record r = *cur;
    r.body = to_json(*project);
    r.updated_at = app.clock.now();
    if (auto s = tx.update(r); !s) return s;
    if (auto s = tx.append_audit({r.updated_at, p.user_id, "update_quota", "projects", r.id, to_json(*q).dump()}); !s)
      return s;
    if (mtd && (before.monthly_budget != q->monthly_budget || before.budget_action != q->budget_action)) {
      auto fired = recheck_budget(app, tx, *mtd, r.tenant_id, r.id, r.name, *q);
      if (!fired) return fired.error();
    }
    written = std::move(r);
    quota = std::move(*q);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  app.metrics.count_write("projects", "update_quota");
  auto burn = month_burn(app, written, quota, app.clock.now());
  if (!burn) return send_problem(res, burn.error(), req.path);
  auto doc = quota_document(app, written, quota, currency, *burn);
  if (!doc) return send_problem(res, doc.error(), req.path);
  auto warnings = warnings_for(app, written, quota, currency, &*burn);
  if (!warnings) return send_problem(res, warnings.error(), req.path);
  for (const Message& m : *warnings) (*doc)["warnings"].push_back(text_json(m));
  send_json(res, 200, *doc);
}

}  // namespace

Status check_quota_models(Quota& q, const GpuCatalog& catalog, const std::string& path) {
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

bool budget_changes(const Quota* before, const Quota& quota) {
  return !before || before->monthly_budget != quota.monthly_budget || before->budget_action != quota.budget_action;
}

}  // namespace

Result<std::optional<MonthToDate>> rate_for_recheck(App& app, const std::string& tenant_id, const Quota* before,
                                                    const Quota& quota) {
  if (!budget_changes(before, quota) || !cost_firewall_running(app)) return std::optional<MonthToDate>();
  auto m = rate_month_to_date(app, tenant_id, app.clock.now());
  if (!m) return m.error();
  return std::optional<MonthToDate>(std::move(*m));
}

Status quota_recheck(App& app, StoreTx& tx, const std::string& tenant_id, const std::string& project_id,
                     const std::string& project, const Quota* before, const Quota& quota, bool created,
                     const MonthToDate* rated) {
  if (!budget_changes(before, quota)) return ok_status();
  if (!cost_firewall_running(app)) return ok_status();
  MonthToDate mtd{app.clock.now(), {}};  // a new project has spent nothing
  if (rated) {
    mtd = *rated;
  } else if (!created) {
    auto m = rate_month_to_date(app, tenant_id, mtd.now);
    if (!m) return m.error();
    mtd = std::move(*m);
  }
  auto fired = recheck_budget(app, tx, mtd, tenant_id, project_id, project, quota);
  if (!fired) return fired.error();
  return ok_status();
}

std::vector<Message> quota_warnings(App& app, const Record& project, const Quota& quota, Currency currency) {
  auto w = warnings_for(app, project, quota, currency, nullptr);
  return w ? *w : std::vector<Message>{};
}

void register_project_quota_routes(App& app, Router& srv) {
  item_route(app, srv, "GET", "projects", "quota", get_quota);
  item_route(app, srv, "PUT", "projects", "quota", put_quota);
}

}  // namespace gpurent
