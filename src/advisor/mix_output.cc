// The mix optimizer's output: the steps that show a result's arithmetic (en/zh, with formulas) and
// the result's JSON (docs/advisor/mix.md).
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

void step(std::vector<MixStep>& s, std::string en, std::string zh, std::string formula, json value) {
  s.push_back({std::move(en), std::move(zh), std::move(formula), std::move(value)});
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
       "Demand: " + num(r.hours) + " hours, " + num(r.gpu_hours) + " GPU-hours, peak " + num(r.peak_gpus) + " GPUs, " +
           num(r.levels) +
           " distinct hourly levels (the hours' order does not change any cost, so they are solved as a histogram).",
       "需求：共 " + num(r.hours) + " 小时，" + num(r.gpu_hours) + " GPU·小时，峰值 " + num(r.peak_gpus) + " 张 GPU，" +
           num(r.levels) + " 个不同的小时需求水平（小时的先后不影响成本，故按直方图求解）。",
       "Σ_h d_h", r.gpu_hours);
  for (const MixModel::Hourly& h : m.hourly) {
    if (!h.spot) continue;
    const std::string& offer = in.options[h.option].offer;
    const std::string spot = Money(h.price_micros, r.currency).amount_string(),
                      rework = Money(h.rework_micros, r.currency).amount_string();
    step(s,
         "Expected cost of a spot GPU-hour from " + offer + ": the spot price plus " +
             num(in.spot_interruption_permille) + "‰ of the hour re-run at " + rework + " " + cur + ".",
         offer + " 抢占式 GPU·小时的期望成本：抢占价加上 " + num(in.spot_interruption_permille) + "‰ 的中断返工（按 " +
             rework + " " + cur + " 计）。",
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
         "Reserve " + num(l.gpus) + " GPUs of " + l.offer + " (" + mode + ") for " + num(l.billed_hours) +
             " hours, billed whether used or not.",
         "在 " + l.offer + " 预留 " + num(l.gpus) + " 张 GPU（" + mode + "），计费 " + num(l.billed_hours) +
             " 小时，无论是否使用。",
         num(l.gpus) + " × " + num(l.billed_hours) + " h × " + price, l.cost.amount_string());
    add_term(l.cost);
    if (l.hours_after_horizon > 0) {
      const bool counted = in.count_whole_terms;
      step(s,
           "The " + mode + " commitment (" + num(l.terms) + " term(s) of " + num(term_hours(l.mode)) + " h) runs " +
               num(l.hours_after_horizon) + " hours past the " + num(r.hours) + "-hour horizon; that cost is " +
               (counted ? "included above (count_whole_terms)."
                        : "not in the plan's cost: the curve is taken to go on."),
           mode + " 承诺（" + num(l.terms) + " 期，每期 " + num(term_hours(l.mode)) + " 小时）在 " + num(r.hours) +
               " 小时的规划期后还剩 " + num(l.hours_after_horizon) + " 小时；这部分费用" +
               (counted ? "已计入上式（count_whole_terms）。" : "未计入方案成本：视需求曲线为持续的。"),
           num(l.gpus) + " × " + num(l.hours_after_horizon) + " h × " + price, l.cost_after_horizon.amount_string());
    }
  }
  for (const HourlyLine& l : r.hourly) {
    const std::string price = l.price.amount_string();
    if (l.mode == CapacityMode::kSpot) {
      const std::string rework = r.rework_price ? r.rework_price->amount_string() : price;
      step(s,
           "Spot from " + l.offer + ": " + num(l.gpu_hours) + " GPU-hours (at most " + num(l.peak_gpus) +
               " GPUs in an hour, within " + num(in.max_spot_share_pct) +
               "% of each hour's demand), plus the expected rework.",
           "抢占式（" + l.offer + "）：" + num(l.gpu_hours) + " GPU·小时（单小时最多 " + num(l.peak_gpus) +
               " 张，不超过每小时需求的 " + num(in.max_spot_share_pct) + "%），另加期望返工成本。",
           num(l.gpu_hours) + " × " + price + " + " + num(l.gpu_hours) + " × " + num(in.spot_interruption_permille) +
               "/1000 × " + rework + " (half-even to 0.000001)",
           Money(l.cost.micros() + l.rework_cost.micros(), r.currency).amount_string());
      add_term(l.cost);
      add_term(l.rework_cost);
    } else {
      step(s,
           "On-demand from " + l.offer + ": " + num(l.gpu_hours) + " GPU-hours above the reserved capacity (at most " +
               num(l.peak_gpus) + " GPUs in an hour).",
           "按需（" + l.offer + "）：预留容量之外 " + num(l.gpu_hours) + " GPU·小时（单小时最多 " + num(l.peak_gpus) +
               " 张）。",
           num(l.gpu_hours) + " × " + price, l.cost.amount_string());
      add_term(l.cost);
    }
  }
  step(s, "Expected cost of the plan.", "方案的期望总成本。", total_formula, r.expected_cost.amount_string());
}

