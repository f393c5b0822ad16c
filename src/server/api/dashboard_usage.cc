// GET /api/v1/dashboard/utilization (hour × card GPU utilization), GET
// /api/v1/dashboard/suppliers (supplier health and the advisor's split) and GET
// /api/v1/dashboard/fragmentation (GPUs stranded per model and job shape; operators): the query parameters,
// who sees what, and the JSON; the figures come from server/dashboard/usage.h and
// server/dashboard/suppliers.h. Scope: operators see everything and may narrow with supplier=,
// node=, project=, tenant= (an id or a name); tenant users see only their own tenant's
// allocations (tenant= naming another tenant is 404, as for invoices); supplier users see only
// their own nodes. Contract: docs/api.md, "Dashboard".
#include "server/dashboard/fragmentation.h"
#include "server/dashboard/suppliers.h"
#include "server/dashboard/usage.h"
#include "server/http/http_util.h"
#include "server/api/resources.h"

namespace gpurent {
namespace {

constexpr DurationMs kDefaultSpan = 7 * kMsPerDay;

TimeMs ceil_to(TimeMs t, DurationMs step) {
  const TimeMs r = ((t % step) + step) % step;
  return r == 0 ? t : t - r + step;
}

// from/to (RFC 3339). Defaults: to = now rounded up to `round_to`, from = to − 7 days. A range
// longer than max_days days is an error on "range", as docs/api.md's dashboard contract has it.
Result<std::pair<TimeMs, TimeMs>> range_of(const httplib::Request& req, TimeMs now, DurationMs round_to,
                                           int64_t max_days) {
  FieldErrors errs;
  const auto from_param = time_param(req, "from", errs);
  const auto to_param = time_param(req, "to", errs);
  if (!errs.empty()) return errs.to_error();
  const TimeMs to = to_param.value_or(ceil_to(now, round_to));
  const TimeMs from = from_param.value_or(to - kDefaultSpan);
  if (to <= from) return Error::invalid("to", Message("api.params.after_from"));
  if (to - from > max_days * kMsPerDay)
    return Error::invalid("range", Message("api.dashboard.range_days").arg("days", std::to_string(max_days)));
  return std::make_pair(from, to);
}

// A filter parameter naming an object by id or name, or nullopt when absent. Unknown (or out of
// the caller's read scope): 404 naming it.
Result<std::optional<Record>> ref_param(App& app, const httplib::Request& req, const Principal& p, const char* name,
                                        const char* kind) {
  if (!req.has_param(name)) return std::optional<Record>();
  const std::string ref = req.get_param_value(name);
  if (ref.empty()) return Error::invalid(name, Message("api.dashboard.ref_empty").arg("param", name));
  auto r = find_visible(app.store, app.kinds.at(kind), p, ref);
  if (!r) return r.error();
  return std::optional<Record>(std::move(*r));
}

// How far the caller's dashboards reach (the permission matrix's utilization row): all cards,
// its own supplier's, or the cards its own tenant's jobs held.
Scope view_scope(const Principal& p) { return read_scope(p, ObjectKind::kUtilization); }

// supplier=: a caller whose view is its own supplier may name only that one.
Result<std::string> supplier_filter(App& app, const httplib::Request& req, const Principal& p) {
  auto sup = ref_param(app, req, p, "supplier", "suppliers");
  if (!sup) return sup.error();
  if (view_scope(p) == Scope::kOwnSupplier) {
    if (*sup && (*sup)->id != p.supplier_id)
      return Error::make(Code::kForbidden, Message("api.dashboard.other_supplier").arg("supplier", (*sup)->name));
    return p.supplier_id;
  }
  return *sup ? (*sup)->id : std::string();
}

// What both dashboards' scopes start with: now, the range (range_of) and the supplier filter.
template <class Scope>
Status time_and_supplier(App& app, const httplib::Request& req, const Principal& p, DurationMs round_to,
                         int64_t max_days, Scope& s) {
  s.now = app.clock.now();
  auto range = range_of(req, s.now, round_to, max_days);
  if (!range) return range.error();
  std::tie(s.from, s.to) = *range;
  auto supplier = supplier_filter(app, req, p);
  if (!supplier) return supplier.error();
  s.supplier_id = *supplier;
  return ok_status();
}

Result<UtilizationScope> utilization_scope(App& app, const httplib::Request& req, const Principal& p) {
  if (auto st = only_params(req, {"from", "to", "supplier", "node", "tenant", "project"}); !st) return st.error();
  UtilizationScope s;
  if (auto st = time_and_supplier(app, req, p, kMsPerHour, 31, s); !st) return st.error();
  const Scope view = view_scope(p);
  s.show_projects = view != Scope::kOwnSupplier;
  auto node = ref_param(app, req, p, "node", "nodes");
  if (!node) return node.error();
  if (*node) {
    if (view == Scope::kOwnSupplier && (*node)->supplier_id != p.supplier_id)
      return Error::make(Code::kForbidden, Message("api.nodes.other_supplier").arg("node", (*node)->name));
    s.node_id = (*node)->id;
  }
  // tenant=: read scope makes another tenant (and, for supplier users, any tenant) 404.
  auto tenant = ref_param(app, req, p, "tenant", "tenants");
  if (!tenant) return tenant.error();
  if (*tenant) s.tenant_id = (*tenant)->id;
  if (view == Scope::kOwnTenant) {
    if (!s.tenant_id.empty() && s.tenant_id != p.tenant_id)
      return Error::make(Code::kNotFound, Message("api.tenants.no_such"));
    s.tenant_id = p.tenant_id;
  }
  auto project = ref_param(app, req, p, "project", "projects");
  if (!project) return project.error();
  if (*project) {
    if (!s.tenant_id.empty() && (*project)->tenant_id != s.tenant_id)
      return Error::invalid("project", Message("api.dashboard.project_not_of_tenant").arg("project", (*project)->name));
    s.project_id = (*project)->id;
  }
  return s;
}

Result<SupplierHealthScope> supplier_health_scope(App& app, const httplib::Request& req, const Principal& p) {
  if (auto st = only_params(req, {"from", "to", "supplier"}); !st) return st.error();
  SupplierHealthScope s;
  if (auto st = time_and_supplier(app, req, p, kMsPerDay, 366, s); !st) return st.error();
  return s;
}

}  // namespace

void register_dashboard_usage_routes(App& app, Router& srv) {
  route(app, srv, "GET", "/api/v1/dashboard/utilization", "dashboard_utilization",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          auto scope = utilization_scope(app, req, p);
          if (!scope) return send_problem(res, scope.error(), req.path);
          auto out = utilization_report(app.store, *scope);
          if (!out) return send_problem(res, out.error(), req.path);
          send_json(res, 200, *out);
        });
  // Operators only: it shows every supplier's nodes.
  route(app, srv, "GET", "/api/v1/dashboard/fragmentation", "dashboard_fragmentation",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          if (!p.is_operator())
            return send_problem(
                res,
                Error::make(Code::kForbidden, Message("api.dashboard.fragmentation_operators").arg("role", role_name(p.role))),
                req.path);
          if (auto st = only_params(req, {}); !st) return send_problem(res, st.error(), req.path);
          auto out = fragmentation_report(app.store, app.catalog);
          if (!out) return send_problem(res, out.error(), req.path);
          send_json(res, 200, *out);
        });
  route(app, srv, "GET", "/api/v1/dashboard/suppliers", "dashboard_suppliers",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          auto scope = supplier_health_scope(app, req, p);
          if (!scope) return send_problem(res, scope.error(), req.path);
          auto out = supplier_health_report(app.store, app.catalog, *scope);
          if (!out) return send_problem(res, out.error(), req.path);
          send_json(res, 200, *out);
        });
}

}  // namespace gpurent
