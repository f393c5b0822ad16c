// GET /api/v1/invoices: a tenant's invoice for a calendar month (?month=2026-11) or any period
// (?from=…&to=…), rated on request from the allocation ledger, contracts and usage
// (server/invoices.h). ?format=json (default), csv, or focus (FinOps FOCUS columns). Tenant users
// get their own tenant's invoice; operators name the tenant (?tenant=id or name).
#include "server/services/invoices.h"

#include <mutex>

#include "billing/rating_input.h"
#include "exec/slurm_cli.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/reconciliation.h"

namespace gpurent {
namespace {

// The report's period (?month=, or ?from=&to=); with ?tenant= and, for invoices, ?format= the
// only parameters the routes take: any other is refused.
Result<std::pair<TimeMs, TimeMs>> period_of(const httplib::Request& req, bool with_format) {
  if (auto s = with_format ? only_params(req, {"month", "from", "to", "tenant", "format"})
                           : only_params(req, {"month", "from", "to", "tenant"});
      !s)
    return s.error();
  if (req.has_param("month")) {
    if (req.has_param("from") || req.has_param("to"))
      return Error::invalid("month", Message("api.invoices.month_or_range"));
    const std::string m = req.get_param_value("month");
    if (m.size() != 7 || m[4] != '-')
      return Error::invalid("month", Message("api.invoices.month_format").arg("got", m));
    auto start = parse_rfc3339(m + "-01", "month");
    if (!start) return start.error();
    return std::make_pair(*start, add_months(*start, 1));
  }
  if (!req.has_param("from") && !req.has_param("to"))
    return Error::invalid("month", Message("api.invoices.month_required"));
  if (!req.has_param("to")) return Error::invalid("to", Message("field.required"));  // from alone
  if (!req.has_param("from")) return Error::invalid("from", Message("field.required"));
  auto from = parse_rfc3339(req.get_param_value("from"), "from");
  if (!from) return from.error();
  auto to = parse_rfc3339(req.get_param_value("to"), "to");
  if (!to) return to.error();
  if (*to <= *from) return Error::invalid("to", Message("api.params.after_from"));
  if (*to - *from > 400 * kMsPerDay)
    return Error::invalid("to", Message("api.invoices.period_days").arg("days", "400"));
  return std::make_pair(*from, *to);
}

// The tenant a billing report is for: operators name it (?tenant=), tenant users get their own.
Result<std::string> report_tenant(App& app, const httplib::Request& req, const Principal& p) {
  const KindSpec& tenants = app.kinds.at("tenants");
  if (p.is_operator()) {
    if (!req.has_param("tenant")) return Error::invalid("tenant", Message("api.params.tenant_required"));
    auto t = find_visible(app.store, tenants, p, req.get_param_value("tenant"));
    if (!t) return t.error();
    return t->id;
  }
  if (p.tenant_id.empty()) return Error::make(Code::kForbidden, Message("api.invoices.tenants_only"));
  if (req.has_param("tenant")) {
    auto t = find_visible(app.store, tenants, p, req.get_param_value("tenant"));
    if (!t || t->id != p.tenant_id) return Error::make(Code::kNotFound, Message("api.tenants.no_such"));
  }
  return p.tenant_id;
}

// Every tenant (id, name), in id order: the platform-wide reconciliation's scope.
Result<std::vector<std::pair<std::string, std::string>>> all_tenants(StoreReader& store) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string after;
  do {
    auto page = store.list(ListQuery{"tenants", {}, after, 1000});
    if (!page) return page.error();
    for (const Record& t : page->items) out.emplace_back(t.id, t.name);
    after = page->next_after;
  } while (!after.empty());
  return out;
}

}  // namespace

void register_invoice_routes(App& app, Router& srv) {
  route(app, srv, "GET", "/api/v1/invoices", "invoices",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          auto period = period_of(req, true);
          if (!period) return send_problem(res, period.error(), req.path);
          const std::string format = req.has_param("format") ? req.get_param_value("format") : "json";
          if (format != "json" && format != "csv" && format != "focus")
            return send_problem(res, Error::invalid("format", Message("api.invoices.format")), req.path);
          auto tenant_id = report_tenant(app, req, p);
          if (!tenant_id) return send_problem(res, tenant_id.error(), req.path);
          auto inv = build_invoice(app.store, app.catalog, *tenant_id, period->first, period->second,
                                   app.clock.now());
          if (!inv) return send_problem(res, inv.error(), req.path);
          if (format == "json") return send_json(res, 200, to_json(*inv));
          res.status = 200;
          res.set_content(invoice_csv(*inv, format == "focus"), "text/csv; charset=utf-8");
        });

  // GET /api/v1/reports/reconciliation: metered against allocated GPU-seconds per run and job; an
  // operator who names no tenant gets every tenant's, with a line per tenant.
  route(app, srv, "GET", "/api/v1/reports/reconciliation", "reconciliation",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          auto period = period_of(req, false);
          if (!period) return send_problem(res, period.error(), req.path);
          std::vector<std::pair<std::string, std::string>> tenants;  // (id, name)
          const bool platform = p.is_operator() && !req.has_param("tenant");
          if (platform) {
            auto all = all_tenants(app.store);
            if (!all) return send_problem(res, all.error(), req.path);
            tenants = std::move(*all);
          } else {
            auto tenant_id = report_tenant(app, req, p);
            if (!tenant_id) return send_problem(res, tenant_id.error(), req.path);
            tenants.emplace_back(*tenant_id, "");
          }
          SlurmTimes slurm;
          std::string slurm_note, slurm_source;
          if (app.opts.executor == "slurm") {
            // One read of Slurm's accounting at a time, bounded to the period: each is a sacct
            // over every user's jobs (or a read of the whole jobcomp file), which a caller
            // repeating the report must not multiply until every worker waits on sacct.
            static std::mutex one_at_a_time;
            std::unique_lock<std::mutex> lock(one_at_a_time, std::try_to_lock);
            if (!lock.owns_lock()) {
              res.set_header("Retry-After", "5");
              return send_problem(res, Error::make(Code::kUnavailable, Message("api.reconciliation.slurm_busy")),
                                  req.path);
            }
            SlurmCli cli({app.opts.slurm_conf, app.opts.slurm_partition, app.opts.slurm_gres_type, 20'000});
            auto acct = cli.accounting(period->first, &slurm_source, period->second);
            if (!acct)
              slurm_note = acct.error().message;
            else
              for (const auto& a : *acct)
                if (a.start && a.elapsed_s) slurm[a.id].push_back({*a.start, a.end.value_or(0), *a.elapsed_s, a.gpus});
          }
          std::vector<ReconciliationRow> all_rows;
          json per_tenant = json::array();
          for (const auto& [id, name] : tenants) {
            auto rows = reconcile(app.store, id, period->first, period->second, app.clock.now(), {},
                                  app.opts.executor == "slurm" ? &slurm : nullptr);
            if (!rows) return send_problem(res, rows.error(), req.path);
            if (platform) {
              json one = to_json(*rows, period->first, period->second);
              per_tenant.push_back({{"tenant_id", id}, {"tenant", name}, {"totals", one["totals"]}});
            }
            all_rows.insert(all_rows.end(), rows->begin(), rows->end());
          }
          json out = to_json(all_rows, period->first, period->second);
          if (!slurm_note.empty()) out["slurm_note"] = slurm_note;
          if (!slurm_source.empty()) out["slurm_source"] = slurm_source;
          if (platform)
            out["tenants"] = std::move(per_tenant);
          else
            out["tenant_id"] = tenants[0].first;
          send_json(res, 200, out);
        });
}

}  // namespace gpurent
