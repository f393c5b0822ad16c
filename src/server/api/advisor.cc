// POST /api/v1/advise/{fingerprint,tco,mix,quotes,suppliers,poc}: the advisor's calculators
// (src/advisor, docs/advisor.md) over a JSON body, with the platform's own records filled in where
// the body points at them: a job's metered profile, the offers on sale, a tenant's metered demand,
// the suppliers' measured history. Every answer shows its arithmetic ("steps"). Any authenticated
// user may ask; what is read from the platform is only what the caller may see.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>

#include "advisor/fingerprint.h"
#include "advisor/hedge.h"
#include "advisor/mix.h"
#include "advisor/poc.h"
#include "advisor/quotes.h"
#include "advisor/supplier_score.h"
#include "advisor/tco.h"
#include "market/price_index.h"
#include "meter/acceptance.h"
#include "model/measurement.h"
#include "model/node.h"
#include "model/tenant.h"
#include "server/api/market_settlement.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/advisor_live.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

// "supplier/name", an offer id, or a name that only one offer has.
// The offer `ref` names (supplier/offer, an id, or a name only one offer has): its index.
Result<size_t> pick_offer(const std::vector<Offer>& offers, const std::vector<std::string>& ids, const std::string& ref,
                          const std::string& field) {
  size_t found = 0;
  int by_name = 0;
  for (size_t i = 0; i < offers.size(); ++i) {
    if (quote_offer_label(offers[i]) == ref || ids[i] == ref) return i;
    if (offers[i].name == ref) found = i, ++by_name;
  }
  if (by_name == 1) return found;
  if (by_name > 1) return Error::invalid(field, Message("api.advise.offer_ambiguous").arg("offer", ref));
  return Error::invalid(field, Message("api.advise.no_offer").arg("offer", ref));
}

// The tenant whose records a request reads: tenant users their own; operators name it.
Result<std::string> tenant_for(App& app, const Principal& p, const json& ref, const std::string& field) {
  if (!p.is_operator()) {
    if (p.tenant_id.empty()) return Error::make(Code::kForbidden, Message("api.advise.demand_tenants_only"));
    return p.tenant_id;
  }
  if (!ref.is_string()) return Error::invalid(field, Message("api.params.tenant_required"));
  auto t = find_visible(app.store, app.kinds.at("tenants"), p, ref.get<std::string>());
  if (!t) return Error::invalid(field, Message("api.advise.no_tenant").arg("tenant", ref.get<std::string>()));
  return t->id;
}

// What the job's nodes' disks deliver, as their latest recorded acceptance runs measured it (fio's
// sequential read): the slowest of its nodes, so a metered job's storage reads are judged against
// a measurement rather than left unknown. read_mbps 0: no run measured any of them.
struct MeasuredDisk {
  int64_t read_mbps = 0;
  std::string run_id, node;
};
Result<MeasuredDisk> node_disk_from_acceptance(App& app, const Record& job) {
  MeasuredDisk out;
  auto runs = list_all(app.store, "allocations", {{"tenant_id", job.tenant_id}});
  if (!runs) return runs.error();
  std::map<std::string, std::string> nodes;  // node id -> supplier id
  for (const Record& r : *runs)
    if (r.body.value("job_id", "") == job.id && r.body.contains("placement") && r.body["placement"].is_array())
      for (const json& part : r.body["placement"])
        if (part.is_object()) nodes[part.value("node_id", "")] = r.supplier_id;
  std::set<std::string> suppliers;
  for (const auto& [node, supplier] : nodes) suppliers.insert(supplier);
  for (const std::string& supplier : suppliers) {
    auto acc = list_all(app.store, "acceptance-runs", {{"supplier_id", supplier}, {"state", "recorded"}});
    if (!acc) return acc.error();
    std::map<std::string, std::pair<TimeMs, MeasuredDisk>> newest;  // node id -> its newest run's read
    for (const Record& a : *acc) {
      const std::string node = a.body.value("node_id", "");
      if (!nodes.count(node)) continue;
      for (const json& st : a.body.value("stages", json::array()))
        if (st.value("stage", "") == "storage" && st.value("status", "") == "ok") {
          const int64_t mbps = st.value("figures", json::object()).value("read_mbps", int64_t{0});
          auto it = newest.find(node);
          if (mbps > 0 && (it == newest.end() || a.created_at >= it->second.first))
            newest[node] = {a.created_at, MeasuredDisk{mbps, a.id, a.body.value("node", "")}};
        }
    }
    for (const auto& [node, found] : newest)
      if (out.read_mbps == 0 || found.second.read_mbps < out.read_mbps) out = found.second;
  }
  return out;
}

