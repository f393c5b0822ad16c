// GET /api/v1/dashboard/costs and GET /api/v1/dashboard/cost-performance (docs/api.md#dashboard):
// what each UTC day cost per tenant, project and card, budgets burning down and the period's
// alerts (server/dashboard/costs.h); metric gain per GPU-hour of each job (server/dashboard/
// cost_performance.h, arithmetic in insight/). Both rate the tenants' day invoices on request. Operators see
// every tenant (?tenant= narrows to one), tenant users their own; supplier tokens are refused.
#include "server/dashboard/cost_performance.h"
#include "server/dashboard/costs.h"
#include "server/http/http_util.h"
#include "server/api/resources.h"

namespace gpurent {
namespace {

std::optional<std::string> param(const httplib::Request& req, const char* name) {
  if (!req.has_param(name)) return std::nullopt;
  return req.get_param_value(name);
}

// Narrows `tenants` to the project `ref` names (an id, or a name within the tenants in scope);
// returns its id. Not found (or out of scope) is 404; a name several tenants use is 422.
Result<std::string> narrow_to_project(App& app, const Principal& p, const std::string& ref,
                                      std::vector<Record>& tenants) {
  std::vector<Record> found;
  if (looks_like_id(ref)) {
    auto r = find_visible(app.store, app.kinds.at("projects"), p, ref);
    if (!r) return r.error();
    found.push_back(std::move(*r));
  } else {
    for (const Record& t : tenants) {
      auto page = app.store.list({"projects", {{"tenant_id", t.id}, {"name", ref}}, "", 1});
      if (!page) return page.error();
      for (auto& r : page->items) found.push_back(std::move(r));
    }
  }
  std::erase_if(found, [&](const Record& r) {
    return std::none_of(tenants.begin(), tenants.end(), [&](const Record& t) { return t.id == r.tenant_id; });
  });
  if (found.empty()) return Error::make(Code::kNotFound, Message("api.dashboard.no_project").arg("project", ref));
  if (found.size() > 1)
    return Error::invalid(
        "project",
        Message("api.dashboard.project_ambiguous").arg("project", ref).arg("n", std::to_string(found.size())));
  std::erase_if(tenants, [&](const Record& t) { return t.id != found[0].tenant_id; });
  return found[0].id;
}

}  // namespace

void register_dashboard_cost_routes(App& app, Router& srv) {
  route(app, srv, "GET", "/api/v1/dashboard/costs", "dashboard_costs",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          if (auto st = only_params(req, {"from", "to", "tenant"}); !st) return send_problem(res, st.error(), req.path);
          const TimeMs now = app.clock.now();
          auto range = parse_day_range(param(req, "from"), param(req, "to"), now);
          if (!range) return send_problem(res, range.error(), req.path);
          auto tenants = dashboard_tenants(app, p, param(req, "tenant"));
          if (!tenants) return send_problem(res, tenants.error(), req.path);
          auto d = build_costs_dashboard(app.store, app.catalog, *tenants, *range, now);
          if (!d) return send_problem(res, d.error(), req.path);
          send_json(res, 200, to_json(*d));
        });

  route(app, srv, "GET", "/api/v1/dashboard/cost-performance", "dashboard_cost_performance",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          if (auto st = only_params(req, {"from", "to", "tenant", "project"}); !st)
            return send_problem(res, st.error(), req.path);
          const TimeMs now = app.clock.now();
          auto range = parse_day_range(param(req, "from"), param(req, "to"), now);
          if (!range) return send_problem(res, range.error(), req.path);
          auto tenants = dashboard_tenants(app, p, param(req, "tenant"));
          if (!tenants) return send_problem(res, tenants.error(), req.path);
          std::string project_id;
          if (auto ref = param(req, "project")) {
            auto id = narrow_to_project(app, p, *ref, *tenants);
            if (!id) return send_problem(res, id.error(), req.path);
            project_id = *id;
          }
          auto c = build_cost_performance(app.store, app.catalog, *tenants, project_id, *range, now);
          if (!c) return send_problem(res, c.error(), req.path);
          send_json(res, 200, to_json(*c));
        });
}

}  // namespace gpurent