// The plan against pure on-demand and the best single reservation level, and the reserved
// capacity's utilization.
void comparison_steps(std::vector<MixStep>& s, const MixResult& r, const MixModel& m) {
  const LoadCurve g(m.levels);
  std::vector<int64_t> od(m.hourly.size(), 0);
  if (r.on_demand_cost) {
    on_demand_above(m, g, 0, &od);
    step(s, "Pure on-demand: every GPU-hour of the demand on-demand, cheapest option first.",
         "全部按需：所有需求 GPU·小时按需购买，先用最便宜的选项。", on_demand_formula(m, od, r.currency),
         r.on_demand_cost->amount_string());
  } else {
    step(s, "Pure on-demand cannot serve this curve (no on-demand option, or their max_gpus are below the peak).",
         "全部按需无法满足该需求曲线（没有按需选项，或其 max_gpus 低于峰值）。", "-", nullptr);
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
           "Best single reservation level (the cheapest level of each reserved option, on-demand above it): " +
               num(b.gpus) + " GPUs of " + b.offer + " (" + capacity_mode_name(b.mode) + ").",
           "最佳单一预留水平（每个预留选项的最便宜数量，超出部分按需）：在 " + b.offer + " 预留 " + num(b.gpus) +
               " 张 GPU（" + capacity_mode_name(b.mode) + "）。",
           num(b.gpus) + " × " + num(res->billed_hours) + " h × " +
               Money(res->price_micros, r.currency).amount_string() + " + " + on_demand_formula(m, od, r.currency),
           b.cost.amount_string());
    } else {
      step(s,
           "Best single reservation level: reserving nothing (every reserved option at every level costs more than "
           "on-demand).",
           "最佳单一预留水平：不预留（任何预留选项的任何数量都比全部按需贵）。", on_demand_formula(m, od, r.currency),
           b.cost.amount_string());
    }
  }
  auto saving_step = [&](const char* en, const char* zh, const std::optional<Money>& base,
                         const std::optional<Money>& saving, const std::optional<int64_t>& bp) {
    if (!saving) return;
    step(s, en, zh,
         "(" + base->amount_string() + " − " + r.expected_cost.amount_string() + ") / " + base->amount_string() +
             " = " + saving->amount_string() + " / " + base->amount_string() + " = " + pct_text(*bp),
         saving->amount_string());
  };
  saving_step("Saving against pure on-demand.", "相对全部按需的节省。", r.on_demand_cost, r.saving_vs_on_demand,
              r.saving_vs_on_demand_bp);
  saving_step("Saving against the best single reservation level.", "相对最佳单一预留水平的节省。",
              r.best_single ? std::optional<Money>(r.best_single->cost) : std::nullopt, r.saving_vs_single,
              r.saving_vs_single_bp);
  if (r.reserved_utilization_bp) {
    step(s, "Utilization of the reserved capacity: GPU-hours used over GPU-hours held.",
         "预留容量利用率：实际使用的 GPU·小时 / 持有的 GPU·小时。",
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
         std::string("GLPK (branch-and-cut, one row per demand level) chose the plan; an exact integer check of the "
                     "total reserved "
                     "quantity (the cost is convex in it) ") +
             (r.milp_corrected ? "found a cheaper one, shown here." : "confirmed it."),
         std::string("GLPK（分支切割，每个需求水平一行约束）选出方案；对预留总量的精确整数检验（成本是其凸函数）") +
             (r.milp_corrected ? "找到了更便宜的方案，即此处所示。" : "确认了该方案。"),
         "min over R of cost(R), " + levels + " levels", r.solver);
  } else {
    const std::string skipped = r.milp_skipped_rows ? num(*r.milp_skipped_rows) : "";
    step(s,
         "Exact integer search over the total reserved quantity (the cost is convex in it) chose the plan" +
             (skipped.empty()
                  ? std::string(".")
                  : "; the MILP would have " + skipped + " rows, above its limit of " + num(kMaxMilpRows) + "."),
         "对预留总量的精确整数搜索（成本是其凸函数）选出方案" +
             (skipped.empty() ? std::string("。")
                              : "；MILP 将有 " + skipped + " 行约束，超过上限 " + num(kMaxMilpRows) + "。"),
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
  for (const MixStep& s : r.steps)
    steps.push_back({{"en", s.en}, {"zh", s.zh}, {"formula", s.formula}, {"value", s.value}});
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
        {"time_us", r.solver_time_us}}},
      {"steps", steps}};
}

}  // namespace gpurent