// A job's fingerprint from its metered samples, its storage judged against its nodes' measured
// disk (disk.read_mbps 0 when none was measured or the job reads faster than it: it reads elsewhere).
struct JobFingerprint {
  FingerprintResult result;
  MeasuredDisk disk;
};
Result<JobFingerprint> job_fingerprint(App& app, const Record& job, std::optional<Money> price) {
  auto in = metered_fingerprint(app.store, app.catalog, job, app.clock.now(), price);
  if (!in) return in.error();
  auto disk = node_disk_from_acceptance(app, job);
  if (!disk) return disk.error();
  if (disk->read_mbps > 0 && in->io_bytes_per_s && *in->io_bytes_per_s > disk->read_mbps * 1'000'000) *disk = {};
  if (disk->read_mbps > 0) in->storage_read_bytes_per_s = disk->read_mbps * 1'000'000;
  auto r = compute_fingerprint(*in, app.catalog);
  if (!r) return r.error();
  return JobFingerprint{std::move(*r), *disk};
}

Result<json> fingerprint(App& app, const json& body, const Principal& p) {
  if (!body.contains("job")) {
    auto in = parse_fingerprint_input(body, app.catalog);
    if (!in) return in.error();
    auto r = compute_fingerprint(*in, app.catalog);
    if (!r) return r.error();
    return to_json(*r);
  }
  // {"job": ref, "price_per_gpu_hour"?: "2.50"}: the profile comes from the meter.
  for (const auto& [k, v] : body.items())
    if (k != "job" && k != "price_per_gpu_hour")
      return Error::invalid(k, Message("api.advise.fingerprint.unknown_with_job"));
  if (!body["job"].is_string()) return Error::invalid("job", Message("api.advise.fingerprint.job_ref"));
  auto job = find_visible(app.store, app.kinds.at("jobs"), p, body["job"].get<std::string>());
  if (!job)
    return Error::invalid("job", Message("api.advise.fingerprint.no_job").arg("job", body["job"].get<std::string>()));
  std::optional<Money> price;
  if (body.contains("price_per_gpu_hour")) {
    auto t = app.store.get("tenants", job->tenant_id);
    if (!t) return t.error();
    auto cur = decode_record(*t, stored_tenant_currency, "a price for its jobs cannot be read");
    if (!cur) return cur.error();
    if (!body["price_per_gpu_hour"].is_string())
      return Error::invalid("price_per_gpu_hour", Message("api.advise.fingerprint.price_string"));
    auto m = Money::parse(body["price_per_gpu_hour"].get<std::string>(), *cur);
    if (!m || m->micros() <= 0)
      return Error::invalid("price_per_gpu_hour", Message("api.advise.fingerprint.price_positive"));
    price = *m;
  }
  auto fp = job_fingerprint(app, *job, price);
  if (!fp) return fp.error();
  json out = to_json(fp->result);
  out["source"] = {{"job", job->id}, {"from", "metered samples"}};
  if (fp->disk.read_mbps > 0)
    out["source"]["storage_read"] =
        {{"acceptance_run", fp->disk.run_id}, {"node", fp->disk.node}, {"read_mbps", fp->disk.read_mbps}};
  return out;
}

Result<json> tco(App& app, json body) {
  const bool given = body.contains("offers");
  auto in = parse_tco_input(body, app.catalog);
  if (!in) return in.error();
  if (!given) {  // compare with the platform's offers of that GPU model in that currency
    auto offers = load_offers(app.store, app.catalog);
    if (!offers) return offers.error();
    for (const Offer& o : *offers)
      if (o.gpu_model == in->gpu_model && o.currency == in->currency && in->offers.size() < kMaxTcoOffers)
        in->offers.push_back({quote_offer_label(o), o.prices.on_demand,
                              o.prices.reserved_12m ? o.prices.reserved_12m : o.prices.reserved_1m});
  }
  auto r = compute_tco(*in);
  if (!r) return r.error();
  json out = to_json(*r);
  out["offers_from"] = given ? "request" : "platform";
  return out;
}

