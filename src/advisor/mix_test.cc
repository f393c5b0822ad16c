#include "advisor/mix.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "core/message.h"

namespace gpurent {
namespace {

using i128 = __int128;

Money usd(const char* s) { return Money::parse(s, Currency::kUSD).value(); }

CapacityOption opt(const char* offer, CapacityMode mode, const char* price, std::optional<int64_t> max = std::nullopt) {
  return {offer, mode, usd(price), max};
}

// Hand-checked example (docs/advisor/mix.md uses the same one).
// Demand 4, 4, 4, 2 GPUs (14 GPU-hours). On-demand 3.00, reserved 1m 2.00, spot 1.00; risk 100‰,
// so a spot GPU-hour is expected to cost 1.00 + 0.1 × 3.00 = 1.30; spot <= 50% of each hour.
// Reserving R GPUs costs 2.00 × 4 h × R = 8R; the hours above R take spot first (cap 2 at 4 GPUs,
// 1 at 2 GPUs), then on-demand:
//   R=0: 3 × (2×1.3 + 2×3) + (1.3 + 3) = 25.8 + 4.3 = 30.1
//   R=1: 8 + 3 × (2×1.3 + 3) + 1.3      = 8 + 16.8 + 1.3 = 26.1
//   R=2: 16 + 3 × (2×1.3)               = 23.8   <- optimum: 16 reserved + 6 spot + 1.80 rework
//   R=3: 24 + 3 × 1.3 = 27.9;  R=4: 32
// Pure on-demand: 14 × 3 = 42. Single levels (reserved + on-demand, no spot): 8q + 3 Σ max(0, d−q)
//   = 42, 38, 34, 33, 32 for q = 0..4 -> best q = 4 at 32.
// Savings: 42 − 23.8 = 18.20 (4333 bp); 32 − 23.8 = 8.20 (2562.5 -> 2562 bp, half to even).
// Reserved utilization Σ min(d, 2) / (2 × 4) = 8/8; spot share 6/14 = 4285.7 -> 4286 bp.
// The 1-month term (730 h) runs 726 h past the 4-hour horizon: 2 × 726 × 2.00 = 2904.
MixInput hand_input() {
  MixInput in;
  in.demand.gpus = {4, 4, 4, 2};
  in.options = {opt("gpu-a", CapacityMode::kOnDemand, "3.00"), opt("gpu-a", CapacityMode::kReserved1m, "2.00"),
                opt("gpu-a", CapacityMode::kSpot, "1.00")};
  in.spot_interruption_permille = 100;
  in.max_spot_share_pct = 50;
  return in;
}

TEST(MixOptimizer, HandCheckedPlan) {
  for (MixSolver solver : {MixSolver::kMilp, MixSolver::kExact}) {
    auto r = compute_mix(hand_input(), solver);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->expected_cost.amount_string(), "23.80");
    ASSERT_EQ(r->reserved.size(), 1u);
    EXPECT_EQ(r->reserved[0].gpus, 2);
    EXPECT_EQ(r->reserved[0].cost.amount_string(), "16.00");
    EXPECT_EQ(r->reserved[0].terms, 1);
    EXPECT_EQ(r->reserved[0].hours_after_horizon, 726);
    EXPECT_EQ(r->reserved[0].cost_after_horizon.amount_string(), "2904.00");
    ASSERT_EQ(r->hourly.size(), 1u);
    EXPECT_EQ(r->hourly[0].mode, CapacityMode::kSpot);
    EXPECT_EQ(r->hourly[0].gpu_hours, 6);
    EXPECT_EQ(r->hourly[0].peak_gpus, 2);
    EXPECT_EQ(r->hourly[0].cost.amount_string(), "6.00");
    EXPECT_EQ(r->hourly[0].rework_cost.amount_string(), "1.80");
    EXPECT_EQ(r->on_demand_cost->amount_string(), "42.00");
    ASSERT_TRUE(r->best_single && r->best_single->option);
    EXPECT_EQ(*r->best_single->option, 1u);
    EXPECT_EQ(r->best_single->gpus, 4);
    EXPECT_EQ(r->best_single->cost.amount_string(), "32.00");
    EXPECT_EQ(r->saving_vs_on_demand->amount_string(), "18.20");
    EXPECT_EQ(*r->saving_vs_on_demand_bp, 4333);
    EXPECT_EQ(r->saving_vs_single->amount_string(), "8.20");
    EXPECT_EQ(*r->saving_vs_single_bp, 2562);
    EXPECT_EQ(*r->reserved_utilization_bp, 10000);
    EXPECT_EQ(r->spot_share_bp, 4286);
    EXPECT_EQ(r->rework_price->amount_string(), "3.00");
    EXPECT_FALSE(r->milp_corrected);
    EXPECT_EQ(r->solver, solver == MixSolver::kMilp ? "glpk" : "exact");
  }
}

TEST(MixOptimizer, StepsShowTheArithmetic) {
  auto r = compute_mix(hand_input());
  ASSERT_TRUE(r.ok());
  const json j = to_json(*r);
  EXPECT_EQ(j["expected_cost"], "23.80");
  EXPECT_EQ(j["plan"]["reserved"][0]["mode"], "reserved_1m");
  EXPECT_EQ(j["savings"]["vs_on_demand"]["bp"], 4333);
  EXPECT_EQ(j["best_single_level"]["gpus"], 4);
  // Every step is a catalogued code, worded in each language; the JSON carries the code and its
  // English text (the server words it in the reader's language).
  std::map<std::string, json> by_formula;
  std::map<std::string, json> by_code;
  for (const json& s : j["steps"]) {
    const std::string code = s["text_message"]["code"];
    EXPECT_EQ(code.rfind("advisor.mix.", 0), 0u) << code;
    for (const auto& lang : message_languages()) EXPECT_TRUE(has_message(lang, code)) << lang << " " << code;
    auto m = message_from_json(s["text_message"]);
    ASSERT_TRUE(m.ok()) << s.dump();
    EXPECT_EQ(s["text"], render_en(*m));
    EXPECT_FALSE(render(*m, "zh").empty());
    EXPECT_FALSE(s["formula"].get<std::string>().empty());
    by_formula[s["formula"]] = s["value"];
    by_code[code] = s;
  }
  ASSERT_EQ(r->steps.size(), j["steps"].size());
  EXPECT_EQ(render_en(r->steps[0].text),
            "Demand: 4 hours, 14 GPU-hours, peak 4 GPUs, 2 distinct hourly levels (the hours' order does not change "
            "any cost, so they are solved as a histogram).");
  EXPECT_EQ(render(r->steps[0].text, "zh"),
            "需求：共 4 小时，14 GPU·小时，峰值 4 张 GPU，2 个不同的小时需求水平（小时的先后不影响成本，故按直方图求解）。");
  EXPECT_EQ(by_code["advisor.mix.spot_hour_cost"]["text"],
            "Expected cost of a spot GPU-hour from gpu-a: the spot price plus 100‰ of the hour re-run at 3.00 USD.");
  EXPECT_EQ(by_code["advisor.mix.reserve"]["text"],
            "Reserve 2 GPUs of gpu-a (reserved_1m) for 4 hours, billed whether used or not.");
  EXPECT_EQ(render(*message_from_json(by_code["advisor.mix.reserve"]["text_message"]), "zh"),
            "在 gpu-a 预留 2 张 GPU（reserved_1m），计费 4 小时，无论是否使用。");
  EXPECT_EQ(by_code["advisor.mix.after_horizon_excluded"]["text"],
            "The reserved_1m commitment (1 term(s) of 730 h) runs 726 hours past the 4-hour horizon; that cost is not "
            "in the plan's cost: the curve is taken to go on.");
  EXPECT_EQ(render(*message_from_json(by_code["advisor.mix.after_horizon_excluded"]["text_message"]), "zh"),
            "reserved_1m 承诺（1 期，每期 730 小时）在 4 小时的规划期后还剩 726 小时；这部分费用未计入方案成本：视需求曲线为持续的。");
  EXPECT_EQ(by_code["advisor.mix.spot_line"]["text"],
            "Spot from gpu-a: 6 GPU-hours (at most 2 GPUs in an hour, within 50% of each hour's demand), plus the "
            "expected rework.");
  EXPECT_EQ(by_code["advisor.mix.best_single"]["text"],
            "Best single reservation level (the cheapest level of each reserved option, on-demand above it): 4 GPUs "
            "of gpu-a (reserved_1m).");
  EXPECT_EQ(by_code["advisor.mix.total"]["value"], "23.80");
  EXPECT_EQ(render(r->steps.back().text, "zh"),
            "GLPK（分支切割，每个需求水平一行约束）选出方案；对预留总量的精确整数检验（成本是其凸函数）确认了该方案。");
  EXPECT_EQ(by_formula["1.00 + 100/1000 × 3.00"], "1.30");
  EXPECT_EQ(by_formula["2 × 4 h × 2.00"], "16.00");
  EXPECT_EQ(by_formula["2 × 726 h × 2.00"], "2904.00");
  EXPECT_EQ(by_formula["16.00 + 6.00 + 1.80"], "23.80");
  EXPECT_EQ(by_formula["14 GPU-h × 3.00"], "42.00");
  EXPECT_EQ(by_formula["4 × 4 h × 2.00 + 0"], "32.00");
  EXPECT_EQ(by_formula["(42.00 − 23.80) / 42.00 = 18.20 / 42.00 = 43.33%"], "18.20");
  EXPECT_EQ(by_formula["Σ_h min(d_h, 2) / (2 × 4 h) = 8 / 8 = 100.00%"], 10000);
}

// count_whole_terms bills the full 730-hour term: 2.00 × 730 = 1460 per reserved GPU, far above
// on-demand, so nothing is reserved: 30.10 (R=0 above), and the best single level reserves nothing.
TEST(MixOptimizer, WholeTermsMakeShortCurvesStayOffReservations) {
  MixInput in = hand_input();
  in.count_whole_terms = true;
  auto r = compute_mix(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->expected_cost.amount_string(), "30.10");
  EXPECT_TRUE(r->reserved.empty());
  EXPECT_FALSE(r->reserved_utilization_bp);
  ASSERT_TRUE(r->best_single);
  EXPECT_FALSE(r->best_single->option);
  EXPECT_EQ(r->best_single->cost.amount_string(), "42.00");
}

// Whole nodes: reserve in units of 8 GPUs. Demand 20 GPUs for 10 hours, 4 for 10 hours; reserved
// 12m 1.00 (at most 16 GPUs), on-demand 2.00. Units: 0 -> 2 × 240 = 480; 8 -> 160 + 2 × (120) =
// 400; 16 -> 320 + 2 × 40 = 400 (a tie: the smaller commitment wins); 24 exceeds max_gpus.
TEST(MixOptimizer, ReservationUnitsAndCaps) {
  MixInput in;
  in.demand.gpus.assign(10, 20);
  in.demand.gpus.insert(in.demand.gpus.end(), 10, 4);
  in.options = {opt("n", CapacityMode::kOnDemand, "2.00"), opt("n", CapacityMode::kReserved12m, "1.00", 16)};
  in.reservation_unit_gpus = 8;
  for (MixSolver solver : {MixSolver::kMilp, MixSolver::kExact}) {
    auto r = compute_mix(in, solver);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->expected_cost.amount_string(), "400.00");
    ASSERT_EQ(r->reserved.size(), 1u);
    EXPECT_EQ(r->reserved[0].gpus, 8);
    EXPECT_EQ(r->reserved_gpu_hours_used, 10 * 8 + 10 * 4);
    EXPECT_EQ(*r->reserved_utilization_bp, 7500);
  }
}

