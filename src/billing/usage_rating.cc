// GPU time of allocations, priced by the offer version in force in each interval: billing window
// by the `billing_starts` of the version the run was placed under, cold start, idle
// stretches by the offer's idle rule, coverage by reserved commitments (a sweep per offer), spot
// market intervals, and the on-demand minimum increment.
#include <algorithm>
#include <set>

#include "billing/rating_impl.h"

namespace gpurent::billing_detail {
namespace {

enum class St { kCold, kBusy, kIdle, kStopped };

struct Span {
  const Allocation* a;
  const Offer* offer;
  TimeMs t0, t1;
  St st;
};

// The allocation's billable states over its whole life [billing start, end).
std::vector<Span> states_of(const Allocation& a, const Offer& o, TimeMs period_end) {
  std::optional<TimeMs> bs;
  switch (o.fees.billing_starts) {
    case BillingStart::kApiCall: bs = a.requested_at; break;
    case BillingStart::kRunning: bs = a.running_at; break;
    case BillingStart::kReady: bs = a.ready_at; break;
  }
  std::vector<Span> out;
  const TimeMs end = a.ended_at.value_or(std::max(period_end, a.requested_at));
  if (!bs || *bs >= end) return out;
  const TimeMs ready = std::clamp(a.ready_at.value_or(end), *bs, end);
  if (*bs < ready) out.push_back({&a, &o, *bs, ready, St::kCold});
  // Idle stretches after ready: a run of samples below the threshold, idle once it has lasted the window.
  std::vector<std::pair<TimeMs, TimeMs>> idle;
  if (o.fees.idle) {
    const auto& rule = *o.fees.idle;
    const TimeMs window = rule.window_minutes * kMsPerMinute;
    const auto& u = a.utilization;
    for (size_t i = 0; i < u.size();) {
      if (u[i].utilization_pct >= rule.utilization_below_pct) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < u.size() && u[j].utilization_pct < rule.utilization_below_pct) ++j;
      TimeMs s = u[i].at + window, e = j < u.size() ? u[j].at : end;
      s = std::max(s, ready);
      e = std::min(e, end);
      if (s < e) idle.push_back({s, e});
      i = j;
    }
  }
  const St idle_state = o.fees.idle && o.fees.idle->action == IdleAction::kStop ? St::kStopped : St::kIdle;
  TimeMs t = ready;
  for (auto [s, e] : idle) {
    if (t < s) out.push_back({&a, &o, t, s, St::kBusy});
    out.push_back({&a, &o, s, e, idle_state});
    t = e;
  }
  if (t < end) out.push_back({&a, &o, t, end, St::kBusy});
  return out;
}

const char* rule_of(St st, BillingMode mode, const Offer& o) {
  switch (st) {
    case St::kCold: return "cold_start";
    case St::kStopped: return "idle_stopped";
    case St::kIdle: return o.fees.idle->action == IdleAction::kDiscount ? "idle_discount" : "idle_charged";
    case St::kBusy: break;
  }
  return mode == BillingMode::kOnDemand ? "on_demand" : mode == BillingMode::kSpot ? "spot" : "reserved_overflow";
}

// "job J (allocation A) on offer O": the end of every usage line's description.
Message who_of(const Allocation& a, const std::string& offer) {
  return Message("invoice_line.who").arg("job", a.job).arg("allocation", a.id).arg("offer", offer);
}

// The line's description (a code of src/messages/<lang>.json; rating.cc renders the English).
Message describe(const std::string& rule, const Allocation& a, const Offer& o) {
  Message who = who_of(a, o.name);
  if (rule == "cold_start")
    return Message("invoice_line.cold_start")
        .arg("from", billing_start_message(o.fees.billing_starts))
        .arg("who", std::move(who));
  if (rule == "idle_discount")
    return Message("invoice_line.idle_discount")
        .arg("pct", std::to_string(100 - *o.fees.idle->discount_pct))
        .arg("who", std::move(who));
  if (rule == "min_increment")
    return Message("invoice_line.min_increment")
        .arg("seconds", std::to_string(o.min_increment_seconds))
        .arg("who", std::move(who));
  if (rule == "on_demand") return Message("invoice_line.on_demand").arg("who", std::move(who));
  if (rule == "spot") return Message("invoice_line.spot").arg("who", std::move(who));
  if (rule == "reserved_overflow") return Message("invoice_line.reserved_overflow").arg("who", std::move(who));
  if (rule == "reserved_covered") return Message("invoice_line.reserved_covered").arg("who", std::move(who));
  if (rule == "idle_charged") return Message("invoice_line.idle_charged").arg("who", std::move(who));
  if (rule == "idle_stopped") return Message("invoice_line.idle_stopped").arg("who", std::move(who));
  return Message("invoice_line.other").arg("rule", rule).arg("who", std::move(who));
}

}  // namespace