// An error of the options built from "offers" (options_of[j]: option j's offer index and price
// key) named as the request's fields: options[j].price_per_gpu_hour is offers[i].prices.<key>, the
// rest of options[j] is offers[i].
Error offers_error(const Error& e, const std::vector<std::pair<size_t, std::string>>& options_of) {
  FieldErrors errs;
  for (const FieldError& fe : e.fields) {
    std::string field = fe.field;
    size_t j = 0, end = 0;
    if (field.rfind("options[", 0) == 0 && (end = field.find(']')) != std::string::npos &&
        std::sscanf(field.c_str() + 8, "%zu", &j) == 1 && j < options_of.size()) {
      const auto& [i, key] = options_of[j];
      field = "offers[" + std::to_string(i) + "]" +
              (field.substr(end + 1) == ".price_per_gpu_hour" ? ".prices." + key : std::string());
    }
    if (fe.coded.code.empty())
      errs.add(field, fe.reason);
    else
      errs.add(field, fe.coded);
  }
  return errs.empty() ? e : errs.to_error();
}

Result<json> mix(App& app, json body, const Principal& p) {
  std::vector<std::pair<size_t, std::string>> options_of;  // built from "offers": (offer index, price key)
  // "offers": [refs] stand for their options (every price each states).
  if (body.contains("offers")) {
    if (body.contains("options")) return Error::invalid("offers", Message("api.advise.mix.offers_or_options"));
    if (!body["offers"].is_array() || body["offers"].empty())
      return Error::invalid("offers", Message("api.advise.mix.offers_list"));
    // Each offer stands for one option or more, and at most kMaxMixOptions are read: a longer
    // list is refused before it is resolved (each name is looked up among every offer).
    if (body["offers"].size() > static_cast<size_t>(kMaxMixOptions))
      return Error::invalid("offers", Message("field.max_items").arg("max", std::to_string(kMaxMixOptions)));
    std::vector<std::string> ids;
    auto all = load_offers(app.store, app.catalog, &ids);
    if (!all) return all.error();
    json options = json::array();
    std::optional<Currency> cur;
    std::vector<size_t> picked;
    std::map<std::string, std::set<size_t>> by_name;  // offers of one name (suppliers name theirs alike)
    for (size_t i = 0; i < body["offers"].size(); ++i) {
      const std::string field = "offers[" + std::to_string(i) + "]";
      if (!body["offers"][i].is_string()) return Error::invalid(field, Message("field.string"));
      auto at = pick_offer(*all, ids, body["offers"][i].get<std::string>(), field);
      if (!at) return at.error();
      const Offer& o = (*all)[*at];
      if (std::find(picked.begin(), picked.end(), *at) != picked.end())
        return Error::invalid(field, Message("advisor.quotes.offer_twice").arg("offer", quote_offer_label(o)));
      if (cur && *cur != o.currency) return Error::invalid(field, Message("api.advise.mix.offer_currency"));
      cur = o.currency;
      picked.push_back(*at);
      by_name[o.name].insert(*at);
    }
    for (size_t n = 0; n < picked.size(); ++n) {
      const size_t at = picked[n];
      const Offer& o = (*all)[at];
      // An option names its offer by name, or by id where two suppliers' offers chosen share it.
      const std::string label = by_name[o.name].size() > 1 ? ids[at] : o.name;
      for (const auto& opt : options_from_offer(o)) {
        options_of.emplace_back(n, capacity_mode_name(opt.mode));
        options.push_back({{"offer", label},
                           {"mode", capacity_mode_name(opt.mode)},
                           {"price_per_gpu_hour", opt.price_per_gpu_hour.amount_string()}});
      }
    }
    // The offers' prices are in their currency: a body naming another would read them as its own.
    if (body.contains("currency") && body["currency"] != currency_code(*cur))
      return Error::invalid("currency", Message("api.advise.mix.offers_currency").arg("currency", currency_code(*cur)));
    body.erase("offers");
    body["options"] = options;
    body["currency"] = currency_code(*cur);
  }
  // "demand": {"history": {"from", "to", "measure"?, "tenant"?}}: the tenant's metered demand.
  if (body.contains("demand") && body["demand"].is_object() && body["demand"].contains("history")) {
    const json h = body["demand"]["history"];
    if (body["demand"].size() != 1) return Error::invalid("demand", Message("api.advise.mix.history_alone"));
    if (!h.is_object()) return Error::invalid("demand.history", Message("api.advise.mix.history_object"));
    for (const auto& [k, v] : h.items())
      if (k != "from" && k != "to" && k != "measure" && k != "tenant")
        return Error::invalid("demand.history." + k, Message("field.unknown"));
    const TimeMs now = app.clock.now();
    TimeMs from = now - 30 * kMsPerDay, to = now;
    if (h.contains("from")) {
      if (!h["from"].is_string()) return Error::invalid("demand.history.from", Message("api.params.rfc3339"));
      auto t = parse_rfc3339(h["from"].get<std::string>(), "demand.history.from");
      if (!t) return t.error();
      from = *t;
    }
    if (h.contains("to")) {
      if (!h["to"].is_string()) return Error::invalid("demand.history.to", Message("api.params.rfc3339"));
      auto t = parse_rfc3339(h["to"].get<std::string>(), "demand.history.to");
      if (!t) return t.error();
      to = *t;
    }
    if (to <= from) return Error::invalid("demand.history.to", Message("api.params.after_from"));
    HourlyMeasure m = HourlyMeasure::kPeak;
    if (h.contains("measure")) {
      const json& v = h["measure"];
      if (v == "peak")
        m = HourlyMeasure::kPeak;
      else if (v == "average_ceil")
        m = HourlyMeasure::kAverageCeil;
      else
        return Error::invalid("demand.history.measure", Message("api.advise.mix.measure"));
    }
    auto tenant = tenant_for(app, p, h.value("tenant", json()), "demand.history.tenant");
    if (!tenant) return tenant.error();
    auto curve = ledger_demand(app.store, *tenant, from, to, now, m, "demand.history");
    if (!curve) return curve.error();
    body["demand"] = {{"gpus_per_hour", curve->gpus}};
    if (curve->start) body["demand"]["start"] = format_rfc3339(*curve->start);
  }
  auto in = parse_mix_input(body);
  if (!in) return options_of.empty() ? in.error() : offers_error(in.error(), options_of);
  const auto t0 = std::chrono::steady_clock::now();  // the shell times the engine
  auto r = compute_mix(*in);
  if (!r) return r.error();
  r->solver_time_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  return to_json(*r);
}