// Reserved at the on-demand price: every commitment from 0 to the whole demand costs the same, and
// the plan takes the smallest (none). The exact optimum is found by bisection, not by walking from
// GLPK's answer a unit at a time (a million steps here, each over every level).
TEST(MixOptimizer, AFlatCostTakesTheSmallestCommitment) {
  MixInput in;
  for (int64_t h = 0; h < 50; ++h) in.demand.gpus.push_back(999'000 + h * 20);
  in.options = {opt("n", CapacityMode::kOnDemand, "2.00"), opt("n", CapacityMode::kReserved1m, "2.00")};
  for (MixSolver solver : {MixSolver::kMilp, MixSolver::kExact}) {
    auto r = compute_mix(in, solver);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE(r->reserved.empty()) << r->reserved[0].gpus << " GPUs reserved";
    EXPECT_FALSE(r->milp_corrected);
    i128 gpu_hours = 0;
    for (int64_t g : in.demand.gpus) gpu_hours += g;
    EXPECT_EQ(r->expected_cost.micros(), static_cast<int64_t>(gpu_hours * 2'000'000));
  }
}

// 10^7 GPU-hours at 1,000,000 a GPU-hour is 10^19 micro-units: past int64, an error naming the
// options (the docs: every error names its field).
TEST(MixOptimizer, ACostPastTheMoneyRangeNamesTheOptions) {
  MixInput in;
  in.demand.gpus.assign(10, 1'000'000);
  in.options = {opt("n", CapacityMode::kOnDemand, "1000000")};
  for (MixSolver solver : {MixSolver::kMilp, MixSolver::kExact}) {
    auto r = compute_mix(in, solver);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Code::kInvalid);
    ASSERT_EQ(r.error().fields.size(), 1u) << r.error().message;
    EXPECT_EQ(r.error().fields[0].field, "options");
    EXPECT_EQ(r.error().fields[0].coded.code, "advisor.mix.money_overflow");
  }
}

