// The balance rules (billing/balance.h) on hand-computed figures.
#include "billing/balance.h"

#include <gtest/gtest.h>

#include <limits>

namespace gpurent {
namespace {

constexpr TimeMs kDec2 = 1'793'491'200'000 + 31 * TimeMs{86'400'000} + 3 * TimeMs{3'600'000};  // 2026-12-02T03:00:00Z
constexpr int64_t kUnit = 1'000'000;

BillingSettings prepaid(int64_t alert_min, int64_t stop_min) {
  BillingSettings s;
  s.payment = Payment::kPrepaid;
  s.runway_alert_minutes = alert_min;
  s.stop_minutes = stop_min;
  return s;
}

TEST(Balance, PrepaidIsTopUpsLessInvoicesAndDraftsWithARunwayRoundedDown) {
  // 1000 paid in, 300 invoiced, 200 accruing: 500 left; at 120 an hour that is 250 minutes.
  const BalanceFigures f{Currency::kCNY, 1000 * kUnit, 300 * kUnit, 200 * kUnit, 120 * kUnit, std::nullopt};
  const Balance b = balance_of(prepaid(0, 0), f);
  EXPECT_EQ(b.available, 500 * kUnit);
  EXPECT_EQ(b.runway_minutes, 250);
  // 500 at 7 an hour: 4285.71… minutes, rounded down.
  BalanceFigures g = f;
  g.burn_per_hour = 7 * kUnit;
  EXPECT_EQ(balance_of(prepaid(0, 0), g).runway_minutes, 4285);
  // Nothing burning: no runway; nothing left: 0 whatever burns.
  g.burn_per_hour = 0;
  EXPECT_FALSE(balance_of(prepaid(0, 0), g).runway_minutes.has_value());
  g.top_ups = 500 * kUnit;
  EXPECT_EQ(balance_of(prepaid(0, 0), g).runway_minutes, 0);
}

TEST(Balance, PostpaidIsTheLimitLessWhatIsOwedAndUnwatchedWithoutOne) {
  BillingSettings s;  // postpaid
  BalanceFigures f{Currency::kUSD, 0, 400 * kUnit, 100 * kUnit, 10 * kUnit, std::nullopt};
  EXPECT_FALSE(balance_of(s, f).available.has_value());
  EXPECT_TRUE(evaluate_balance(s, balance_of(s, f), "acme", kDec2).empty());
  s.credit_limit = Money(1000 * kUnit, Currency::kUSD);
  f.credit_limit = 1000 * kUnit;
  const Balance b = balance_of(s, f);
  EXPECT_EQ(b.available, 500 * kUnit);
  EXPECT_EQ(b.runway_minutes, 3000);
  // A negative month (a refund) against a limit near int64's end: no wrap, the sign kept.
  f.credit_limit = std::numeric_limits<int64_t>::max();
  f.invoiced = -10 * kUnit;
  f.accruing = 0;
  EXPECT_EQ(balance_of(s, f).available, std::numeric_limits<int64_t>::max());
  f.credit_limit = 0;
  f.invoiced = std::numeric_limits<int64_t>::max();
  f.accruing = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(balance_of(s, f).available, std::numeric_limits<int64_t>::min());
}

TEST(Balance, AlertsBelowTheRunwayAndStopsBelowTheStopOrAtNothingLeft) {
  // 100 left at 60 an hour: 100 minutes.
  const BalanceFigures f{Currency::kUSD, 100 * kUnit, 0, 0, 60 * kUnit, std::nullopt};
  EXPECT_TRUE(evaluate_balance(prepaid(100, 0), balance_of(prepaid(100, 0), f), "acme", kDec2).empty())
      << "exactly at the alert line: no alert";
  auto a = evaluate_balance(prepaid(101, 0), balance_of(prepaid(101, 0), f), "acme", kDec2);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, AlertKind::kBalanceLow);
  EXPECT_EQ(a[0].key, "balance_low:USD:2026-12-02");
  EXPECT_EQ(a[0].measured, "100");
  EXPECT_EQ(a[0].threshold, "101");
  EXPECT_FALSE(a[0].stop_work);
  // Below the stop line: both, the stop holding and stopping.
  a = evaluate_balance(prepaid(1440, 120), balance_of(prepaid(1440, 120), f), "acme", kDec2);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1].kind, AlertKind::kBalanceExhausted);
  EXPECT_EQ(a[1].key, "balance_exhausted:USD:2026-12-02");
  EXPECT_EQ(a[1].severity, AlertSeverity::kCritical);
  EXPECT_TRUE(a[1].stop_work);
  EXPECT_TRUE(a[1].hold_submissions);
  EXPECT_EQ(render(a[1].message, "en").find("Tenant acme: 100.00 USD left covers 100 min at 60.00 USD/h"), 0u)
      << render(a[1].message, "en");
  // Nothing left and nothing running: stopped (new work held), with no runway alert turned off.
  const BalanceFigures empty{Currency::kUSD, 50 * kUnit, 50 * kUnit, 0, 0, std::nullopt};
  a = evaluate_balance(prepaid(0, 0), balance_of(prepaid(0, 0), empty), "acme", kDec2);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].kind, AlertKind::kBalanceExhausted);
}

}  // namespace
}  // namespace gpurent
