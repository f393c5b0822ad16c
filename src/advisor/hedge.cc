// Hedging advice (hedge.h): the input, the arithmetic and the answer.
#include "advisor/hedge.h"

#include <string>

#include "advisor/advisor_util.h"
#include "model/enums_supply.h"

namespace gpurent {
namespace {

constexpr int64_t kMaxPeriodDemand = 10'000'000;  // GPU-hours in one period
constexpr int64_t kMaxPrice = 10'000;             // per GPU-hour, whole units

// ⌊√v⌋ for v ≥ 0, by Newton's method on integers.
__int128 isqrt(__int128 v) {
  if (v < 2) return v;
  __int128 x = v, y = (x + 1) / 2;
  while (y < x) {
    x = y;
    y = (x + v / x) / 2;
  }
  return x;
}

Result<Money> money_of(__int128 micros, Currency c) {
  if (micros > INT64_MAX || micros < INT64_MIN) return Error::invalid("demand_gpu_hours", Message("advisor.hedge.too_large"));
  return Money(static_cast<int64_t>(micros), c);
}

Result<HedgeOutcome> outcome(const HedgeInput& in, int64_t forward, int64_t share) {
  const size_t n = in.demand_gpu_hours.size();
  __int128 demand = 0;
  for (int64_t d : in.demand_gpu_hours) demand += d;
  HedgeOutcome o;
  o.share_pct = share;
  o.hedged_gpu_hours = static_cast<int64_t>(div_half_even(demand * share, static_cast<__int128>(100) * n));
  std::vector<__int128> costs;
  __int128 sum = 0;
  for (size_t t = 0; t < n; ++t) {
    const int64_t d = in.demand_gpu_hours[t];
    const int64_t rest = d > o.hedged_gpu_hours ? d - o.hedged_gpu_hours : 0;
    o.wasted_gpu_hours += o.hedged_gpu_hours > d ? o.hedged_gpu_hours - d : 0;
    costs.push_back(static_cast<__int128>(o.hedged_gpu_hours) * forward + static_cast<__int128>(rest) * in.prices[t].micros());
    sum += costs.back();  // each ≤ 2 × 1e7 GPU-hours × 1e10 micros
  }
  const __int128 nn = static_cast<__int128>(n);
  const __int128 m = div_half_even(sum, nn);
  __int128 squares = 0;  // Σ (c_t − c̄)², each term ≤ 4e34, at most 1,000 of them
  for (__int128 c : costs) squares += (c - m) * (c - m);
  auto mean = money_of(m, in.currency);
  auto total = money_of(sum, in.currency);
  auto stdev = money_of(isqrt(squares / nn), in.currency);  // population, rounded down
  if (!mean || !total || !stdev) return Error::invalid("demand_gpu_hours", Message("advisor.hedge.too_large"));
  o.mean_cost = *mean;
  o.total_cost = *total;
  o.stdev_cost = *stdev;
  return o;
}

// Thousandths of a GPU-hour as decimal text ("12.50").
std::string hedge_gpu_hours_text(int64_t milli) { return Money(milli * 1000, Currency::kUSD).amount_string(); }

json outcome_json(const HedgeOutcome& o) {
  return {{"share_pct", o.share_pct},
          {"hedged_gpu_hours", o.hedged_gpu_hours},
          {"mean_cost", o.mean_cost.amount_string()},
          {"stdev_cost", o.stdev_cost.amount_string()},
          {"total_cost", o.total_cost.amount_string()},
          {"wasted_gpu_hours", o.wasted_gpu_hours}};
}

}  // namespace

Result<HedgeInput> parse_hedge_input(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  HedgeInput in;
  in.currency = f.enumeration("currency", kCurrencies, std::optional<Currency>(Currency::kUSD));
  const json* demand = f.raw("demand_gpu_hours");
  const json* prices = f.raw("prices");
  if (!demand || !demand->is_array() || demand->empty() || demand->size() > kMaxHedgePeriods)
    f.error("demand_gpu_hours", Message("advisor.hedge.list").arg("max", std::to_string(kMaxHedgePeriods)));
  else
    for (size_t i = 0; i < demand->size(); ++i) {
      const json& d = (*demand)[i];
      if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > kMaxPeriodDemand)
        f.error("demand_gpu_hours[" + std::to_string(i) + "]",
                Message("advisor.hedge.demand").arg("max", std::to_string(kMaxPeriodDemand)));
      else
        in.demand_gpu_hours.push_back(d.get<int64_t>());
    }
  if (!prices || !prices->is_array() || prices->empty() || prices->size() > kMaxHedgePeriods)
    f.error("prices", Message("advisor.hedge.list").arg("max", std::to_string(kMaxHedgePeriods)));
  else
    for (size_t i = 0; i < prices->size(); ++i) {
      const json& p = (*prices)[i];
      auto m = p.is_string() ? Money::parse(p.get<std::string>(), in.currency) : Result<Money>(Error::invalid("", ""));
      if (!m || m->micros() <= 0 || m->micros() > kMaxPrice * Money::kMicrosPerUnit)
        f.error("prices[" + std::to_string(i) + "]", Message("advisor.hedge.price").arg("max", std::to_string(kMaxPrice)));
      else
        in.prices.push_back(*m);
    }
  if (demand && prices && demand->is_array() && prices->is_array() && demand->size() != prices->size())
    f.error("prices", Message("advisor.hedge.lengths")
                          .arg("prices", std::to_string(prices->size()))
                          .arg("demand", std::to_string(demand->size())));
  in.forward_price = read_capped_money(f, "forward_price", in.currency, kMaxPrice, false, true);
  in.hedge_share_pct = f.opt_integer("hedge_share_pct", 0, 100).value_or(20);
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return in;
}