// With workload.precision fp16, each platform offer the request did not give a measured figure
// for gets the mean of its cards' latest dense FP16 benchmarks (fp16_tflops measurements that
// count: not corrected, not a rejected dispute) over the nodes it sells, when it has any.
Status fill_measured_fp16(App& app, QuotesInput& in) {
  if (in.workload.precision != "fp16") return ok_status();
  auto nodes = list_all(app.store, "nodes");
  if (!nodes) return nodes.error();
  auto records = list_all(app.store, "measurements");
  if (!records) return records.error();
  const std::set<std::string> corrected = corrected_ids(*records);
  std::map<std::pair<std::string, int64_t>, std::pair<TimeMs, int64_t>> latest;  // (node id, gpu) -> (at, x10)
  for (const Record& r : *records) {
    if (corrected.count(r.id) || !measurement_counts(r.body)) continue;
    auto m = decode_record(r, decode_measurement, "the quotes advisor cannot use it");
    if (!m) return m.error();
    if (m->kind != MeasurementKind::kFp16Tflops || !m->gpu || !m->at || !m->tflops_x10) continue;
    auto& slot = latest[{m->node_id, *m->gpu}];
    if (*m->at >= slot.first) slot = {*m->at, *m->tflops_x10};
  }
  for (QuoteOffer& qo : in.offers) {
    const Offer& o = qo.offer;
    if (qo.measured_tflops_x10 || o.supplier_id.empty()) continue;  // given, or not a platform offer
    int64_t sum = 0, cards = 0;
    for (const Record& n : *nodes) {
      if (n.supplier_id != o.supplier_id) continue;
      auto site = decode_record(n, stored_node_site, "the quotes advisor cannot match offers to it");
      if (!site) return site.error();
      if (!offer_sells(OfferReach{o.gpu_model, o.region, o.node_selector}, n, *site)) continue;
      for (const auto& [card, figure] : latest)
        if (card.first == n.id) {
          sum += figure.second;
          ++cards;
        }
    }
    if (cards > 0) {
      qo.measured_tflops_x10 = (sum + cards / 2) / cards;
      qo.measured_cards = cards;
    }
  }
  return ok_status();
}

