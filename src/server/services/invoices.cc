#include "server/services/invoices.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "billing/rating_output.h"
#include "model/artifact.h"
#include "model/contract.h"
#include "model/image.h"
#include "model/job_run.h"
#include "model/measurement.h"
#include "model/offer.h"
#include "model/volume.h"
#include "server/services/offer_history.h"
#include "server/services/record_faults.h"
#include "server/services/usage_pages.h"

namespace gpurent {
namespace {

using Group = InvoiceInput;

class Builder {
 public:
  Builder(StoreReader& s, const GpuCatalog& c) : store_(s), catalog_(c) {}

  Result<const Offer*> offer(const std::string& id) {
    if (auto it = offers_.find(id); it != offers_.end()) return &it->second;
    auto r = store_.get("offers", id);
    if (!r) return r.error();
    auto o = parse_offer(r->body, catalog_);
    if (!o) return o.error();
    ids_[r->supplier_id + "/" + o->name] = id;
    return &(offers_[id] = std::move(*o));
  }
  // The earlier sheets of an offer this builder read, oldest first, named as it is named now.
  Result<const std::vector<OfferVersion>*> history(const std::string& id) {
    if (auto it = history_.find(id); it != history_.end()) return &it->second;
    auto cur = offer(id);
    if (!cur) return cur.error();
    auto versions = offer_versions(store_, id);
    if (!versions) return versions.error();
    std::vector<OfferVersion> out;
    for (const auto& v : *versions) {
      auto o = parse_offer(v.sheet, catalog_);
      if (!o) return Error::make(Code::kInternal, Message("invoices.bad_offer_version")
                                                      .arg("offer", id)
                                                      .arg("version", std::to_string(v.version))
                                                      .arg("why", o.error().message));
      o->name = (*cur)->name;
      out.push_back({v.until, std::move(*o)});
    }
    return &(history_[id] = std::move(out));
  }
  // The id of an offer this builder read, by its supplier and name ("" if none).
  std::string offer_id(const std::string& supplier_id, const std::string& name) const {
    auto it = ids_.find(supplier_id + "/" + name);
    return it == ids_.end() ? "" : it->second;
  }

  std::string name_of(const std::string& kind, const std::string& id) {
    auto key = kind + "/" + id;
    if (auto it = names_.find(key); it != names_.end()) return it->second;
    auto r = store_.get(kind, id);
    return names_[key] = r ? r->name : id;
  }

 private:
  StoreReader& store_;
  const GpuCatalog& catalog_;
  std::map<std::string, Offer> offers_;
  std::map<std::string, std::vector<OfferVersion>> history_;  // by offer id
  std::map<std::string, std::string> ids_;  // supplier id + "/" + offer name -> offer id
  std::map<std::string, std::string> names_;
};

// Every card's usage points over the union of a tenant's runs' windows on it, read once per card
// rather than once per run and card (a month close reads a thousand runs per tenant). A card whose
// window holds more points than one read returns is read per run instead.
class CardSamples {
 public:
  void want(const std::string& node_id, int64_t gpu, TimeMs from, TimeMs to) {
    if (from >= to) return;
    auto [it, fresh] = cards_.try_emplace({node_id, gpu}, Card{from, to, {}, false});
    if (!fresh) it->second.from = std::min(it->second.from, from), it->second.to = std::max(it->second.to, to);
  }
  Status load(StoreReader& store) {
    for (auto& [key, c] : cards_) {
      auto pts = store.gpu_usage(key.first, key.second, c.from, c.to, kLimit);
      if (!pts) return pts.error();
      c.complete = pts->size() < static_cast<size_t>(kLimit);
      if (c.complete) c.points = std::move(*pts);
    }
    return ok_status();
  }
  // The points of [from, to), as store.gpu_usage(node_id, gpu, from, to) answers them.
  Result<std::vector<GpuUsagePoint>> points(StoreReader& store, const std::string& node_id, int64_t gpu, TimeMs from,
                                            TimeMs to) const {
    auto it = cards_.find({node_id, gpu});
    if (it == cards_.end() || !it->second.complete || from < it->second.from || to > it->second.to)
      return all_points([&](TimeMs a, TimeMs b, int n) { return store.gpu_usage(node_id, gpu, a, b, n); }, from, to,
                        kLimit);
    const auto& v = it->second.points;
    auto lo = std::lower_bound(v.begin(), v.end(), from, [](const GpuUsagePoint& p, TimeMs t) { return p.at < t; });
    auto hi = std::lower_bound(lo, v.end(), to, [](const GpuUsagePoint& p, TimeMs t) { return p.at < t; });
    return std::vector<GpuUsagePoint>(lo, hi);
  }