TEST(MixOptimizer, BudgetAndInfeasibleDemandAreClearErrors) {
  MixInput in = hand_input();
  in.budget = usd("20.00");
  auto r = compute_mix(in);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "budget: the cheapest plan costs 23.80 USD, above the budget 20.00 USD");
  EXPECT_EQ(r.error().fields[0].coded.code, "advisor.mix.over_budget");
  EXPECT_EQ(render(r.error().detail, "zh"), "budget：最便宜的方案花费 23.80 USD，超出预算 20.00 USD");
  in.budget = usd("23.80");
  EXPECT_TRUE(compute_mix(in).ok());

  MixInput tight;
  tight.demand.gpus = {1, 6, 2};
  tight.options = {opt("a", CapacityMode::kReserved1m, "1.00", 2), opt("a", CapacityMode::kSpot, "0.50", 4)};
  tight.max_spot_share_pct = 50;
  auto t = compute_mix(tight);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message,
            "options: hour 1 needs 6 GPUs but the options supply at most 5 (reserved 2, on-demand 0, spot 3 under the "
            "50% cap)");
  // Pure on-demand is impossible without on-demand; the plan itself is fine with enough spot.
  tight.max_spot_share_pct = 100;
  auto ok = compute_mix(tight);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_FALSE(ok->on_demand_cost);
  EXPECT_FALSE(ok->saving_vs_on_demand);
}