Result<int64_t> unit_price(const Ctx& c, const Offer& offer, BillingMode mode, TimeMs t) {
  const Offer& v = offer_in_force(c.in, offer.name, t);
  if (mode != BillingMode::kSpot) return v.prices.on_demand.micros();
  auto it = c.in.spot_prices.find(offer.name);
  if (it != c.in.spot_prices.end()) {
    const SpotPrice* in_force = nullptr;
    for (const auto& p : it->second)
      if (p.from <= t) in_force = &p;
    if (in_force) return in_force->price.micros();
  }
  if (v.prices.spot) return v.prices.spot->micros();
  // A sheet that stopped selling spot while a spot run went on: the run keeps the last sheet
  // spot price it was sold under (what it is billed as was decided when it was requested).
  const Money* last = nullptr;
  if (auto h = c.in.offer_history.find(offer.name); h != c.in.offer_history.end())
    for (const auto& ver : h->second)
      if (ver.until <= t && ver.offer.prices.spot) last = &*ver.offer.prices.spot;
  if (last) return last->micros();
  return Error::invalid("spot_prices." + offer.name, Message("rating.no_spot_price_at").arg("at", format_rfc3339(t)));
}

namespace {

// [t0, t1) split where the offer's version changes and, for spot, where its market price changes.
std::vector<std::pair<TimeMs, TimeMs>> price_cuts(const Ctx& c, const Offer& o, BillingMode mode, TimeMs t0, TimeMs t1) {
  std::vector<std::pair<TimeMs, TimeMs>> out;
  for (auto [v0, v1] : version_cuts(c.in, o.name, t0, t1)) {
    TimeMs t = v0;
    if (mode == BillingMode::kSpot) {
      if (auto it = c.in.spot_prices.find(o.name); it != c.in.spot_prices.end())
        for (const auto& p : it->second)
          if (p.from > t && p.from < v1) {
            out.push_back({t, p.from});
            t = p.from;
          }
    }
    out.push_back({t, v1});
  }
  return out;
}

int64_t idle_price(const Offer& o, int64_t price) {
  if (!o.fees.idle || o.fees.idle->action != IdleAction::kDiscount) return price;
  // At most the price itself: cannot overflow (a bug would throw).
  return div_half_even_checked(static_cast<__int128>(price) * (100 - *o.fees.idle->discount_pct), 100);
}

// Pieces of the part of a span not covered by a commitment.
Status add_excess(Ctx& c, const Span& s, TimeMs t0, TimeMs t1, int64_t milli) {
  if (milli <= 0 || t0 >= t1) return ok_status();
  const Allocation& a = *s.a;
  for (auto [p0, p1] : price_cuts(c, *s.offer, a.mode, t0, t1)) {
    auto price = unit_price(c, *s.offer, a.mode, p0);
    if (!price) return price.error();
    int64_t billed = *price;
    if (s.st == St::kIdle) billed = idle_price(*s.offer, billed);  // the run's idle rule, the interval's price
    if (s.st == St::kStopped) billed = 0;
    const int64_t list = s.st == St::kStopped ? 0 : offer_in_force(c.in, s.offer->name, p0).prices.on_demand.micros();
    c.pieces.push_back({&a, p0, p1, milli, rule_of(s.st, a.mode, *s.offer), billed, billed, list});
  }
  return ok_status();
}

struct Pool {
  TimeMs t0, t1;
  int64_t milli, price;
  std::string id;
};

// Sweep one offer's eligible spans against its commitments, greedily in (billing start, id) order.
// Cut where the offer's version changes too, so each covered piece knows its on-demand list price.
Status cover(Ctx& c, const std::string& offer, const std::vector<Span>& spans, const std::vector<Pool>& pools) {
  std::vector<TimeMs> cuts;
  for (const auto& s : spans) cuts.insert(cuts.end(), {s.t0, s.t1});
  for (const auto& p : pools) cuts.insert(cuts.end(), {p.t0, p.t1});
  std::sort(cuts.begin(), cuts.end());
  if (!cuts.empty())
    for (auto [v0, v1] : version_cuts(c.in, offer, cuts.front(), cuts.back())) cuts.push_back(v0);
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  // Walk the cuts with an active window: the spans and pools holding each interval, kept in their
  // vectors' order (spans by (allocation start, id, t0), pools by (start, id): the greedy order),
  // so the work is the pieces made plus a log per span, not every span at every cut.
  const auto at = [&](TimeMs t) {
    return static_cast<size_t>(std::lower_bound(cuts.begin(), cuts.end(), t) - cuts.begin());
  };
  std::vector<std::vector<size_t>> span_in(cuts.size()), span_out(cuts.size()), pool_in(cuts.size()),
      pool_out(cuts.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    span_in[at(spans[i].t0)].push_back(i);
    span_out[at(spans[i].t1)].push_back(i);
  }
  for (size_t i = 0; i < pools.size(); ++i) {
    pool_in[at(pools[i].t0)].push_back(i);
    pool_out[at(pools[i].t1)].push_back(i);
  }
  std::set<size_t> active_spans, active_pools;
  // A span's pieces of the interval before: a piece alike in all but time extends one of them
  // rather than adding another (lines sum quantities exactly, so the invoice is the same), which
  // keeps the pieces to the changes in coverage rather than one per cut per span.
  std::vector<std::vector<size_t>> before(spans.size());
  const auto alike = [](const Piece& x, const Piece& y) {
    return x.alloc == y.alloc && x.milli == y.milli && x.rule == y.rule && x.billed_price == y.billed_price &&
           x.value_price == y.value_price && x.list_price == y.list_price && x.commitment == y.commitment;
  };
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    for (size_t i : span_out[k]) active_spans.erase(i);
    for (size_t i : pool_out[k]) active_pools.erase(i);
    active_spans.insert(span_in[k].begin(), span_in[k].end());
    active_pools.insert(pool_in[k].begin(), pool_in[k].end());
    if (active_spans.empty()) continue;
    const TimeMs t0 = cuts[k], t1 = cuts[k + 1];
    std::vector<std::pair<int64_t, const Pool*>> avail;
    for (size_t i : active_pools) avail.push_back({pools[i].milli, &pools[i]});
    size_t pi = 0;
    const int64_t list = offer_in_force(c.in, offer, t0).prices.on_demand.micros();
    for (size_t i : active_spans) {
      const Span& s = spans[i];
      const size_t first = c.pieces.size();
      int64_t left = s.a->gpu_milli;
      while (left > 0 && pi < avail.size()) {
        int64_t take = std::min(left, avail[pi].first);
        c.pieces.push_back({s.a, t0, t1, take, "reserved_covered", 0, avail[pi].second->price, list, &avail[pi].second->id});
        left -= take;
        avail[pi].first -= take;
        if (avail[pi].first == 0) ++pi;
      }
      if (auto st = add_excess(c, s, t0, t1, left); !st) return st;
      std::vector<size_t> now;
      size_t kept = first;
      for (size_t j = first; j < c.pieces.size(); ++j) {
        Piece& p = c.pieces[j];
        auto prev = std::find_if(before[i].begin(), before[i].end(),
                                 [&](size_t b) { return c.pieces[b].t1 == p.t0 && alike(c.pieces[b], p); });
        if (prev != before[i].end()) {
          c.pieces[*prev].t1 = p.t1;
          now.push_back(*prev);
        } else {
          if (kept != j) c.pieces[kept] = std::move(p);
          now.push_back(kept++);
        }
      }
      c.pieces.resize(kept);
      before[i] = std::move(now);
    }
  }
  return ok_status();
}