// workload.job: the job's fingerprint gives the unit of work (a step, or an hour of its current
// work) and its time on every GPU model it fits, at its GPU count (workload.gpus, filled when
// absent, must equal it).
Status fill_work_from_job(App& app, json& body, const Principal& p) {
  if (!body.is_object() || !body.contains("workload") || !body["workload"].is_object() ||
      !body["workload"].contains("job"))
    return ok_status();
  json& w = body["workload"];
  if (w.contains("work")) return Error::invalid("workload.work", Message("api.advise.quotes.work_with_job"));
  if (!w["job"].is_string()) return Error::invalid("workload.job", Message("api.advise.fingerprint.job_ref"));
  const std::string ref = w["job"].get<std::string>();
  auto job = find_visible(app.store, app.kinds.at("jobs"), p, ref);
  if (!job) return Error::invalid("workload.job", Message("api.advise.fingerprint.no_job").arg("job", ref));
  auto fp = job_fingerprint(app, *job, std::nullopt);
  if (!fp) {
    Error e = fp.error();
    for (FieldError& fe : e.fields) fe.field = "workload.job";
    return e;
  }
  const FingerprintResult& r = fp->result;
  if (r.step_us_by_model.empty())
    return Error::invalid("workload.job", Message("api.advise.quotes.job_no_times").arg("job", job->name));
  if (!w.contains("gpus"))
    w["gpus"] = r.input.gpu_count;
  else if (!w["gpus"].is_number_integer() || w["gpus"].get<int64_t>() != r.input.gpu_count)
    return Error::invalid("workload.gpus", Message("api.advise.quotes.job_gpus")
                                               .arg("job", job->name)
                                               .arg("gpus", std::to_string(r.input.gpu_count)));
  json times = json::object();
  for (const auto& [model, us] : r.step_us_by_model) times[model] = us;
  w["work"] = {{"unit", r.step_time_given ? "step" : "hour_of_current_work"}, {"us_per_unit", times}};
  // An inference job's metered output tokens: what an hour of its current work produces.
  if (!r.step_time_given && r.input.output_tokens_per_hour && *r.input.output_tokens_per_hour > 0)
    w["work"]["tokens_per_unit"] = *r.input.output_tokens_per_hour;
  w.erase("job");
  return ok_status();
}

Result<json> quotes(App& app, json body, const Principal& p) {
  std::string job_ref;
  if (body.is_object() && body.contains("workload") && body["workload"].is_object() && body["workload"].contains("job") &&
      body["workload"]["job"].is_string())
    job_ref = body["workload"]["job"].get<std::string>();
  if (auto s = fill_work_from_job(app, body, p); !s) return s.error();
  auto offers = load_offers(app.store, app.catalog);
  if (!offers) return offers.error();
  auto in = parse_quotes_input(body, app.catalog, *offers);
  if (!in) return in.error();
  if (auto s = fill_measured_fp16(app, *in); !s) return s.error();
  auto r = compute_quotes(*in);
  if (!r) return r.error();
  json out = to_json(*r);
  if (!job_ref.empty()) {
    out["work_from"] = {{"job", job_ref}, {"unit", in->workload.work_unit}};
    if (in->workload.tokens_per_unit) out["work_from"]["tokens_per_unit"] = *in->workload.tokens_per_unit;
  }
  return out;
}

