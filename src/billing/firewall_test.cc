// The cost firewall's rules with hand-checked figures: each threshold exactly met (no alert) and
// exceeded by one micro-unit (alert), keys, messages, effects, the days and lines that count, and
// per-card per-day costs from rated lines.
#include "billing/firewall.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

constexpr TimeMs kNov = 1'793'491'200'000;  // 2026-11-01T00:00:00Z
constexpr TimeMs kHour = 3'600'000;
constexpr TimeMs kDay = 24 * kHour;
constexpr TimeMs kNov28 = kNov + 27 * kDay;
constexpr TimeMs kNov29 = kNov + 28 * kDay;

Money usd(int64_t micros) { return Money(micros, Currency::kUSD); }
constexpr int64_t kUsd = 1'000'000;

ChargeLine line(LineKind kind, std::string rule, std::string project, TimeMs from, int64_t micros) {
  ChargeLine l;
  l.kind = kind;
  l.rule = std::move(rule);
  l.project = std::move(project);
  l.from = from;
  l.to = from;
  l.amount_exact = usd(micros);
  l.amount = l.amount_exact.round_to_cents();
  return l;
}

ChargeLine usage(std::string project, TimeMs from, int64_t micros) {
  return line(LineKind::kUsage, "on_demand", std::move(project), from, micros);
}

FirewallInput nov29() {
  FirewallInput in;
  in.currency = Currency::kUSD;
  in.month = kNov;
  in.day = kNov29;
  return in;
}

std::vector<Alert> eval(const FirewallPolicy& p, const FirewallInput& in) {
  auto r = evaluate_firewall(p, in);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : std::vector<Alert>{};
}

std::vector<std::string> keys(const std::vector<Alert>& v) {
  std::vector<std::string> out;
  for (const auto& a : v) out.push_back(a.key);
  return out;
}

TEST(Firewall, Defaults) {
  const auto p = FirewallPolicy::defaults(Currency::kCNY);
  EXPECT_EQ(p.card_daily_cost, Money(100 * kUsd, Currency::kCNY));
  EXPECT_EQ(p.egress_daily_cost, Money(500 * kUsd, Currency::kCNY));
  EXPECT_EQ(p.storage_io_share_pct, 20);
  EXPECT_EQ(p.large_upload_bytes, 10'000'000'000);
  EXPECT_TRUE(p.monthly_budgets.empty());
  EXPECT_EQ(utc_date(kNov29 + 5), "2026-11-29");
  EXPECT_EQ(day_start(kNov29 + kDay - 1), kNov29);
  EXPECT_EQ(day_start(-1), -kDay);
}

TEST(Firewall, CardDailyCostAtThresholdDoesNotAlertOneMicroOverDoes) {
  auto in = nov29();
  in.cards = {{"n1", 3, kNov29, usd(100 * kUsd), {"vision"}}, {"n1", 4, kNov29, usd(100 * kUsd + 1), {"vision"}}};
  const auto alerts = eval(FirewallPolicy::defaults(Currency::kUSD), in);
  ASSERT_EQ(alerts.size(), 1u);
  const Alert& a = alerts[0];
  EXPECT_EQ(a.key, "card_daily_cost:n1/4:2026-11-29");
  EXPECT_EQ(a.kind, AlertKind::kCardDailyCost);
  EXPECT_EQ(a.severity, AlertSeverity::kWarning);
  EXPECT_EQ(a.project, "vision");
  EXPECT_EQ(a.subject, "n1/4");
  EXPECT_EQ(a.from, kNov29);
  EXPECT_EQ(a.to, kNov29 + kDay);
  EXPECT_EQ(a.measured, "100.000001");
  EXPECT_EQ(a.threshold, "100.00");
  EXPECT_EQ(a.unit, "USD");
  EXPECT_EQ(render(a.message, "en"), "Card n1/4: cost 100.000001 USD on 2026-11-29 exceeds 100.00 USD (projects: vision)");
  EXPECT_EQ(render(a.message, "zh"), "显卡 n1/4：2026-11-29 费用 100.000001 USD，超过阈值 100.00 USD（项目：vision）");
  EXPECT_FALSE(a.freeze_egress);
  EXPECT_FALSE(a.hold_submissions);
  EXPECT_EQ(a.upload_limit_bytes, 0);
}

TEST(Firewall, CardSharedByProjectsSummedAndOutOfRangeDaysIgnored) {
  auto in = nov29();
  in.cards = {{"n2", 0, kNov28, usd(60 * kUsd), {"vision"}},
              {"n2", 0, kNov28, usd(60 * kUsd), {"llm"}},                 // same card-day: summed
              {"n2", 1, kNov29 + kDay, usd(900 * kUsd), {"llm"}},         // after `day`
              {"n2", 2, kNov - kDay, usd(900 * kUsd), {"llm"}},           // previous month
              {"n2", 3, kNov, usd(101 * kUsd), {}}};                      // first day of the month
  const auto alerts = eval(FirewallPolicy::defaults(Currency::kUSD), in);
  EXPECT_EQ(keys(alerts), (std::vector<std::string>{"card_daily_cost:n2/0:2026-11-28", "card_daily_cost:n2/3:2026-11-01"}));
  EXPECT_EQ(alerts[0].project, "");
  EXPECT_EQ(alerts[0].measured, "120.00");
  EXPECT_EQ(render(alerts[0].message, "en"), "Card n2/0: cost 120.00 USD on 2026-11-28 exceeds 100.00 USD (projects: llm, vision)");
  EXPECT_EQ(render(alerts[0].message, "zh"), "显卡 n2/0：2026-11-28 费用 120.00 USD，超过阈值 100.00 USD（项目：llm、vision）");
  EXPECT_EQ(render(alerts[1].message, "en"), "Card n2/3: cost 101.00 USD on 2026-11-01 exceeds 100.00 USD");
}

TEST(Firewall, StorageIoShareExactlyTwentyPercentDoesNotAlert) {
  auto in = nov29();
  in.lines = {usage("vision", kNov + kHour, 400 * kUsd), line(LineKind::kFee, "storage_io", "vision", kNov28, 100 * kUsd)};
  EXPECT_TRUE(eval(FirewallPolicy::defaults(Currency::kUSD), in).empty());  // 100 / 500 = 20%
  // One micro more of storage I/O: 100.000001 / 500.000001 > 20%; shown rounded up to 20.01%.
  in.lines[1].amount_exact = usd(100 * kUsd + 1);
  const auto alerts = eval(FirewallPolicy::defaults(Currency::kUSD), in);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].key, "storage_io_share:vision:2026-11");
  EXPECT_EQ(alerts[0].kind, AlertKind::kStorageIoShare);
  EXPECT_EQ(alerts[0].measured, "20.01");
  EXPECT_EQ(alerts[0].threshold, "20");
  EXPECT_EQ(alerts[0].unit, "%");
  EXPECT_EQ(alerts[0].from, kNov);
  EXPECT_EQ(alerts[0].to, kNov29 + kDay);
}