 private:
  static constexpr int kLimit = 1'000'000;
  struct Card {
    TimeMs from, to;
    std::vector<GpuUsagePoint> points;
    bool complete;
  };
  std::map<std::pair<std::string, int64_t>, Card> cards_;
};

// The allocation's utilization as the billing engine reads it: at each sample time, the maximum
// over its cards of each card's latest reading (raw samples, or a rolled-up minute's maximum),
// from the first time every card has a reading in [from, to).
Result<std::vector<UtilSample>> utilization_of(StoreReader& store, const CardSamples& samples,
                                               const std::vector<RunCards>& placement, TimeMs from, TimeMs to) {
  struct Reading {
    TimeMs at;
    size_t card;
    int64_t pct;
  };
  std::vector<Reading> all;
  size_t cards = 0;
  if (from >= to) return std::vector<UtilSample>{};
  for (const auto& p : placement)
    for (int64_t g : p.gpus) {
      auto pts = samples.points(store, p.node_id, g, from, to);
      if (!pts) return pts.error();
      for (const auto& pt : *pts)
        if (pt.utilization_pct.n > 0) all.push_back({pt.at, cards, pt.minute ? pt.utilization_pct.max : pt.utilization_pct.sum});
      ++cards;
    }
  std::stable_sort(all.begin(), all.end(), [](const Reading& a, const Reading& b) { return a.at < b.at; });
  // Only once every card has a reading: until then (and for good, when a card is never metered)
  // the busiest card may be one not read, so nothing is said of the run's utilization.
  std::vector<int64_t> last(cards, -1);
  std::vector<TimeMs> last_at(cards, INT64_MIN);
  size_t known = 0;
  std::vector<UtilSample> out;
  for (size_t i = 0; i < all.size(); ++i) {
    const size_t card = all[i].card;
    if (last[card] < 0) ++known;
    // Two readings of one card at one instant (two batches, or an agent and a scrape): the higher,
    // whatever order the store returned them in.
    last[card] = last_at[card] == all[i].at ? std::max(last[card], all[i].pct) : all[i].pct;
    last_at[card] = all[i].at;
    if (i + 1 < all.size() && all[i + 1].at == all[i].at) continue;
    if (known == cards) out.push_back({all[i].at, *std::max_element(last.begin(), last.end())});
  }
  return out;
}

}  // namespace

Result<std::vector<UtilSample>> run_utilization(StoreReader& store, const std::vector<RunCards>& placement, TimeMs from,
                                                TimeMs to) {
  return utilization_of(store, CardSamples(), placement, from, to);
}

namespace {

// Where a run's utilization samples are read from: its running start, but no earlier than the
// longest idle rule window (1,440 minutes: offer.cc) before the month's start, so an idle stretch
// that began last month counts its window from when it began, not again from the month's start.
constexpr TimeMs kIdleLookbackMs = 1440 * 60'000;
TimeMs utilization_from(TimeMs running_at, TimeMs since) { return std::max(running_at, since - kIdleLookbackMs); }

ContractTerms list_terms(Currency cur) {
  ContractTerms k;
  k.name = "list prices";
  k.currency = cur;
  k.clauses.outage_compensation_pct = 0;  // no contract, no SLA
  k.clauses.exit_refund_prepaid = false;
  return k;
}

// A tenant's rating inputs over [from, to) (`to` already cut at now), one per contract (and per
// supplier and currency at list prices): what build_invoice rates.
struct Unpriced {
  std::string allocation;
  TimeMs started;  // its request (or start): a narrower period keeps it when it began before its end
};
// Which of a tenant's runs load_inputs reads: those that can count in the period (read_runs), or
// every run it ever had (the reference the tests hold the first to: build_invoice_from_every_run).
enum class RunRead { kRecent, kAll };

struct LoadedInputs {
  std::map<std::string, Group> groups;
  std::vector<Unpriced> unpriced;
};

// One group per contract of the tenant, with its offers, clauses and commitments.
Status add_contract_groups(StoreReader& store, Builder& b, const Record& tenant, LoadedInputs& loaded) {
  auto contracts = list_all(store, "contracts", {{"tenant_id", tenant.id}});
  if (!contracts) return contracts.error();
  for (const Record& c : *contracts) {
    // Never a smaller invoice: the request fails, and the record is reported.
    auto k = decode_record(c, decode_contract, "tenant " + tenant.name + "'s invoices cannot be rated without it");
    if (!k) return k.error();
    Group& g = loaded.groups[c.id];
    g.contract_id = c.id;
    g.supplier_id = c.supplier_id;
    g.in.contract.name = k->name;
    g.in.contract.tenant = tenant.name;
    g.in.contract.supplier = b.name_of("suppliers", c.supplier_id);
    g.in.contract.currency = k->currency;
    g.in.contract.nccl_compensation_pct = k->nccl_compensation_pct;
    g.in.contract.performance_remedy = k->performance_remedy;
    g.in.contract.cap_credits = k->cap_credits;
    g.in.contract.exit_notice_at = k->exit_notice_at;
    g.in.contract.exit_at = k->exit_at;
    const auto& ids = k->offer_ids;
    std::map<std::string, std::string> ref_to_name;
    for (size_t i = 0; i < ids.size() && i < k->offers.size(); ++i) {
      auto o = b.offer(ids[i]);
      if (!o) return o.error();
      if (i == 0) g.in.contract.clauses = k->clauses.value_or((*o)->contract_template);
      g.in.offers[(*o)->name] = **o;
      ref_to_name[k->offers[i]] = (*o)->name;
    }
    for (const auto& m : k->commitments) {
      Commitment cm{m.name, ref_to_name[m.offer], m.gpus, m.term_months, m.starts_at,
                    m.market() ? *m.ends_at : add_months(m.starts_at, m.term_months), m.prepaid};
      if (m.market()) {
        cm.price = m.price_per_gpu_hour->micros();
        cm.trade = m.trade;
        cm.defaults = m.defaults;
        cm.resales = m.resales;
      }
      g.in.commitments.push_back(std::move(cm));
    }
  }
  return ok_status();
}

// A run the scheduler requeued because its node failed (an SLA outage): by its end reason's code,
// or, for a run closed before codes, by the English text.
bool requeued_by_node_failure(const JobRun& run) {
  if (!run.end_reason_message) return run.end_reason.rfind("requeued: node", 0) == 0;
  const Message& m = *run.end_reason_message;
  if (m.code != "sched.requeued") return false;
  for (const MessageArg& a : m.args)
    if (a.name == "why" && a.nested.size() == 1) {
      const std::string& why = a.nested[0].code;
      return why == "sched.node_failed" || why == "sched.node_failed_detail" || why == "exec.slurm.node_failed";
    }
  return false;
}

// The group a run is rated in: its contract's, else the list prices of its supplier and currency.
Group& group_of(LoadedInputs& loaded, Builder& b, const Record& tenant, const std::string& contract_id,
                const std::string& supplier_id, const Offer& o) {
  std::string key = contract_id;
  if (key.empty() || !loaded.groups.count(key)) {
    key = "list/" + supplier_id + "/" + currency_code(o.currency);
    Group& g = loaded.groups[key];
    if (g.in.offers.empty()) {
      g.supplier_id = supplier_id;
      g.in.contract = list_terms(o.currency);
      g.in.contract.tenant = tenant.name;
      g.in.contract.supplier = b.name_of("suppliers", supplier_id);
    }
  }
  Group& g = loaded.groups[key];
  if (!g.in.offers.count(o.name)) g.in.offers[o.name] = o;
  return g;
}

// The tenant's runs that can count from `since` (a month's start) on, decoded, in `allocs` and
// `runs`, by id: those still open; those whose record was written since a day before `since` (a
// run's close and every later change to it write it, so every run that ended since then is one; the day covers a node's
// clock ahead of the server's, whose end time Slurm's accounting stamps later); and the run before each of those that
// began at or after `since`, by its previous_run (a node failure's outage credit reaches back to it). So a pass reads
// what the month holds, not the tenant's whole history. A run that began at or after `since` but was recorded before
// runs named the one before (no previous_run) makes it read every run, as RunRead::kAll does.
Status read_runs(StoreReader& store, const Record& tenant, TimeMs since, RunRead read, std::vector<Record>& allocs,
                 std::vector<JobRun>& runs) {
  const std::string why = "tenant " + tenant.name + "'s invoices cannot be rated without it";
  auto decode = [&](const Record& a) -> Status {
    auto run = decode_record(a, decode_run, why);
    if (!run) return run.error();
    runs.push_back(std::move(*run));
    return ok_status();
  };
  auto read_all = [&]() -> Status {
    auto all = list_all(store, "allocations", {{"tenant_id", tenant.id}});
    if (!all) return all.error();
    allocs = std::move(*all);
    runs.clear();
    runs.reserve(allocs.size());
    for (const Record& a : allocs)
      if (auto s = decode(a); !s) return s;
    return ok_status();
  };
  if (read == RunRead::kAll) return read_all();
  // By id, as list_all answers them. The open runs first: one that closes before the closed ones
  // are read is then read twice, and its later record (the higher version) is the one kept.
  std::map<std::string, Record> by_id;
  auto keep = [&by_id](Record&& r) {
    auto [it, added] = by_id.try_emplace(r.id, std::move(r));  // r is left as it was when not added
    if (!added && r.version > it->second.version) it->second = std::move(r);
  };
  auto open = list_all(store, "allocations", {{"tenant_id", tenant.id}, {"state", "open"}});
  if (!open) return open.error();
  for (Record& r : *open) keep(std::move(r));
  ListQuery q{"allocations", {{"tenant_id", tenant.id}, {"state", "closed"}}, "", 1000};
  q.updated_since = std::max<TimeMs>(1, since - kMsPerDay);
  for (;;) {
    auto page = store.list(q);
    if (!page) return page.error();
    for (Record& r : page->items) keep(std::move(r));
    if (page->next_after.empty()) break;
    q.after_id = page->next_after;
  }
  // The run before each run that began in the month (an outage credit reaches back to it; any run
  // before that one was followed by a run that began before the month, so it credits nothing here).
  std::map<std::string, JobRun> decoded;
  std::vector<std::string> follow;
  for (const auto& [id, r] : by_id) {
    auto run = decode_record(r, decode_run, why);
    if (!run) return run.error();
    if (run->running_at && *run->running_at >= since) {
      if (!run->previous_run) return read_all();
      if (!run->previous_run->empty() && !by_id.count(*run->previous_run)) follow.push_back(*run->previous_run);
    }
    decoded.emplace(id, std::move(*run));
  }
  for (const std::string& prev : follow) {
    if (by_id.count(prev)) continue;
    auto r = store.get("allocations", prev);
    if (!r && r.error().code == Code::kNotFound) continue;  // as if read: a run no longer stored
    if (!r) return r.error();
    if (r->tenant_id != tenant.id) continue;
    auto run = decode_record(*r, decode_run, why);
    if (!run) return run.error();
    decoded.emplace(prev, std::move(*run));
    by_id.emplace(prev, std::move(*r));
  }
  allocs.clear();
  allocs.reserve(by_id.size());
  runs.clear();
  runs.reserve(by_id.size());
  for (auto& [id, r] : by_id) {
    allocs.push_back(std::move(r));
    runs.push_back(std::move(decoded.at(id)));
  }
  return ok_status();
}

// Every run of the tenant that overlaps [month start, to): its allocation, utilization, storage
// I/O and egress, and the interruption a node failure caused.
Status add_runs(StoreReader& store, Builder& b, const Record& tenant, TimeMs from, TimeMs to, RunRead read,
                LoadedInputs& loaded) {
  std::vector<Record> read_allocs;
  std::vector<JobRun> runs;
  if (auto s = read_runs(store, tenant, month_start(from), read, read_allocs, runs); !s) return s;
  const std::vector<Record>* allocs = &read_allocs;
  std::map<std::string, std::vector<const JobRun*>> runs_of_job;
  for (const JobRun& r : runs) runs_of_job[r.job_id].push_back(&r);
  const TimeMs since = month_start(from);  // allowances count from the month's start
  // The window each run is rated over (its running time inside [month start, to)), and every
  // card's points over the union of its runs' windows, read once.
  auto window = [&](const JobRun& run) {
    return std::make_pair(std::max(*run.running_at, since), run.ended_at ? std::min(*run.ended_at, to) : to);
  };
  // Where the usage points of an ended run end: its end rounded up to the minute — a sample stamped
  // after the end inside its last minute is the run's, raw as once rolled up into that minute
  // (stamped at its start) — but not past the period nor the next run of its job.
  auto usage_to = [&](const JobRun& run) {
    const TimeMs e = *run.ended_at;
    TimeMs hi = std::min(e % 60'000 == 0 ? e : e - e % 60'000 + 60'000, to);
    for (const JobRun* r : runs_of_job[run.job_id])
      if (r != &run && r->running_at && *r->running_at >= e) hi = std::min(hi, *r->running_at);
    return std::max(hi, e);
  };
  CardSamples samples;
  for (const JobRun& run : runs) {
    if (!run.running_at || *run.running_at >= to || (run.ended_at && *run.ended_at < since) || run.offer_id.empty())
      continue;
    const auto [w0, w1] = window(run);
    for (const auto& p : run.placement)
      for (int64_t g : p.gpus) samples.want(p.node_id, g, utilization_from(*run.running_at, since), w1);
  }
  if (auto st = samples.load(store); !st) return st;
  // The jobs' storage I/O, egress and tokens over the month so far, read once for the tenant; each
  // run takes the points of its own window. Past kUsageLimit points, each run reads its own.
  constexpr int kUsageLimit = 10'000'000;
  // [since, to), as the rating engine counts them: a point at a month's first instant (the first
  // minute rolled up, stamped at its start) is that month's.
  auto usage = store.tenant_job_usage(tenant.id, since, to, kUsageLimit);
  if (!usage) return usage.error();
  const bool usage_whole = usage->size() < static_cast<size_t>(kUsageLimit);
  std::map<std::string, std::pair<size_t, size_t>> usage_of;  // job id -> [begin, end) in *usage
  for (size_t k = 0; k < usage->size();) {
    size_t e = k + 1;
    while (e < usage->size() && (*usage)[e].first == (*usage)[k].first) ++e;
    usage_of[(*usage)[k].first] = {k, e};
    k = e;
  }
  auto usage_in = [&](const std::string& job, TimeMs lo, TimeMs hi) -> Result<std::vector<JobUsagePoint>> {
    if (!usage_whole)
      return all_points([&](TimeMs a, TimeMs b, int n) { return store.job_usage(job, a, b, n); }, lo, hi, 1'000'000);
    std::vector<JobUsagePoint> out;
    auto it = usage_of.find(job);
    if (it == usage_of.end()) return out;
    const auto first = usage->begin() + static_cast<std::ptrdiff_t>(it->second.first);
    const auto last = usage->begin() + static_cast<std::ptrdiff_t>(it->second.second);
    auto at_or_after = [](const std::pair<std::string, JobUsagePoint>& p, TimeMs t) { return p.second.at < t; };
    for (auto p = std::lower_bound(first, last, lo, at_or_after); p != last && p->second.at < hi; ++p)
      out.push_back(p->second);
    return out;
  };
  // When the job of a run a node failure ended ran again: its next run's start, nullopt before one.
  auto next_start = [&](const JobRun& run) {
    std::optional<TimeMs> next;
    for (const JobRun* r : runs_of_job[run.job_id])
      if (r->running_at && *r->running_at >= *run.ended_at) next = std::min(next.value_or(*r->running_at), *r->running_at);
    return next;
  };
  for (size_t i = 0; i < runs.size(); ++i) {
    const Record& a = (*allocs)[i];
    const JobRun& run = runs[i];
    const auto& running = run.running_at;
    const auto& ended = run.ended_at;
    // A run that ended before the month, whose node-failure interruption lasted into it (its job ran
    // again after the month began): loaded for that outage's credit alone (its own time, before
    // the period, bills nothing in it). A job that never ran again is credited to the month's end
    // only (as before: its cancel is not known here).
    const bool credit_only = running && ended && *ended < since && requeued_by_node_failure(run) &&
                             next_start(run).value_or(since) > since;
    // From its request on: a run requested before the period's end and running only after it has
    // cold start to bill in it (billing_starts: api_call).
    if (!running || std::min(run.requested_at.value_or(*running), *running) >= to || (ended && *ended < since && !credit_only))
      continue;
    if (run.offer_id.empty()) {
      loaded.unpriced.push_back({a.id, std::min(run.requested_at.value_or(*running), *running)});
      continue;
    }
    auto o = b.offer(run.offer_id);
    if (!o) return o.error();
    // What the run is billed as (CPU time, spot, a model endpoint by use) follows the sheet in
    // force when it was requested: a supplier changing the sheet later reprices no run.
    auto versions = b.history(run.offer_id);
    if (!versions) return versions.error();
    const TimeMs started = std::min(run.requested_at.value_or(*running), *running);
    const Offer* sheet = *o;
    for (const OfferVersion& v : **versions)
      if (started < v.until) {
        sheet = &v.offer;
        break;
      }
    if (run.gpu_milli == 0 && !sheet->prices.cpu_core_hour) {  // a CPU-only run its offer did not sell
      loaded.unpriced.push_back({a.id, started});
      continue;
    }
    Group& g = group_of(loaded, b, tenant, run.contract_id, a.supplier_id, **o);
    Allocation x;
    x.id = a.id;
    x.project = b.name_of("projects", a.project_id);
    x.job = run.job.empty() ? run.job_id : run.job;
    x.offer = (*o)->name;
    x.mode = run.billing_mode;
    // A spot run on an offer that sells no spot is rated on-demand rather than refused (a market
    // price needs a sheet spot price first: POST /spot-prices refuses one otherwise).
    if (x.mode == BillingMode::kSpot && !sheet->prices.spot) x.mode = BillingMode::kOnDemand;
    x.gpu_milli = run.gpu_milli;
    x.cpu_cores = run.cpu_cores;
    x.memory_gib = run.memory_gib;
    // A model endpoint billed by use, when its offer prices the model so (else its GPU time).
    const ServedModel* served = nullptr;
    if (run.endpoint)
      for (const auto& m : sheet->served_models)
        if (m.model == run.endpoint->model &&
            (run.endpoint->per == EndpointBilling::kQps       ? m.per_qps_month.has_value()
             : run.endpoint->per == EndpointBilling::kRequest ? m.per_million_requests.has_value()
                                                              : m.per_million_input_tokens && m.per_million_output_tokens))
          served = &m;
    x.by_use = served != nullptr;
    for (const auto& p : run.placement) x.placement.push_back({p.node, p.gpus});
    x.requested_at = started;
    x.running_at = running;
    // Absent while a job that reports readiness has not (billing_starts: ready bills nothing yet;
    // api_call and running bill the wait as cold start).
    x.ready_at = run.ready_at;
    x.ended_at = ended;
    const auto [v_from, v_to] = window(run);
    if (!credit_only) {
      auto util = utilization_of(store, samples, run.placement, utilization_from(*running, since), v_to);
      if (!util) return util.error();
      x.utilization = std::move(*util);
    }
    const std::string project = x.project;
    const std::optional<TimeMs> ready = x.ready_at;
    g.in.allocations.push_back(std::move(x));
    if (credit_only) g.credit_only.insert(a.id);
    // Storage I/O and egress the job reported while this run lasted (and tokens, for an endpoint).
    TimeMs lo = std::max(since, v_from - v_from % 60'000);
    for (const JobRun* r : runs_of_job[run.job_id])
      if (r != &run && r->running_at && r->ended_at && *r->ended_at <= v_from) lo = std::max(lo, usage_to(*r));
    g.usage_from[a.id] = lo;
    const TimeMs hi = run.ended_at && *run.ended_at < to ? usage_to(run) : v_to;
    g.usage_to[a.id] = hi;
    if (lo < hi && !credit_only) {
      auto vol = usage_in(run.job_id, lo, hi);  // [lo, hi): see InvoiceInput::usage_from
      if (!vol) return vol.error();
      for (const auto& v : *vol) {
        if (v.storage_io_bytes > 0 || v.egress_bytes > 0)
          g.in.volume.push_back({v.at, a.id, v.storage_io_bytes, v.egress_bytes});
        if (!served || run.endpoint->per == EndpointBilling::kQps) continue;
        // Per token: its tokens, and its requests where the model prices them too; per request:
        // its requests alone.
        const bool tokens = run.endpoint->per == EndpointBilling::kToken;
        const int64_t requests = served->per_million_requests ? v.requests : 0;
        if ((tokens && (v.input_tokens > 0 || v.output_tokens > 0)) || requests > 0)
          g.in.tokens.push_back({v.at, project, (*o)->name, served->model, tokens ? v.input_tokens : 0,
                                 tokens ? v.output_tokens : 0, requests});
      }
    }
    // Provisioned once it serves; an endpoint ready only after the period (its model still loading
    // at the period's end) has nothing to bill in it.
    if (served && run.endpoint->per == EndpointBilling::kQps && ready && *ready < ended.value_or(to) && !credit_only)
      g.in.qps.push_back({project, (*o)->name, served->model, *run.endpoint->qps, *ready, ended.value_or(to)});
    // A run the scheduler requeued after a node failure: the job was interrupted from the end of
    // this run until its next run started (or the period's end).
    if (ended && requeued_by_node_failure(run)) {
      const TimeMs next = std::min(next_start(run).value_or(to), to);
      if (next > *ended) g.in.incidents.push_back({"fault/" + a.id, *ended, next, "", a.id, run.end_reason});
    }
  }
  return ok_status();
}

// What the tenant keeps stored for offers' nodes over any part of [from, to) (its own images, its
// projects' artifacts, its volumes: records of `kind`), in the group of the contract (or list
// prices) of the run that first brought each there, into the group's input list `into`.
template <class Kept>
Status add_kept(StoreReader& store, Builder& b, const Record& tenant, TimeMs from, TimeMs to, LoadedInputs& loaded,
                const char* kind, Result<Kept> (*decode)(const json&), std::string Kept::*id_of,
                std::string Kept::*name_of, std::vector<StoredImage> RatingInput::*into) {
  auto kept = list_all(store, kind, {{"tenant_id", tenant.id}});
  if (!kept) return kept.error();
  for (const Record& r : *kept) {
    auto k = decode_record(r, decode, "tenant " + tenant.name + "'s invoices cannot be rated without it");
    if (!k) return k.error();
    if (k->from >= to || (k->to && *k->to <= month_start(from))) continue;
    auto o = b.offer(k->offer_id);
    if (!o) return o.error();
    Group& g = group_of(loaded, b, tenant, k->contract_id, r.supplier_id, **o);
    (g.in.*into).push_back({(*k).*id_of, (*k).*name_of, (*o)->name, k->bytes, k->from, k->to});
  }
  return ok_status();
}

Status add_kept_storage(StoreReader& store, Builder& b, const Record& tenant, TimeMs from, TimeMs to,
                        LoadedInputs& loaded) {
  if (auto s = add_kept(store, b, tenant, from, to, loaded, "image_storage", decode_kept_image, &KeptImage::image_id,
                        &KeptImage::image, &RatingInput::images);
      !s)
    return s;
  if (auto s = add_kept(store, b, tenant, from, to, loaded, "artifact_storage", decode_kept_artifact,
                        &KeptArtifact::artifact_id, &KeptArtifact::artifact, &RatingInput::artifacts);
      !s)
    return s;
  return add_kept(store, b, tenant, from, to, loaded, "volume_storage", decode_kept_volume, &KeptVolume::volume_id,
                  &KeptVolume::volume, &RatingInput::volumes);
}

// Each group's offers' earlier sheets (price history).
Status add_offer_history(Builder& b, LoadedInputs& loaded) {
  for (auto& [key, g] : loaded.groups)
    for (const auto& [name, o] : g.in.offers) {
      const std::string id = b.offer_id(g.supplier_id, name);
      if (id.empty()) continue;
      auto h = b.history(id);
      if (!h) return h.error();
      if (!(*h)->empty()) g.in.offer_history[name] = **h;
    }
  return ok_status();
}

// Each group's offers' spot market prices (all of them: the engine takes the one in force).
Status add_spot_prices(StoreReader& store, const Builder& b, LoadedInputs& loaded) {
  std::map<std::string, std::vector<SpotPrice>> by_offer;  // offer id -> sorted series
  for (auto& [key, g] : loaded.groups)
    for (const auto& [name, o] : g.in.offers) {
      const std::string id = b.offer_id(g.supplier_id, name);
      if (id.empty()) continue;
      if (!by_offer.count(id)) {
        auto recs = list_all(store, "spot-prices", {{"state", id}});
        if (!recs) return recs.error();
        auto& series = by_offer[id];
        for (const Record& r : *recs) {
          auto e = decode_record(r, decode_spot_price, "spot time on its offer cannot be rated without it");
          if (!e) return e.error();
          series.push_back({e->from, e->price});
        }
        std::stable_sort(series.begin(), series.end(), [](const SpotPrice& x, const SpotPrice& y) { return x.from < y.from; });
      }
      if (!by_offer[id].empty()) g.in.spot_prices[name] = by_offer[id];
    }
  return ok_status();
}

// Measurements of the contracted suppliers' nodes: card benchmarks, NCCL bandwidth, outages.
Status add_measurements(StoreReader& store, Builder& b, LoadedInputs& loaded) {
  std::map<std::string, std::vector<Record>> measurements;  // by supplier id
  for (auto& [key, g] : loaded.groups) {
    if (g.in.offers.empty() || g.contract_id.empty() || measurements.count(g.supplier_id)) continue;
    auto ms = list_all(store, "measurements", {{"supplier_id", g.supplier_id}});
    if (!ms) return ms.error();
    measurements[g.supplier_id] = std::move(*ms);
  }
  for (auto& [key, g] : loaded.groups) {
    if (g.contract_id.empty()) continue;  // list prices: no SLA
    const std::set<std::string> corrected = corrected_ids(measurements[g.supplier_id]);
    for (const Record& r : measurements[g.supplier_id]) {
      if (corrected.count(r.id) || !measurement_counts(r.body)) continue;  // corrected, or a dispute not accepted
      auto m = decode_record(r, decode_measurement,
                             "the SLA credits of contracts with this supplier cannot be computed without it");
      if (!m) return m.error();
      const std::string node = b.name_of("nodes", m->node_id);
      switch (m->kind) {
        case MeasurementKind::kFp16Tflops: g.in.tflops.push_back({*m->at, node, *m->gpu, *m->tflops_x10, r.id}); break;
        case MeasurementKind::kNcclBusbw: g.in.nccl.push_back({node, *m->from, *m->to, *m->busbw_gbps, r.id}); break;
        case MeasurementKind::kIncident: g.in.incidents.push_back({r.id, *m->from, *m->to, node, "", m->note}); break;
      }
    }
  }
  return ok_status();
}

Result<LoadedInputs> load_inputs(StoreReader& store, const GpuCatalog& catalog, const Record& tenant, TimeMs from,
                                 TimeMs to, RunRead read = RunRead::kRecent) {
  LoadedInputs loaded;
  Builder b(store, catalog);
  if (auto s = add_contract_groups(store, b, tenant, loaded); !s) return s.error();
  if (auto s = add_runs(store, b, tenant, from, to, read, loaded); !s) return s.error();
  if (auto s = add_kept_storage(store, b, tenant, from, to, loaded); !s) return s.error();
  if (auto s = add_spot_prices(store, b, loaded); !s) return s.error();
  if (auto s = add_offer_history(b, loaded); !s) return s.error();
  if (auto s = add_measurements(store, b, loaded); !s) return s.error();
  return loaded;
}

// Each group's storage I/O and egress, told to the tenant's other groups that sell the same offer
// of the same supplier (its runs under a contract and at list prices are rated apart): an offer's
// monthly free allowance is the tenant's, used first come, first served across them.
void share_volume_allowances(std::map<std::string, Group>& groups) {
  for (auto& [key, g] : groups) g.in.volume_elsewhere.clear();
  for (const auto& [hk, h] : groups) {
    std::map<std::string, std::string> offer_of;  // allocation -> offer
    for (const Allocation& a : h.in.allocations) offer_of[a.id] = a.offer;
    for (const VolumeUsage& v : h.in.volume) {
      auto it = offer_of.find(v.allocation);
      if (it == offer_of.end()) continue;
      for (auto& [gk, g] : groups)
        if (gk != hk && g.supplier_id == h.supplier_id && g.in.offers.count(it->second))
          g.in.volume_elsewhere.push_back({v.at, v.allocation, it->second, v.storage_io_bytes, v.egress_bytes});
    }
  }
}

// Each group's kept images, artifacts and volumes, told (as `elsewhere`) to the tenant's other
// groups that sell the same offer of the same supplier: an offer's free_gb is the tenant's at any
// moment (docs/resources/offers.md), not each section's. Every group orders them alike (kept
// longest first, then by id), so each item takes the same share of it everywhere and is billed
// only in its own group.
void share_kept_allowances(std::map<std::string, Group>& groups) {
  using Kept = std::vector<StoredImage> RatingInput::*;
  static constexpr Kept kKinds[] = {&RatingInput::images, &RatingInput::artifacts, &RatingInput::volumes};
  for (auto& [key, g] : groups)
    for (Kept kind : kKinds) std::erase_if(g.in.*kind, [](const StoredImage& i) { return i.elsewhere; });
  std::map<std::string, std::vector<std::pair<Kept, StoredImage>>> told;  // group -> what it is told
  for (const auto& [hk, h] : groups)
    for (const auto& [gk, g] : groups) {
      if (gk == hk || g.supplier_id != h.supplier_id) continue;
      for (Kept kind : kKinds)
        for (const StoredImage& i : h.in.*kind)
          if (g.in.offers.count(i.offer)) {
            StoredImage copy = i;
            copy.elsewhere = true;
            told[gk].push_back({kind, std::move(copy)});
          }
    }
  for (auto& [gk, items] : told)
    for (auto& [kind, i] : items) (groups.at(gk).in.*kind).push_back(std::move(i));
}

// Rates each group over [from, to) into `inv`'s sections.
Status rate_groups(std::map<std::string, Group>& groups, TimeMs from, TimeMs to, bool lines_per_day,
                   Invoice& inv) {
  share_volume_allowances(groups);
  share_kept_allowances(groups);
  for (auto& [key, g] : groups) {
    if (g.in.offers.empty()) continue;
    g.in.from = from;
    g.in.to = to;
    g.in.lines_per_day = lines_per_day;
    auto rated = rate(g.in);
    if (!rated) return Error::make(Code::kInternal, "rating " + g.in.contract.name + ": " + rated.error().message);
    inv.sections.push_back({g.contract_id, g.in.contract.name, g.supplier_id, std::move(*rated), std::move(g.in)});
  }
  // The per-currency totals fit in int64 (to_json adds them): past it, an error — the month's
  // close logs the tenant as failed — never a wrapped total (docs/money.md).
  std::map<Currency, std::array<int64_t, 3>> totals;
  for (const auto& s : inv.sections) {
    auto& t = totals[s.rated.currency];
    if (__builtin_add_overflow(t[0], s.rated.charges.micros(), &t[0]) ||
        __builtin_add_overflow(t[1], s.rated.credits.micros(), &t[1]) ||
        __builtin_add_overflow(t[2], s.rated.total.micros(), &t[2]))
      return Error::make(Code::kInvalid, Message("rating.amount_overflow")
                                             .arg("rule", "total")
                                             .arg("allocation", "the invoice in " + std::string(currency_code(s.rated.currency))));
  }
  return ok_status();
}

// The inputs of [since-month, window end) narrowed to what loading [day, to) would have read
// (load_inputs' bounds, with `since` the month's start): runs requested before `to` and not
// ended before `since` (but for runs there for an outage credit alone); their utilization in [utilization_from,
// min(ended, to)); volume in [usage_from, min(usage_to, to)); requeue incidents cut at `to`. A list-price group left
// without runs is dropped, as loading would not have made it.
std::map<std::string, Group> narrowed(const std::map<std::string, Group>& groups, TimeMs since, TimeMs to) {
  std::map<std::string, Group> out;
  for (const auto& [key, g] : groups) {
    Group n{g.contract_id, g.supplier_id, g.in, g.usage_from, g.usage_to, g.credit_only};
    std::map<std::string, std::pair<TimeMs, TimeMs>> kept;  // allocation -> (lo, hi)
    n.in.allocations.clear();
    for (const Allocation& a : g.in.allocations) {
      // A run that ended before the month is there for its outage credit alone (credit_only),
      // whatever `to`: loading [since, to) loads it too.
      if (!a.running_at || std::min(a.requested_at, *a.running_at) >= to ||
          (a.ended_at && *a.ended_at < since && !g.credit_only.count(a.id)))
        continue;
      const TimeMs lo = std::max(*a.running_at, since), hi = a.ended_at ? std::min(*a.ended_at, to) : to;
      kept[a.id] = {lo, hi};
      Allocation x = a;
      const TimeMs util_lo = utilization_from(*a.running_at, since);
      std::erase_if(x.utilization, [&](const UtilSample& u) { return u.at < util_lo || u.at >= hi; });
      n.in.allocations.push_back(std::move(x));
    }
    // (What other groups told it is told again when it is rated: share_kept_allowances.)
    auto outside = [&](const StoredImage& k) { return k.elsewhere || k.from >= to || (k.to && *k.to <= since); };
    std::erase_if(n.in.images, outside);
    std::erase_if(n.in.artifacts, outside);
    std::erase_if(n.in.volumes, outside);
    if (n.contract_id.empty() && n.in.allocations.empty() && n.in.images.empty() && n.in.artifacts.empty() &&
        n.in.volumes.empty())
      continue;
    std::erase_if(n.in.volume, [&](const VolumeUsage& v) {
      auto it = kept.find(v.allocation);
      if (it == kept.end()) return true;
      auto from = g.usage_from.find(v.allocation);
      auto until = g.usage_to.find(v.allocation);
      return v.at < (from == g.usage_from.end() ? it->second.first : from->second) ||
             v.at >= (until == g.usage_to.end() ? it->second.second : std::min(until->second, to));
    });
    std::vector<Incident> incidents;
    for (Incident i : g.in.incidents) {
      if (!i.allocation.empty()) {  // derived from a requeue: the run must be there, the end cut at `to`
        if (!kept.count(i.allocation)) continue;
        i.to = std::min(i.to, to);
        if (i.to <= i.from) continue;
      }
      incidents.push_back(std::move(i));
    }
    n.in.incidents = std::move(incidents);
    out.emplace(key, std::move(n));
  }
  return out;
}

}  // namespace

namespace {

Result<Invoice> build_invoice_reading(StoreReader& store, const GpuCatalog& catalog, const std::string& tenant_id,
                                      TimeMs from, TimeMs to_requested, TimeMs now, bool lines_per_day, RunRead read) {
  Invoice inv;
  inv.tenant_id = tenant_id;
  inv.from = from;
  inv.to = to_requested;
  const TimeMs to = std::min(to_requested, now);
  inv.rated_until = std::max(from, to);
  auto tenant = store.get("tenants", tenant_id);
  if (!tenant) return tenant.error();
  inv.tenant_name = tenant->name;
  if (to <= from) return inv;
  auto loaded = load_inputs(store, catalog, *tenant, from, to, read);
  if (!loaded) return loaded.error();
  for (const Unpriced& u : loaded->unpriced) inv.unpriced.push_back(u.allocation);
  if (auto st = rate_groups(loaded->groups, from, to, lines_per_day, inv); !st) return st.error();
  return inv;
}

}  // namespace

Result<Invoice> build_invoice(StoreReader& store, const GpuCatalog& catalog, const std::string& tenant_id, TimeMs from,
                              TimeMs to, TimeMs now, bool lines_per_day) {
  return build_invoice_reading(store, catalog, tenant_id, from, to, now, lines_per_day, RunRead::kRecent);
}

Result<Invoice> build_invoice_from_every_run(StoreReader& store, const GpuCatalog& catalog,
                                             const std::string& tenant_id, TimeMs from, TimeMs to, TimeMs now,
                                             bool lines_per_day) {
  return build_invoice_reading(store, catalog, tenant_id, from, to, now, lines_per_day, RunRead::kAll);
}

struct MonthInvoiceSource::Month {
  std::map<std::string, InvoiceInput> groups;            // load_inputs' groups
  std::vector<std::pair<std::string, TimeMs>> unpriced;  // allocation, when it began
};

MonthInvoiceSource::MonthInvoiceSource(StoreReader& store, const GpuCatalog& catalog, std::string tenant_id,
                                       TimeMs until)
    : store_(store), catalog_(catalog), tenant_id_(std::move(tenant_id)), until_(until) {}

MonthInvoiceSource::~MonthInvoiceSource() = default;

Result<Invoice> MonthInvoiceSource::invoice(TimeMs from, TimeMs to_requested, TimeMs now, bool lines_per_day) {
  const TimeMs to = std::min(to_requested, now);
  const TimeMs bound = std::min(until_, add_months(from, 1));
  if (to <= from || from != month_start(from) || to > bound)
    return build_invoice(store_, catalog_, tenant_id_, from, to_requested, now, lines_per_day);
  auto tenant = store_.get("tenants", tenant_id_);
  if (!tenant) return tenant.error();
  auto it = months_.find(from);
  if (it == months_.end()) {
    auto loaded = load_inputs(store_, catalog_, *tenant, from, bound);
    if (!loaded) return loaded.error();
    ++reads_;
    auto m = std::make_unique<Month>(Month{std::move(loaded->groups), {}});
    for (Unpriced& u : loaded->unpriced) m->unpriced.emplace_back(std::move(u.allocation), u.started);
    it = months_.emplace(from, std::move(m)).first;
  }
  Invoice inv;
  inv.tenant_id = tenant_id_;
  inv.tenant_name = tenant->name;
  inv.from = from;
  inv.to = to_requested;
  inv.rated_until = to;
  for (const auto& [allocation, started] : it->second->unpriced)
    if (started < to) inv.unpriced.push_back(allocation);
  auto groups = narrowed(it->second->groups, from, to);
  if (auto st = rate_groups(groups, from, to, lines_per_day, inv); !st) return st.error();
  return inv;
}

DayInvoiceSource::DayInvoiceSource(StoreReader& store, const GpuCatalog& catalog, std::string tenant_id, TimeMs now)
    : store_(store), catalog_(catalog), tenant_id_(std::move(tenant_id)), now_(now) {}

Result<Invoice> DayInvoiceSource::day(TimeMs day) {
  const TimeMs month = month_start(day);
  const TimeMs to = std::min(day + kMsPerDay, now_);
  if (to <= day) return build_invoice(store_, catalog_, tenant_id_, day, day + kMsPerDay, now_);  // not begun: empty
  auto it = months_.find(month);
  if (it == months_.end()) {  // the month to date, loaded once
    auto tenant = store_.get("tenants", tenant_id_);
    if (!tenant) return tenant.error();
    tenant_name_ = tenant->name;
    auto loaded = load_inputs(store_, catalog_, *tenant, month, std::min(add_months(month, 1), now_));
    if (!loaded) return loaded.error();
    it = months_.emplace(month, std::move(loaded->groups)).first;
  }
  Invoice inv;
  inv.tenant_id = tenant_id_;
  inv.tenant_name = tenant_name_;
  inv.from = day;
  inv.to = day + kMsPerDay;
  inv.rated_until = to;
  auto groups = narrowed(it->second, month, to);
  if (auto st = rate_groups(groups, day, to, false, inv); !st) return st.error();
  return inv;
}

nlohmann::json to_json(const Invoice& inv) {
  json sections = json::array();
  std::map<std::string, std::array<int64_t, 3>> totals;
  for (const auto& s : inv.sections) {
    json j = to_json(s.rated);
    j["contract_id"] = s.contract_id;
    j["contract"] = s.contract_name;
    j["supplier_id"] = s.supplier_id;
    sections.push_back(std::move(j));
    auto& t = totals[currency_code(s.rated.currency)];
    t[0] += s.rated.charges.micros();  // rate_groups made the invoice only when these fit in int64
    t[1] += s.rated.credits.micros();
    t[2] += s.rated.total.micros();
  }
  json tj = json::object();
  for (const auto& [cur, t] : totals) {
    const Currency c = *parse_currency(cur);
    tj[cur] = {{"charges", Money(t[0], c).amount_string()},
               {"credits", Money(t[1], c).amount_string()},
               {"total", Money(t[2], c).amount_string()}};
  }
  return {{"tenant_id", inv.tenant_id},
          {"tenant", inv.tenant_name},
          {"period", {{"from", format_rfc3339(inv.from)}, {"to", format_rfc3339(inv.to)}}},
          {"rated_until", format_rfc3339(inv.rated_until)},
          {"sections", std::move(sections)},
          {"totals", std::move(tj)},
          {"unpriced_allocations", inv.unpriced}};
}

namespace {

BillingParties focus_parties(const Invoice& inv, const InvoiceSection& s) {
  BillingParties p{inv.tenant_id, inv.tenant_name, s.input.contract.supplier, "gpurent", {}};
  for (const auto& [name, o] : s.input.offers) p.regions[name] = o.region;
  return p;
}

}  // namespace

std::string invoice_csv(const Invoice& inv, bool focus) {
  std::string out;
  for (size_t i = 0; i < inv.sections.size(); ++i) {
    const auto& s = inv.sections[i];
    std::string part = focus ? to_focus_csv(s.rated, focus_parties(inv, s)) : to_csv(s.rated);
    if (i > 0) part.erase(0, part.find('\n') + 1);  // one header
    out += part;
  }
  if (out.empty()) out = focus ? to_focus_csv(RatingResult{}, {}) : to_csv(RatingResult{});
  return out;
}

}  // namespace gpurent