Result<json> suppliers(App& app, json body, const httplib::Request& req) {
  const TimeMs now = app.clock.now();
  TimeMs from = now - 90 * kMsPerDay, to = now;
  if (req.has_param("from")) {
    auto t = parse_rfc3339(req.get_param_value("from"), "from");
    if (!t) return t.error();
    from = *t;
  }
  if (req.has_param("to")) {
    auto t = parse_rfc3339(req.get_param_value("to"), "to");
    if (!t) return t.error();
    to = *t;
  }
  if (to <= from) return Error::invalid("to", Message("api.params.after_from"));
  // Time that has not happened has no failures: rates are over [from, min(to, now)), as the
  // dashboard's supplier health reads them.
  to = std::min(to, now);
  if (to <= from) return Error::invalid("from", Message("api.params.before_now"));
  // Every supplier's failures and measurements over the period are read: bounded like the
  // dashboard's supplier health.
  if (to - from > 366 * kMsPerDay)
    return Error::invalid("range", Message("api.dashboard.range_days").arg("days", "366"));
  auto known = load_supplier_candidates(app.store, app.catalog, from, to);
  if (!known) return known.error();
  size_t max_suppliers = 50;
  if (!body.contains("suppliers")) {  // every supplier on the platform, however many
    body["suppliers"] = json::array();
    for (const auto& c : *known) body["suppliers"].push_back({{"supplier", c.supplier.name}});
    max_suppliers = std::max<size_t>(max_suppliers, known->size());
  }
  auto in = parse_supplier_score_input(body, *known, max_suppliers);
  if (!in) return in.error();
  auto r = compute_supplier_score(*in);
  if (!r) return r.error();
  json out = to_json(*r);
  out["history_period"] = {{"from", format_rfc3339(from)}, {"to", format_rfc3339(to)}};
  return out;
}

}  // namespace

