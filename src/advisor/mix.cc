// The mix optimizer's exact core, its baselines and compute_mix. The MILP itself is in mix_milp.cc,
// the input's parsing in mix_parse.cc, the steps and the JSON in mix_output.cc.
//
// Why an exact integer search exists beside the MILP: the GPUs of all options serve the same
// curve, so a plan is determined by the total reserved quantity R. For a given R the cheapest
// split among the reserved options takes the cheapest units first (a sum of the R/unit cheapest
// units: convex in R), and in each hour the cheapest cover of the remaining max(0, d − R) GPUs
// takes the cheapest on-demand/spot option first under the caps (greedy on a laminar matroid —
// the per-option caps nest inside the spot cap — is optimal for every size, and its marginal
// costs rise: a convex, non-decreasing function of a convex function of R). The total cost is
// therefore convex in R, and its smallest minimiser is found by binary search on the sign of
// cost(R + unit) − cost(R), in exact integers. compute_mix prices that optimum and uses it to
// check GLPK's answer (floating-point tolerances may let GLPK stop beside it); the tests check
// both against brute force that assumes none of this.
#include "advisor/mix.h"

#include <algorithm>
#include <chrono>

#include "advisor/mix_internal.h"

namespace gpurent {

using namespace mix_detail;

namespace {

Result<Money> money_of(i128 micros, Currency c) {
  if (micros > INT64_MAX || micros < INT64_MIN)
    return Error::invalid("options", Message("advisor.mix.money_overflow"));
  return Money(static_cast<int64_t>(micros), c);
}

// num / den in basis points, half to even.
int64_t basis_points(i128 num, int64_t den) { return div_half_even_sat(num * 10'000, den); }

// ---- Exact evaluation (nano-units) ----

// Hourly part of the plan with `units` reserved units: the cheapest cover of every hour. -1 when
// some hour cannot be covered. Optionally adds each hourly option's GPU-hours and peak.
i128 hourly_cost(const MixModel& m, int64_t units, std::vector<int64_t>* gpu_hours, std::vector<int64_t>* peak) {
  const int64_t reserved = units * m.unit;
  i128 total = 0;
  for (const DemandLevel& lvl : m.levels) {
    if (lvl.gpus <= reserved) continue;
    int64_t left = lvl.gpus - reserved;
    int64_t spot_left = m.spot_pct * lvl.gpus / 100;
    for (size_t j = 0; j < m.hourly.size() && left > 0; ++j) {
      const MixModel::Hourly& h = m.hourly[j];
      int64_t take = std::min(left, h.cap);
      if (h.spot) {
        take = std::min(take, spot_left);
        spot_left -= take;
      }
      if (take == 0) continue;
      left -= take;
      total += static_cast<i128>(take) * h.cost * lvl.hours;
      if (gpu_hours) (*gpu_hours)[j] += take * lvl.hours;
      if (peak) (*peak)[j] = std::max((*peak)[j], take);
    }
    if (left > 0) return -1;
  }
  return total;
}

// Cheapest split of `units` among the reserved options (cheapest units first). -1 if over the caps.
i128 reserved_cost(const MixModel& m, int64_t units, std::vector<int64_t>* split) {
  i128 total = 0;
  for (size_t j = 0; j < m.reserved.size(); ++j) {
    const int64_t take = std::min(units, m.reserved[j].max_units);
    units -= take;
    total += static_cast<i128>(take) * m.reserved[j].unit_cost;
    if (split) (*split)[j] = take;
  }
  return units > 0 ? -1 : total;
}

i128 total_cost(const MixModel& m, int64_t units) {
  const i128 r = reserved_cost(m, units, nullptr), h = hourly_cost(m, units, nullptr, nullptr);
  return r < 0 || h < 0 ? -1 : r + h;
}

// The smallest minimiser of the convex cost over [min_units, max_units].
int64_t exact_units(const MixModel& m) {
  int64_t a = m.min_units, b = m.max_units;
  while (a < b) {
    const int64_t mid = a + (b - a) / 2;
    if (total_cost(m, mid + 1) >= total_cost(m, mid))
      b = mid;
    else
      a = mid + 1;
  }
  return a;
}

}  // namespace

i128 mix_detail::on_demand_above(const MixModel& m, const LoadCurve& g, int64_t base, std::vector<int64_t>* gpu_hours) {
  i128 cost = 0;
  int64_t lo = base;
  for (size_t j = 0; j < m.hourly.size(); ++j) {
    const MixModel::Hourly& h = m.hourly[j];
    if (h.spot || lo >= m.peak) continue;
    const int64_t hi = lo + h.cap;
    const i128 gh = g(hi) - g(lo);
    cost += gh * h.price_micros;
    if (gpu_hours) (*gpu_hours)[j] = static_cast<int64_t>(gh);
    lo = hi;
  }
  return lo >= m.peak ? cost : -1;
}

const char* capacity_mode_name(CapacityMode m) { return enum_name(kModes, m); }

bool is_reserved(CapacityMode m) {
  return m == CapacityMode::kReserved1m || m == CapacityMode::kReserved12m || m == CapacityMode::kReserved36m;
}

int64_t term_hours(CapacityMode m) {
  switch (m) {
    case CapacityMode::kReserved1m:
      return kHoursPerBillingMonth;
    case CapacityMode::kReserved12m:
      return kHoursPerYear;
    case CapacityMode::kReserved36m:
      return 3 * kHoursPerYear;
    default:
      return 0;
  }
}

Result<MixModel> prepare_mix(const MixInput& in) {
  if (auto s = validate_mix_input(in); !s) return s.error();
  MixModel m;
  m.hours = static_cast<int64_t>(in.demand.gpus.size());
  m.unit = in.reservation_unit_gpus;
  m.spot_pct = in.max_spot_share_pct;
  m.levels = demand_levels(in.demand);
  m.peak = m.levels.back().gpus;
  const int64_t peak_units = (m.peak + m.unit - 1) / m.unit;
  std::optional<int64_t> cheapest_on_demand;
  for (const CapacityOption& o : in.options)
    if (o.mode == CapacityMode::kOnDemand)
      cheapest_on_demand = std::min(cheapest_on_demand.value_or(INT64_MAX), o.price_per_gpu_hour.micros());
  for (size_t i = 0; i < in.options.size(); ++i) {
    const CapacityOption& o = in.options[i];
    const int64_t price = o.price_per_gpu_hour.micros();
    if (is_reserved(o.mode)) {
      const int64_t term = term_hours(o.mode), terms = (m.hours + term - 1) / term;
      MixModel::Reserved r{i, 0, price, in.count_whole_terms ? terms * term : m.hours, 0};
      r.unit_cost = static_cast<i128>(m.unit) * r.billed_hours * price * 1000;
      r.max_units = std::min(o.max_gpus ? *o.max_gpus / m.unit : peak_units, peak_units);
      m.reserved.push_back(r);
    } else {
      const bool spot = o.mode == CapacityMode::kSpot;
      MixModel::Hourly h{
          i, spot, 0, price, spot ? cheapest_on_demand.value_or(price) : 0, o.max_gpus.value_or(kMaxGpusPerHour)};
      h.cost = static_cast<i128>(price) * 1000 + static_cast<i128>(in.spot_interruption_permille) * h.rework_micros;
      m.hourly.push_back(h);
    }
  }
  std::stable_sort(m.reserved.begin(), m.reserved.end(),
                   [](const auto& a, const auto& b) { return a.unit_cost < b.unit_cost; });
  std::stable_sort(m.hourly.begin(), m.hourly.end(), [](const auto& a, const auto& b) { return a.cost < b.cost; });

  int64_t reserved_cap = 0, on_demand_cap = 0, spot_cap = 0;
  for (const auto& r : m.reserved) reserved_cap += r.max_units;
  for (const auto& h : m.hourly) (h.spot ? spot_cap : on_demand_cap) += h.cap;
  int64_t worst_need = 0;
  const DemandLevel* worst = nullptr;
  for (const DemandLevel& lvl : m.levels) {
    const int64_t shortfall = lvl.gpus - on_demand_cap - std::min(m.spot_pct * lvl.gpus / 100, spot_cap);
    const int64_t need = shortfall > 0 ? (shortfall + m.unit - 1) / m.unit : 0;
    if (need > worst_need) {
      worst_need = need;
      worst = &lvl;
    }
  }
  if (worst_need > std::min(reserved_cap, peak_units)) {
    const int64_t hour = std::find(in.demand.gpus.begin(), in.demand.gpus.end(), worst->gpus) - in.demand.gpus.begin();
    const int64_t spot = std::min(m.spot_pct * worst->gpus / 100, spot_cap);
    return Error::invalid("options", Message("advisor.mix.short_supply")
                                         .arg("hour", num(hour))
                                         .arg("gpus", num(worst->gpus))
                                         .arg("supply", num(reserved_cap * m.unit + on_demand_cap + spot))
                                         .arg("reserved", num(reserved_cap * m.unit))
                                         .arg("on_demand", num(on_demand_cap))
                                         .arg("spot", num(spot))
                                         .arg("pct", num(m.spot_pct)));
  }
  m.min_units = worst_need;
  m.max_units = std::min(reserved_cap, peak_units);
  return m;
}

namespace {

// The plan compute_mix prices: the reserved units and their split among m.reserved.
struct MixChoice {
  std::vector<int64_t> split;
  int64_t units = 0;
  bool corrected = false;  // GLPK's plan was infeasible or dearer than the exact optimum
};

// GLPK's plan, checked against the exact optimum; GLPK's own split is kept when it is as cheap.
Result<MixChoice> milp_choice(const MixInput& in, const MixModel& m, int64_t time_limit_ms) {
  auto chosen = solve_mix_milp(in, m, true, time_limit_ms);
  if (!chosen) return chosen.error();
  MixChoice c;
  c.split.assign(m.reserved.size(), 0);
  std::vector<int64_t> glpk_split(m.reserved.size(), 0);
  int64_t glpk_units = 0;
  i128 glpk_reserved = 0;
  for (size_t j = 0; j < m.reserved.size(); ++j) {
    glpk_split[j] = (*chosen)[m.reserved[j].option] / m.unit;
    glpk_units += glpk_split[j];
    glpk_reserved += glpk_split[j] * m.reserved[j].unit_cost;
  }
  const i128 glpk_hourly = hourly_cost(m, glpk_units, nullptr, nullptr);
  // The exact optimum by bisection (not a walk from GLPK's plan: on a flat stretch of cost, equal
  // prices say, GLPK may answer a million units from it).
  c.units = exact_units(m);
  const i128 best_reserved = reserved_cost(m, c.units, &c.split);
  const i128 best = best_reserved + hourly_cost(m, c.units, nullptr, nullptr);
  if (c.units == glpk_units && glpk_reserved == best_reserved) c.split = glpk_split;
  c.corrected = glpk_hourly < 0 || glpk_reserved + glpk_hourly > best;
  return c;
}

// The exact search's plan.
MixChoice exact_choice(const MixModel& m) {
  MixChoice c;
  c.split.assign(m.reserved.size(), 0);
  c.units = exact_units(m);
  reserved_cost(m, c.units, &c.split);
  return c;
}

// A line per reserved option in the split, adding its cost to `total` and its GPUs to r.
Status add_reserved_lines(MixResult& r, i128& total, const MixInput& in, const MixModel& m,
                          const std::vector<int64_t>& split) {
  const Currency cur = in.currency;
  for (size_t j = 0; j < m.reserved.size(); ++j) {
    if (split[j] == 0) continue;
    const MixModel::Reserved& res = m.reserved[j];
    const CapacityOption& o = in.options[res.option];
    ReservedLine l{res.option, o.offer, o.mode, o.price_per_gpu_hour, split[j] * m.unit, res.billed_hours, {},
                   0,          0,       {}};
    auto cost = money_of(static_cast<i128>(l.gpus) * l.billed_hours * res.price_micros, cur);
    if (!cost) return cost.error();
    l.cost = *cost;
    const int64_t term = term_hours(o.mode);
    l.terms = (m.hours + term - 1) / term;
    l.hours_after_horizon = l.terms * term - m.hours;
    auto after = money_of(static_cast<i128>(l.gpus) * l.hours_after_horizon * res.price_micros, cur);
    if (!after) return after.error();
    l.cost_after_horizon = *after;
    total += l.cost.micros();
    r.reserved_gpus += l.gpus;
    r.reserved.push_back(std::move(l));
  }
  return ok_status();
}

// A line per hourly option used above `units` reserved units, adding its cost (and spot rework)
// to `total` and its spot GPU-hours to `spot_hours`.
Status add_hourly_lines(MixResult& r, i128& total, int64_t& spot_hours, const MixInput& in, const MixModel& m,
                        int64_t units) {
  const Currency cur = in.currency;
  std::vector<int64_t> gpu_hours(m.hourly.size(), 0), peak(m.hourly.size(), 0);
  hourly_cost(m, units, &gpu_hours, &peak);
  for (size_t j = 0; j < m.hourly.size(); ++j) {
    if (gpu_hours[j] == 0) continue;
    const MixModel::Hourly& h = m.hourly[j];
    const CapacityOption& o = in.options[h.option];
    HourlyLine l{h.option, o.offer, o.mode, o.price_per_gpu_hour, gpu_hours[j], peak[j], {}, Money::zero(cur)};
    auto cost = money_of(static_cast<i128>(l.gpu_hours) * h.price_micros, cur);
    if (!cost) return cost.error();
    l.cost = *cost;
    if (h.spot) {
      bool overflow = false;
      const int64_t rework = div_round_half_even(
          static_cast<i128>(l.gpu_hours) * h.rework_micros * in.spot_interruption_permille, 1000, &overflow);
      if (overflow) return Error::invalid("options", Message("advisor.mix.money_overflow"));
      l.rework_cost = Money(rework, cur);
      spot_hours += l.gpu_hours;
    }
    total += static_cast<i128>(l.cost.micros()) + l.rework_cost.micros();
    r.hourly.push_back(std::move(l));
  }
  return ok_status();
}

// The cheapest single reserved option at one level with on-demand above it, or pure on-demand
// (`od`) when none is cheaper, into r.best_single; left empty when neither is feasible.
Status add_best_single(MixResult& r, const MixInput& in, const MixModel& m, const LoadCurve& g, i128 od) {
  const Currency cur = in.currency;
  i128 best = od;
  SingleLevel single{std::nullopt, "", CapacityMode::kReserved1m, 0, Money::zero(cur)};
  // Per option, the cost of k units plus on-demand above them is convex in k (linear plus a sum
  // of convex fills): bisect on its forward difference from the first feasible k.
  int64_t on_demand_cap = 0;
  for (const MixModel::Hourly& h : m.hourly) on_demand_cap += h.spot ? 0 : h.cap;
  for (const MixModel::Reserved& res : m.reserved) {  // ascending cost; ties keep the option order
    auto level_cost = [&](int64_t k) {
      return static_cast<i128>(k) * m.unit * res.billed_hours * res.price_micros +
             on_demand_above(m, g, k * m.unit, nullptr);
    };
    int64_t a = std::max<int64_t>(1, (m.peak - on_demand_cap + m.unit - 1) / m.unit), b = res.max_units;
    if (a > b) continue;
    while (a < b) {
      const int64_t mid = a + (b - a) / 2;
      if (level_cost(mid + 1) >= level_cost(mid))
        b = mid;
      else
        a = mid + 1;
    }
    if (const i128 c = level_cost(a); best < 0 || c < best) {
      best = c;
      single = {res.option, in.options[res.option].offer, in.options[res.option].mode, a * m.unit, {}};
    }
  }
  if (best >= 0) {
    auto bm = money_of(best, cur);
    if (!bm) return bm.error();
    single.cost = *bm;
    r.best_single = single;
  }
  return ok_status();
}

// The savings of the expected cost against each baseline that r has.
void set_savings(MixResult& r, Currency cur) {
  if (r.on_demand_cost) {
    r.saving_vs_on_demand = Money(r.on_demand_cost->micros() - r.expected_cost.micros(), cur);
    r.saving_vs_on_demand_bp = basis_points(r.saving_vs_on_demand->micros(), r.on_demand_cost->micros());
  }
  if (r.best_single) {
    r.saving_vs_single = Money(r.best_single->cost.micros() - r.expected_cost.micros(), cur);
    r.saving_vs_single_bp = basis_points(r.saving_vs_single->micros(), r.best_single->cost.micros());
  }
}

}  // namespace

Result<MixResult> compute_mix(const MixInput& in, MixSolver solver, int64_t milp_time_limit_ms) {
  auto prepared = prepare_mix(in);
  if (!prepared) return prepared.error();
  const MixModel& m = *prepared;
  const Currency cur = in.currency;

  const int64_t milp_rows = solver == MixSolver::kMilp ? mix_milp_rows(m) : 0;
  const int64_t milp_nonzeros = solver == MixSolver::kMilp && milp_rows <= kMaxMilpRows ? mix_milp_nonzeros(m) : 0;
  const bool too_much_work = static_cast<__int128>(milp_rows) * milp_nonzeros > kMaxMilpWork;
  const bool try_milp = solver == MixSolver::kMilp && milp_rows <= kMaxMilpRows && !too_much_work;
  bool use_milp = try_milp;
  Result<MixChoice> choice = use_milp ? milp_choice(in, m, milp_time_limit_ms) : exact_choice(m);
  std::string milp_failure;
  if (!choice && use_milp && choice.error().code == Code::kInternal) {
    // GLPK only proposes the plan (the exact check prices it): without it the exact search chooses.
    milp_failure = choice.error().message;
    use_milp = false;
    choice = exact_choice(m);
  }
  if (!choice) return choice.error();
  MixResult r;
  r.currency = cur;
  r.hours = m.hours;
  for (const DemandLevel& l : m.levels) r.gpu_hours += l.gpus * l.hours;
  r.peak_gpus = m.peak;
  r.levels = static_cast<int64_t>(m.levels.size());
  r.solver = use_milp ? "glpk" : "exact";
  r.milp_corrected = choice->corrected;
  r.milp_failure = milp_failure;
  if (solver == MixSolver::kMilp && !try_milp) r.milp_skipped_rows = milp_rows;
  if (solver == MixSolver::kMilp && too_much_work) r.milp_skipped_nonzeros = milp_nonzeros;
  for (const CapacityOption& o : in.options)
    if (o.mode == CapacityMode::kOnDemand &&
        (!r.rework_price || o.price_per_gpu_hour.micros() < r.rework_price->micros()))
      r.rework_price = o.price_per_gpu_hour;

  i128 total = 0;
  if (auto s = add_reserved_lines(r, total, in, m, choice->split); !s) return s.error();
  int64_t spot_hours = 0;
  if (auto s = add_hourly_lines(r, total, spot_hours, in, m, choice->units); !s) return s.error();
  std::sort(r.reserved.begin(), r.reserved.end(), [](const auto& a, const auto& b) { return a.option < b.option; });
  std::sort(r.hourly.begin(), r.hourly.end(), [](const auto& a, const auto& b) { return a.option < b.option; });
  auto expected = money_of(total, cur);
  if (!expected) return expected.error();
  r.expected_cost = *expected;
  if (in.budget && r.expected_cost.micros() > in.budget->micros())
    return Error::invalid("budget", Message("advisor.mix.over_budget")
                                        .arg("cost", r.expected_cost.to_string())
                                        .arg("budget", in.budget->to_string()));

  const LoadCurve g(m.levels);
  r.reserved_gpu_hours_used = static_cast<int64_t>(g(r.reserved_gpus));
  if (r.reserved_gpus > 0)
    r.reserved_utilization_bp = basis_points(r.reserved_gpu_hours_used, r.reserved_gpus * r.hours);
  r.spot_share_bp = basis_points(spot_hours, r.gpu_hours);

  // Baselines: pure on-demand, and every (reserved option, level) with on-demand above it.
  const i128 od = on_demand_above(m, g, 0, nullptr);
  if (od >= 0) {
    auto mo = money_of(od, cur);
    if (!mo) return mo.error();
    r.on_demand_cost = *mo;
  }
  if (!m.reserved.empty())
    if (auto s = add_best_single(r, in, m, g, od); !s) return s.error();
  set_savings(r, cur);
  r.steps = mix_steps(r, in, m);
  return r;
}

}  // namespace gpurent