// A CPU-only run: its cores and memory from its billing start to its end (cold start included, as
// GPU time would be), each interval at the CPU prices of the offer version in force; a version
// without them bills nothing. No idle rule (no GPU to be idle), commitment or minimum increment.
void rate_cpu_only(Ctx& c, const Allocation& a, const std::vector<Span>& spans) {
  for (const auto& s : spans) {
    const TimeMs t0 = std::max(s.t0, c.in.from), t1 = std::min(s.t1, c.in.to);
    if (t0 >= t1 || s.st == St::kStopped) continue;
    for (auto [v0, v1] : version_cuts(c.in, a.offer, t0, t1)) {
      const Offer& v = offer_in_force(c.in, a.offer, v0);
      if (v.prices.cpu_core_hour)
        c.book.add(
            {0, a.project, a.job, a.id, v.name, mode_name(a.mode), "cpu_time", v.prices.cpu_core_hour->micros(), ""},
            static_cast<__int128>(a.cpu_cores) * 1000 * (v1 - v0), v0, v1, kMilliMsPerGpuHour, 6, "core-second",
            "core-hour",
            Message("invoice_line.cpu_time").arg("cores", std::to_string(a.cpu_cores)).arg("who", who_of(a, v.name)));
      if (v.prices.memory_gib_hour && a.memory_gib > 0)
        c.book.add(
            {0, a.project, a.job, a.id, v.name, mode_name(a.mode), "memory_time", v.prices.memory_gib_hour->micros(),
             ""},
            static_cast<__int128>(a.memory_gib) * 1000 * (v1 - v0), v0, v1, kMilliMsPerGpuHour, 6, "GiB-second",
            "GiB-hour",
            Message("invoice_line.memory_time").arg("gib", std::to_string(a.memory_gib)).arg("who", who_of(a, v.name)));
    }
  }
}

}  // namespace