// A figure the acceptance run stored as fixed-point text ("712.5", "355.50") as an integer of its
// decimals; -1 when it is not one.
static int64_t fixed_digits(const json& v) {
  if (!v.is_string()) return -1;
  int64_t n = 0;
  for (char c : v.get<std::string>()) {
    if (c == '.') continue;
    if (c < '0' || c > '9' || n > (int64_t{1} << 52)) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

// suppliers[i].acceptance_runs: recorded acceptance runs (docs/acceptance.md) whose figures become
// the supplier's benchmark results, so nobody retypes them — bench_fp16_gemm: the slowest card's
// dense FP16 GEMM (TFLOPS), bench_nccl: the lowest all-reduce bus bandwidth (GB/s), bench_storage:
// the lowest fio read throughput (GB/s). Stages from the simulated GPU source count only where
// the run says they were counted; a result also given by hand is a 422, unless given_wins (a POC
// run, where a result recorded by hand stands, and the runs are in the order they were recorded:
// a later figure of the same card (GEMM), set of nodes (NCCL) or node (storage) replaces the
// earlier one — a card replaced and measured again — and the lowest is taken across them). Also
// used by poc_runs.cc.
Status fill_poc_from_acceptance(App& app, const Principal& p, json& body, bool given_wins) {
  if (!body.is_object() || !body.contains("suppliers") || !body["suppliers"].is_array()) return ok_status();
  json& suppliers = body["suppliers"];
  for (size_t i = 0; i < suppliers.size(); ++i) {
    json& sup = suppliers[i];
    if (!sup.is_object() || !sup.contains("acceptance_runs")) continue;
    const std::string field = "suppliers[" + std::to_string(i) + "].acceptance_runs";
    const json runs = sup["acceptance_runs"];
    sup.erase("acceptance_runs");
    if (!runs.is_array() || runs.empty() || runs.size() > 50)
      return Error::invalid(field, Message("api.advise.poc_runs_list"));
    struct Worst {
      int64_t value = -1;
      int decimals = 0;
      std::string note;
    };
    auto lower = [](std::map<std::string, Worst>& into, const std::string& item, const Worst& x) {
      Worst& w = into[item];
      if (x.value >= 0 && (w.value < 0 || x.value < w.value)) w = x;
    };
    // Per card, node set or node measured (POC run; per run too for the advisor's list): POC
    // item -> its figure.
    std::map<std::string, std::map<std::string, Worst>> by_source;
    for (size_t j = 0; j < runs.size(); ++j) {
      const std::string at = field + "[" + std::to_string(j) + "]";
      if (!runs[j].is_string()) return Error::invalid(at, Message("api.advise.poc_runs_list"));
      auto run = find_visible(app.store, app.kinds.at("acceptance-runs"), p, runs[j].get<std::string>());
      if (!run) {
        Error e = run.error();
        if (e.code == Code::kNotFound) return Error::invalid(at, Message("api.resources.not_found").arg("kind", "acceptance-runs").arg("ref", runs[j].get<std::string>()));
        return e;
      }
      const bool simulated_counts = run->body.value("simulated_counted", false);
      // What a figure measured: a card (GEMM), the set of nodes an all-reduce spanned (NCCL), a
      // node (storage). In a POC run a later figure of the same thing replaces the earlier one;
      // for the advisor's list each run counts apart.
      const std::string node = run->body.value("node", "");
      std::vector<std::string> spanned = {node};  // the run's node and its peers, in name order
      for (const json& n : run->body.value("nccl_nodes", json::array())) spanned.push_back(n.value("node", ""));
      std::sort(spanned.begin(), spanned.end());
      std::string span;
      for (const std::string& n : spanned) span += (span.empty() ? "" : "+") + n;
      const std::string prefix = given_wins ? "" : "run " + std::to_string(j) + " ";
      std::map<std::string, std::map<std::string, Worst>> mine;  // what it measured -> item -> lowest
      auto take = [&](const std::string& what, const char* item, int64_t v, int decimals, const std::string& note) {
        lower(mine[prefix + what], item, {v, decimals, note});
      };
      for (const json& st : run->body.value("stages", json::array())) {
        if (st.value("status", "") != "ok" || (st.value("simulated", false) && !simulated_counts)) continue;
        const json f = st.value("figures", json::object());
        const std::string note = "acceptance run " + run->id + " on " + node + " (" + st.value("tool", "") + " " +
                                 st.value("tool_version", "") + ")";
        const std::string kind = st.value("stage", "");
        if (kind == "gpu") {
          for (const json& g : f.value("gemm", json::array()))
            if (g.value("dtype", "") == "fp16")
              take("card " + node + "/" + g.value("card", json(-1)).dump(), "bench_fp16_gemm",
                   fixed_digits(g["tflops"]), 1, note);
        } else if (kind == "nccl") {
          take("nodes " + span, "bench_nccl", fixed_digits(f["busbw_gbps"]), 2, note);
        } else if (kind == "storage") {
          take("node " + node, "bench_storage", f.value("read_mbps", int64_t{-1}), 3, note);  // MB/s = GB/s, 3 decimals
        }
      }
      for (const auto& [what, items] : mine)
        for (const auto& [item, w] : items)
          if (w.value >= 0) by_source[what][item] = w;
    }
    std::map<std::string, Worst> worst;  // POC item -> lowest figure
    for (const auto& [key, items] : by_source)
      for (const auto& [item, w] : items) lower(worst, item, w);
    for (const auto& [item, w] : worst) {
      if (w.value < 0) continue;
      if (sup.contains("results") && sup["results"].is_object() && sup["results"].contains(item)) {
        if (given_wins) continue;  // a POC run: a result recorded by hand stands
        return Error::invalid("suppliers[" + std::to_string(i) + "].results." + item,
                              Message("api.advise.poc_result_twice").arg("item", item));
      }
      if (!sup.contains("results") || !sup["results"].is_object()) sup["results"] = json::object();
      sup["results"][item] = {{"value", fixed_text(w.value, w.decimals)}, {"note", w.note}};
    }
  }
  return ok_status();
}

namespace {

// `market: {gpu_model, region, from, to}` instead of `prices`: the market's daily index of those
// whole UTC days, one price a day (docs/advisor/hedge.md#from-the-market). Every day needs a
// price: a day without trades has none, and is an error naming it.
Result<json> hedge(App& app, json body) {
  json source;
  if (body.is_object() && body.contains("market")) {
    FieldErrors errs;
    Fields f(body, "", errs);
    if (body.contains("prices")) f.error("market", Message("advisor.hedge.market_or_prices"));
    const json cur = body.value("currency", json("USD"));  // not a string: refused below, naming it
    auto currency = parse_currency(cur.is_string() ? cur.get<std::string>() : std::string());
    std::string model, region;
    TimeMs from = 0, to = 0;
    f.object("market", true, [&](Fields& mf) {
      if (const GpuModel* m = read_gpu_model_ref(mf, app.catalog, "gpu_model")) model = m->id;
      region = mf.str("region", kRegionRule);
      from = mf.time("from");
      to = mf.time("to");
      if (from % kMsPerDay != 0) mf.error("from", Message("advisor.hedge.whole_day"));
      if (to % kMsPerDay != 0) mf.error("to", Message("advisor.hedge.whole_day"));
      if (to <= from) mf.error("to", Message("api.market.window_order_from"));
      else if ((to - from) / kMsPerDay > static_cast<TimeMs>(kMaxHedgePeriods))
        mf.error("to", Message("advisor.hedge.list").arg("max", std::to_string(kMaxHedgePeriods)));
      mf.finish();
    });
    if (!errs.empty() || !currency) return errs.empty() ? Error::invalid("currency", Message("api.market.currency")) : errs.to_error();
    auto days = read_market_index(app.store, model, region, *currency, from, to);
    if (!days) return days.error();
    json prices = json::array(), index = json::array();
    size_t k = 0;
    for (TimeMs d = from; d < to; d += kMsPerDay) {
      if (k >= days->size() || (*days)[k].day != d)
        return Error::invalid("market.from", Message("advisor.hedge.no_index_day")
                                                 .arg("day", format_rfc3339(d).substr(0, 10))
                                                 .arg("gpu_model", model)
                                                 .arg("region", region));
      const std::string price = Money((*days)[k].vwap_micros, *currency).amount_string();
      prices.push_back(price);
      index.push_back({{"day", format_rfc3339(d).substr(0, 10)}, {"vwap_per_gpu_hour", price}, {"gpu_hours", (*days)[k].gpu_hours}});
      ++k;
    }
    body.erase("market");
    body["prices"] = prices;
    source = {{"gpu_model", model}, {"region", region}, {"currency", currency_code(*currency)},
              {"from", format_rfc3339(from)}, {"to", format_rfc3339(to)}, {"index", std::move(index)}};
  }
  auto in = parse_hedge_input(body);
  if (!in) return in.error();
  auto r = compute_hedge(*in);
  if (!r) return r.error();
  json out = to_json(*r);
  if (!source.is_null()) out["market"] = std::move(source);
  return out;
}

Result<json> poc(App& app, json body, const Principal& p) {
  if (auto s = fill_poc_from_acceptance(app, p, body, false); !s) return s.error();
  auto in = parse_poc_input(body);
  if (!in) return in.error();
  auto r = compute_poc(*in);
  if (!r) return r.error();
  return to_json(*r);
}

}  // namespace

void register_advisor_routes(App& app, Router& srv) {
  const std::vector<std::string> calcs = {"fingerprint", "tco", "mix", "quotes", "suppliers", "poc", "hedge"};
  for (const std::string& calc : calcs) {
    route(app, srv, "POST", "/api/v1/advise/" + calc, "advise_" + calc,
          [&app, calc](const httplib::Request& req, httplib::Response& res, const Principal& p) {
            // Only the supplier score reads the query (its period); the rest read the body.
            if (auto st = calc == "suppliers" ? only_params(req, {"from", "to"}) : only_params(req, {}); !st)
              return send_problem(res, st.error(), req.path);
            auto body = parse_body(req);
            if (!body) return send_problem(res, body.error(), req.path);
            Result<json> out = Error::make(Code::kInternal, "unknown calculator");
            if (calc == "fingerprint")
              out = fingerprint(app, *body, p);
            else if (calc == "tco")
              out = tco(app, *body);
            else if (calc == "mix")
              out = mix(app, *body, p);
            else if (calc == "quotes")
              out = quotes(app, *body, p);
            else if (calc == "suppliers")
              out = suppliers(app, *body, req);
            else if (calc == "hedge")
              out = hedge(app, *body);
            else
              out = poc(app, *body, p);
            if (!out) return send_problem(res, out.error(), req.path);
            send_json(res, 200, *out);
          });
  }
}

}  // namespace gpurent
