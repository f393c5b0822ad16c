// GET /api/v1/jobs/{ref}/cost: what a job has cost so far, rated by the billing engine. The job's
// tenant's invoice (server/services/invoices.h) over [the job's submission, now] is built and
// narrowed to the lines of this job (its name in its project's name): per currency the charges,
// the credits apart (SLA credits are never netted silently) and the total, each exactly the sum
// of the lines shown. Beside them, the runs of the job from the allocation ledger: the offer and
// supplier each was billed under, its billing mode, the offer's unit price for that mode in the
// offer's currency, and the nodes by name. Readers: as GET /jobs/{ref} (operators and the job's
// tenant; another tenant's job is 404). Contract-wide lines (commitments, exit refunds, the credit
// cap) belong to no job and are left out. Schema: docs/api.md "Jobs".
#include <algorithm>
#include <map>

#include "billing/rating_input.h"
#include "billing/rating_output.h"
#include "model/contract.h"
#include "model/job_run.h"
#include "model/offer.h"
#include "server/api/job_actions.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/allocation_ledger.h"
#include "server/services/invoices.h"
#include "server/services/offer_history.h"
#include "server/services/record_faults.h"

namespace gpurent {

void register_job_cost_route(App& app, Router& srv);  // called by register_job_routes (jobs.cc)

namespace {

// The longest period one answer rates, as GET /invoices allows: a job submitted before it is rated
// from `now` minus this (and the answer says so).
constexpr TimeMs kMaxCostPeriodMs = 400 * kMsPerDay;

// One currency's part of the answer: the lines and their sums, exact.
struct CurrencyCost {
  Money charges, credits, total;
  Money covered;  // reserved_covered lines' value at the commitment's price (billed with it)
  json lines = json::array();
};

Status add_line(std::map<std::string, CurrencyCost>& costs, Currency cur, const ChargeLine& l) {
  auto [it, fresh] = costs.try_emplace(currency_code(cur));
  CurrencyCost& c = it->second;
  if (fresh) c.charges = c.credits = c.total = c.covered = Money::zero(cur);
  Money& part = l.kind == LineKind::kCredit ? c.credits : c.charges;
  auto p = part.plus(l.amount);
  if (!p) return p.error();
  auto t = c.total.plus(l.amount);
  if (!t) return t.error();
  part = *p;
  c.total = *t;
  if (l.covered_value.micros() != 0) {
    auto v = c.covered.plus(l.covered_value);
    if (!v) return v.error();
    c.covered = *v;
  }
  c.lines.push_back(to_json(l));
  return ok_status();
}

}  // namespace

// The offer's price per GPU-hour for the run's billing mode at `at`, as the billing engine rates
// it (the sheet in force then), and which price that is: "on_demand"; "spot" (the offer's market price in force when the run started
// — POST /spot-prices — else its sheet's spot price; the lines split at each later change; a spot run on an offer that
// sells no spot is rated on-demand); "reserved_1m|12m|36m" (a reserved run while a commitment of
// its contract on this offer is in force: the commitment's price, from the sheet in force when it
// began; GPU time beyond the commitment
// is rated on-demand; "market_trade" when that commitment is a settled market trade: its trade
// price), else "on_demand".
// The offer's sheet in force at t: the earlier version t falls in, else `current`.
Result<Offer> sheet_at(StoreReader& store, const GpuCatalog& catalog, const Offer& current, const std::string& offer_id,
                       TimeMs t) {
  auto versions = offer_versions(store, offer_id);
  if (!versions) return versions.error();
  for (const OfferVersionRecord& v : *versions)  // oldest first: the first that ended after t
    if (t < v.until) {
      auto sheet = parse_offer(v.sheet, catalog);
      if (!sheet)
        return Error::make(Code::kInternal, "offer " + offer_id + " version " + std::to_string(v.version) +
                                                " does not decode: " + sheet.error().message);
      return *sheet;
    }
  return current;
}

Result<UnitPrice> unit_price_of(StoreReader& store, const GpuCatalog& catalog, const JobRun& run, const Offer& current,
                                const std::string& offer_id, TimeMs at) {
  auto in_force = sheet_at(store, catalog, current, offer_id, at);
  if (!in_force) return in_force.error();
  const Offer& o = *in_force;
  if (run.billing_mode == BillingMode::kSpot && o.prices.spot) {
    Money price = *o.prices.spot;  // the market price in force when the run started, else the sheet's
    TimeMs latest = INT64_MIN;
    const TimeMs at = run.running_at.value_or(0);
    auto series = list_all(store, "spot-prices", {{"state", offer_id}});
    if (!series) return series.error();
    for (const Record& r : *series) {
      auto e = decode_record(r, decode_spot_price, "the job's spot price cannot be shown without it");
      if (!e) return e.error();
      if (e->from <= at && e->from > latest) latest = e->from, price = e->price;
    }
    return UnitPrice{price, "spot"};
  }
  if (run.billing_mode == BillingMode::kReserved && !run.contract_id.empty() && run.running_at) {
    auto rec = store.get("contracts", run.contract_id);
    if (!rec && rec.error().code != Code::kNotFound) return rec.error();
    if (rec) {
      auto k = decode_record(*rec, decode_contract, "the job's reserved price cannot be shown without it");
      if (!k) return k.error();
      for (const ContractCommitment& m : k->commitments) {
        std::string id;  // the commitment's offer, resolved through the contract's own list
        for (size_t i = 0; i < k->offers.size() && i < k->offer_ids.size(); ++i)
          if (k->offers[i] == m.offer) id = k->offer_ids[i];
        if (id != offer_id) continue;
        const TimeMs end = m.market() ? *m.ends_at : add_months(m.starts_at, m.term_months);
        if (*run.running_at < m.starts_at || *run.running_at >= end) continue;
        if (m.market()) return UnitPrice{*m.price_per_gpu_hour, "market_trade"};
        auto made_at = sheet_at(store, catalog, current, offer_id, m.starts_at);  // a commitment keeps its price
        if (!made_at) return made_at.error();
        if (auto p = made_at->prices.reserved_for(m.term_months))
          return UnitPrice{*p, "reserved_" + std::to_string(m.term_months) + "m"};
      }
    }
  }
  return UnitPrice{o.prices.on_demand, "on_demand"};
}

namespace {

std::string name_of(StoreReader& store, std::map<std::string, std::string>& cache, const std::string& kind,
                    const std::string& id) {
  if (id.empty()) return "";
  auto key = kind + "/" + id;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto r = store.get(kind, id);
  return cache[key] = r ? r->name : id;
}

// The job's runs, oldest first, each with the offer, supplier, unit price and nodes it ran on.
Result<json> runs_json(App& app, const Record& job) {
  auto runs = list_runs(app.store, {{"project_id", job.project_id}}, "the job's cost cannot be shown without it");
  if (!runs) return runs.error();
  std::vector<const StoredRun*> mine;
  for (const StoredRun& r : *runs)
    if (r.run.job_id == job.id) mine.push_back(&r);
  std::stable_sort(mine.begin(), mine.end(), [](const StoredRun* a, const StoredRun* b) {
    const TimeMs ta = a->run.running_at.value_or(a->record.created_at),
                 tb = b->run.running_at.value_or(b->record.created_at);
    return ta != tb ? ta < tb : a->record.id < b->record.id;
  });
  std::map<std::string, std::string> names;
  json out = json::array();
  for (const StoredRun* s : mine) {
    const JobRun& run = s->run;
    json nodes = json::array();
    for (const RunCards& c : run.placement)
      nodes.push_back({{"node_id", c.node_id},
                       {"node", c.node.empty() ? name_of(app.store, names, "nodes", c.node_id) : c.node},
                       {"gpus", c.gpus}});
    json a = {{"id", s->record.id},
              {"state", enum_name(kRunStateNames, run.state)},
              {"offer_id", nullptr},
              {"offer", nullptr},
              {"supplier_id", run.supplier_id},
              {"supplier", name_of(app.store, names, "suppliers", run.supplier_id)},
              {"contract_id", run.contract_id.empty() ? json(nullptr) : json(run.contract_id)},
              {"contract",
               run.contract_id.empty() ? json(nullptr) : json(name_of(app.store, names, "contracts", run.contract_id))},
              {"billing_mode", enum_name(kBillingModeNames, run.billing_mode)},
              {"unit_price", nullptr},
              {"price_basis", nullptr},
              {"price_unit", "GPU-hour"},
              {"currency", nullptr},
              {"gpu_milli", run.gpu_milli},
              {"nodes", std::move(nodes)},
              {"running_at", run.running_at ? json(format_rfc3339(*run.running_at)) : json(nullptr)},
              {"ended_at", run.ended_at ? json(format_rfc3339(*run.ended_at)) : json(nullptr)}};
    if (!run.offer_id.empty()) {
      auto rec = app.store.get("offers", run.offer_id);
      if (!rec) return rec.error();
      auto o = decode_record(
          *rec, [&](const json& b) { return parse_offer(b, app.catalog); },
          "the job's cost cannot be shown without it");
      if (!o) return o.error();
      auto price = unit_price_of(app.store, app.catalog, run, *o, run.offer_id, run.running_at.value_or(app.clock.now()));
      if (!price) return price.error();
      a["offer_id"] = run.offer_id;
      a["offer"] = rec->name;
      a["unit_price"] = price->price.amount_string();
      a["price_basis"] = price->basis;
      a["currency"] = currency_code(o->currency);
    }
    out.push_back(std::move(a));
  }
  return out;
}

void get_job_cost(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto job = find_visible(app.store, app.kinds.at("jobs"), p, req.matches[1]);
  if (!job) return send_problem(res, job.error(), req.path);
  auto project = app.store.get("projects", job->project_id);
  if (!project) return send_problem(res, project.error(), req.path);
  const TimeMs now = app.clock.now();
  const bool capped = now - job->created_at > kMaxCostPeriodMs;
  const TimeMs from = capped ? now - kMaxCostPeriodMs : std::min(job->created_at, now);
  auto inv = build_invoice(app.store, app.catalog, job->tenant_id, from, now, now);
  if (!inv) return send_problem(res, inv.error(), req.path);

  std::map<std::string, CurrencyCost> costs;
  for (const InvoiceSection& s : inv->sections)
    for (const ChargeLine& l : s.rated.lines) {
      // A run recorded before runs carried the job's name is billed under the job's id.
      if ((l.job != job->name && l.job != job->id) || l.project != project->name) continue;
      if (auto st = add_line(costs, s.rated.currency, l); !st) return send_problem(res, st.error(), req.path);
    }
  json by_currency = json::object();
  for (auto& [cur, c] : costs)
    by_currency[cur] = {{"charges", c.charges.amount_string()}, {"credits", c.credits.amount_string()},
                        {"total", c.total.amount_string()},     {"reserved_covered_value", c.covered.amount_string()},
                        {"line_count", c.lines.size()},         {"lines", std::move(c.lines)}};

  auto runs = runs_json(app, *job);
  if (!runs) return send_problem(res, runs.error(), req.path);
  json unpriced = json::array();
  for (const json& a : *runs)
    if (const std::string id = a["id"];
        std::find(inv->unpriced.begin(), inv->unpriced.end(), id) != inv->unpriced.end())
      unpriced.push_back(id);

  send_json(res, 200,
            {{"job_id", job->id},
             {"job", job->name},
             {"project_id", project->id},
             {"project", project->name},
             {"tenant_id", job->tenant_id},
             {"tenant", inv->tenant_name},
             {"job_created_at", format_rfc3339(job->created_at)},
             {"period", {{"from", format_rfc3339(from)}, {"to", format_rfc3339(now)}}},
             {"period_capped", capped},
             {"costs", std::move(by_currency)},
             {"allocations", std::move(*runs)},
             {"unpriced_allocations", std::move(unpriced)}});
}

}  // namespace

void register_job_cost_route(App& app, Router& srv) {
  route(app, srv, "GET", "/api/v1/jobs/([^/]+)/cost", "/api/v1/jobs/{id}/cost", get_job_cost);
}

}  // namespace gpurent