Result<HedgeResult> compute_hedge(const HedgeInput& in) {
  HedgeResult r;
  r.currency = in.currency;
  const size_t n = in.demand_gpu_hours.size();
  if (n == 0 || in.prices.size() != n) return Error::invalid("prices", Message("advisor.hedge.lengths")
                                                                           .arg("prices", std::to_string(in.prices.size()))
                                                                           .arg("demand", std::to_string(n)));
  r.periods = static_cast<int64_t>(n);
  __int128 demand = 0, price_sum = 0;
  for (size_t t = 0; t < n; ++t) demand += in.demand_gpu_hours[t], price_sum += in.prices[t].micros();
  r.mean_demand_milli = static_cast<int64_t>(div_half_even(demand * 1000, static_cast<__int128>(n)));
  r.forward_from_prices = !in.forward_price;
  r.forward_price = in.forward_price ? *in.forward_price
                                     : Money(static_cast<int64_t>(div_half_even(price_sum, static_cast<__int128>(n))), in.currency);
  const int64_t f = r.forward_price.micros();
  auto chosen = outcome(in, f, in.hedge_share_pct);
  if (!chosen) return chosen.error();
  r.chosen = *chosen;
  for (int64_t s = 0; s <= 100; s += 10) {
    auto o = outcome(in, f, s);
    if (!o) return o.error();
    if (s == 0) r.unhedged = *o;
    r.curve.push_back(*o);
  }
  const std::string cur = currency_code(in.currency);
  const std::string share = std::to_string(in.hedge_share_pct);
  r.steps.push_back({Message("advisor.hedge.step.mean_demand").arg("periods", std::to_string(n)),
                     "ΣD ÷ n = " + std::to_string(static_cast<int64_t>(demand)) + " ÷ " + std::to_string(n) + " = " +
                         hedge_gpu_hours_text(r.mean_demand_milli) + " GPU-hours",
                     hedge_gpu_hours_text(r.mean_demand_milli)});
  r.steps.push_back({r.forward_from_prices ? Message("advisor.hedge.step.forward_mean") : Message("advisor.hedge.step.forward_given"),
                     r.forward_from_prices ? "ΣP ÷ n = " + r.forward_price.amount_string() + " " + cur : r.forward_price.amount_string() + " " + cur,
                     r.forward_price.amount_string()});
  r.steps.push_back({Message("advisor.hedge.step.hedged").arg("share", share),
                     "H = " + share + "% × " + hedge_gpu_hours_text(r.mean_demand_milli) + " = " +
                         std::to_string(r.chosen.hedged_gpu_hours) + " GPU-hours",
                     r.chosen.hedged_gpu_hours});
  r.steps.push_back({Message("advisor.hedge.step.cost"), "cost_t = H × F + max(D_t − H, 0) × P_t", nullptr});
  r.steps.push_back({Message("advisor.hedge.step.compare").arg("share", share),
                     "mean " + r.chosen.mean_cost.amount_string() + " ± " + r.chosen.stdev_cost.amount_string() + " " + cur +
                         " vs unhedged " + r.unhedged.mean_cost.amount_string() + " ± " + r.unhedged.stdev_cost.amount_string() +
                         " " + cur + " per period; wasted " + std::to_string(r.chosen.wasted_gpu_hours) + " GPU-hours",
                     r.chosen.mean_cost.amount_string()});
  return r;
}

json to_json(const HedgeResult& r) {
  json curve = json::array();
  for (const HedgeOutcome& o : r.curve) curve.push_back(outcome_json(o));
  return {{"currency", currency_code(r.currency)},
          {"periods", r.periods},
          {"mean_demand_gpu_hours", hedge_gpu_hours_text(r.mean_demand_milli)},
          {"forward_price", r.forward_price.amount_string()},
          {"forward_price_basis", r.forward_from_prices ? "mean_price" : "given"},
          {"chosen", outcome_json(r.chosen)},
          {"unhedged", outcome_json(r.unhedged)},
          {"curve", curve},
          {"steps", steps_to_json(r.steps)}};
}

}  // namespace gpurent