void expect_one_alert(const std::vector<Alert>& alerts, const std::string& measured, const std::string& en,
                      const std::string& zh) {
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].measured, measured);
  EXPECT_EQ(render(alerts[0].message, "en"), en);
  EXPECT_EQ(render(alerts[0].message, "zh"), zh);
}

TEST(Firewall, StorageIoShareCountsChargesOfTheProjectOnly) {
  auto in = nov29();
  in.lines = {usage("vision", kNov + kHour, 391'300'000),
              line(LineKind::kFee, "storage_io", "vision", kNov28, 120 * kUsd),
              line(LineKind::kFee, "storage_io_free", "vision", kNov28, 0),
              line(LineKind::kCredit, "sla_outage", "vision", kNov28, -300 * kUsd),     // not subtracted
              line(LineKind::kCommitment, "reserved_commitment", "", kNov, 5000 * kUsd),  // no project
              usage("llm", kNov + kHour, 10'000 * kUsd)};
  // 120 / 511.30 = 23.4695…% -> 23.47
  expect_one_alert(eval(FirewallPolicy::defaults(Currency::kUSD), in), "23.47",
                   "Project vision: storage I/O cost 120.00 USD is 23.47% of the month-to-date cost 511.30 USD "
                   "(2026-11), above 20%",
                   "项目 vision：2026-11 月初至今存储 I/O 费用 120.00 USD，占总费用 511.30 USD 的 23.47%，超过阈值 20%");
  auto p = FirewallPolicy::defaults(Currency::kUSD);
  p.storage_io_share_pct = 24;
  EXPECT_TRUE(eval(p, in).empty());
}

// GPU time a reserved commitment covers is billed 0 to the project; the share counts its value at
// the commitment's price (ChargeLine::covered_value), so reserved capacity does not read as 100%.
TEST(Firewall, StorageIoShareCountsReservedCoveredTimeAtItsValue) {
  auto in = nov29();
  ChargeLine covered = line(LineKind::kUsage, "reserved_covered", "vision", kNov + kHour, 0);
  covered.covered_value = Money(500 * kUsd, Currency::kUSD);
  in.lines = {covered, line(LineKind::kFee, "storage_io", "vision", kNov28, 120 * kUsd),
              line(LineKind::kCommitment, "reserved_commitment", "", kNov, 5000 * kUsd)};
  // 120 / (120 + 500) = 19.35% <= 20%: no alert (without the value it would read 100%).
  EXPECT_TRUE(eval(FirewallPolicy::defaults(Currency::kUSD), in).empty());
  in.lines[0].covered_value = Money(400 * kUsd, Currency::kUSD);
  // 120 / 520 = 23.0769…% -> 23.08
  expect_one_alert(eval(FirewallPolicy::defaults(Currency::kUSD), in), "23.08",
                   "Project vision: storage I/O cost 120.00 USD is 23.08% of the month-to-date cost 520.00 USD, "
                   "400.00 USD of it GPU time covered by the reserved commitment (2026-11), above 20%",
                   "项目 vision：2026-11 月初至今存储 I/O 费用 120.00 USD，占总费用 520.00 USD（其中预留承诺已覆盖的 "
                   "GPU 时长价值 400.00 USD）的 23.08%，超过阈值 20%");
  // Budgets still count charges only: 90.00 of storage I/O stays under a 100.00 budget, though
  // 90.00 + 400.00 covered would not.
  in.lines[1].amount_exact = Money(90 * kUsd, Currency::kUSD);
  auto p = FirewallPolicy::defaults(Currency::kUSD);
  p.monthly_budgets["vision"] = Money(100 * kUsd, Currency::kUSD);
  for (const auto& a : eval(p, in)) EXPECT_NE(a.kind, AlertKind::kBudgetBreach);
}

TEST(Firewall, EgressDailyCostFreezes) {
  auto in = nov29();
  in.lines = {line(LineKind::kFee, "egress", "vision", kNov29 + 2 * kHour, 400 * kUsd),
              line(LineKind::kFee, "egress", "vision", kNov29 + 9 * kHour, 212'400'000),
              line(LineKind::kFee, "egress", "vision", kNov28 + kHour, 500 * kUsd),      // exactly at: no alert
              line(LineKind::kFee, "egress", "vision", kNov29 + kDay, 9000 * kUsd),      // after `day`: ignored
              line(LineKind::kFee, "storage_io", "vision", kNov29, 9000 * kUsd),         // not egress
              usage("vision", kNov29, 90'000 * kUsd)};
  auto alerts = eval(FirewallPolicy::defaults(Currency::kUSD), in);
  ASSERT_EQ(alerts.size(), 1u);
  const Alert& a = alerts[0];
  EXPECT_EQ(a.key, "egress_daily_cost:vision:2026-11-29");
  EXPECT_EQ(a.severity, AlertSeverity::kCritical);
  EXPECT_EQ(a.project, "vision");
  EXPECT_EQ(a.measured, "612.40");
  EXPECT_EQ(a.threshold, "500.00");
  EXPECT_TRUE(a.freeze_egress);
  EXPECT_EQ(a.upload_limit_bytes, 10'000'000'000);
  EXPECT_FALSE(a.hold_submissions);
  EXPECT_EQ(render(a.message, "en"),
            "Project vision: egress cost 612.40 USD on 2026-11-29 exceeds 500.00 USD; egress and uploads over 10 GB "
            "are to be frozen by the supplier's gateways until an admin lifts it");
  EXPECT_EQ(render(a.message, "zh"),
            "项目 vision：2026-11-29 出网流量费用 612.40 USD，超过阈值 500.00 USD；出网及超过 10 GB 的上传应由供应商网关冻结，直至管理员解除");

  // One micro over on the earlier day alerts under that day's key; the upload limit is the policy's.
  in.lines[2].amount_exact = usd(500 * kUsd + 1);
  auto p = FirewallPolicy::defaults(Currency::kUSD);
  p.large_upload_bytes = 2'500'000'000;
  alerts = eval(p, in);
  EXPECT_EQ(keys(alerts), (std::vector<std::string>{"egress_daily_cost:vision:2026-11-28", "egress_daily_cost:vision:2026-11-29"}));
  EXPECT_EQ(alerts[0].measured, "500.000001");
  EXPECT_EQ(alerts[0].upload_limit_bytes, 2'500'000'000);
  EXPECT_NE(render(alerts[0].message, "en").find("uploads over 2.5 GB are to be frozen"), std::string::npos);
}

TEST(Firewall, BudgetReachedHoldsSubmissions) {
  auto in = nov29();
  in.lines = {usage("vision", kNov + kHour, 999'999'999), line(LineKind::kCredit, "sla_outage", "vision", kNov28, -50 * kUsd)};
  auto p = FirewallPolicy::defaults(Currency::kUSD);
  p.monthly_budgets = {{"vision", usd(1000 * kUsd)}};
  EXPECT_TRUE(eval(p, in).empty());  // 999.999999 < 1000.00 (credits are not subtracted)

  in.lines[0].amount_exact = usd(1000 * kUsd);  // reached exactly: breached
  auto alerts = eval(p, in);
  ASSERT_EQ(alerts.size(), 1u);
  const Alert& a = alerts[0];
  EXPECT_EQ(a.key, "budget_breach:vision:2026-11");
  EXPECT_EQ(a.kind, AlertKind::kBudgetBreach);
  EXPECT_EQ(a.severity, AlertSeverity::kCritical);
  EXPECT_TRUE(a.hold_submissions);
  EXPECT_FALSE(a.freeze_egress);
  EXPECT_EQ(a.measured, "1000.00");
  EXPECT_EQ(a.threshold, "1000.00");
  EXPECT_EQ(render(a.message, "en"),
            "Project vision: month-to-date cost 1000.00 USD (2026-11) has reached its monthly budget 1000.00 USD; new "
            "submissions are held until the budget is raised or the month ends");
  EXPECT_EQ(render(a.message, "zh"),
            "项目 vision：2026-11 月初至今费用 1000.00 USD，已达到月度预算 1000.00 USD；新提交的任务已暂停，直至提高预算或进入下个月");

  // Lines of the previous month and after `day` do not count; a zero budget holds a project at once.
  in.lines = {usage("vision", kNov - 1, 5000 * kUsd), usage("vision", kNov29 + kDay, 5000 * kUsd)};
  p.monthly_budgets["idle"] = usd(0);
  alerts = eval(p, in);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0].key, "budget_breach:idle:2026-11");
  EXPECT_EQ(alerts[0].measured, "0.00");
}

TEST(Firewall, OrderedByKindThenKeyAndDeterministic) {
  auto in = nov29();
  in.lines = {usage("b", kNov, 900 * kUsd), usage("a", kNov, 900 * kUsd),
              line(LineKind::kFee, "egress", "b", kNov29, 600 * kUsd), line(LineKind::kFee, "storage_io", "a", kNov, 600 * kUsd)};
  in.cards = {{"n9", 0, kNov29, usd(150 * kUsd), {"a"}}};
  auto p = FirewallPolicy::defaults(Currency::kUSD);
  p.monthly_budgets = {{"b", usd(1000 * kUsd)}, {"a", usd(1000 * kUsd)}};
  const auto first = eval(p, in);
  EXPECT_EQ(keys(first), (std::vector<std::string>{"card_daily_cost:n9/0:2026-11-29", "storage_io_share:a:2026-11",
                                                   "egress_daily_cost:b:2026-11-29", "budget_breach:a:2026-11",
                                                   "budget_breach:b:2026-11"}));
  EXPECT_EQ(keys(eval(p, in)), keys(first));
}

TEST(Firewall, InvalidInputNamesEveryField) {
  FirewallInput in;
  in.month = kNov + kHour;
  in.day = kNov29 + 1;
  in.lines = {usage("vision", kNov, 1)};
  in.lines[0].amount_exact = Money(1, Currency::kCNY);
  in.cards = {{"n1", 0, kNov, Money(1, Currency::kCNY), {}}};
  auto p = FirewallPolicy::defaults(Currency::kCNY);
  p.egress_daily_cost = usd(-1);
  p.storage_io_share_pct = 101;
  p.large_upload_bytes = 0;
  p.monthly_budgets = {{"vision", usd(-1)}};
  auto r = evaluate_firewall(p, in);
  ASSERT_FALSE(r.ok());
  std::vector<std::string> fields;
  for (const auto& f : r.error().fields) fields.push_back(f.field);
  EXPECT_EQ(fields, (std::vector<std::string>{"month", "day", "policy.card_daily_cost", "policy.egress_daily_cost",
                                              "policy.storage_io_share_pct", "policy.large_upload_bytes",
                                              "policy.monthly_budgets.vision", "lines[0].amount_exact", "cards[0].cost"}));
  EXPECT_EQ(r.error().fields[2].reason, "currency CNY differs from the evaluated currency USD");
  EXPECT_EQ(r.error().fields[6].reason, "must not be negative");
  EXPECT_EQ(r.error().fields[2].coded.code, "firewall.currency_differs");
  EXPECT_EQ(render(r.error().fields[2].coded, "zh"), "币种 CNY 与评估所用币种 USD 不一致");
  EXPECT_EQ(r.error().fields[4].coded.code, "firewall.between");
  EXPECT_EQ(render(r.error().detail, "zh"), "month：不是 UTC 自然月的起点（另有 8 处错误）");

  in = nov29();
  in.day = kNov + 30 * kDay;  // 2026-12-01: not in November
  EXPECT_EQ(evaluate_firewall(FirewallPolicy::defaults(Currency::kUSD), in).error().fields[0].reason,
            "not inside the month 2026-11");
}

TEST(CardDayCosts, SplitsAmongCardsAndDays) {
  Allocation a1;
  a1.id = "a1";
  a1.gpu_milli = 2000;
  a1.placement = {{"n1", {0}}, {"n2", {5}}};
  Allocation a2;
  a2.id = "a2";
  a2.gpu_milli = 250;
  a2.placement = {{"n1", {0}}};
  ChargeLine l1 = usage("vision", kNov28 + 18 * kHour, 120 * kUsd);  // 18:00 -> 06:00 next day
  l1.to = kNov29 + 6 * kHour;
  l1.allocation = "a1";
  l1.unit = "GPU-second";
  ChargeLine l2 = usage("llm", kNov29 + kHour, 7 * kUsd);  // zero-length: counts on its day
  l2.allocation = "a2";
  l2.unit = "GPU-second";
  ChargeLine credit = l1;
  credit.kind = LineKind::kCredit;
  credit.amount_exact = usd(-50 * kUsd);
  ChargeLine fee = l1;
  fee.unit = "GB";
  ChargeLine tiny = l2;  // 0.000001 over 2 cards: half a micro each, rounded half to even -> 0
  tiny.allocation = "a1";
  tiny.amount_exact = usd(1);
  tiny.from = tiny.to = kNov;

  auto r = card_day_costs({l1, l2, credit, fee, tiny}, {a1, a2});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 6u);
  auto expect = [&](size_t i, const char* node, int64_t gpu, TimeMs day, int64_t micros, std::vector<std::string> who) {
    const CardDayCost& c = (*r)[i];
    EXPECT_EQ(c.node, node) << i;
    EXPECT_EQ(c.gpu, gpu) << i;
    EXPECT_EQ(c.day, day) << i;
    EXPECT_EQ(c.cost, usd(micros)) << i;
    EXPECT_EQ(c.projects, who) << i;
  };
  expect(0, "n1", 0, kNov, 0, {"llm"});
  expect(1, "n2", 5, kNov, 0, {"llm"});
  // 120.00 over 2 cards and 12 hours, 6 on each day: 30.00 per card per day.
  expect(2, "n1", 0, kNov28, 30 * kUsd, {"vision"});
  expect(3, "n2", 5, kNov28, 30 * kUsd, {"vision"});
  expect(4, "n1", 0, kNov29, 37 * kUsd, {"llm", "vision"});
  expect(5, "n2", 5, kNov29, 30 * kUsd, {"vision"});

  // Fed to the firewall with a lower card threshold: n1/0 on the 29th alerts, shared by two projects.
  auto in = nov29();
  in.cards = *r;
  auto p = FirewallPolicy::defaults(Currency::kUSD);
  p.card_daily_cost = usd(36 * kUsd);
  EXPECT_EQ(keys(eval(p, in)), (std::vector<std::string>{"card_daily_cost:n1/0:2026-11-29"}));
}

TEST(CardDayCosts, Errors) {
  Allocation bare;
  bare.id = "bare";
  ChargeLine l = usage("vision", kNov, kUsd);
  l.unit = "GPU-second";
  l.allocation = "ghost";
  ChargeLine m = l;
  m.allocation = "bare";
  auto r = card_day_costs({l, m}, {bare});
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.error().fields.size(), 2u);
  EXPECT_EQ(r.error().fields[0].field, "lines[0].allocation");
  EXPECT_EQ(r.error().fields[0].reason, "unknown allocation 'ghost'");
  EXPECT_EQ(render(r.error().fields[0].coded, "zh"), "未知的分配“ghost”");
  EXPECT_EQ(r.error().fields[1].reason, "no cards to charge line lines[1] to");
  EXPECT_EQ(r.error().fields[1].coded.code, "firewall.no_cards");
  EXPECT_EQ(r.error().fields[1].field, "allocations[0].placement");
}

}  // namespace
}  // namespace gpurent
