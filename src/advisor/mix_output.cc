// The mix optimizer's output: the steps that show a result's arithmetic (message codes rendered in
// the reader's language, src/messages/<lang>.json, with formulas) and the result's JSON
// (docs/advisor/mix.md).
#include "advisor/mix.h"
#include "advisor/mix_internal.h"

namespace gpurent {

using namespace mix_detail;

namespace {

// Decimal text of an amount in units of 10^-scale: at least 2 decimals, trailing zeros trimmed.
std::string decimal(i128 v, int scale) {
  const bool neg = v < 0;
  if (neg) v = -v;
  i128 div = 1;
  for (int i = 0; i < scale; ++i) div *= 10;
  std::string whole;
  for (i128 w = v / div; w > 0 || whole.empty(); w /= 10) whole.insert(whole.begin(), static_cast<char>('0' + w % 10));
  std::string frac(scale, '0');
  i128 f = v % div;
  for (int i = scale - 1; i >= 0; --i, f /= 10) frac[i] = static_cast<char>('0' + f % 10);
  while (frac.size() > 2 && frac.back() == '0') frac.pop_back();
  return (neg ? "-" : "") + whole + "." + frac;
}

std::string pct_text(int64_t bp) { return decimal(bp, 2) + "%"; }

void step(std::vector<MixStep>& s, Message text, std::string formula, json value) {
  s.push_back({std::move(text), std::move(formula), std::move(value)});
}

// "N1 × p1 + N2 × p2" for the on-demand GPU-hours per option.
std::string on_demand_formula(const MixModel& m, const std::vector<int64_t>& gpu_hours, Currency c) {
  std::string f;
  for (size_t j = 0; j < m.hourly.size(); ++j)
    if (!m.hourly[j].spot && gpu_hours[j] > 0)
      f += (f.empty() ? "" : " + ") + num(gpu_hours[j]) + " GPU-h × " +
           Money(m.hourly[j].price_micros, c).amount_string();
  return f.empty() ? "0" : f;
}

}  // namespace

namespace mix_detail {

// The arithmetic of the result, in the order a reader checks it.
namespace {

// The demand curve, and the expected cost of a spot GPU-hour of each spot option.
void demand_steps(std::vector<MixStep>& s, const MixResult& r, const MixInput& in, const MixModel& m) {
  const std::string cur = currency_code(r.currency);
  step(s,
       Message("advisor.mix.demand")
           .arg("hours", num(r.hours))
           .arg("gpu_hours", num(r.gpu_hours))
           .arg("peak", num(r.peak_gpus))
           .arg("levels", num(r.levels)),
       "Σ_h d_h", r.gpu_hours);
  for (const MixModel::Hourly& h : m.hourly) {
    if (!h.spot) continue;
    const std::string& offer = in.options[h.option].offer;
    const std::string spot = Money(h.price_micros, r.currency).amount_string(),
                      rework = Money(h.rework_micros, r.currency).amount_string();
    step(s,
         Message("advisor.mix.spot_hour_cost")
             .arg("offer", offer)
             .arg("permille", num(in.spot_interruption_permille))
             .arg("rework", rework)
             .arg("currency", cur),
         spot + " + " + num(in.spot_interruption_permille) + "/1000 × " + rework, decimal(h.cost, 9));
  }
}

// The plan: each reservation (and what runs past the horizon), each hourly purchase, the total.
void plan_steps(std::vector<MixStep>& s, const MixResult& r, const MixInput& in) {
  std::string total_formula;
  auto add_term = [&](const Money& mny) {
    total_formula += (total_formula.empty() ? "" : " + ") + mny.amount_string();
  };
  for (const ReservedLine& l : r.reserved) {
    const std::string mode = capacity_mode_name(l.mode), price = l.price.amount_string();
    step(s,
         Message("advisor.mix.reserve")
             .arg("gpus", num(l.gpus))
             .arg("offer", l.offer)
             .arg("mode", mode)
             .arg("hours", num(l.billed_hours)),
         num(l.gpus) + " × " + num(l.billed_hours) + " h × " + price, l.cost.amount_string());
    add_term(l.cost);
    if (l.hours_after_horizon > 0) {
      step(s,
           (in.count_whole_terms ? Message("advisor.mix.after_horizon_included")
                                 : Message("advisor.mix.after_horizon_excluded"))
               .arg("mode", mode)
               .arg("terms", num(l.terms))
               .arg("term_hours", num(term_hours(l.mode)))
               .arg("after", num(l.hours_after_horizon))
               .arg("horizon", num(r.hours)),
           num(l.gpus) + " × " + num(l.hours_after_horizon) + " h × " + price, l.cost_after_horizon.amount_string());
    }
  }
  for (const HourlyLine& l : r.hourly) {
    const std::string price = l.price.amount_string();
    if (l.mode == CapacityMode::kSpot) {
      const std::string rework = r.rework_price ? r.rework_price->amount_string() : price;
      step(s,
           Message("advisor.mix.spot_line")
               .arg("offer", l.offer)
               .arg("gpu_hours", num(l.gpu_hours))
               .arg("peak", num(l.peak_gpus))
               .arg("share", num(in.max_spot_share_pct)),
           num(l.gpu_hours) + " × " + price + " + " + num(l.gpu_hours) + " × " + num(in.spot_interruption_permille) +
               "/1000 × " + rework + " (half-even to 0.000001)",
           Money(l.cost.micros() + l.rework_cost.micros(), r.currency).amount_string());
      add_term(l.cost);
      add_term(l.rework_cost);
    } else {
      step(s,
           Message("advisor.mix.on_demand_line")
               .arg("offer", l.offer)
               .arg("gpu_hours", num(l.gpu_hours))
               .arg("peak", num(l.peak_gpus)),
           num(l.gpu_hours) + " × " + price, l.cost.amount_string());
      add_term(l.cost);
    }
  }
  step(s, Message("advisor.mix.total"), total_formula, r.expected_cost.amount_string());
}

// The plan against pure on-demand and the best single reservation level, and the reserved
// capacity's utilization.
void comparison_steps(std::vector<MixStep>& s, const MixResult& r, const MixModel& m) {
  const LoadCurve g(m.levels);
  std::vector<int64_t> od(m.hourly.size(), 0);
  if (r.on_demand_cost) {
    on_demand_above(m, g, 0, &od);
    step(s, Message("advisor.mix.pure_on_demand"), on_demand_formula(m, od, r.currency),
         r.on_demand_cost->amount_string());
  } else {
    step(s, Message("advisor.mix.pure_on_demand_impossible"), "-", nullptr);
  }
  if (r.best_single) {
    const SingleLevel& b = *r.best_single;
    std::fill(od.begin(), od.end(), 0);
    on_demand_above(m, g, b.gpus, &od);
    if (b.option) {
      const MixModel::Reserved* res = nullptr;
      for (const auto& x : m.reserved)
        if (x.option == *b.option) res = &x;
      step(s,
           Message("advisor.mix.best_single")
               .arg("gpus", num(b.gpus))
               .arg("offer", b.offer)
               .arg("mode", capacity_mode_name(b.mode)),
           num(b.gpus) + " × " + num(res->billed_hours) + " h × " +
               Money(res->price_micros, r.currency).amount_string() + " + " + on_demand_formula(m, od, r.currency),
           b.cost.amount_string());
    } else {
      step(s, Message("advisor.mix.best_single_none"), on_demand_formula(m, od, r.currency),
           b.cost.amount_string());
    }
  }
  auto saving_step = [&](Message text, const std::optional<Money>& base, const std::optional<Money>& saving,
                         const std::optional<int64_t>& bp) {
    if (!saving) return;
    step(s, std::move(text),
         "(" + base->amount_string() + " − " + r.expected_cost.amount_string() + ") / " + base->amount_string() +
             " = " + saving->amount_string() + " / " + base->amount_string() + " = " + pct_text(*bp),
         saving->amount_string());
  };
  saving_step(Message("advisor.mix.saving_vs_on_demand"), r.on_demand_cost, r.saving_vs_on_demand,
              r.saving_vs_on_demand_bp);
  saving_step(Message("advisor.mix.saving_vs_single"),
              r.best_single ? std::optional<Money>(r.best_single->cost) : std::nullopt, r.saving_vs_single,
              r.saving_vs_single_bp);
  if (r.reserved_utilization_bp) {
    step(s, Message("advisor.mix.reserved_utilization"),
         "Σ_h min(d_h, " + num(r.reserved_gpus) + ") / (" + num(r.reserved_gpus) + " × " + num(r.hours) +
             " h) = " + num(r.reserved_gpu_hours_used) + " / " + num(r.reserved_gpus * r.hours) + " = " +
             pct_text(*r.reserved_utilization_bp),
         *r.reserved_utilization_bp);
  }
}

// Which solver chose the plan.
void solver_step(std::vector<MixStep>& s, const MixResult& r) {
  const std::string levels = num(r.levels);
  if (r.solver == "glpk") {
    step(s,
         r.milp_corrected ? Message("advisor.mix.solver_glpk_corrected") : Message("advisor.mix.solver_glpk_confirmed"),
         "min over R of cost(R), " + levels + " levels", r.solver);
  } else {
    step(s,
         !r.milp_failure.empty()   ? Message("advisor.mix.solver_exact_milp_failed").arg("reason", r.milp_failure)
         : r.milp_skipped_nonzeros ? Message("advisor.mix.solver_exact_skipped_milp_work")
                                         .arg("rows", num(*r.milp_skipped_rows))
                                         .arg("nonzeros", num(*r.milp_skipped_nonzeros))
                                         .arg("limit", num(kMaxMilpWork))
         : r.milp_skipped_rows ? Message("advisor.mix.solver_exact_skipped_milp")
                                     .arg("rows", num(*r.milp_skipped_rows))
                                     .arg("limit", num(kMaxMilpRows))
                               : Message("advisor.mix.solver_exact"),
         "min over R of cost(R), " + levels + " levels", r.solver);
  }
}

}  // namespace

std::vector<MixStep> mix_steps(const MixResult& r, const MixInput& in, const MixModel& m) {
  std::vector<MixStep> s;
  demand_steps(s, r, in, m);
  plan_steps(s, r, in);
  comparison_steps(s, r, m);
  solver_step(s, r);
  return s;
}

}  // namespace mix_detail

json to_json(const MixResult& r) {
  auto money = [](const std::optional<Money>& m) { return m ? json(m->amount_string()) : json(nullptr); };
  json reserved = json::array(), hourly = json::array(), steps = json::array();
  for (const ReservedLine& l : r.reserved)
    reserved.push_back({{"offer", l.offer},
                        {"mode", capacity_mode_name(l.mode)},
                        {"gpus", l.gpus},
                        {"price_per_gpu_hour", l.price.amount_string()},
                        {"billed_hours", l.billed_hours},
                        {"cost", l.cost.amount_string()},
                        {"terms", l.terms},
                        {"hours_after_horizon", l.hours_after_horizon},
                        {"cost_after_horizon", l.cost_after_horizon.amount_string()}});
  for (const HourlyLine& l : r.hourly)
    hourly.push_back({{"offer", l.offer},
                      {"mode", capacity_mode_name(l.mode)},
                      {"gpu_hours", l.gpu_hours},
                      {"peak_gpus", l.peak_gpus},
                      {"price_per_gpu_hour", l.price.amount_string()},
                      {"cost", l.cost.amount_string()},
                      {"rework_cost", l.rework_cost.amount_string()}});
  steps = steps_to_json(r.steps);
  json single = nullptr;
  if (r.best_single) {
    const SingleLevel& b = *r.best_single;
    single = {{"offer", b.option ? json(b.offer) : json(nullptr)},
              {"mode", b.option ? json(capacity_mode_name(b.mode)) : json(nullptr)},
              {"gpus", b.gpus},
              {"cost", b.cost.amount_string()}};
  }
  auto saving = [&](const std::optional<Money>& m, const std::optional<int64_t>& bp) {
    return m ? json{{"amount", m->amount_string()}, {"bp", *bp}} : json(nullptr);
  };
  auto opt_int = [](const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); };
  return {
      {"currency", currency_code(r.currency)},
      {"demand", {{"hours", r.hours}, {"gpu_hours", r.gpu_hours}, {"peak_gpus", r.peak_gpus}, {"levels", r.levels}}},
      {"plan",
       {{"reserved", reserved},
        {"hourly", hourly},
        {"reserved_gpus", r.reserved_gpus},
        {"reserved_gpu_hours_used", r.reserved_gpu_hours_used},
        {"reserved_utilization_bp", opt_int(r.reserved_utilization_bp)},
        {"spot_share_bp", r.spot_share_bp}}},
      {"expected_cost", r.expected_cost.amount_string()},
      {"rework_price_per_gpu_hour", money(r.rework_price)},
      {"pure_on_demand_cost", money(r.on_demand_cost)},
      {"best_single_level", single},
      {"savings",
       {{"vs_on_demand", saving(r.saving_vs_on_demand, r.saving_vs_on_demand_bp)},
        {"vs_best_single_level", saving(r.saving_vs_single, r.saving_vs_single_bp)}}},
      {"solver",
       {{"name", r.solver},
        {"corrected_by_exact_check", r.milp_corrected},
        {"milp_skipped_rows", opt_int(r.milp_skipped_rows)},
        {"milp_skipped_nonzeros", opt_int(r.milp_skipped_nonzeros)},
        {"milp_failure", r.milp_failure.empty() ? json(nullptr) : json(r.milp_failure)},
        {"time_us", r.solver_time_us}}},
      {"steps", steps}};
}

}  // namespace gpurent
