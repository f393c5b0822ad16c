// The costs arithmetic: the budget burn-down, the share text and a project's costs.
#include "insight/budget.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

TimeMs at(const std::string& s) { return *parse_rfc3339(s, "t"); }
Money usd(int64_t micros) { return Money(micros, Currency::kUSD); }

TEST(DashboardBudget, BurnsDownCumulativelyAndProjectsAtTheMeanRate) {
  // November (30 days), as of the 10th at noon: 9.5 days elapsed.
  const TimeMs nov = at("2026-11-01");
  std::vector<Money> daily(10, usd(1'000'000));  // 1.00 a day; the 10th's half day also 1.00
  auto b = burn_down(usd(100'000'000), nov, at("2026-11-10T12:00:00Z"), daily);
  ASSERT_TRUE(b.ok()) << b.error().message;
  ASSERT_EQ(b->burn.size(), 10u);
  EXPECT_EQ(b->burn[0].date, nov);
  EXPECT_EQ(b->burn[3].spent, usd(4'000'000));
  EXPECT_EQ(b->burn[3].remaining, usd(96'000'000));
  EXPECT_EQ(b->spent, usd(10'000'000));
  EXPECT_EQ(b->remaining, usd(90'000'000));
  // 10.00 × 30 / 9.5 = 31.578947368… → 31.578947
  EXPECT_EQ(b->projected_month_end, usd(31'578'947));
  EXPECT_FALSE(b->projected_over);
  // Reaching the budget is over, as the firewall's budget rule.
  auto reached = burn_down(usd(31'578'947), nov, at("2026-11-10T12:00:00Z"), daily);
  EXPECT_TRUE(reached->projected_over);
  // Half to even at the micro-unit: February (28 days) as of the 19th at 16:00 is 2/3 of it, so
  // the projection is 1.5 × spent: 1 micro → 1.5 → 2, 3 micros → 4.5 → 4.
  const TimeMs feb = at("2026-02-01");
  std::vector<Money> one(19, usd(0)), three(19, usd(0));
  one[0] = usd(1);
  three[18] = usd(3);
  EXPECT_EQ(burn_down(usd(10), feb, at("2026-02-19T16:00:00Z"), one)->projected_month_end, usd(2));
  EXPECT_EQ(burn_down(usd(10), feb, at("2026-02-19T16:00:00Z"), three)->projected_month_end, usd(4));
}

TEST(DashboardBudget, ClampsToTheMonthAndChecksItsInput) {
  const TimeMs nov = at("2026-11-01");
  auto before = burn_down(usd(5), nov, at("2026-10-15"), {});
  ASSERT_TRUE(before.ok());
  EXPECT_TRUE(before->burn.empty());
  EXPECT_EQ(before->projected_month_end, usd(0));
  EXPECT_FALSE(before->projected_over);
  auto zero_budget = burn_down(usd(0), nov, at("2026-10-15"), {});
  EXPECT_TRUE(zero_budget->projected_over);  // a zero budget is reached at once
  // After the month: every day, and the projection is what was spent.
  std::vector<Money> all(30, usd(2));
  auto after = burn_down(usd(100), nov, at("2027-01-05"), all);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->burn.size(), 30u);
  EXPECT_EQ(after->projected_month_end, usd(60));
  EXPECT_EQ(after->remaining, usd(40));
  EXPECT_FALSE(burn_down(usd(100), nov, at("2026-11-03"), {usd(1)}).ok());  // 2 days begun
  EXPECT_FALSE(burn_down(usd(100), nov, at("2026-11-02"), {Money(1, Currency::kCNY)}).ok());
  // Over budget: remaining goes negative.
  auto over = burn_down(usd(3), nov, at("2026-11-02"), {usd(5)});
  EXPECT_EQ(over->remaining, usd(-2));
  EXPECT_TRUE(over->projected_over);
}

TEST(DashboardBudget, ShareHasOneDecimalRoundedHalfToEven) {
  EXPECT_EQ(share_pct_text(125, 1000), "12.5");
  EXPECT_EQ(share_pct_text(1, 3), "33.3");
  EXPECT_EQ(share_pct_text(2, 3), "66.7");
  EXPECT_EQ(share_pct_text(1, 2000), "0.0");    // 0.05 → 0.0 (half to even)
  EXPECT_EQ(share_pct_text(3, 2000), "0.2");    // 0.15 → 0.2
  EXPECT_EQ(share_pct_text(5, 5), "100.0");
  EXPECT_EQ(share_pct_text(0, 0), "0.0");
  EXPECT_EQ(share_pct_text(7, 0), "0.0");
}

// A project on reserved capacity: its covered GPU time counts in the share's denominator at its
// value (to the cent), not billed; credits count in the total only.
TEST(DashboardProject, StorageIoShareCountsReservedCoveredValue) {
  ProjectCosts p;
  p.project = "pretrain";
  p.daily.assign(2, 0), p.storage_io_daily.assign(2, 0), p.egress_daily.assign(2, 0);
  auto line = [](LineKind kind, const char* rule, int64_t micros) {
    ChargeLine l;
    l.kind = kind, l.rule = rule, l.project = "pretrain";
    l.amount_exact = l.amount = Money(micros, Currency::kCNY);
    l.covered_value = Money(0, Currency::kCNY);
    return l;
  };
  ChargeLine covered = line(LineKind::kUsage, "reserved_covered", 0);
  covered.covered_value = Money(299'995'001, Currency::kCNY);  // 299.995001 -> 300.00
  add_project_line(p, covered, 0);
  add_project_line(p, line(LineKind::kUsage, "on_demand", 100'000'000), 1);
  add_project_line(p, line(LineKind::kFee, "storage_io", 100'000'000), 1);
  add_project_line(p, line(LineKind::kCredit, "sla_outage", -50'000'000), 1);
  const auto j = project_costs_json(p, Currency::kCNY, 20);
  EXPECT_EQ(j["reserved_covered_value"], "300.00");
  EXPECT_EQ(j["total"], "150.00");
  EXPECT_EQ(j["storage_io_daily"], (nlohmann::json{"0.00", "100.00"}));
  // 100 / (200 + 300) = 20.0%: not over 20 (exactly at it); without the covered value, 50%.
  EXPECT_EQ(j["storage_io_share_pct"], "20.0");
  EXPECT_EQ(j["storage_io_over_threshold"], false);
  EXPECT_EQ(project_costs_json(p, Currency::kCNY, 19)["storage_io_over_threshold"], true);
}

}  // namespace
}  // namespace gpurent
