#include "advisor/tco.h"

#include <gtest/gtest.h>

#include <map>

#include "catalog/scenario_files_test_util.h"
#include "core/message.h"

namespace gpurent {
namespace {

const GpuCatalog& cat() { return testutil::repo_catalog(); }

TcoResult run(const json& body) {
  auto in = parse_tco_input(body, cat());
  EXPECT_TRUE(in.ok()) << (in.ok() ? "" : in.error().message);
  if (!in.ok()) return {};
  auto r = compute_tco(*in);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : TcoResult{};
}

std::map<std::string, std::string> parse_errors(const json& body) {
  std::map<std::string, std::string> out;
  auto in = parse_tco_input(body, cat());
  if (!in.ok())
    for (const auto& e : in.error().fields) out[e.field] = e.reason;
  return out;
}

int64_t line(const TcoResult& r, const std::string& key) {
  for (const auto& l : r.lines)
    if (l.key == key) return l.amount.micros();
  ADD_FAILURE() << "no line " << key;
  return -1;
}

constexpr int64_t M = 1'000'000;

// The worked example of docs/advisor/tco.md.
json worked_example() {
  return {{"gpu_model", "h100-sxm5-80gb"},
          {"gpu_count", 64},
          {"price_per_gpu", "25000"},
          {"server_overhead", "60000"},
          {"interest_bp", 800},
          {"electricity_per_kwh", "0.10"},
          {"space_per_kw_month", "150"},
          {"staff_fte_cost_per_month", "15000"},
          {"demand_curve",
           {64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32}},
          {"offers",
           {{{"name", "hyperscaler"}, {"on_demand_per_gpu_hour", "6.98"}, {"reserved_per_gpu_hour", "4.10"}},
            {{"name", "neocloud"}, {"on_demand_per_gpu_hour", "2.99"}, {"reserved_per_gpu_hour", "2.20"}}}}};
}

// 64 x H100 SXM5 in 8 servers. capex = 64 x 25000 + 8 x 60000 = 2,080,000.
// Straight line over 60 months, window 18: residual = 2,080,000 x 42/60 = 1,456,000,
// depreciation 624,000. Financing 8 %: 2,080,000 x 0.08 x 19/24 = 131,733.333333.
// Hidden (bp of capex): 10 % 208,000; 6 % 124,800; 3 % 62,400; 4 % 83,200; 4 % 83,200;
// 2 % 41,600; 3 % 62,400 (sum 665,600 = 32 %).
// Power: IT W = 64 x 700 (TDP) + 8 x 3000 = 68,800 W; x 100 % x PUE 1.30 x 13,140 h / 1000
// = 1,175,241.6 kWh x 0.10 = 117,524.16. Space: 68.8 kW x 150 x 18 = 185,760.
// Staff: 15,000 x 18 x 64/256 = 67,500. Total 1,792,117.493333.
// Owned GPU-hours 64 x 18 x 730 = 840,960 -> 2.131038 per owned GPU-hour.
// Curve: 12 h at 64 and 12 h at 32 -> (768 + 384) / (64 x 24) = 75 % -> 2.841384 per useful hour.
// hyperscaler: on-demand 6.98 x 630,720 = 4,402,425.60; reserved 4.10 x 840,960 = 3,447,936;
//   break-even 1,792,117.493333 / (840,960 x 6.98) = 30.53 %; reserved beats on-demand above 58.74 %.
// neocloud: on-demand 2.99 x 630,720 = 1,885,852.80; reserved 2.20 x 840,960 = 1,850,112;
//   break-even 71.27 %; building is cheapest at 75 %, by 0.068962 per GPU-hour against reserved.
TEST(Tco, WorkedExample) {
  auto r = run(worked_example());
  EXPECT_EQ(r.servers, 8);
  EXPECT_EQ(r.capex.micros(), 2'080'000 * M);
  EXPECT_EQ(r.residual.micros(), 1'456'000 * M);
  EXPECT_EQ(line(r, "depreciation"), 624'000 * M);
  EXPECT_EQ(line(r, "financing"), 131'733'333'333);
  EXPECT_EQ(line(r, "hidden.networking"), 208'000 * M);
  EXPECT_EQ(line(r, "hidden.storage"), 124'800 * M);
  EXPECT_EQ(line(r, "hidden.software"), 62'400 * M);
  EXPECT_EQ(line(r, "hidden.spares"), 83'200 * M);
  EXPECT_EQ(line(r, "hidden.facility"), 83'200 * M);
  EXPECT_EQ(line(r, "hidden.security"), 41'600 * M);
  EXPECT_EQ(line(r, "hidden.delay"), 62'400 * M);
  EXPECT_EQ(r.it_watts, 68'800);
  EXPECT_EQ(line(r, "power"), 117'524'160'000);
  EXPECT_EQ(line(r, "space"), 185'760 * M);
  EXPECT_EQ(line(r, "staff"), 67'500 * M);
  EXPECT_EQ(r.lines.size(), 12u);
  EXPECT_EQ(r.total.micros(), 1'792'117'493'333);
  EXPECT_EQ(r.owned_gpu_hours, 840'960);
  EXPECT_EQ(r.cost_per_owned_gpu_hour.micros(), 2'131'038);
  EXPECT_EQ(r.per_month.micros(), 99'562'082'963);
  EXPECT_EQ(r.utilization_bp, 7500);
  EXPECT_EQ(r.cost_per_useful_gpu_hour.micros(), 2'841'384);
  ASSERT_EQ(r.comparisons.size(), 2u);
  const auto& hs = r.comparisons[0];
  EXPECT_EQ(hs.on_demand_cost.micros(), 4'402'425'600'000);
  EXPECT_EQ(hs.reserved_cost->micros(), 3'447'936 * M);
  EXPECT_EQ(hs.build_break_even_utilization_bp, 3053);
  EXPECT_EQ(hs.reserved_break_even_utilization_bp, 5874);
  EXPECT_EQ(hs.reserved_per_useful_gpu_hour->micros(), 5'466'667);
  EXPECT_EQ(hs.build_vs_reserved_per_gpu_hour->micros(), 1'968'962);
  EXPECT_EQ(hs.cheapest, "build");
  const auto& nc = r.comparisons[1];
  EXPECT_EQ(nc.on_demand_cost.micros(), 1'885'852'800'000);
  EXPECT_EQ(nc.reserved_cost->micros(), 1'850'112 * M);
  EXPECT_EQ(nc.build_break_even_utilization_bp, 7127);
  EXPECT_EQ(nc.reserved_break_even_utilization_bp, 7358);
  EXPECT_EQ(nc.reserved_per_useful_gpu_hour->micros(), 2'933'333);
  EXPECT_EQ(nc.build_vs_reserved_per_gpu_hour->micros(), 68'962);
  EXPECT_EQ(nc.cheapest, "build");

  json j = to_json(r);
  EXPECT_EQ(j["total"], "1792117.493333");
  EXPECT_EQ(j["useful_gpu_hours"], "630720.000000");
  EXPECT_EQ(j["comparisons"][1]["build_break_even_utilization_bp"], 7127);
  // Every step and line is a catalogued code, worded in each language; the JSON carries the
  // code and its English text (the server words it in the reader's language).
  for (const auto* list : {&j["steps"], &j["lines"]})
    for (const auto& s : *list) {
      const std::string code = s["text_message"]["code"];
      for (const auto& lang : message_languages()) EXPECT_TRUE(has_message(lang, code)) << lang << " " << code;
      EXPECT_EQ(s["text"], render_en(*message_from_json(s["text_message"])));
      EXPECT_FALSE(s["formula"].get<std::string>().empty());
    }
  EXPECT_EQ(j["lines"][2]["text"],
            "Hidden cost: Networking fabric: InfiniBand/RoCE switches, NICs, cables and optics");
  EXPECT_EQ(render(*message_from_json(j["lines"][2]["text_message"]), "zh"),
            "隐性成本：网络：InfiniBand/RoCE 交换机、网卡、线缆与光模块");
  const std::string en = render_en(r.summary), zh = render(r.summary, "zh");
  EXPECT_EQ(j["summary"], en);
  EXPECT_NE(en.find("2.131038 USD per owned GPU-hour"), std::string::npos) << en;
  EXPECT_NE(en.find("Against neocloud: building is cheapest; building beats its on-demand price above 71.27 % "
                    "utilization."),
            std::string::npos)
      << en;
  EXPECT_NE(zh.find("对比 neocloud：自建最便宜；自建在利用率高于 71.27 % 时优于其按需价。"), std::string::npos) << zh;
}

TEST(Tco, LowUtilizationMakesRentingCheaper) {
  // Same cluster at 40 %: neocloud on demand = 2.99 x 840,960 x 0.4 = 1,005,788.16 < build
  // 1,792,117.49 < reserved 1,850,112: on demand is cheapest.
  json body = worked_example();
  body.erase("demand_curve");
  body["utilization_pct"] = 40;
  auto r = run(body);
  EXPECT_EQ(r.utilization_bp, 4000);
  EXPECT_EQ(r.comparisons[1].on_demand_cost.micros(), 1'005'788'160'000);
  EXPECT_EQ(r.comparisons[1].cheapest, "on_demand");
  EXPECT_EQ(r.comparisons[0].cheapest, "build");  // 6.98 x 336,384 = 2,347,960.32 > build
  // per useful hour: 1,792,117.493333 / 336,384 = 5.327594
  EXPECT_EQ(r.cost_per_useful_gpu_hour.micros(), 5'327'594);
}

TEST(Tco, ResidualMethods) {
  json body = worked_example();
  body["residual_method"] = "resale";
  body["resale_bp"] = 4000;  // 40 % of 2,080,000 = 832,000 -> depreciation 1,248,000
  auto r = run(body);
  EXPECT_EQ(r.residual.micros(), 832'000 * M);
  EXPECT_EQ(line(r, "depreciation"), 1'248'000 * M);
  body["residual_method"] = "none";
  body.erase("resale_bp");
  r = run(body);
  EXPECT_EQ(r.residual.micros(), 0);
  EXPECT_EQ(line(r, "depreciation"), 2'080'000 * M);
  // A window as long as the physical life leaves no book value.
  body["residual_method"] = "straight_line";
  body["window_months"] = 60;
  r = run(body);
  EXPECT_EQ(r.residual.micros(), 0);
}

TEST(Tco, EachLineRoundsHalfToEvenOnce) {
  // capex 3 micro-units, life 2 months, window 1: residual 3 x 1/2 = 1.5 micro -> 2 (even);
  // with capex 1 micro: 0.5 -> 0 (even).
  json body = {{"gpu_model", "t4-16gb"},
               {"gpu_count", 3},
               {"price_per_gpu", "0.000001"},
               {"server_overhead", "0"},
               {"window_months", 1},
               {"physical_life_months", 2},
               {"electricity_per_kwh", "0"},
               {"space_per_kw_month", "0"},
               {"staff_fte_cost_per_month", "0"},
               {"utilization_pct", 100}};
  auto r = run(body);
  EXPECT_EQ(r.residual.micros(), 2);
  EXPECT_EQ(line(r, "depreciation"), 1);
  body["gpu_count"] = 1;
  r = run(body);
  EXPECT_EQ(r.residual.micros(), 0);
  EXPECT_EQ(line(r, "depreciation"), 1);
}

TEST(Tco, FinancingPowerSpaceStaffByHand) {
  // One T4 (70 W TDP) in one server, capex 1000 + 200 = 1200. 12 % a year over 12 months, equal
  // monthly principal: balances 1200, 1100, ..., 100 sum to 7800; x 1 % a month = 78.00 =
  // 1200 x 0.12 x 13/24.
  // Power: (70 + 230) W x 50 % x PUE 1.50 x 8760 h / 1000 = 1971 kWh x 0.12 = 236.52.
  // Space: 1 server x 2 U x 20 x 12 = 480. Staff: 9000 x 12 x 1/100 = 1080.
  // Hidden: networking given as 50, the rest 0 bp.
  json body = {{"gpu_model", "t4-16gb"},
               {"gpu_count", 1},
               {"price_per_gpu", "1000"},
               {"server_overhead", "200"},
               {"window_months", 12},
               {"physical_life_months", 12},
               {"interest_bp", 1200},
               {"server_overhead_watts", 230},
               {"power_draw_pct", 50},
               {"pue_x100", 150},
               {"electricity_per_kwh", "0.12"},
               {"space_per_rack_unit_month", "20"},
               {"rack_units_per_server", 2},
               {"staff_fte_cost_per_month", "9000"},
               {"gpus_per_fte", 100},
               {"hidden_costs",
                {{"networking", {{"amount", "50"}}},
                 {"storage", {{"bp", 0}}},
                 {"software", {{"bp", 0}}},
                 {"spares", {{"bp", 0}}},
                 {"facility", {{"bp", 0}}},
                 {"security", {{"bp", 0}}},
                 {"delay", {{"bp", 0}}}}},
               {"utilization_pct", 50}};
  auto r = run(body);
  EXPECT_EQ(line(r, "financing"), 78 * M);
  EXPECT_EQ(line(r, "power"), 236'520'000);
  EXPECT_EQ(line(r, "space"), 480 * M);
  EXPECT_EQ(line(r, "staff"), 1'080 * M);
  EXPECT_EQ(line(r, "hidden.networking"), 50 * M);
  EXPECT_EQ(line(r, "hidden.delay"), 0);
  EXPECT_EQ(line(r, "depreciation"), 1'200 * M);
  // total = 1200 + 78 + 50 + 236.52 + 480 + 1080 = 3124.52 over 8760 GPU-hours -> 0.356680;
  // at 50 %: 3124.52 / 4380 = 0.713361.
  EXPECT_EQ(r.total.micros(), 3'124'520'000);
  EXPECT_EQ(r.cost_per_owned_gpu_hour.micros(), 356'680);
  EXPECT_EQ(r.cost_per_useful_gpu_hour.micros(), 713'361);
}

TEST(Tco, HiddenCostDefaultsAreSevenAndAtLeastThirtyPercent) {
  const auto& t = hidden_cost_table();
  int64_t sum = 0;
  for (const auto& h : t) {
    sum += h.default_bp;
    EXPECT_GT(h.default_bp, 0) << h.key;
  }
  EXPECT_EQ(t.size(), 7u);
  EXPECT_GE(sum, 3000);
}

TEST(Tco, UtilizationFromADemandCurve) {
  // 4 GPUs; demand 2, 4, 6, 0: served 2 + 4 + 4 + 0 = 10 of 16 GPU-hours = 62.50 %; unmet 2 of 12
  // demanded = 16.67 %.
  json body = worked_example();
  body["gpu_count"] = 4;
  body["demand_curve"] = {2, 4, 6, 0};
  auto r = run(body);
  EXPECT_EQ(r.utilization_bp, 6250);
  EXPECT_EQ(r.unmet_demand_bp, 1667);
  EXPECT_EQ(r.servers, 1);
}

TEST(Tco, BreakEvenSeparatesBuildFromOnDemand) {
  // Property: as utilization rises, building overtakes on demand exactly once, at the break-even.
  json body = worked_example();
  body.erase("demand_curve");
  body["offers"] = {{{"name", "x"}, {"on_demand_per_gpu_hour", "2.99"}}};
  int64_t first_build = 0;
  for (int64_t u = 1; u <= 100; ++u) {
    body["utilization_pct"] = u;
    auto r = run(body);
    const auto& c = r.comparisons[0];
    EXPECT_EQ(c.build_break_even_utilization_bp, 7127);
    if (c.cheapest == "build" && first_build == 0) first_build = u;
    if (first_build) {
      EXPECT_EQ(c.cheapest, "build") << u;
    }
    EXPECT_EQ(c.cheapest == "build", u * 100 > 7127) << u;
  }
  EXPECT_EQ(first_build, 72);
  // An on-demand price below the build cost per owned hour: building never wins.
  body["offers"] = {{{"name", "cheap"}, {"on_demand_per_gpu_hour", "1.50"}}};
  body["utilization_pct"] = 100;
  auto r = run(body);
  EXPECT_GT(r.comparisons[0].build_break_even_utilization_bp, 10'000);
  EXPECT_EQ(r.comparisons[0].cheapest, "on_demand");
  EXPECT_EQ(to_json(r)["comparisons"][0]["build_ever_beats_on_demand"], false);
  EXPECT_NE(render_en(r.summary).find("Against cheap: on-demand is cheapest; building beats its on-demand price at "
                                      "no utilization."),
            std::string::npos)
      << render_en(r.summary);
}

TEST(Tco, RejectsBadInputWithFieldPaths) {
  auto e = parse_errors({{"gpu_model", "h100-sxm5-80gb"},
                         {"gpu_count", 8},
                         {"price_per_gpu", "-1"},
                         {"server_overhead", 1.5},
                         {"window_months", 70},
                         {"residual_method", "resale"},
                         {"electricity_per_kwh", "0.1"},
                         {"space_per_kw_month", "100"},
                         {"space_per_rack_unit_month", "10"},
                         {"staff_fte_cost_per_month", "1000"},
                         {"pue_x100", 90},
                         {"hidden_costs", {{"networking", {{"bp", 100}, {"amount", "5"}}}, {"typo", {{"bp", 1}}}}},
                         {"demand_curve", {1, -2, 1.5}},
                         {"utilization_pct", 50},
                         {"offers", {{{"on_demand_per_gpu_hour", "0"}}}}});
  EXPECT_EQ(e["price_per_gpu"], "must not be negative");
  EXPECT_NE(e["server_overhead"].find("floating-point"), std::string::npos);
  EXPECT_EQ(e["window_months"], "must not exceed physical_life_months (60)");
  EXPECT_EQ(e["resale_bp"], "is required when residual_method is \"resale\"");
  EXPECT_EQ(e["space_per_kw_month"], "give space_per_rack_unit_month or space_per_kw_month, not both");
  EXPECT_EQ(e["pue_x100"], "must be at least 100 (got 90)");
  EXPECT_EQ(e["hidden_costs.networking.amount"], "give bp or amount, not both");
  EXPECT_EQ(e["hidden_costs.typo"], "unknown field");
  EXPECT_EQ(e["demand_curve[1]"], "must be 0 to 10000000");
  EXPECT_EQ(e["demand_curve[2]"], "must be a whole number of GPUs");
  EXPECT_EQ(e["utilization_pct"], "give demand_curve or utilization_pct, not both");
  EXPECT_EQ(e["offers[0].name"], "is required");
  EXPECT_EQ(e["offers[0].on_demand_per_gpu_hour"], "must be greater than 0");

  e = parse_errors({{"gpu_model", "nope"},
                    {"gpu_count", 1},
                    {"price_per_gpu", "1"},
                    {"server_overhead", "0"},
                    {"electricity_per_kwh", "0.1"},
                    {"staff_fte_cost_per_month", "1"},
                    {"demand_curve", {0, 0}},
                    {"resale_bp", 10}});
  EXPECT_NE(e["gpu_model"].find("unknown GPU model"), std::string::npos);
  EXPECT_EQ(e["space_per_kw_month"], "is required (or space_per_rack_unit_month)");
  EXPECT_EQ(e["demand_curve"], "has no demand (every hour is 0)");
  EXPECT_EQ(e["resale_bp"], "applies only when residual_method is \"resale\"");

  e = parse_errors({{"gpu_model", "h100-sxm5-80gb"},
                    {"gpu_count", 1},
                    {"price_per_gpu", "1"},
                    {"server_overhead", "0"},
                    {"electricity_per_kwh", "0.1"},
                    {"space_per_kw_month", "1"},
                    {"staff_fte_cost_per_month", "1"},
                    {"demand_curve", json::array()}});
  EXPECT_EQ(e["demand_curve"], "must be a non-empty list of GPU counts, one per hour");
  e = parse_errors({{"gpu_model", "h100-sxm5-80gb"},
                    {"gpu_count", 1},
                    {"price_per_gpu", "1"},
                    {"server_overhead", "0"},
                    {"electricity_per_kwh", "0.1"},
                    {"space_per_kw_month", "1"},
                    {"staff_fte_cost_per_month", "1"}});
  EXPECT_EQ(e["utilization_pct"], "is required (or demand_curve)");
}

TEST(Tco, ComputeChecksInputsBuiltInCode) {
  auto in = parse_tco_input(worked_example(), cat());
  ASSERT_TRUE(in.ok());
  TcoInput bad = *in;
  bad.utilization_pct = 50;  // and a demand curve
  EXPECT_FALSE(compute_tco(bad).ok());
  bad = *in;
  bad.window_months = 61;
  EXPECT_FALSE(compute_tco(bad).ok());
  bad = *in;
  bad.price_per_gpu = Money(INT64_MAX / 2, Currency::kUSD);
  auto r = compute_tco(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("overflow"), std::string::npos);
  // The error is a message code: the figure that overflowed is a nested message.
  EXPECT_EQ(r.error().message, "money overflow computing capex");
  EXPECT_EQ(r.error().detail.code, "advisor.tco.money_overflow");
  EXPECT_EQ(render(r.error().detail, "zh"), "计算资本支出（capex）时金额溢出");
  bad = *in;
  bad.window_months = 61;
  r = compute_tco(bad);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.error().fields.size(), 1u);
  EXPECT_EQ(r.error().fields[0].coded.code, "advisor.tco.window_range");
  EXPECT_EQ(r.error().message, "window_months: must be at least 1 and at most physical_life_months");
  EXPECT_EQ(render(r.error().detail, "zh"), "window_months：不能小于 1，且不能大于 physical_life_months");
}

TEST(Tco, ParseErrorsAreMessageCodesWordedPerLanguage) {
  json body = worked_example();
  body["window_months"] = 70;
  body["demand_curve"] = {1, 20'000'000};
  auto in = parse_tco_input(body, cat());
  ASSERT_FALSE(in.ok());
  std::map<std::string, FieldError> f;
  for (const auto& e : in.error().fields) f[e.field] = e;
  EXPECT_EQ(f["window_months"].coded.code, "advisor.tco.window_exceeds_life");
  EXPECT_EQ(f["window_months"].reason, "must not exceed physical_life_months (60)");
  EXPECT_EQ(render(f["window_months"].coded, "zh"), "不能超过 physical_life_months（60）");
  EXPECT_EQ(f["demand_curve[1]"].coded.code, "advisor.tco.range");
  EXPECT_EQ(f["demand_curve[1]"].reason, "must be 0 to 10000000");
  EXPECT_EQ(render(f["demand_curve[1]"].coded, "zh"), "必须在 0 到 10000000 之间");
}

}  // namespace
}  // namespace gpurent