// The rework of a spot line is rounded half to even once, at the micro-unit: spot 0.000001,
// on-demand 0.000002, risk 250‰: one GPU-hour's rework is 0.5 micro -> 0; three: 1.5 -> 2.
TEST(MixOptimizer, ReworkRoundsHalfToEven) {
  MixInput in;
  in.options = {opt("s", CapacityMode::kOnDemand, "0.000002"), opt("s", CapacityMode::kSpot, "0.000001")};
  in.spot_interruption_permille = 250;
  in.demand.gpus = {1};
  auto one = compute_mix(in);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->hourly[0].rework_cost.micros(), 0);
  EXPECT_EQ(one->expected_cost.micros(), 1);
  in.demand.gpus = {1, 1, 1};
  auto three = compute_mix(in);
  ASSERT_TRUE(three.ok());
  EXPECT_EQ(three->hourly[0].rework_cost.micros(), 2);
  EXPECT_EQ(three->expected_cost.micros(), 5);
}

// Fewer rows than the limit but many hourly options to cover each: rows × non-zeros past
// kMaxMilpWork (GLPK took 20 s on 4000 such rows) goes to the exact search too, and says why.
TEST(MixOptimizer, ManyOptionsPerRowUseTheExactSearch) {
  MixInput in;
  for (int64_t h = 0; h < 2000; ++h) in.demand.gpus.push_back(1000 + h);
  in.options.push_back(opt("r", CapacityMode::kReserved1m, "1.00"));
  for (int i = 0; i < 62; ++i)
    in.options.push_back(
        {"o" + std::to_string(i), CapacityMode::kOnDemand, Money(2'000'000 + i * 10'000, Currency::kUSD), 200});
  in.options.push_back(opt("big", CapacityMode::kOnDemand, "9.00"));
  auto r = compute_mix(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->solver, "exact");
  EXPECT_EQ(r->milp_skipped_rows, 2000);
  EXPECT_EQ(r->milp_skipped_nonzeros, 2000 * 64);
  const std::string last = render_en(r->steps.back().text);
  EXPECT_NE(last.find("the MILP would have 2000 rows and 128000 non-zeros"), std::string::npos) << last;
  auto exact = compute_mix(in, MixSolver::kExact);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->expected_cost, r->expected_cost);
  EXPECT_FALSE(exact->milp_skipped_nonzeros);
  EXPECT_EQ(compute_mix(hand_input())->solver, "glpk") << "a small MILP still goes to GLPK";
}

// GLPK only proposes the plan: should it not finish (here its time limit, 1 ms for a MILP of 3,000
// rows that takes it about a second), the exact search's plan is the answer and says why.
TEST(MixOptimizer, AMilpThatDoesNotFinishLeavesThePlanToTheExactSearch) {
  MixInput in = hand_input();
  in.demand.gpus.clear();
  for (int64_t g = 0; g < 3000; ++g) in.demand.gpus.push_back(g);
  auto r = compute_mix(in, MixSolver::kMilp, 1);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->solver, "exact");
  EXPECT_NE(r->milp_failure.find("GLPK hit its time limit"), std::string::npos) << r->milp_failure;
  EXPECT_FALSE(r->milp_skipped_rows);
  const std::string last = render_en(r->steps.back().text);
  EXPECT_NE(last.find("the MILP did not finish: GLPK hit its time limit"), std::string::npos) << last;
  EXPECT_EQ(to_json(*r)["solver"]["milp_failure"], r->milp_failure);
  auto exact = compute_mix(in, MixSolver::kExact);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->expected_cost, r->expected_cost);
  EXPECT_TRUE(to_json(*exact)["solver"]["milp_failure"].is_null());
}

// A curve with more distinct levels than the MILP's row limit is solved by the exact search, and
// the result says so.
TEST(MixOptimizer, LargeCurvesUseTheExactSearch) {
  MixInput in = hand_input();
  in.demand.gpus.clear();
  for (int64_t g = 0; g <= kMaxMilpRows + 500; ++g) in.demand.gpus.push_back(g);
  auto r = compute_mix(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->solver, "exact");
  EXPECT_EQ(r->milp_skipped_rows, kMaxMilpRows + 500);
  const std::string last = render_en(r->steps.back().text);
  EXPECT_NE(last.find("the MILP would have 4500 rows, above its limit of 4000."), std::string::npos) << last;
  EXPECT_NE(render(r->steps.back().text, "zh").find("MILP 将有 4500 行约束，超过上限 4000。"), std::string::npos)
      << render(r->steps.back().text, "zh");
  auto exact = compute_mix(in, MixSolver::kExact);
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->expected_cost, r->expected_cost);
  EXPECT_FALSE(exact->milp_skipped_rows);
}