Status rate_allocations(Ctx& c) {
  const RatingInput& in = c.in;
  std::map<std::string, std::vector<Span>> eligible;  // by offer: spans a commitment may cover
  std::map<std::string, std::vector<Pool>> pools;
  for (const auto& cm : in.commitments) {
    auto price = commitment_price(offer_in_force(in, cm.offer, cm.start), cm);
    if (!price) return price.error();
    TimeMs t0 = std::max(cm.start, in.from), t1 = std::min(commitment_end(c, cm), in.to);
    if (t0 >= t1) continue;
    // Capacity its supplier did not deliver, or its holder resold, covers nothing: the pool shrinks
    // while a default or a resale lasts.
    std::vector<TimeMs> cuts{t0, t1};
    for (const auto& d : cm.defaults)
      for (TimeMs t : {d.from, d.to})
        if (t0 < t && t < t1) cuts.push_back(t);
    for (const auto& x : cm.resales)
      for (TimeMs t : {x.from, x.to})
        if (t0 < t && t < t1) cuts.push_back(t);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      int64_t gpus = cm.gpus;
      for (const auto& d : cm.defaults)
        if (d.from <= cuts[k] && cuts[k] < d.to) gpus -= d.gpus;
      for (const auto& x : cm.resales)
        if (x.from <= cuts[k] && cuts[k] < x.to) gpus -= x.gpus;
      if (gpus > 0) pools[cm.offer].push_back({cuts[k], cuts[k + 1], gpus * 1000, *price, cm.id});
    }
  }
  for (const auto& a : in.allocations) {
    const Offer& o = offer_in_force(in, a.offer, a.requested_at);  // the rules the run was placed under
    if (a.by_use) continue;  // its tokens or QPS are rated by rate_served
    auto spans = states_of(a, o, in.to);
    if (a.gpu_milli == 0) {  // CPU-only: cores and memory over the billed window, no GPU rules
      rate_cpu_only(c, a, spans);
      continue;
    }
    // Minimum increment: the whole life's billed time rounded up, charged when the allocation ends.
    if (a.mode != BillingMode::kReserved && a.ended_at && *a.ended_at >= in.from && *a.ended_at < in.to) {
      TimeMs billed = 0;
      for (const auto& s : spans)
        if (s.st != St::kStopped) billed += s.t1 - s.t0;
      const int64_t inc = o.min_increment_seconds * 1000;
      const TimeMs extra = (billed + inc - 1) / inc * inc - billed;
      if (billed > 0 && extra > 0) {
        auto price = unit_price(c, o, a.mode, *a.ended_at);
        if (!price) return price.error();
        c.book.add({0, a.project, a.job, a.id, o.name, mode_name(a.mode), "min_increment", *price, "", "",
                    offer_in_force(in, a.offer, *a.ended_at).prices.on_demand.micros()},
                   static_cast<__int128>(a.gpu_milli) * extra, *a.ended_at, *a.ended_at + extra, kMilliMsPerGpuHour, 6,
                   "GPU-second", "GPU-hour", describe("min_increment", a, o));
      }
    }
    for (auto& s : spans) {
      s.t0 = std::max(s.t0, in.from);
      s.t1 = std::min(s.t1, in.to);
      if (s.t0 >= s.t1) continue;
      if (pools.count(a.offer) && a.mode != BillingMode::kSpot && s.st != St::kStopped)
        eligible[a.offer].push_back(s);
      else if (auto st = add_excess(c, s, s.t0, s.t1, a.gpu_milli); !st)
        return st;
    }
  }
  for (auto& [offer, spans] : eligible) {
    std::stable_sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) {
      return std::tie(x.a->requested_at, x.a->id) < std::tie(y.a->requested_at, y.a->id);
    });
    auto& ps = pools[offer];
    std::sort(ps.begin(), ps.end(), [](const Pool& x, const Pool& y) { return std::tie(x.t0, x.id) < std::tie(y.t0, y.id); });
    if (auto st = cover(c, offer, spans, ps); !st) return st;
  }
  for (const auto& p : c.pieces) {
    const Offer& o = in.offers.at(p.alloc->offer);
    const std::string mode = p.rule == "reserved_covered" ? "reserved" : mode_name(p.alloc->mode);
    // One line per month — or, with lines_per_day, per UTC day (each piece cut at midnight).
    for (TimeMs d = in.lines_per_day ? day_start(p.t0) : p.t0; d < p.t1; d = in.lines_per_day ? d + kMsPerDay : p.t1) {
      const TimeMs t0 = std::max(p.t0, d), t1 = in.lines_per_day ? std::min(p.t1, d + kMsPerDay) : p.t1;
      if (t0 >= t1) continue;
      const std::string day = in.lines_per_day ? format_rfc3339(d).substr(0, 10) : "";
      const LineBook::Key key{0,  p.alloc->project, p.alloc->job, p.alloc->id, o.name, mode, p.rule, p.billed_price, day,
                              p.commitment ? *p.commitment : std::string(), p.list_price};
      const __int128 qty = static_cast<__int128>(p.milli) * (t1 - t0);
      c.book.add(key, qty, t0, t1, kMilliMsPerGpuHour, 6, "GPU-second", "GPU-hour",
                 [&] { return describe(p.rule, *p.alloc, o); });
      if (p.rule == "reserved_covered") c.book.add_value(key, qty * p.value_price);
    }
  }
  return ok_status();
}

}  // namespace gpurent::billing_detail
