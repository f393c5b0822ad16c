// Quote comparison, rating side: the synthetic month of the workload on each offer, rated with
// the billing engine on-demand and per commitment term, grouped into components; then the ranking.
#include "advisor/quotes.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "advisor/quotes_internal.h"
#include "catalog/gpu_model.h"
#include "billing/rating.h"

namespace gpurent {

using namespace quotes_internal;

namespace {

int64_t share_of(int64_t total, int64_t n, int64_t i) { return total / n + (i < total % n ? 1 : 0); }

// The workload's month on one offer, every launch on-demand.
RatingInput month_input(const Month& m, const QuoteOffer& qo) {
  const auto& w = m.in.workload;
  const QuoteColdStart cs = cold_of(m.in, qo);
  RatingInput r;
  r.from = m.from;
  r.to = m.to;
  r.contract.name = "quote";
  r.contract.tenant = "tenant";
  r.contract.supplier = qo.offer.supplier;
  r.contract.currency = qo.offer.currency;
  r.contract.clauses = qo.offer.contract_template;
  r.offers.emplace(qo.offer.name, qo.offer);
  const int64_t n = w.launches_per_month;
  for (int64_t i = 0; i < n; ++i) {
    Allocation a;
    a.id = "launch-" + std::to_string(i + 1);
    a.project = "workload";
    a.job = a.id;
    a.offer = qo.offer.name;
    a.gpu_milli = w.gpus * 1000;
    a.requested_at = m.from + i * m.spacing;
    a.running_at = a.requested_at + cs.to_running_seconds * 1000;
    a.ready_at = *a.running_at + cs.to_ready_seconds * 1000;
    TimeMs t = *a.ready_at;
    for (const auto& s : w.profile) {
      a.utilization.push_back({t, s.utilization_pct});
      t += s.duration_ms;
    }
    a.ended_at = t;
    const int64_t io = share_of(w.storage_io_gb * kBytesPerGb, n, i), eg = share_of(w.egress_gb * kBytesPerGb, n, i);
    if (io > 0 || eg > 0) r.volume.push_back({*a.ready_at, a.id, io, eg});
    r.allocations.push_back(std::move(a));
  }
  return r;
}

// "123.456" at `scale` decimals -> integer (the engine writes quantities with format_scaled).
__int128 parse_scaled(const std::string& s, int scale) {
  __int128 v = 0;
  int frac = -1;
  bool neg = false;
  for (char ch : s) {
    if (ch == '-')
      neg = true;
    else if (ch == '.')
      frac = 0;
    else {
      v = v * 10 + (ch - '0');
      if (frac >= 0) ++frac;
    }
  }
  for (int k = std::max(frac, 0); k < scale; ++k) v *= 10;
  return neg ? -v : v;
}

struct RuleAcc {
  int64_t lines = 0;
  __int128 qty = 0;  // milli-GPU × ms, or bytes
  std::string unit;
  int64_t amount = 0, exact = 0;
};

const std::set<std::string>& known_rules() {
  static const std::set<std::string> r = {
      "on_demand",    "reserved_overflow", "reserved_covered",    "cold_start", "idle_charged",    "idle_discount",
      "idle_stopped", "min_increment",     "reserved_commitment", "storage_io", "storage_io_free", "egress",
      "egress_free"};
  return r;
}

Result<QuotePlan> make_plan(const Month& m, const Offer& o, const RatingResult& rr, std::string name, int64_t term,
                            int64_t gpus, Money unit_price) {
  std::map<std::string, RuleAcc> by;
  int64_t exact_sum = 0;
  for (const auto& l : rr.lines) {
    if (!known_rules().count(l.rule) || (l.unit != "GPU-second" && l.unit != "GB"))
      return Error::make(Code::kInternal, "quote: unexpected invoice line " + l.rule + " (" + l.unit + ")");
    RuleAcc& a = by[l.rule];
    ++a.lines;
    a.qty += parse_scaled(l.quantity, l.unit == "GB" ? 9 : 6);
    a.unit = l.unit;
    a.amount += l.amount.micros();
    a.exact += l.amount_exact.micros();
    exact_sum += l.amount_exact.micros();
  }
  auto ex = [&](const char* r) { return by.count(r) ? by[r].exact : 0; };
  auto qt = [&](const char* r) { return by.count(r) ? by[r].qty : __int128(0); };
  const Currency c = o.currency;
  const int64_t n = m.in.workload.launches_per_month, g = m.in.workload.gpus;
  // The useful time at list price, computed per launch as the engine computes each launch's line.
  const int64_t list =
      n * he(static_cast<__int128>(o.prices.on_demand.micros()) * g * 1000 * m.busy_ms, kMilliMsPerGpuHour);
  const int64_t at_list = ex("on_demand") + ex("reserved_overflow");
  const __int128 at_list_qty = qt("on_demand") + qt("reserved_overflow");
  const int64_t idle_lines = ex("idle_charged") + ex("idle_discount");
  const __int128 idle_qty = qt("idle_charged") + qt("idle_discount");
  const bool reserved = term > 0;
  QuotePlan p;
  p.name = std::move(name);
  p.term_months = term;
  p.committed_gpus = gpus;
  p.unit_price = unit_price;
  p.total = rr.charges;
  // Fees may dwarf a short useful time (10^9 GB of egress against a minute of work): the quotient
  // can leave int64, which is the caller's input to fix, not a server error.
  bool overflow = false;
  p.per_useful_gpu_hour = Money(
      div_round_half_even(static_cast<__int128>(rr.charges.micros()) * kMilliMsPerGpuHour, m.useful, &overflow), c);
  if (overflow) return Error::invalid("offers", Message("advisor.quotes.money_overflow").arg("offer", o.name));
  auto comp = [&](const char* key, int64_t amount, std::string qty, const char* unit) {
    p.components.push_back({key, Money(amount, c), std::move(qty), unit});
  };
  comp("list_price", list, gpu_hours(m.useful), "GPU-hour");
  comp("cold_start", ex("cold_start"), gpu_hours(qt("cold_start")), "GPU-hour");
  if (reserved)
    comp("idle", idle_lines, gpu_hours(idle_qty), "GPU-hour");
  else
    comp("idle", idle_lines + at_list - list, gpu_hours(idle_qty + at_list_qty - m.useful), "GPU-hour");
  comp("min_increment", ex("min_increment"), gpu_hours(qt("min_increment")), "GPU-hour");
  comp("commitment", reserved ? ex("reserved_commitment") + at_list - list : 0, gpu_hours(qt("reserved_commitment")),
       "GPU-hour");
  comp("storage_io", ex("storage_io"), format_scaled(qt("storage_io"), 9), "GB");
  comp("egress", ex("egress"), format_scaled(qt("egress"), 9), "GB");
  comp("rounding", rr.charges.micros() - exact_sum, "", "");
  int64_t sum = 0;
  for (const auto& x : p.components) sum += x.amount.micros();
  if (sum != rr.charges.micros()) return Error::make(Code::kInternal, "quote: components do not add up to the charges");
  for (const auto& [rule, a] : by)
    p.rules.push_back({rule, a.lines, format_scaled(a.qty, a.unit == "GB" ? 9 : 6), a.unit, Money(a.amount, c)});
  return p;
}

// Time (ms) at which at least m launches are inside their billing window, m = 1..peak (index m-1).
std::vector<int64_t> held_by_level(const Month& m, int64_t bs_off, int64_t end_off) {
  std::vector<std::pair<int64_t, int>> ev;
  for (int64_t i = 0; i < m.in.workload.launches_per_month; ++i)
    if (bs_off < end_off) {
      ev.push_back({i * m.spacing + bs_off, +1});
      ev.push_back({i * m.spacing + end_off, -1});
    }
  std::sort(ev.begin(), ev.end());  // an end (-1) sorts before a start at the same time
  std::vector<int64_t> at_exactly;
  int64_t cur = 0, prev = 0;
  for (auto [t, d] : ev) {
    if (cur > 0) at_exactly[cur - 1] += t - prev;
    cur += d;
    prev = t;
    if (cur > static_cast<int64_t>(at_exactly.size())) at_exactly.resize(cur, 0);
  }
  for (size_t k = at_exactly.size(); k-- > 1;) at_exactly[k - 1] += at_exactly[k];  // suffix sums: at least k
  return at_exactly;
}

const std::optional<Money>& reserved_price(const Offer& o, int64_t term) {
  return term == 1 ? o.prices.reserved_1m : term == 12 ? o.prices.reserved_12m : o.prices.reserved_36m;
}

int64_t billing_start_offset(const Offer& o, const QuoteColdStart& cs) {
  switch (o.fees.billing_starts) {
    case BillingStart::kApiCall:
      return 0;
    case BillingStart::kRunning:
      return cs.to_running_seconds * 1000;
    case BillingStart::kReady:
      break;
  }
  return cold_ms(cs);
}

// Rates the on-demand plan and, per term, the commitments around the break-even depth; appends steps.
Status rate_offer(const Month& m, OfferQuote& q, const QuoteOffer& qo, std::vector<QuoteStep>& steps) {
  const Offer& o = qo.offer;
  const RatingInput base = month_input(m, qo);
  auto od = rate(base);
  if (!od) return od.error();
  auto plan = make_plan(m, o, *od, "on_demand", 0, 0, o.prices.on_demand);
  if (!plan) return plan.error();
  q.plans.push_back(std::move(*plan));
  const int64_t g = m.in.workload.gpus, period = m.to - m.from;
  const auto held = held_by_level(m, billing_start_offset(o, q.cold_start), cold_ms(q.cold_start) + m.run_ms);
  const int64_t peak = static_cast<int64_t>(held.size());
  for (int64_t term : m.in.commit_terms_months) {
    const auto& price = reserved_price(o, term);
    if (!price || peak == 0) continue;
    // Reserving the k-th launch-deep level pays when its billed hours at list price exceed the
    // commitment's month: held(k) × on_demand > period × reserved.
    int64_t best_depth = 0;
    for (int64_t k = 1; k <= peak; ++k)
      if (static_cast<__int128>(held[k - 1]) * o.prices.on_demand.micros() >
          static_cast<__int128>(period) * price->micros())
        best_depth = k;
    std::set<int64_t> depths = {std::max<int64_t>(best_depth, 1)};
    if (best_depth > 1) depths.insert(best_depth - 1);
    if (best_depth >= 1 && best_depth < peak) depths.insert(best_depth + 1);
    std::optional<QuotePlan> best;
    for (int64_t depth : depths) {
      RatingInput in = base;
      for (auto& a : in.allocations) a.mode = BillingMode::kReserved;
      in.commitments.push_back({"reserved", o.name, depth * g, term, m.from, add_months(m.from, term), false});
      auto r = rate(in);
      if (!r) return r.error();
      auto p = make_plan(m, o, *r, "reserved_" + std::to_string(term) + "m", term, depth * g, *price);
      if (!p) return p.error();
      if (!best || p->total.micros() < best->total.micros()) best = std::move(*p);
    }
    const int64_t k1 = std::max<int64_t>(best_depth, 1);
    steps.push_back(step(
        Message("advisor.quotes.step.commitment")
            .arg("offer", q.label)
            .arg("months", std::to_string(term))
            .arg("gpus", std::to_string(k1 * g))
            .arg("best_gpus", std::to_string(best->committed_gpus)),
        "held " + pct_tenths(held[k1 - 1], period) + "% of the month vs " + price->amount_string() + " / " +
            o.prices.on_demand.amount_string() + " = " + pct_tenths(price->micros(), o.prices.on_demand.micros()) + "%",
        best->total.amount_string()));
    q.plans.push_back(std::move(*best));
  }
  for (size_t i = 1; i < q.plans.size(); ++i)
    if (q.plans[i].total.micros() < q.plans[q.best].total.micros()) q.best = i;
  return ok_status();
}

// The longest launch over the offers: its cold start plus the run.
int64_t longest_launch_ms(const QuotesInput& in) {
  int64_t longest = 0;
  for (const auto& qo : in.offers) longest = std::max(longest, cold_ms(cold_of(in, qo)) + run_ms_of(in.workload));
  return longest;
}

// The month's steps: the useful GPU-hours and the launch spacing.
void add_month_steps(std::vector<QuoteStep>& steps, const Month& m, int64_t longest) {
  const auto& w = m.in.workload;
  steps.push_back(step(Message("advisor.quotes.step.useful_gpu_hours"),
                       std::to_string(w.launches_per_month) + " × " + std::to_string(w.gpus) + " × " +
                           format_scaled(m.busy_ms, 3) + " s ÷ 3600",
                       gpu_hours(m.useful)));
  steps.push_back(step(Message("advisor.quotes.step.month"),
                       "(2592000 s - 0.001 s - " + format_scaled(longest, 3) + " s) ÷ (" +
                           std::to_string(w.launches_per_month) + " - 1)",
                       format_scaled(m.spacing, 3) + " s"));
}

// One offer's quote before rating: its label, cold start, billed cold seconds and sticker price.
OfferQuote offer_quote(const Month& m, const QuoteOffer& qo, Currency currency) {
  const auto& w = m.in.workload;
  OfferQuote q;
  q.offer = qo.offer;
  q.label = quote_offer_label(qo.offer);
  q.cold_start = cold_of(m.in, qo);
  q.billed_cold_seconds = (cold_ms(q.cold_start) - billing_start_offset(qo.offer, q.cold_start)) / 1000;
  q.sticker = Money(
      w.launches_per_month *
          he(static_cast<__int128>(qo.offer.prices.on_demand.micros()) * w.gpus * 1000 * m.busy_ms, kMilliMsPerGpuHour),
      currency);
  return q;
}

// An offer's rating error, prefixed with the offer's label.
Error offer_error(const std::string& label, Error e) {
  e.message = label + ": " + e.message;
  if (!e.detail.empty()) e.detail = Message("advisor.quotes.offer_error").arg("offer", label).arg("error", e.detail);
  return e;
}

// The offer's best plan's charges (micros).
int64_t total_of(const OfferQuote& q) { return q.plans[q.best].total.micros(); }

// Sets each offer's list_rank (by list price, then label) and sorts the offers by total (or, by
// compute, by cost per useful PFLOP-hour with the offers lacking a figure last), then label.
void rank_offers(std::vector<OfferQuote>& offers, bool by_compute, bool by_work) {
  std::vector<size_t> by_list(offers.size());
  for (size_t i = 0; i < by_list.size(); ++i) by_list[i] = i;
  std::stable_sort(by_list.begin(), by_list.end(), [&](size_t a, size_t b) {
    const auto &x = offers[a], &y = offers[b];
    return std::make_pair(x.offer.prices.on_demand.micros(), x.label) <
           std::make_pair(y.offer.prices.on_demand.micros(), y.label);
  });
  for (size_t i = 0; i < by_list.size(); ++i) offers[by_list[i]].list_rank = static_cast<int64_t>(i) + 1;
  std::stable_sort(offers.begin(), offers.end(), [&](const OfferQuote& x, const OfferQuote& y) {
    if (by_work) {
      auto key = [](const OfferQuote& q) {
        return std::make_tuple(!q.per_unit_of_work, q.per_unit_of_work ? q.per_unit_of_work->micros() : 0, total_of(q));
      };
      if (key(x) != key(y)) return key(x) < key(y);
    }
    if (by_compute) {
      auto key = [](const OfferQuote& q) {
        return std::make_tuple(!q.per_useful_pflop_hour, q.per_useful_pflop_hour ? q.per_useful_pflop_hour->micros() : 0,
                               total_of(q));
      };
      if (key(x) != key(y)) return key(x) < key(y);
    }
    return std::make_pair(total_of(x), x.label) < std::make_pair(total_of(y), y.label);
  });
}

// The offer's TFLOPS at the workload's precision (measured, else datasheet) and its best plan's
// cost per useful PFLOP-hour. A figure past int64 micro-units is the caller's input to fix (a
// tiny TFLOPS figure against a large price), named by its field.
Status price_compute(OfferQuote& q, const QuoteOffer& qo) {
  q.tflops_x10 = qo.measured_tflops_x10 ? qo.measured_tflops_x10 : qo.datasheet_tflops_x10;
  if (!q.tflops_x10) return ok_status();
  q.tflops_source = qo.measured_tflops_x10 ? "measured" : "datasheet";
  q.measured_cards = qo.measured_tflops_x10 ? qo.measured_cards : 0;
  // per GPU-hour ÷ (TFLOPS ÷ 1000) = per GPU-hour × 10000 ÷ (TFLOPS × 10)
  bool overflow = false;
  const int64_t per = div_round_half_even(static_cast<__int128>(q.plans[q.best].per_useful_gpu_hour.micros()) * 10'000,
                                          *q.tflops_x10, &overflow);
  if (overflow)
    return Error::invalid(qo.measured_tflops_x10 ? "measured_tflops." + q.label : std::string("offers"),
                          Message("advisor.quotes.compute_overflow").arg("offer", q.label));
  q.per_useful_pflop_hour = Money(per, q.offer.currency);
  return ok_status();
}

// The best plan's cost per unit of the job's work on the offer's model: per useful GPU-hour ×
// gpus × µs per unit ÷ 3,600,000,000 µs; past int64 micro-units, an error naming the field.
Status price_work(OfferQuote& q, const QuoteWorkload& w) {
  auto it = w.us_per_unit.find(q.offer.gpu_model);
  if (it == w.us_per_unit.end()) return ok_status();
  q.us_per_unit = it->second;
  bool overflow = false;
  const int64_t per_unit =
      div_round_half_even(static_cast<__int128>(q.plans[q.best].per_useful_gpu_hour.micros()) * w.gpus * it->second,
                          3'600'000'000, &overflow);
  if (overflow)
    return Error::invalid("workload.work.us_per_unit",
                          Message("advisor.quotes.unit_cost_overflow").arg("offer", q.label));
  q.per_unit_of_work = Money(per_unit, q.offer.currency);
  if (w.tokens_per_unit) {  // per unit × 10^6 ÷ tokens per unit, half to even at the micro-unit
    const int64_t per_million =
        div_round_half_even(static_cast<__int128>(per_unit) * 1'000'000, *w.tokens_per_unit, &overflow);
    if (overflow)
      return Error::invalid("workload.work.tokens_per_unit",
                            Message("advisor.quotes.token_cost_overflow").arg("offer", q.label));
    q.per_million_tokens = Money(per_million, q.offer.currency);
  }
  return ok_status();
}

// The ranked offer's steps: its best plan's charges, per useful GPU-hour and sticker price.
void add_offer_steps(std::vector<QuoteStep>& steps, const OfferQuote& q, const Month& m, Currency currency) {
  const QuotePlan& p = q.plans[q.best];
  std::string formula;
  for (const auto& c : p.components) formula += (formula.empty() ? "" : " + ") + c.amount.amount_string();
  steps.push_back(step(Message("advisor.quotes.step.charges").arg("offer", q.label).arg("plan", plan_text(p, currency)),
                       formula, p.total.amount_string()));
  steps.push_back(step(Message("advisor.quotes.step.per_useful_gpu_hour").arg("offer", q.label),
                       p.total.amount_string() + " ÷ " + gpu_hours(m.useful), p.per_useful_gpu_hour.amount_string()));
  steps.push_back(step(Message("advisor.quotes.step.sticker").arg("offer", q.label),
                       gpu_hours(m.useful) + " × " + q.offer.prices.on_demand.amount_string(),
                       q.sticker.amount_string()));
  if (q.per_useful_pflop_hour)
    steps.push_back(step(Message("advisor.quotes.step.per_useful_pflop_hour")
                             .arg("offer", q.label)
                             .arg("precision", m.in.workload.precision)
                             .arg("source", Message(q.tflops_source == "measured"
                                                        ? "advisor.quotes.tflops_source.measured"
                                                        : "advisor.quotes.tflops_source.datasheet")),
                         p.per_useful_gpu_hour.amount_string() + " × 1000 ÷ " + format_tflops_x10(*q.tflops_x10),
                         q.per_useful_pflop_hour->amount_string()));
  if (q.per_unit_of_work)
    steps.push_back(step(Message("advisor.quotes.step.per_unit_of_work")
                             .arg("offer", q.label)
                             .arg("unit", quotes_internal::work_unit_text(m.in.workload.work_unit)),
                         p.per_useful_gpu_hour.amount_string() + " × " + std::to_string(m.in.workload.gpus) + " × " +
                             std::to_string(*q.us_per_unit) + " µs ÷ 3600000000 µs",
                         q.per_unit_of_work->amount_string()));
  if (q.per_million_tokens)
    steps.push_back(step(Message("advisor.quotes.step.per_million_tokens").arg("offer", q.label),
                         q.per_unit_of_work->amount_string() + " × 1000000 ÷ " + std::to_string(*m.in.workload.tokens_per_unit),
                         q.per_million_tokens->amount_string()));
}

}  // namespace

Result<QuotesResult> compute_quotes(const QuotesInput& in) {
  FieldErrors errs;
  check_input(in, errs);
  if (!errs.empty()) return errs.to_error();
  const auto& w = in.workload;
  QuotesResult res;
  res.currency = in.offers[0].offer.currency;
  res.from = month_from();
  res.to = month_to();
  // Launches spread evenly: the first starts with the month, the last (with the longest cold
  // start) ends inside it.
  const int64_t longest = longest_launch_ms(in);
  const int64_t spacing = w.launches_per_month > 1 ? (res.to - res.from - 1 - longest) / (w.launches_per_month - 1) : 0;
  Month m{in, res.from, res.to, spacing, run_ms_of(w), busy_ms_of(w), 0};
  m.useful = w.launches_per_month * w.gpus * 1000 * m.busy_ms;
  res.useful_milli_gpu_ms = m.useful;
  res.busy_ms_per_launch = m.busy_ms;
  res.run_ms_per_launch = m.run_ms;
  add_month_steps(res.steps, m, longest);
  std::vector<QuoteStep> offer_steps;
  for (const auto& qo : in.offers) {
    OfferQuote q = offer_quote(m, qo, res.currency);
    if (auto s = rate_offer(m, q, qo, offer_steps); !s) return offer_error(q.label, s.error());
    if (!w.precision.empty()) {
      if (auto s = price_compute(q, qo); !s) return s.error();
      if (!q.tflops_x10)
        q.warnings.push_back(
            Message("advisor.quotes.warning.no_tflops").arg("model", qo.offer.gpu_model).arg("precision", w.precision));
    }
    if (!w.work_unit.empty()) {
      if (auto s = price_work(q, w); !s) return s.error();
      if (!q.per_unit_of_work)
        q.warnings.push_back(Message("advisor.quotes.warning.no_unit_time").arg("model", qo.offer.gpu_model));
    }
    add_warnings(m, q);
    res.offers.push_back(std::move(q));
  }
  if (!w.precision.empty()) res.ranked_by = "per_useful_pflop_hour";
  if (!w.work_unit.empty()) res.ranked_by = "per_unit_of_work";
  rank_offers(res.offers, !w.precision.empty(), !w.work_unit.empty());
  for (size_t i = 0; i < res.offers.size(); ++i) {
    OfferQuote& q = res.offers[i];
    q.rank = static_cast<int64_t>(i) + 1;
    explain(q, res.offers[0], w.precision, w.work_unit);
    add_offer_steps(res.steps, q, m, res.currency);
  }
  for (auto& s : offer_steps) res.steps.push_back(std::move(s));
  // The sticker misleads when a lower list price comes with a higher true cost (an inversion);
  // equal list prices never mislead.
  for (const auto& x : res.offers)
    for (const auto& y : res.offers)
      if (x.offer.prices.on_demand.micros() < y.offer.prices.on_demand.micros() && total_of(x) > total_of(y))
        res.sticker_misleads = true;
  explain_sticker(res);
  return res;
}

}  // namespace gpurent
