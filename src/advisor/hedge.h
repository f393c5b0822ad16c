// Hedging advice (docs/advisor/hedge.md): what buying a share of a tenant's GPU-hours forward at a
// fixed price would have done to the cost and to its swings over a history of demand and market
// prices — the seed's advice to hedge part of a budget (about 20 %) with forward purchases.
//
// Per period t (a day of the market's price index, or any period the caller uses) with demand D_t
// GPU-hours and market price P_t per GPU-hour, hedging share s of the mean demand buys
//   H = round_half_even(s × ΣD ÷ (100 × n)) GPU-hours every period at the forward price F
// (billed whether used or not: what is not used is wasted, there is no resale), and the rest at
// the market price:
//   cost_t = H × F + max(D_t − H, 0) × P_t
// The answer: for the chosen share and for 0, 10, …, 100 %, the mean cost per period (half to
// even) c̄, its standard deviation (population, √(Σ (c_t − c̄)² ÷ n) rounded down, integers only),
// the total and the GPU-hours wasted. Money is exact: micro-units in 128-bit sums, no floating
// point. Pure and deterministic; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "advisor/advisor_step.h"
#include "core/fields.h"
#include "core/money.h"

namespace gpurent {

inline constexpr size_t kMaxHedgePeriods = 1000;

struct HedgeInput {
  Currency currency = Currency::kUSD;
  std::vector<int64_t> demand_gpu_hours;  // per period, 0..10,000,000
  std::vector<Money> prices;              // market price per GPU-hour per period, > 0
  std::optional<Money> forward_price;     // absent: the periods' mean price, half to even
  int64_t hedge_share_pct = 20;           // 0..100
};

// Errors name the field: demand_gpu_hours[3], prices[1], "prices" when the lengths differ.
Result<HedgeInput> parse_hedge_input(const json& body);

struct HedgeOutcome {
  int64_t share_pct = 0;
  int64_t hedged_gpu_hours = 0;  // H, every period
  Money mean_cost, stdev_cost, total_cost;
  int64_t wasted_gpu_hours = 0;  // Σ max(H − D_t, 0)
};

struct HedgeResult {
  Currency currency = Currency::kUSD;
  int64_t periods = 0;
  int64_t mean_demand_milli = 0;  // GPU-hours × 1000, half to even
  Money forward_price;
  bool forward_from_prices = false;  // the forward price is the periods' mean price
  HedgeOutcome chosen, unhedged;
  std::vector<HedgeOutcome> curve;  // 0, 10, …, 100 %
  std::vector<AdvisorStep> steps;
};

Result<HedgeResult> compute_hedge(const HedgeInput& in);
json to_json(const HedgeResult& r);

}  // namespace gpurent
