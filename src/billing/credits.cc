// SLA credits from measurements (card FP16 TFLOPS below the floor, node NCCL bandwidth below the
// floor, outages) and the exit refund of prepaid unused fees. Each credit is the fee of the affected
// GPU time (what the tenant paid for it in effect: covered time at its commitment's price) times
// the clause's factor, computed exactly over the constant-rate pieces of the allocations.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "billing/rating_impl.h"

namespace gpurent::billing_detail {
namespace {

struct Acc {
  __int128 num = 0;       // credit = num / den
  __int128 base_num = 0;  // fee affected = base_num / base_den
  int64_t den = 1, base_den = 1;
  TimeMs from = INT64_MAX, to = INT64_MIN;
  std::string project, job, offer;
  Message description;
  std::set<std::string> measurements;  // ids the credit rests on
};

int64_t cards_of(const Allocation& a) {
  int64_t n = 0;
  for (const auto& p : a.placement) n += static_cast<int64_t>(p.gpus.size());
  return std::max<int64_t>(n, 1);
}

int64_t gpus_on(const Allocation& a, const std::string& node) {
  for (const auto& p : a.placement)
    if (p.node == node) return static_cast<int64_t>(p.gpus.size());
  return 0;
}

TimeMs overlap(TimeMs a0, TimeMs a1, TimeMs b0, TimeMs b1) { return std::max<TimeMs>(0, std::min(a1, b1) - std::max(a0, b0)); }

void emit(Ctx& c, const std::string& rule, const std::string& key, Acc& a) {
  if (a.num == 0) return;
  // A credit is a multiple of fees that are int64 amounts (an outage compensated at 1000 %, a
  // market default at 300 %): it may not fit in one, and that is an error, never a wrapped amount.
  bool overflow = false;
  const int64_t credit = div_round_half_even(a.num, a.den, &overflow);
  const int64_t base = div_round_half_even(a.base_num, a.base_den, &overflow);
  if (overflow) {
    if (!c.credit_overflow)
      c.credit_overflow = Error::make(Code::kInvalid, Message("rating.amount_overflow").arg("rule", rule).arg("allocation", key));
    return;
  }
  ChargeLine l;
  l.kind = LineKind::kCredit;
  l.rule = rule;
  l.project = a.project;
  l.job = a.job;
  l.allocation = key;
  l.offer = a.offer;
  l.quantity = Money(base, c.cur).amount_string();
  l.unit = currency_code(c.cur);
  l.unit_price = base == 0 ? "0" : "-" + format_scaled(div_half_even_checked(static_cast<__int128>(credit) * 1'000'000, base), 6);
  l.price_unit = "of fee";
  l.from = a.from;
  l.to = a.to;
  l.amount_exact = Money(-credit, c.cur);
  describe_line(l, a.description);
  l.measurements.assign(a.measurements.begin(), a.measurements.end());
  c.book.add_direct(std::move(l));
}

void touch(Acc& a, const Allocation& al, TimeMs t0, TimeMs t1, Message desc) {
  a.from = std::min(a.from, t0);
  a.to = std::max(a.to, t1);
  a.project = al.project;
  a.job = al.job;
  a.offer = al.offer;
  if (a.description.empty()) a.description = std::move(desc);
}

std::string tflops_text(int64_t x10) { return format_scaled(x10, 1); }

// Proportional refund: the fee of each card's time while measured below the floor × shortfall / floor.
void tflops_proportional(Ctx& c, int64_t floor) {
  std::map<std::pair<std::string, int64_t>, std::vector<const TflopsMeasurement*>> by_card;
  for (const auto& m : c.in.tflops) by_card[{m.node, m.gpu}].push_back(&m);
  for (auto& [card, ms] : by_card)
    std::stable_sort(ms.begin(), ms.end(), [](auto* x, auto* y) { return x->at < y->at; });
  std::map<std::string, Acc> acc;
  for (const auto& p : c.pieces) {
    const Allocation& a = *p.alloc;
    const int64_t n = cards_of(a);
    for (const auto& part : a.placement)
      for (int64_t g : part.gpus) {
        auto it = by_card.find({part.node, g});
        if (it == by_card.end()) continue;
        const auto& ms = it->second;
        for (size_t i = 0; i < ms.size(); ++i) {
          if (ms[i]->fp16_tflops_x10 >= floor) continue;
          const TimeMs end = i + 1 < ms.size() ? ms[i + 1]->at : INT64_MAX;
          const TimeMs ov = overlap(p.t0, p.t1, ms[i]->at, end);
          if (ov == 0) continue;
          Acc& x = acc[a.id];
          const __int128 fee = static_cast<__int128>(p.value_price) * p.milli * ov;
          x.base_num += fee;
          x.num += fee * (floor - ms[i]->fp16_tflops_x10);
          x.den = kMilliMsPerGpuHour * n * floor;
          x.base_den = kMilliMsPerGpuHour * n;
          if (!ms[i]->id.empty()) x.measurements.insert(ms[i]->id);
          touch(x, a, std::max(p.t0, ms[i]->at), std::min(p.t1, end),
                Message("invoice_line.sla_tflops")
                    .arg("floor", tflops_text(floor))
                    .arg("card", part.node + "/" + std::to_string(g))
                    .arg("measured", tflops_text(ms[i]->fp16_tflops_x10))
                    .arg("job", a.job));
        }
      }
  }
  for (auto& [id, x] : acc) emit(c, "sla_tflops", id, x);
}

// The fee (micro-units) of the GPU time on `cards` inside [m0, m1): each allocation's share of its
// cards (what the tenant paid in effect, covered time at its commitment's price), rounded half to
// even to the micro-unit per allocation.
int64_t fee_of_cards(const Ctx& c, const std::set<std::pair<std::string, int64_t>>& cards, TimeMs m0, TimeMs m1) {
  std::map<std::string, std::pair<__int128, int64_t>> by_alloc;  // id -> (num, den)
  for (const auto& p : c.pieces) {
    const Allocation& a = *p.alloc;
    const TimeMs ov = overlap(p.t0, p.t1, m0, m1);
    if (ov == 0) continue;
    int64_t on_short = 0;
    for (const auto& part : a.placement)
      for (int64_t g : part.gpus) on_short += cards.count({part.node, g});
    if (on_short == 0) continue;
    auto& [num, den] = by_alloc[a.id];
    num += static_cast<__int128>(p.value_price) * p.milli * ov * on_short;
    den = kMilliMsPerGpuHour * cards_of(a);
  }
  int64_t total = 0;
  for (const auto& [id, nd] : by_alloc) total += div_half_even_checked(nd.first, nd.second);
  return total;
}

// Penalty schedule: per calendar month ending inside the period, the mean of the month's card
// measurements against the floor; fee_pct_per_step % per full step below it of the base: the
// month's fee of the cards measured short (default), or the whole month's fee.
Status tflops_schedule(Ctx& c, int64_t floor) {
  const Penalty& pen = c.in.contract.clauses.penalty;
  for (TimeMs m0 = month_start(c.in.from); m0 < c.in.to; m0 = add_months(m0, 1)) {
    const TimeMs m1 = add_months(m0, 1);
    if (m1 <= c.in.from || m1 > c.in.to) continue;
    __int128 sum = 0, count = 0;
    std::set<std::pair<std::string, int64_t>> short_cards;
    std::set<std::string> used;
    // The contract's cards that month: those its allocations held (the supplier's other cards,
    // rented by others, are not this contract's promise).
    std::set<std::pair<std::string, int64_t>> held;
    for (const auto& p : c.pieces)
      if (overlap(p.t0, p.t1, m0, m1) > 0)
        for (const auto& part : p.alloc->placement)
          for (int64_t g : part.gpus) held.insert({part.node, g});
    for (const auto& m : c.in.tflops)
      if (m.at >= m0 && m.at < m1 && held.count({m.node, m.gpu})) {
        sum += m.fp16_tflops_x10, ++count;
        if (!m.id.empty()) used.insert(m.id);
        if (m.fp16_tflops_x10 < floor) short_cards.insert({m.node, m.gpu});
      }
    if (count == 0 || sum >= floor * count) continue;
    // shortfall % = 100 × (floor·count − sum) / (floor·count); steps = floor(shortfall % / step %)
    const int64_t steps = static_cast<int64_t>(((floor * count - sum) * 100) / (floor * count * pen.step_pct_below_promise));
    if (steps == 0) continue;
    int64_t base = 0;
    if (pen.base == PenaltyBase::kMonthFee) {
      auto fee = month_charges(c.in, m0, m1);
      if (!fee) return fee.error();
      base = fee->micros();
    } else {
      base = fee_of_cards(c, short_cards, m0, m1);
    }
    const int64_t pct = std::min<int64_t>(100, steps * pen.fee_pct_per_step);
    Acc x;
    x.num = static_cast<__int128>(base) * pct;
    x.den = 100;
    x.base_num = base;
    x.from = m0;
    x.to = m1;
    x.measurements = std::move(used);
    x.description =
        Message("invoice_line.sla_tflops_penalty")
            .arg("count", std::to_string(static_cast<int64_t>(count)))
            .arg("month", format_rfc3339(m0).substr(0, 7))
            .arg("mean", format_scaled(static_cast<int64_t>((sum * 10) / count), 2))
            .arg("floor", tflops_text(floor))
            .arg("steps", std::to_string(steps))
            .arg("step_pct", std::to_string(pen.step_pct_below_promise))
            .arg("pct", std::to_string(pct))
            .arg("base",
                 pen.base == PenaltyBase::kMonthFee
                     ? Message("invoice_line.penalty_base.month_fee")
                     : Message("invoice_line.penalty_base.short_cards").arg("n", std::to_string(short_cards.size())));
    emit(c, "sla_tflops_penalty", format_rfc3339(m0).substr(0, 7), x);
  }
  return ok_status();
}

std::vector<std::pair<TimeMs, TimeMs>> not_yet_covered(std::map<TimeMs, TimeMs>& covered, TimeMs t0, TimeMs t1);

void nccl(Ctx& c, int64_t floor) {
  const int64_t pct = c.in.contract.nccl_compensation_pct;
  std::map<std::string, Acc> acc;
  // Hours already credited per piece and node: measurements that overlap (a DCGM interval and an
  // acceptance run, say) credit an hour once. Per piece, not per allocation: a run a commitment
  // only partly covers is two pieces of the same hours (its covered GPUs and the rest), each
  // credited for its own GPUs.
  std::map<std::pair<size_t, std::string>, std::map<TimeMs, TimeMs>> covered;
  for (const auto& m : c.in.nccl) {
    if (m.busbw_gbps >= floor) continue;
    for (size_t pi = 0; pi < c.pieces.size(); ++pi) {
      const auto& p = c.pieces[pi];
      const Allocation& a = *p.alloc;
      const int64_t on = gpus_on(a, m.node);
      if (on == 0 || overlap(p.t0, p.t1, m.from, m.to) == 0) continue;
      TimeMs ov = 0;
      for (const auto& [q0, q1] : not_yet_covered(covered[{pi, m.node}], std::max(p.t0, m.from), std::min(p.t1, m.to)))
        ov += q1 - q0;
      if (ov == 0) continue;
      Acc& x = acc[a.id];
      const __int128 fee = static_cast<__int128>(p.value_price) * p.milli * ov * on;
      x.base_num += fee;
      x.num += fee * pct;
      x.den = kMilliMsPerGpuHour * cards_of(a) * 100;
      x.base_den = kMilliMsPerGpuHour * cards_of(a);
      if (!m.id.empty()) x.measurements.insert(m.id);
      touch(x, a, std::max(p.t0, m.from), std::min(p.t1, m.to),
            Message("invoice_line.sla_nccl")
                .arg("floor", std::to_string(floor))
                .arg("node", m.node)
                .arg("measured", std::to_string(m.busbw_gbps))
                .arg("pct", std::to_string(pct))
                .arg("job", a.job));
    }
  }
  for (auto& [id, x] : acc) emit(c, "sla_nccl", id, x);
}

// The price per GPU-hour of an allocation's billing mode when an incident began, independent of the
// invoice period: the spot price in force, the price of a commitment on its offer active then
// (reserved mode: the price it was made at, as it is billed), else the on-demand price.
int64_t price_at(const Ctx& c, const Allocation& a, TimeMs t) {
  const Offer& o = c.in.offers.at(a.offer);
  if (a.mode == BillingMode::kReserved)
    for (const auto& cm : c.in.commitments)
      if (cm.offer == a.offer && cm.start <= t && t < commitment_end(c, cm))
        if (auto p = commitment_price(offer_in_force(c.in, cm.offer, cm.start), cm)) return *p;
  auto list = unit_price(c, o, a.mode, t);
  return list ? *list : o.prices.on_demand.micros();
}

// The parts of [t0, t1) that `covered` (disjoint intervals) leaves out; `covered` takes them in.
std::vector<std::pair<TimeMs, TimeMs>> not_yet_covered(std::map<TimeMs, TimeMs>& covered, TimeMs t0, TimeMs t1) {
  std::vector<std::pair<TimeMs, TimeMs>> out;
  TimeMs at = t0;
  auto it = covered.upper_bound(t0);
  if (it != covered.begin() && std::prev(it)->second > t0) --it;
  for (; it != covered.end() && it->first < t1 && at < t1; ++it) {
    if (it->first > at) out.emplace_back(at, it->first);
    at = std::max(at, it->second);
  }
  if (at < t1) out.emplace_back(at, t1);
  for (const auto& [p0, p1] : out) covered[p0] = p1;
  // Merge what now touches, so the map stays a set of disjoint intervals.
  for (auto m = covered.begin(); m != covered.end();) {
    auto n = std::next(m);
    if (n != covered.end() && n->first <= m->second) {
      m->second = std::max(m->second, n->second);
      covered.erase(n);
    } else {
      m = n;
    }
  }
  return out;
}

// Each incident's interrupted time, credited once: an allocation's GPUs on a node are credited for
// the union of the incidents that interrupted them (a node recorded down twice over the same hours,
// the supplier's record and a requeue the scheduler derived), in the order the incidents began —
// an incident covered by an earlier one credits only what it adds.
void outages(Ctx& c) {
  const int64_t pct = c.in.contract.clauses.outage_compensation_pct;
  if (pct == 0) return;
  std::vector<const Incident*> order;
  for (const auto& inc : c.in.incidents) order.push_back(&inc);
  std::stable_sort(order.begin(), order.end(),
                   [](const Incident* x, const Incident* y) { return std::tie(x->from, x->id) < std::tie(y->from, y->id); });
  std::map<std::pair<std::string, std::string>, std::map<TimeMs, TimeMs>> covered;  // (allocation, node) -> credited
  for (const Incident* incp : order) {
    const Incident& inc = *incp;
    const TimeMs t0 = std::max(inc.from, c.in.from), t1 = std::min(inc.to, c.in.to);
    if (t0 >= t1) continue;
    for (const auto& a : c.in.allocations) {
      const bool live = a.gpu_milli > 0 && !a.by_use && a.requested_at <= inc.from && (!a.ended_at || *a.ended_at >= inc.from);
      if (!live || (!inc.allocation.empty() && inc.allocation != a.id)) continue;
      __int128 gpu_ms = 0;  // the GPUs' interrupted time not credited yet: Σ GPUs on a node × its new time
      TimeMs first = INT64_MAX, last = INT64_MIN, longest = 0;
      std::vector<std::pair<std::string, int64_t>> parts;  // (node, GPUs of the allocation there) interrupted
      for (const auto& part : a.placement)
        if (inc.allocation.empty() ? part.node == inc.node : !part.gpus.empty())
          parts.emplace_back(part.node, static_cast<int64_t>(part.gpus.size()));
      if (!inc.allocation.empty() && parts.empty()) parts.emplace_back("", 1);  // as cards_of counts it
      for (const auto& [node, gpus] : parts) {
        TimeMs node_ms = 0;
        for (const auto& [p0, p1] : not_yet_covered(covered[{a.id, node}], t0, t1)) {
          gpu_ms += static_cast<__int128>(p1 - p0) * gpus;
          node_ms += p1 - p0;
          first = std::min(first, p0), last = std::max(last, p1);
        }
        longest = std::max(longest, node_ms);
      }
      if (gpu_ms == 0) continue;
      Acc x;
      const __int128 fee = static_cast<__int128>(price_at(c, a, inc.from)) * a.gpu_milli * gpu_ms;
      x.base_num = fee;
      x.num = fee * pct;
      x.den = kMilliMsPerGpuHour * cards_of(a) * 100;
      x.base_den = kMilliMsPerGpuHour * cards_of(a);
      x.measurements.insert(inc.id);
      touch(x, a, first, last,
            Message("invoice_line.sla_outage")
                .arg("id", inc.id)
                .arg("node", inc.node.empty() ? verbatim("") : Message("invoice_line.on_node").arg("node", inc.node))
                .arg("job", a.job)
                .arg("seconds", format_scaled(longest, 3))
                .arg("partly", longest < t1 - t0 ? Message("invoice_line.not_credited_earlier") : verbatim(""))
                .arg("reason",
                     inc.reason.empty() ? verbatim("") : Message("invoice_line.reason").arg("reason", inc.reason))
                .arg("pct", std::to_string(pct)));
      emit(c, "sla_outage", inc.id + "/" + a.id, x);
    }
  }
}

Status exit_refund(Ctx& c) {
  if (!c.exit || !c.in.contract.clauses.exit_refund_prepaid) return ok_status();
  const TimeMs e = *c.exit;
  if (e < c.in.from || e >= c.in.to) return ok_status();
  for (const auto& cm : c.in.commitments) {
    // A term starting at the exit (or later) was never charged (fee_rating.cc): nothing to refund.
    if (!cm.prepaid || e <= cm.start || e >= cm.end) continue;
    auto price = commitment_price(offer_in_force(c.in, cm.offer, cm.start), cm);
    if (!price) return price.error();
    Acc x;
    x.num = static_cast<__int128>(*price) * cm.gpus * 1000 * (cm.end - e);
    x.den = kMilliMsPerGpuHour;
    x.base_num = static_cast<__int128>(*price) * cm.gpus * 1000 * (cm.end - cm.start);
    x.base_den = kMilliMsPerGpuHour;
    x.from = e;
    x.to = cm.end;
    x.offer = cm.offer;
    x.description = Message("invoice_line.exit_refund")
                        .arg("at", format_rfc3339(e))
                        .arg("id", cm.id)
                        .arg("seconds", format_scaled(cm.end - e, 3));
    emit(c, "exit_refund", cm.id, x);
  }
  return ok_status();
}

// A market commitment's capacity its supplier did not deliver: the fee of those GPU-hours at the
// trade price is given back, with the contract's outage compensation on top (docs/market.md#defaults),
// figured for a resold node's default as the supplier owed it to the node's first buyer: at the
// price it sold the node at and that buyer's compensation percentage (#resold-nodes).
void market_defaults(Ctx& c) {
  for (const auto& cm : c.in.commitments) {
    if (!cm.price) continue;
    for (size_t i = 0; i < cm.defaults.size(); ++i) {
      const CommitmentDefault& d = cm.defaults[i];
      const int64_t pct = d.compensation_pct.value_or(c.in.contract.clauses.outage_compensation_pct);
      const TimeMs t0 = std::max({d.from, cm.start, c.in.from}), t1 = std::min({d.to, commitment_end(c, cm), c.in.to});
      if (t0 >= t1) continue;
      Acc x;
      const __int128 fee = static_cast<__int128>(*cm.price) * d.gpus * 1000 * (t1 - t0);
      const int64_t comp_price =
          d.compensation_price_per_gpu_hour ? d.compensation_price_per_gpu_hour->micros() : *cm.price;
      x.base_num = fee;
      x.base_den = kMilliMsPerGpuHour;
      x.num = fee * 100 + static_cast<__int128>(comp_price) * d.gpus * 1000 * (t1 - t0) * pct;
      x.den = kMilliMsPerGpuHour * 100;
      x.from = t0;
      x.to = t1;
      x.offer = cm.offer;
      x.description =
          Message(d.compensation_price_per_gpu_hour ? "invoice_line.sla_market_default_resold"
                                                    : "invoice_line.sla_market_default")
              .arg("gpus", std::to_string(d.gpus))
              .arg("id", cm.id)
              .arg("trade", cm.trade.empty() ? verbatim("") : Message("invoice_line.in_trade").arg("trade", cm.trade))
              .arg("seconds", format_scaled(t1 - t0, 3))
              .arg("reason", d.reason.empty() ? verbatim("") : Message("invoice_line.reason").arg("reason", d.reason))
              .arg("pct", std::to_string(pct));
      if (d.compensation_price_per_gpu_hour)
        x.description.arg("price", d.compensation_price_per_gpu_hour->amount_string());
      emit(c, "sla_market_default", cm.id + "/" + std::to_string(i), x);
    }
  }
}

// A market commitment's GPUs its holder resold: the proceeds at the resale price, credited (not an
// SLA credit: never capped), less those of the GPU-hours its buyer did not get (a resold node out
// of service: `undelivered`), whose fee at the holder's own price is refunded instead
// (market_resale_undelivered, not capped either): the holder is made whole on what it paid, the
// buyer's refund comes out of the proceeds, and the supplier compensates as if it had not been
// resold (docs/market.md#resold-nodes).
void market_resales(Ctx& c) {
  for (const auto& cm : c.in.commitments)
    for (size_t i = 0; i < cm.resales.size(); ++i) {
      const CommitmentResale& x = cm.resales[i];
      // Up to an effective exit, as the commitment itself is billed.
      const TimeMs t0 = std::max({x.from, cm.start, c.in.from}), t1 = std::min({x.to, commitment_end(c, cm), c.in.to});
      if (t0 >= t1) continue;
      __int128 gpu_ms = static_cast<__int128>(x.gpus) * (t1 - t0), missed = 0;  // GPU-milliseconds
      for (size_t j = 0; j < x.undelivered.size(); ++j) {
        const ResaleUndelivered& u = x.undelivered[j];
        const TimeMs u0 = std::max(u.from, t0), u1 = std::min(u.to, t1);
        if (u0 >= u1 || !cm.price) continue;
        missed += static_cast<__int128>(u.gpus) * (u1 - u0);
        Acc r;
        r.base_num = r.num = static_cast<__int128>(*cm.price) * u.gpus * 1000 * (u1 - u0);
        r.base_den = r.den = kMilliMsPerGpuHour;
        r.from = u0;
        r.to = u1;
        r.offer = cm.offer;
        r.description = Message("invoice_line.market_resale_undelivered")
                            .arg("gpus", std::to_string(u.gpus))
                            .arg("id", cm.id)
                            .arg("trade", x.trade)
                            .arg("node", u.node)
                            .arg("seconds", format_scaled(u1 - u0, 3));
        emit(c, "market_resale_undelivered",
             cm.id + "/resale/" + std::to_string(i) + "/undelivered/" + std::to_string(j), r);
      }
      const __int128 sold_ms = gpu_ms;
      gpu_ms -= std::min(missed, gpu_ms);
      Acc a;
      a.base_num = a.num = static_cast<__int128>(x.price_per_gpu_hour.micros()) * gpu_ms * 1000;
      a.base_den = a.den = kMilliMsPerGpuHour;
      a.from = t0;
      a.to = t1;
      a.offer = cm.offer;
      a.description = Message(gpu_ms < sold_ms ? "invoice_line.market_resale_less" : "invoice_line.market_resale")
                          .arg("gpus", std::to_string(x.gpus))
                          .arg("id", cm.id)
                          .arg("trade", x.trade)
                          .arg("price", x.price_per_gpu_hour.amount_string())
                          .arg("seconds", format_scaled(t1 - t0, 3));
      if (gpu_ms < sold_ms) a.description.arg("missed", format_scaled(static_cast<int64_t>(sold_ms - gpu_ms), 3));
      emit(c, "market_resale", cm.id + "/resale/" + std::to_string(i), a);
    }
}

}  // namespace

Status rate_credits(Ctx& c) {
  const ContractTerms& k = c.in.contract;
  if (k.clauses.min_fp16_tflops_x10) {
    if (k.performance_remedy == PerformanceRemedy::kProportional)
      tflops_proportional(c, *k.clauses.min_fp16_tflops_x10);
    else if (auto st = tflops_schedule(c, *k.clauses.min_fp16_tflops_x10); !st)
      return st;
  }
  if (k.clauses.min_nccl_busbw_gbps) nccl(c, *k.clauses.min_nccl_busbw_gbps);
  outages(c);
  market_defaults(c);
  market_resales(c);
  if (auto s = exit_refund(c); !s) return s;
  if (c.credit_overflow) return *c.credit_overflow;
  return ok_status();
}

}  // namespace gpurent::billing_detail