TEST(MixOptimizer, OptionsFromAnOffer) {
  Offer o;
  o.name = "runpod-h100";
  o.prices.on_demand = usd("2.99");
  o.prices.reserved_1m = usd("2.84");
  o.prices.reserved_12m = usd("2.39");
  o.prices.spot = usd("2.69");
  const auto opts = options_from_offer(o);
  ASSERT_EQ(opts.size(), 4u);
  EXPECT_EQ(opts[0].mode, CapacityMode::kOnDemand);
  EXPECT_EQ(opts[1].mode, CapacityMode::kReserved1m);
  EXPECT_EQ(opts[2].mode, CapacityMode::kReserved12m);
  EXPECT_EQ(opts[3].mode, CapacityMode::kSpot);
  EXPECT_EQ(opts[3].price_per_gpu_hour.amount_string(), "2.69");
  EXPECT_EQ(opts[2].offer, "runpod-h100");
}

TEST(MixInputParse, ReadsAFullBody) {
  const json body = json::parse(R"({
    "currency": "CNY",
    "demand": {"gpus_per_hour": [8, 16, 0], "start": "2026-01-01T00:00:00Z"},
    "options": [{"offer": "huadong-910b", "mode": "on_demand", "price_per_gpu_hour": "11.00"},
                {"offer": "huadong-910b", "mode": "reserved_12m", "price_per_gpu_hour": "7.90", "max_gpus": 64},
                {"offer": "huadong-910b", "mode": "spot", "price_per_gpu_hour": "5.50", "max_gpus": 32}],
    "spot_interruption_permille": 80, "max_spot_share_pct": 25, "budget": "100000",
    "reservation_unit_gpus": 8, "count_whole_terms": true})");
  auto in = parse_mix_input(body);
  ASSERT_TRUE(in.ok()) << in.error().message;
  EXPECT_EQ(in->currency, Currency::kCNY);
  EXPECT_EQ(in->demand.gpus, (std::vector<int64_t>{8, 16, 0}));
  EXPECT_TRUE(in->demand.start);
  EXPECT_EQ(in->options[1].max_gpus, 64);
  EXPECT_EQ(in->options[2].price_per_gpu_hour.to_string(), "5.50 CNY");
  EXPECT_EQ(in->spot_interruption_permille, 80);
  EXPECT_EQ(in->budget->amount_string(), "100000.00");
  EXPECT_EQ(in->reservation_unit_gpus, 8);
  EXPECT_TRUE(in->count_whole_terms);

  auto csv = parse_mix_input(json::parse(R"({"demand": {"csv": "hour,gpus\n0,3\n1,5\n"},
      "options": [{"offer": "a", "mode": "on_demand", "price_per_gpu_hour": "1"}]})"));
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  EXPECT_EQ(csv->demand.gpus, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(csv->max_spot_share_pct, 100);
  EXPECT_EQ(csv->reservation_unit_gpus, 1);
}

