#include "advisor/hedge.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

json four_periods() {
  return json::parse(R"({"currency":"USD","demand_gpu_hours":[10,30,20,40],"prices":["2.00","4.00","3.00","5.00"],
                         "forward_price":"3.00","hedge_share_pct":20})");
}

TEST(Hedge, CostAndItsSwingsAtEachShareAreExact) {
  auto in = parse_hedge_input(four_periods());
  ASSERT_TRUE(in.ok()) << in.error().message;
  auto r = compute_hedge(*in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // H = 20% × 25 = 5 GPU-hours a period at 3.00; costs 25, 115, 60, 190.
  EXPECT_EQ(r->chosen.hedged_gpu_hours, 5);
  EXPECT_EQ(r->chosen.total_cost.amount_string(), "390.00");
  EXPECT_EQ(r->chosen.mean_cost.amount_string(), "97.50");
  EXPECT_EQ(r->chosen.stdev_cost.amount_string(), "62.299678");  // √3881.25, rounded down
  EXPECT_EQ(r->chosen.wasted_gpu_hours, 0);
  // Unhedged: 20, 120, 60, 200.
  EXPECT_EQ(r->unhedged.mean_cost.amount_string(), "100.00");
  EXPECT_EQ(r->unhedged.stdev_cost.amount_string(), "67.823299");  // √4600
  // All of the mean hedged: 25 a period, 20 GPU-hours wasted in the two light periods.
  ASSERT_EQ(r->curve.size(), 11u);
  EXPECT_EQ(r->curve[10].share_pct, 100);
  EXPECT_EQ(r->curve[10].hedged_gpu_hours, 25);
  EXPECT_EQ(r->curve[10].mean_cost.amount_string(), "98.75");
  EXPECT_EQ(r->curve[10].stdev_cost.amount_string(), "30.695072");
  EXPECT_EQ(r->curve[10].wasted_gpu_hours, 20);
  EXPECT_EQ(r->curve[0].mean_cost, r->unhedged.mean_cost);
  const json out = to_json(*r);
  EXPECT_EQ(out["forward_price_basis"], "given");
  EXPECT_EQ(out["mean_demand_gpu_hours"], "25.00");
  ASSERT_EQ(out["steps"].size(), 5u);
  EXPECT_EQ(out["steps"][2]["formula"], "H = 20% × 25.00 = 5 GPU-hours");
}

TEST(Hedge, TheForwardPriceDefaultsToTheMeanPrice) {
  json body = four_periods();
  body.erase("forward_price");
  auto r = compute_hedge(parse_hedge_input(body).value());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->forward_price.amount_string(), "3.50");
  EXPECT_TRUE(r->forward_from_prices);
  EXPECT_EQ(r->chosen.hedged_gpu_hours, 5);
  EXPECT_EQ(r->chosen.total_cost.amount_string(), "400.00");  // 4 × 5 × 3.50 + 5×2 + 25×4 + 15×3 + 35×5
}

TEST(Hedge, BadInputNamesTheField) {
  json body = four_periods();
  body["prices"][1] = "0";
  EXPECT_EQ(parse_hedge_input(body).error().fields.at(0).field, "prices[1]");
  body = four_periods();
  body["demand_gpu_hours"][3] = -1;
  EXPECT_EQ(parse_hedge_input(body).error().fields.at(0).field, "demand_gpu_hours[3]");
  body = four_periods();
  body["prices"].push_back("1.00");
  EXPECT_EQ(parse_hedge_input(body).error().fields.at(0).field, "prices");
  body = four_periods();
  body["hedge_share_pct"] = 101;
  EXPECT_EQ(parse_hedge_input(body).error().fields.at(0).field, "hedge_share_pct");
  body = four_periods();
  body["demand_gpu_hours"] = json::array();
  EXPECT_EQ(parse_hedge_input(body).error().fields.at(0).field, "demand_gpu_hours");
}

}  // namespace
}  // namespace gpurent
