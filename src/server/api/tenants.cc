// /api/v1/tenants: customer organisations. Operators manage them; tenant users read their own.
//   GET /api/v1/tenants/{ref}/procurement — the procurement split against what was achieved
//     (services/procurement.h): from/to (RFC 3339; default this UTC month up to now).
//   PUT /api/v1/tenants/{ref}/procurement — {"procurement_split": [...]}: operators and the
//     tenant's admin set the split the scheduler steers the tenant's jobs by.
#include "model/tenant.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/record_faults.h"
#include "server/services/procurement.h"

namespace gpurent {
namespace {

// The split's supplier references (ids or names) as supplier ids; errors name the entry.
Status resolve_split(StoreTx& tx, std::vector<ProcurementShare>& split) {
  for (size_t i = 0; i < split.size(); ++i) {
    auto sup = resolve_ref(tx, "suppliers", split[i].supplier, {},
                           "procurement_split[" + std::to_string(i) + "].supplier");
    if (!sup) return sup.error();
    split[i].supplier = sup->id;
  }
  for (size_t i = 0; i < split.size(); ++i)  // a name and an id of one supplier
    for (size_t k = 0; k < i; ++k)
      if (split[k].supplier == split[i].supplier)
        return Error::invalid("procurement_split[" + std::to_string(i) + "].supplier",
                              Message("tenant.split.duplicate").arg("index", std::to_string(k)));
  return ok_status();
}

// from/to of the report: default the current UTC month up to now.
Result<std::pair<TimeMs, TimeMs>> report_range(const httplib::Request& req, TimeMs now) {
  if (auto st = only_params(req, {"from", "to"}); !st) return st.error();
  FieldErrors errs;
  const TimeMs to = time_param(req, "to", errs).value_or(now);
  // The UTC month holding the last millisecond before `to`.
  auto month = parse_rfc3339(format_rfc3339(to - 1).substr(0, 7) + "-01", "from");
  const TimeMs from = time_param(req, "from", errs).value_or(month ? *month : to - 1);
  if (errs.empty() && to <= from) errs.add("to", Message("api.params.after_from"));
  if (!errs.empty()) return errs.to_error();
  return std::pair<TimeMs, TimeMs>{from, to};
}

// The tenant's report over the request's window.
void send_report(App& app, const Record& tenant, const httplib::Request& req, httplib::Response& res) {
  const TimeMs now = app.clock.now();
  auto range = report_range(req, now);
  if (!range) return send_problem(res, range.error(), req.path);
  auto rep = procurement_report(app.store, tenant, range->first, range->second, now);
  if (!rep) return send_problem(res, rep.error(), req.path);
  send_json(res, 200, to_json(*rep));
}

void get_procurement(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                     const Principal& p) {
  auto t = find_visible(app.store, spec, p, req.matches[1]);
  if (!t) return send_problem(res, t.error(), req.path);
  send_report(app, *t, req, res);
}

void put_procurement(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                     const Principal& p) {
  if (auto range = report_range(req, app.clock.now()); !range)  // before anything is written
    return send_problem(res, range.error(), req.path);
  auto out = change_tenant_setting(
      app, spec, req, res, p, "api.tenants.procurement_forbidden", "procurement",
      [](StoreTx& tx, Tenant& t, const json& body) -> Result<std::string> {
        FieldErrors errs;
        Fields f(body, "", errs);
        if (!f.valid_object()) return errs.to_error();
        if (!f.has("procurement_split")) f.error("procurement_split", Message("field.required"));
        auto split = parse_procurement_split(f, "procurement_split");
        f.finish();
        if (!errs.empty()) return errs.to_error();
        if (auto s = resolve_split(tx, split); !s) return s.error();
        t.procurement_split = std::move(split);
        return std::to_string(t.procurement_split.size());
      });
  if (out) send_report(app, *out, req, res);
}

}  // namespace

void register_tenant_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "tenants";
  spec.id_prefix = "ten";
  spec.object_kind = ObjectKind::kTenant;
  spec.self_tenant = true;
  spec.global_names = true;
  spec.filters = {{"name", "name"}};
  spec.build = [](const json& body, const Principal&, StoreTx& tx, const Record* existing) -> Result<Built> {
    auto t = parse_tenant(body);
    if (!t) return t.error();
    if (auto s = resolve_split(tx, t->procurement_split); !s) return s.error();
    // A stored currency that no longer decodes may be rewritten: that is how such a record is fixed.
    auto old = existing ? stored_tenant_currency(existing->body) : Result<Currency>(t->currency);
    if (old && *old != t->currency) return Error::invalid("currency", Message("api.tenants.currency_fixed"));
    // Invoice and credit-note numbers begin with the tenant's name: renamed, a new tenant of the
    // old name would number its invoices as this one's again.
    if (existing && existing->name != t->name) {
      // Locked first: a month close numbering its invoices holds this row (issued_invoices.cc),
      // so the count below sees them.
      if (auto l = tx.get_locked("tenants", existing->id); !l) return l.error();
      auto issued = tx.count("issued-invoices", {{"tenant_id", existing->id}});
      if (!issued) return issued.error();
      if (*issued > 0)
        return Error::invalid(
            "name", Message("api.tenants.name_fixed").arg("tenant", existing->name).arg("n", std::to_string(*issued)));
    }
    return Built{to_json(*t), index_of(*t)};
  };
  spec.on_delete = [](const Principal&, const Record& r, StoreTx& tx) -> Status {
    // Its finance records too: invoices are numbered by its name, and a new tenant of that name
    // would number its own as this one's again.
    for (const char* kind : {"projects", "users", "reservations", "jobs", "volumes", "market-orders", "market-trades",
                             "issued-invoices", "credit-notes", "top-ups"}) {
      auto n = tx.count(kind, {{"tenant_id", r.id}});
      if (!n) return n.error();
      if (*n > 0)
        return Error::make(
            Code::kConflict,
            Message("api.tenants.has_objects").arg("tenant", r.name).arg("n", std::to_string(*n)).arg("kind", kind));
    }
    return ok_status();
  };
  register_crud(app, srv, spec);
  item_route(app, srv, "GET", "tenants", "procurement", get_procurement);
  item_route(app, srv, "PUT", "tenants", "procurement", put_procurement);
}

}  // namespace gpurent