TEST(MixInputParse, EveryBadFieldIsNamed) {
  auto errors_of = [](const char* text) {
    auto r = parse_mix_input(json::parse(text));
    std::map<std::string, std::string> out;
    if (!r.ok())
      for (const auto& f : r.error().fields) out[f.field] = f.reason;
    return out;
  };
  auto e = errors_of(R"({"demand": {"gpus_per_hour": [1, 2.5]}, "typo": 1,
      "options": [{"offer": "a", "mode": "weekly", "price_per_gpu_hour": "-1"}],
      "spot_interruption_permille": 1001, "max_spot_share_pct": 101, "reservation_unit_gpus": 0})");
  EXPECT_EQ(e["demand.gpus_per_hour[1]"], "must be a whole number of GPUs");
  EXPECT_EQ(e["typo"], "unknown field");
  EXPECT_NE(e["options[0].mode"].find("reserved_12m"), std::string::npos);
  EXPECT_NE(e["options[0].price_per_gpu_hour"].find("negative"), std::string::npos)
      << e["options[0].price_per_gpu_hour"];
  EXPECT_EQ(e["spot_interruption_permille"], "must be at most 1000 (got 1001)");
  EXPECT_EQ(e["max_spot_share_pct"], "must be at most 100 (got 101)");
  EXPECT_EQ(e["reservation_unit_gpus"], "must be at least 1 (got 0)");

  e = errors_of(R"({"demand": {"gpus_per_hour": []}, "options": []})");
  EXPECT_EQ(e["demand.gpus_per_hour"], "is empty (at least one hour is needed)");
  e = errors_of(
      R"({"demand": {"gpus_per_hour": [0, 0]}, "options": [{"offer": "a", "mode": "spot", "price_per_gpu_hour": "1"}]})");
  EXPECT_EQ(e["demand.gpus_per_hour"], "every hour needs 0 GPUs: there is nothing to buy");
  e = errors_of(R"({"demand": {"gpus_per_hour": [1, -1]}, "options": []})");
  EXPECT_EQ(e["demand.gpus_per_hour[1]"], "must be from 0 to 1000000 GPUs (got -1)");
  e = errors_of(R"({"demand": {"gpus_per_hour": [1], "csv": "1"}, "options": []})");
  EXPECT_EQ(e["demand.csv"], "give either gpus_per_hour or csv, not both");
  e = errors_of(R"({"demand": {"csv": "gpus\n1\nx\n"}, "options": []})");
  EXPECT_EQ(e["demand.csv"], "line 3, column gpus: expected a whole number of GPUs from 0 to 1000000, got \"x\"");
  e = errors_of(R"({"demand": {"gpus_per_hour": [4]}, "reservation_unit_gpus": 8, "budget": "0",
      "options": [{"offer": "a", "mode": "on_demand", "price_per_gpu_hour": "0"},
                  {"offer": "a", "mode": "reserved_1m", "price_per_gpu_hour": "1", "max_gpus": 4},
                  {"offer": "a", "mode": "on_demand", "price_per_gpu_hour": "2"}]})");
  EXPECT_EQ(e["options[0].price_per_gpu_hour"], "must be positive (got 0.00)");
  EXPECT_EQ(e["options[1].max_gpus"], "must be at least reservation_unit_gpus (8) for a reserved option (got 4)");
  EXPECT_EQ(e["options[2]"], "repeats options[0] (same offer and mode)");
  EXPECT_EQ(e["budget"], "must be positive (got 0.00)");
  e = errors_of(R"({"demand": {"gpus_per_hour": [4]}, "options": []})");
  EXPECT_EQ(e["options"], "must list at least one capacity option");
  e = errors_of(R"({"options": [{"offer": "a", "mode": "spot", "price_per_gpu_hour": "1"}]})");
  EXPECT_EQ(e["demand"], "is required");

  // The reasons are message codes, the demand's own kept through the parser.
  auto r = parse_mix_input(json::parse(R"({"demand": {"gpus_per_hour": [1, -1]}, "options": []})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields[0].coded.code, "advisor.demand.gpus_range");
  EXPECT_EQ(render(r.error().fields[0].coded, "zh"), "必须在 0 到 1000000 张 GPU 之间（实际为 -1）");
  r = parse_mix_input(json::parse(R"({"demand": {"gpus_per_hour": [4]},
      "options": [{"offer": "a", "mode": "on_demand", "price_per_gpu_hour": "1"},
                  {"offer": "a", "mode": "on_demand", "price_per_gpu_hour": "2"}]})"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields[0].coded.code, "advisor.mix.repeated_option");
  EXPECT_EQ(render(r.error().detail, "zh"), "options[1]：与 options[0] 重复（报价和模式相同）");
}

// ---- Brute force: every reserved vector, every allocation of every hour (nothing assumed about
// fungibility, greedy fills or convexity). Costs in nano-units, from the model's definition. ----

i128 spot_hour_nanos(const MixInput& in, const CapacityOption& o) {
  int64_t rework = o.price_per_gpu_hour.micros();
  bool any_od = false;
  for (const auto& x : in.options)
    if (x.mode == CapacityMode::kOnDemand)
      rework = any_od ? std::min(rework, x.price_per_gpu_hour.micros()) : x.price_per_gpu_hour.micros(), any_od = true;
  return static_cast<i128>(o.price_per_gpu_hour.micros()) * 1000 +
         static_cast<i128>(in.spot_interruption_permille) * rework;
}

i128 hour_nanos(const MixInput& in, const CapacityOption& o) {
  return o.mode == CapacityMode::kSpot ? spot_hour_nanos(in, o)
                                       : static_cast<i128>(o.price_per_gpu_hour.micros()) * 1000;
}

int64_t billed_hours(const MixInput& in, const CapacityOption& o) {
  const auto h = static_cast<int64_t>(in.demand.gpus.size());
  const int64_t t = term_hours(o.mode);
  return in.count_whole_terms ? (h + t - 1) / t * t : h;
}

// Cheapest cover of one hour of d GPUs with `reserved` GPUs held: every allocation of the
// on-demand/spot options (each 0..min(cap, d)). -1 when none covers it.
i128 brute_hour(const MixInput& in, int64_t d, int64_t reserved, bool allow_spot) {
  std::vector<size_t> hourly;
  for (size_t i = 0; i < in.options.size(); ++i)
    if (!is_reserved(in.options[i].mode) && (allow_spot || in.options[i].mode != CapacityMode::kSpot))
      hourly.push_back(i);
  i128 best = -1;
  std::vector<int64_t> x(hourly.size(), 0);
  for (;;) {
    int64_t cover = reserved, spot = 0;
    i128 cost = 0;
    for (size_t k = 0; k < hourly.size(); ++k) {
      const CapacityOption& o = in.options[hourly[k]];
      cover += x[k];
      if (o.mode == CapacityMode::kSpot) spot += x[k];
      cost += x[k] * hour_nanos(in, o);
    }
    if (cover >= d && spot * 100 <= in.max_spot_share_pct * d && (best < 0 || cost < best)) best = cost;
    size_t k = 0;
    for (; k < hourly.size(); ++k) {
      const int64_t cap = std::min(d, in.options[hourly[k]].max_gpus.value_or(d));
      if (x[k] < cap) {
        ++x[k];
        break;
      }
      x[k] = 0;
    }
    if (k == hourly.size()) return best;
  }
}

// Cost of the best plan for fixed reserved GPUs per option (nano-units); -1 if infeasible.
i128 brute_fixed(const MixInput& in, const std::vector<int64_t>& reserved_gpus, bool allow_spot,
                 std::map<std::pair<int64_t, int64_t>, i128>& memo) {
  i128 cost = 0;
  int64_t held = 0;
  for (size_t i = 0; i < in.options.size(); ++i) {
    if (!reserved_gpus[i]) continue;
    held += reserved_gpus[i];
    cost += static_cast<i128>(reserved_gpus[i]) * billed_hours(in, in.options[i]) *
            in.options[i].price_per_gpu_hour.micros() * 1000;
  }
  for (int64_t d : in.demand.gpus) {
    auto key = std::make_pair(d, held);  // an hour's choices depend on its demand and the GPUs held
    auto it = memo.find(key);
    if (it == memo.end()) it = memo.emplace(key, brute_hour(in, d, held, allow_spot)).first;
    if (it->second < 0) return -1;
    cost += it->second;
  }
  return cost;
}

struct Brute {
  i128 optimum = -1;  // -1: no feasible plan
};

Brute brute_force(const MixInput& in) {
  const int64_t peak = *std::max_element(in.demand.gpus.begin(), in.demand.gpus.end());
  const int64_t unit = in.reservation_unit_gpus;
  std::vector<size_t> res;
  for (size_t i = 0; i < in.options.size(); ++i)
    if (is_reserved(in.options[i].mode)) res.push_back(i);
  std::vector<int64_t> gpus(in.options.size(), 0);
  std::map<std::pair<int64_t, int64_t>, i128> memo;
  Brute b;
  for (;;) {
    const i128 c = brute_fixed(in, gpus, true, memo);
    if (c >= 0 && (b.optimum < 0 || c < b.optimum)) b.optimum = c;
    size_t k = 0;
    for (; k < res.size(); ++k) {
      const CapacityOption& o = in.options[res[k]];
      const int64_t cap = std::min(o.max_gpus.value_or(peak + unit), peak + unit);  // beyond the peak only adds cost
      if (gpus[res[k]] + unit <= cap) {
        gpus[res[k]] += unit;
        break;
      }
      gpus[res[k]] = 0;
    }
    if (k == res.size()) return b;
  }
}

// The plan's exact expected cost in nano-units, from its lines.
i128 plan_nanos(const MixInput& in, const MixResult& r) {
  i128 c = 0;
  for (const auto& l : r.reserved) c += static_cast<i128>(l.cost.micros()) * 1000;
  for (const auto& l : r.hourly) c += static_cast<i128>(l.gpu_hours) * hour_nanos(in, in.options[l.option]);
  return c;
}

MixInput random_input(std::mt19937_64& rng, int max_hours, int max_demand, int max_options) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  MixInput in;
  const int64_t hours = pick(1, max_hours);
  for (int64_t h = 0; h < hours; ++h) in.demand.gpus.push_back(pick(0, max_demand));
  in.demand.gpus[pick(0, hours - 1)] = pick(1, max_demand);
  in.reservation_unit_gpus = pick(1, 3);
  const CapacityMode modes[] = {CapacityMode::kOnDemand, CapacityMode::kReserved1m, CapacityMode::kReserved12m,
                                CapacityMode::kReserved36m, CapacityMode::kSpot};
  const int64_t n = pick(2, max_options);
  while (static_cast<int64_t>(in.options.size()) < n) {
    CapacityOption o{pick(0, 1) ? "a" : "b", modes[pick(0, 4)], Money(pick(1, 400) * 10'000, Currency::kUSD),
                     std::nullopt};
    if (pick(0, 2) == 0) o.max_gpus = pick(is_reserved(o.mode) ? in.reservation_unit_gpus : 1, max_demand);
    bool dup = false;
    for (const auto& x : in.options) dup = dup || (x.offer == o.offer && x.mode == o.mode);
    if (!dup) in.options.push_back(o);
  }
  in.spot_interruption_permille = pick(0, 4) == 0 ? 0 : pick(0, 1000);
  const int64_t pcts[] = {0, 25, 50, 100, pick(0, 100)};
  in.max_spot_share_pct = pcts[pick(0, 4)];
  in.count_whole_terms = pick(0, 3) == 0;
  return in;
}

// 200 random small instances: the MILP (GLPK's own choice and the final plan) and the exact
// search against brute force.
TEST(MixOptimality, MatchesBruteForceOnSmallInstances) {
  std::mt19937_64 rng(2024);
  int feasible = 0, glpk_exact = 0;
  for (int round = 0; round < 200; ++round) {
    const MixInput in = random_input(rng, 24, 10, 3);
    const Brute b = brute_force(in);
    auto milp = compute_mix(in, MixSolver::kMilp);
    auto exact = compute_mix(in, MixSolver::kExact);
    ASSERT_EQ(milp.ok(), b.optimum >= 0) << "round " << round << ": " << (milp.ok() ? "" : milp.error().message);
    ASSERT_EQ(exact.ok(), b.optimum >= 0) << "round " << round;
    if (b.optimum < 0) {
      EXPECT_EQ(milp.error().fields[0].field, "options");
      continue;
    }
    ++feasible;
    EXPECT_TRUE(plan_nanos(in, *milp) == b.optimum) << "round " << round;
    EXPECT_TRUE(plan_nanos(in, *exact) == b.optimum) << "round " << round;
    // GLPK's own reserved quantities, completed by the brute-force hourly fill.
    auto prepared = prepare_mix(in);
    ASSERT_TRUE(prepared.ok());
    auto raw = solve_mix_milp(in, *prepared);
    ASSERT_TRUE(raw.ok()) << raw.error().message;
    std::map<std::pair<int64_t, int64_t>, i128> memo;
    glpk_exact += brute_fixed(in, *raw, true, memo) == b.optimum;
    // The baselines are plans too: never cheaper than the optimum.
    if (milp->on_demand_cost) {
      EXPECT_GE(milp->saving_vs_on_demand->micros(), 0);
    }
    if (milp->best_single) {
      EXPECT_GE(milp->saving_vs_single->micros(), 0) << "round " << round;
    }
    i128 line_sum = 0;
    for (const auto& l : milp->reserved) line_sum += l.cost.micros();
    for (const auto& l : milp->hourly) line_sum += l.cost.micros() + l.rework_cost.micros();
    EXPECT_TRUE(line_sum == milp->expected_cost.micros());
  }
  EXPECT_GT(feasible, 120);
  EXPECT_EQ(glpk_exact, feasible);  // GLPK alone already finds the optimum on these
}

// The baselines by brute force: pure on-demand, and each reserved option at each level with
// on-demand (no spot) above it.
TEST(MixOptimality, BaselinesMatchBruteForce) {
  std::mt19937_64 rng(99);
  int checked = 0;
  for (int round = 0; round < 150; ++round) {
    const MixInput in = random_input(rng, 24, 10, 3);
    auto r = compute_mix(in, MixSolver::kExact);
    if (!r.ok()) continue;
    const int64_t peak = *std::max_element(in.demand.gpus.begin(), in.demand.gpus.end());
    std::map<std::pair<int64_t, int64_t>, i128> memo;
    std::vector<int64_t> none(in.options.size(), 0);
    const i128 od = brute_fixed(in, none, false, memo);
    ASSERT_EQ(r->on_demand_cost.has_value(), od >= 0) << "round " << round;
    if (od >= 0) {
      EXPECT_TRUE(static_cast<i128>(r->on_demand_cost->micros()) * 1000 == od) << "round " << round;
    }
    i128 best = od;
    for (size_t i = 0; i < in.options.size(); ++i) {
      if (!is_reserved(in.options[i].mode)) continue;
      for (int64_t q = in.reservation_unit_gpus; q <= std::min(in.options[i].max_gpus.value_or(peak + 3), peak + 3);
           q += in.reservation_unit_gpus) {
        std::vector<int64_t> g(in.options.size(), 0);
        g[i] = q;
        const i128 c = brute_fixed(in, g, false, memo);
        if (c >= 0 && (best < 0 || c < best)) best = c;
      }
    }
    const bool any_reserved =
        std::any_of(in.options.begin(), in.options.end(), [](const auto& o) { return is_reserved(o.mode); });
    ASSERT_EQ(r->best_single.has_value(), any_reserved && best >= 0) << "round " << round;
    if (r->best_single) {
      EXPECT_TRUE(static_cast<i128>(r->best_single->cost.micros()) * 1000 == best) << "round " << round;
    }
    ++checked;
  }
  EXPECT_GT(checked, 120);
}

// Larger instances, beyond brute force: the MILP (aggregated and hour by hour) and the exact search
// agree.
TEST(MixOptimality, MilpAndExactSearchAgreeOnLargerCurves) {
  std::mt19937_64 rng(5);
  int feasible = 0;
  for (int round = 0; round < 25; ++round) {
    MixInput in = random_input(rng, 400, 60, 6);
    auto milp = compute_mix(in, MixSolver::kMilp);
    auto exact = compute_mix(in, MixSolver::kExact);
    ASSERT_EQ(milp.ok(), exact.ok()) << "round " << round;
    if (!milp.ok()) continue;
    ++feasible;
    EXPECT_TRUE(plan_nanos(in, *milp) == plan_nanos(in, *exact)) << "round " << round;
    EXPECT_EQ(milp->reserved_gpus, exact->reserved_gpus);
    auto prepared = prepare_mix(in);
    auto hourly = solve_mix_milp(in, *prepared, false);
    auto aggregated = solve_mix_milp(in, *prepared, true);
    ASSERT_TRUE(hourly.ok() && aggregated.ok());
    int64_t a = 0, h = 0;
    for (size_t i = 0; i < in.options.size(); ++i) a += (*aggregated)[i], h += (*hourly)[i];
    EXPECT_EQ(a, h) << "round " << round;  // total reserved (the split may differ on ties)
  }
  EXPECT_GT(feasible, 10);
}

}  // namespace
}  // namespace gpurent
