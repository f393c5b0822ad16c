// Properties of the rating engine on random inputs (fixed seeds, so a failure reproduces):
// totals equal the sum of the lines; a period's invoice equals the sum of its halves' up to the
// documented rounding; rating is deterministic. Plus the calendar helpers.
#include "billing/rating.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "billing/firewall.h"
#include "billing/rating_output.h"
#include "billing/scenario.h"
#include "core/message.h"

namespace gpurent {
namespace {

constexpr TimeMs kNov = 1'793'491'200'000;  // 2026-11-01T00:00:00Z
constexpr TimeMs kHour = 3'600'000;

TEST(Calendar, MonthsAndExit) {
  EXPECT_EQ(format_rfc3339(kNov), "2026-11-01T00:00:00.000Z");
  EXPECT_EQ(month_start(kNov + 17 * 24 * kHour + 5), kNov);
  EXPECT_EQ(format_rfc3339(add_months(kNov, 1)), "2026-12-01T00:00:00.000Z");
  EXPECT_EQ(format_rfc3339(add_months(kNov, 14)), "2028-01-01T00:00:00.000Z");
  auto jan31 = parse_rfc3339("2028-01-31T10:00:00Z", "t");
  EXPECT_EQ(format_rfc3339(add_months(*jan31, 1)), "2028-02-29T10:00:00.000Z");  // clamped, leap year
  ContractTerms k;
  k.exit_notice_at = kNov;
  k.exit_at = kNov + 24 * kHour;
  EXPECT_EQ(*effective_exit(k), kNov + 30 * 24 * kHour);  // 30 days' notice by default
  k.exit_at = kNov + 40 * 24 * kHour;
  EXPECT_EQ(*effective_exit(k), kNov + 40 * 24 * kHour);
  EXPECT_FALSE(effective_exit(ContractTerms{}).has_value());
}

TEST(FormatScaled, ExactDecimals) {
  EXPECT_EQ(format_scaled(1234500, 6), "1.2345");
  EXPECT_EQ(format_scaled(-5, 3), "-0.005");
  EXPECT_EQ(format_scaled(7000, 3), "7");
  EXPECT_EQ(format_scaled(0, 9), "0");
}

Offer offer(const std::string& name, bool idle, bool fees) {
  Offer o;
  o.name = name;
  o.gpu_model = "h100-sxm5-80gb";
  o.currency = Currency::kUSD;
  o.prices.on_demand = Money(3'210'007, Currency::kUSD);
  o.prices.reserved_1m = Money(2'777'777, Currency::kUSD);
  o.prices.spot = Money(1'333'331, Currency::kUSD);
  o.min_increment_seconds = 1 + static_cast<int64_t>(name.size() % 3) * 29;
  o.fees.billing_starts = static_cast<BillingStart>(name.size() % 3);
  if (idle) o.fees.idle = IdleRule{5, 10, IdleAction::kDiscount, 30};
  if (fees) {
    o.fees.storage_io = VolumeFee{Money(20'001, Currency::kUSD), 50};
    o.fees.egress = VolumeFee{Money(80'003, Currency::kUSD), 5};
  }
  o.served_models.push_back({"m", Money(4'000'001, Currency::kUSD), Money(12'000'003, Currency::kUSD), Money(3'200'000'000, Currency::kUSD)});
  o.contract_template.min_fp16_tflops_x10 = 9000;
  o.contract_template.min_nccl_busbw_gbps = 350;
  return o;
}

RatingInput random_input(uint32_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  RatingInput in;
  in.from = kNov;
  in.to = kNov + 30 * 24 * kHour;
  in.contract.clauses = offer("x", false, false).contract_template;
  in.contract.cap_credits = false;  // the cap is per period, so halves would not add up
  for (std::string n : {"ab", "abc", "abcd"}) in.offers[n] = offer(n, pick(0, 1) == 1, pick(0, 1) == 1);
  in.spot_prices["abc"] = {{kNov + 5 * kHour, Money(1'100'001, Currency::kUSD)}, {kNov + 200 * kHour, Money(1'500'003, Currency::kUSD)}};
  in.commitments.push_back({"c1", "ab", pick(1, 8), 1, kNov - pick(0, 400) * kHour, 0, false});
  in.commitments.back().end = add_months(in.commitments.back().start, 1);
  const char* offers[] = {"ab", "abc", "abcd"};
  const int n = static_cast<int>(pick(5, 40));
  for (int i = 0; i < n; ++i) {
    Allocation a;
    a.id = "a" + std::to_string(i);
    a.project = "p" + std::to_string(i % 3);
    a.job = "j" + std::to_string(i / 2);
    a.offer = offers[pick(0, 2)];
    a.mode = static_cast<BillingMode>(pick(0, 2));
    a.gpu_milli = pick(0, 3) == 0 ? pick(1, 999) : pick(1, 8) * 1000;
    a.placement.push_back({"n" + std::to_string(pick(0, 3)), {0}});
    a.requested_at = in.from + pick(-100, 700) * kHour + pick(0, kHour);
    a.running_at = a.requested_at + pick(0, 600'000);
    a.ready_at = *a.running_at + pick(0, 600'000);
    if (pick(0, 4) > 0) a.ended_at = *a.ready_at + pick(1, 300) * kHour / 7;
    for (TimeMs t = a.requested_at; t < a.ended_at.value_or(in.to); t += pick(60'000, 40 * 60'000))
      a.utilization.push_back({t, pick(0, 2) == 0 ? pick(0, 4) : pick(5, 100)});
    in.allocations.push_back(a);
    for (int k = 0; k < 3; ++k)
      in.volume.push_back({a.requested_at + pick(0, 100) * kHour, a.id, pick(0, 40) * 1'000'000'007, pick(0, 5) * 999'999'999});
  }
  in.tokens.push_back({in.from + pick(0, 700) * kHour, "p0", "ab", "m", pick(0, 10'000'000), pick(0, 10'000'000)});
  in.qps.push_back({"p1", "abc", "m", pick(1, 50), in.from + pick(0, 300) * kHour, in.from + pick(301, 800) * kHour});
  in.tflops.push_back({in.from + pick(0, 700) * kHour, "n1", 0, pick(8000, 9500)});
  in.nccl.push_back({"n2", in.from + pick(0, 300) * kHour, in.from + pick(301, 700) * kHour, pick(200, 400)});
  in.incidents.push_back({"i1", in.from + pick(0, 700) * kHour, in.from + pick(701, 720) * kHour, "n3", "", "test"});
  return in;
}

TEST(RatingProperties, TotalsAreSumsOfLinesAndRatingIsDeterministic) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    auto in = random_input(seed);
    auto r = rate(in);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.error().message;
    for (const auto& v : check_rating_invariants(*r)) ADD_FAILURE() << "seed " << seed << ": " << v;
    auto again = rate(in);
    ASSERT_TRUE(again.ok());
    ASSERT_EQ(again->lines.size(), r->lines.size());
    for (size_t i = 0; i < r->lines.size(); ++i) {
      EXPECT_EQ(again->lines[i].amount_exact, r->lines[i].amount_exact);
      EXPECT_EQ(again->lines[i].rule, r->lines[i].rule);
    }
  }
}

// The whole period's exact amount equals its two parts' up to ½ µ per line on both sides; when it
// does not, names the rules that differ. Returns the number of lines (for the cents bound).
int64_t expect_parts_add_up(uint32_t seed, const RatingResult& whole, const RatingResult& first,
                            const RatingResult& second) {
  int64_t exact_whole = 0, exact_parts = 0;
  for (const auto& l : whole.lines) exact_whole += l.amount_exact.micros();
  for (const auto* h : {&first, &second})
    for (const auto& l : h->lines) exact_parts += l.amount_exact.micros();
  const int64_t lines = static_cast<int64_t>(whole.lines.size() + first.lines.size() + second.lines.size());
  if (std::llabs(exact_whole - exact_parts) > lines) {
    std::map<std::string, int64_t> by_rule;
    for (const auto& l : whole.lines) by_rule[l.rule] += l.amount_exact.micros();
    for (const auto* h : {&first, &second})
      for (const auto& l : h->lines) by_rule[l.rule] -= l.amount_exact.micros();
    for (auto [k, v] : by_rule)
      if (std::llabs(v) > 100) ADD_FAILURE() << "seed " << seed << " rule " << k << " differs by " << v << " µ";
  }
  EXPECT_LE(std::llabs(exact_whole - exact_parts), lines) << "seed " << seed;  // ≤ ½ µ per line, both sides
  return lines;
}

// The invoice for a period equals the sum of the invoices for its halves, up to rounding: each line
// may move by half a cent when rounded, and each exact amount by half a micro-unit.
TEST(RatingProperties, PeriodEqualsSumOfItsHalves) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    auto whole_in = random_input(seed);
    auto first_in = whole_in, second_in = whole_in;
    const TimeMs mid = whole_in.from + (static_cast<TimeMs>(seed) * 7919 % 720) * kHour + seed * 1013;
    first_in.to = mid;
    second_in.from = mid;
    auto whole = rate(whole_in), first = rate(first_in), second = rate(second_in);
    ASSERT_TRUE(whole.ok() && first.ok() && second.ok()) << "seed " << seed;
    const int64_t lines = expect_parts_add_up(seed, *whole, *first, *second);
    const int64_t cents_diff = whole->total.micros() - first->total.micros() - second->total.micros();
    EXPECT_LE(std::llabs(cents_diff), lines * 5'000) << "seed " << seed;  // ≤ ½ cent per line
  }
}

// Every price of the offer's sheet doubled (a new version with the same rules).
Offer repriced(Offer o) {
  auto twice = [](Money& m) { m = Money(m.micros() * 2, m.currency()); };
  twice(o.prices.on_demand);
  for (auto* p : {&o.prices.reserved_1m, &o.prices.spot})
    if (*p) twice(**p);
  for (auto* f : {&o.fees.storage_io, &o.fees.egress})
    if (*f) twice((*f)->per_gb);
  for (auto& m : o.served_models)
    for (auto* p : {&m.per_million_input_tokens, &m.per_million_output_tokens, &m.per_qps_month})
      if (*p) twice(**p);
  return o;
}

// Price history: a sheet that changes after the period leaves the period's invoice exactly as it
// was; a change inside it reprices only what happened after the change (the period rated with
// the history equals its part before the change at the old sheet plus its part after at the new
// one, up to the halves' rounding).
TEST(RatingProperties, APriceChangeRepricesOnlyUsageAfterIt) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    RatingInput in = random_input(seed);
    in.commitments.clear();  // a commitment keeps its price across the change: not comparable by parts
    in.incidents.clear();    // an outage is compensated at the price in force when it began: likewise
    auto base = rate(in);
    ASSERT_TRUE(base.ok()) << "seed " << seed << ": " << base.error().message;

    RatingInput later = in;  // changed at the period's end: nothing in it moves
    for (auto& [name, o] : later.offers) {
      later.offer_history[name] = {{in.to, o}};
      o = repriced(o);
    }
    auto same = rate(later);
    ASSERT_TRUE(same.ok()) << "seed " << seed;
    ASSERT_EQ(same->lines.size(), base->lines.size()) << "seed " << seed;
    for (size_t i = 0; i < base->lines.size(); ++i) EXPECT_EQ(same->lines[i].amount_exact, base->lines[i].amount_exact);

    const TimeMs t = in.from + (static_cast<TimeMs>(seed) * 7919 % 720) * kHour + seed * 1013;
    RatingInput mid = in, before = in, after = in;
    before.to = t;
    after.from = t;
    for (auto& [name, o] : mid.offers) {
      mid.offer_history[name] = {{t, o}};
      o = repriced(o);
      after.offers[name] = o;
    }
    // Runs placed before t keep the rules they were placed under: same rules in both sheets here.
    auto whole = rate(mid), first = rate(before), second = rate(after);
    ASSERT_TRUE(whole.ok() && first.ok() && second.ok()) << "seed " << seed;
    expect_parts_add_up(seed, *whole, *first, *second);
    EXPECT_GE(whole->charges.micros(), base->charges.micros()) << "seed " << seed << ": the dearer sheet shows";
  }
}

// Volume lines per UTC day (what the cost firewall's daily egress rule rates with) split the
// monthly lines exactly: per allocation and rule, the days' GB add up to the month's, and each
// day's line lies inside its day.
TEST(RatingProperties, VolumeLinesPerDaySplitTheMonthlyOnes) {
  auto micro_gb = [](const std::string& q) {  // "12.345678901" GB, 9 decimals, as an integer
    const auto dot = q.find('.');
    std::string frac = dot == std::string::npos ? "" : q.substr(dot + 1);
    frac.resize(9, '0');
    return std::stoll(q.substr(0, dot)) * 1'000'000'000 + std::stoll(frac);
  };
  int split = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    auto in = random_input(seed);
    auto monthly = rate(in);
    in.lines_per_day = true;
    auto daily = rate(in);
    ASSERT_TRUE(monthly.ok() && daily.ok()) << "seed " << seed;
    std::map<std::string, int64_t> month_q, day_q;  // (rule, allocation) -> GB × 10^9
    std::map<std::string, int> day_lines;
    for (const auto& l : monthly->lines)
      if (l.unit == "GB") month_q[l.rule + "/" + l.allocation] += micro_gb(l.quantity);
    for (const auto& l : daily->lines) {
      if (l.unit != "GB") continue;
      day_q[l.rule + "/" + l.allocation] += micro_gb(l.quantity);
      ++day_lines[l.rule + "/" + l.allocation];
      EXPECT_EQ(l.from / (24 * kHour), l.to / (24 * kHour)) << "seed " << seed << ": " << l.description;
    }
    EXPECT_EQ(day_q, month_q) << "seed " << seed;
    for (const auto& [k, n] : day_lines) split += n > 1;
    for (const auto& v : check_rating_invariants(*daily)) ADD_FAILURE() << "seed " << seed << ": " << v;
  }
  EXPECT_GT(split, 0) << "some allocation's volume spans several days";
}

// Three days of November on offer "ab" (egress: 5 GB free a month, then 0.080003 USD/GB) and one
// GPU allocation a1 running its first two.
RatingInput egress_input() {
  RatingInput in;
  in.from = kNov;
  in.to = kNov + 3 * 24 * kHour;
  in.offers["ab"] = offer("ab", false, true);  // egress: 5 GB free a month, then 0.080003 USD/GB
  in.contract.clauses = in.offers["ab"].contract_template;
  Allocation a;
  a.id = "a1";
  a.project = "p";
  a.job = "j";
  a.offer = "ab";
  a.gpu_milli = 1000;
  a.placement.push_back({"n1", {0}});
  a.requested_at = kNov;
  a.running_at = kNov;
  a.ready_at = kNov;
  a.ended_at = kNov + 48 * kHour;
  in.allocations.push_back(a);
  return in;
}

TEST(Rating, VolumeLinesPerDayUseTheMonthsAllowanceFirstComeFirstServed) {
  RatingInput in = egress_input();
  in.volume.push_back({kNov + 1 * kHour, "a1", 0, 3'000'000'000});        // day 1: 3 GB, free
  in.volume.push_back({kNov + 25 * kHour, "a1", 0, 4'000'000'000});       // day 2: 2 GB free, 2 GB charged
  in.lines_per_day = true;
  auto r = rate(in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::vector<std::string> got;
  for (const auto& l : r->lines)
    if (l.unit == "GB") got.push_back(l.rule + " " + format_rfc3339(l.from).substr(0, 10) + " " + l.quantity + " " + l.amount_exact.amount_string());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::string>{"egress 2026-11-02 2 0.160006", "egress_free 2026-11-01 3 0.00",
                                          "egress_free 2026-11-02 2 0.00"}));
}

// Records another input bills (the tenant's runs on the same offer in another section) use the
// month's allowance in time order with this input's own, and are never billed here.
TEST(Rating, VolumeElsewhereUsesTheAllowanceFirstAndIsNotBilledHere) {
  RatingInput in = egress_input();
  in.volume.push_back({kNov + 25 * kHour, "a1", 0, 4'000'000'000});
  auto egress = [](const RatingResult& r) {
    std::vector<std::string> got;
    for (const auto& l : r.lines)
      if (l.unit == "GB") got.push_back(l.rule + " " + l.quantity);
    std::sort(got.begin(), got.end());
    return got;
  };
  auto alone = rate(in);
  ASSERT_TRUE(alone.ok()) << alone.error().message;
  EXPECT_EQ(egress(*alone), (std::vector<std::string>{"egress_free 4"}));
  // 3 GB elsewhere before it, 10 GB elsewhere after it and 1 GB on another offer: 2 GB left free.
  in.volume_elsewhere.push_back({kNov + 1 * kHour, "b1", "ab", 0, 3'000'000'000});
  in.volume_elsewhere.push_back({kNov + 30 * kHour, "b1", "ab", 0, 10'000'000'000});
  in.volume_elsewhere.push_back({kNov + 2 * kHour, "c1", "other", 0, 1'000'000'000});
  auto shared = rate(in);
  ASSERT_TRUE(shared.ok()) << shared.error().message;
  EXPECT_EQ(egress(*shared), (std::vector<std::string>{"egress 2", "egress_free 2"}));
  for (const auto& v : check_rating_invariants(*shared)) ADD_FAILURE() << v;
}

// A card's cost per UTC day (the cost firewall's card rule) from lines per day: spot at 1.00 on day
// 1, 2.00 on day 2, 1.00 on day 3 gives each day its own price's 24 GPU-hours, where a monthly
// line of 1.00 (days 1 and 3) spread over days 1 to 3 put a third of it on day 2.
TEST(Rating, CardDayCostsFromLinesPerDayFollowEachDaysPrice) {
  RatingInput in = egress_input();
  in.offers["ab"].fees = {};
  in.offers["ab"].min_increment_seconds = 1;
  in.allocations[0].mode = BillingMode::kSpot;
  in.allocations[0].ended_at = kNov + 72 * kHour;
  in.spot_prices["ab"] = {{kNov, Money(1'000'000, Currency::kUSD)},
                          {kNov + 24 * kHour, Money(2'000'000, Currency::kUSD)},
                          {kNov + 48 * kHour, Money(1'000'000, Currency::kUSD)}};
  auto per_day = [&](bool lines_per_day) {
    in.lines_per_day = lines_per_day;
    auto r = rate(in);
    EXPECT_TRUE(r.ok()) << r.error().message;
    std::vector<ChargeLine> gpu;
    for (const auto& l : r->lines)
      if (l.unit == "GPU-second") gpu.push_back(l);
    auto cards = card_day_costs(gpu, in.allocations);
    EXPECT_TRUE(cards.ok()) << cards.error().message;
    std::vector<std::string> out;
    for (const auto& c : *cards) out.push_back(format_rfc3339(c.day).substr(0, 10) + " " + c.cost.amount_string());
    return out;
  };
  EXPECT_EQ(per_day(true), (std::vector<std::string>{"2026-11-01 24.00", "2026-11-02 48.00", "2026-11-03 24.00"}));
  EXPECT_NE(per_day(false), per_day(true)) << "one monthly line per price spreads over the days between";
}

TEST(Rating, RefusesBadReferencesNamingTheField) {
  auto in = random_input(3);
  in.allocations[2].offer = "nope";
  auto r = rate(in);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "allocations[2].offer");
  EXPECT_EQ(r.error().fields.at(0).reason, "unknown offer 'nope'");
  EXPECT_EQ(r.error().fields.at(0).coded.code, "rating.unknown_offer");
  EXPECT_EQ(render(r.error().detail, "zh"), "allocations[2].offer：未知的报价“nope”");
  in = random_input(3);
  in.allocations[1].utilization = {{in.from + 10, 50}, {in.from, 50}};
  r = rate(in);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "allocations[1].utilization[1].at");
  in = random_input(3);
  in.from = in.to;
  r = rate(in);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "period: from must be before to");
  EXPECT_EQ(r.error().fields.at(0).coded.code, "rating.period_order");
}

// RFC 4180 rows of a CSV document (quoted fields may hold commas and quotes; no newlines in ours).
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
      else if (ch == '"') quoted = false;
      else cell += ch;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      rows.back().push_back(std::move(cell)), cell.clear();
    } else if (ch == '\n') {
      rows.back().push_back(std::move(cell)), cell.clear();
      rows.emplace_back();
    } else {
      cell += ch;
    }
  }
  rows.pop_back();  // after the last newline
  return rows;
}

int64_t cents_of(const std::string& amount) {
  auto m = Money::parse(amount, Currency::kUSD);
  EXPECT_TRUE(m.ok()) << amount;
  return m.ok() ? m->micros() / 10'000 : 0;
}

// The FOCUS export on random months (one monthly commitment, spot, idle rules, fees, credits):
// BilledCost adds up to the invoice; EffectiveCost adds up to it too (the commitment's share is
// spread over what it covered plus an Unused row, to the cent); a Purchase has EffectiveCost 0 and
// no consumed quantity; covered usage bills 0 at a list price above it; every date-time is
// YYYY-MM-DDTHH:mm:ssZ.
TEST(FocusProperties, CostsAddUpAndConditionalColumnsHold) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    const RatingInput in = random_input(seed);
    auto r = rate(in);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.error().message;
    const auto rows = csv_rows(to_focus_csv(*r, {"t", "tenant", "supplier", "gpurent", {}}));
    ASSERT_GE(rows.size(), r->lines.size() + 1) << "seed " << seed;
    std::map<std::string, size_t> col;
    for (size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
    auto at = [&](const std::vector<std::string>& row, const char* name) { return row.at(col.at(name)); };
    int64_t billed = 0, effective = 0;
    size_t unused = 0;
    for (size_t k = 1; k < rows.size(); ++k) {
      const auto& row = rows[k];
      ASSERT_EQ(row.size(), rows[0].size()) << "seed " << seed << " row " << k;
      billed += cents_of(at(row, "BilledCost"));
      effective += cents_of(at(row, "EffectiveCost"));
      for (const char* t : {"BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"}) {
        const std::string v = at(row, t);
        EXPECT_TRUE(v.size() == 20 && v[4] == '-' && v[10] == 'T' && v[19] == 'Z' && v.find('.') == std::string::npos)
            << t << " " << v;
      }
      EXPECT_LE(at(row, "ChargePeriodStart"), at(row, "ChargePeriodEnd"));
      const std::string category = at(row, "ChargeCategory"), status = at(row, "CommitmentDiscountStatus");
      if (category == "Purchase") {
        EXPECT_EQ(at(row, "EffectiveCost"), "0.00");
        EXPECT_EQ(at(row, "ConsumedQuantity"), "");
        EXPECT_EQ(at(row, "CommitmentDiscountId"), "c1");
        EXPECT_EQ(status, "");
      }
      if (status == "Unused") {
        ++unused;
        EXPECT_EQ(at(row, "BilledCost"), "0.00");
        EXPECT_EQ(at(row, "ConsumedQuantity"), "");
      }
      if (at(row, "x_Rule") == "reserved_covered") {
        EXPECT_EQ(status, "Used");
        EXPECT_EQ(at(row, "CommitmentDiscountId"), "c1");
        EXPECT_EQ(at(row, "BilledCost"), "0.00");
        EXPECT_GE(cents_of(at(row, "ListCost")), cents_of(at(row, "EffectiveCost"))) << "seed " << seed;
      }
      if (category == "Usage" && status != "Unused") {
        EXPECT_NE(at(row, "ConsumedUnit"), "") << "seed " << seed;
      }
    }
    EXPECT_EQ(billed, r->total.micros() / 10'000) << "seed " << seed;
    EXPECT_EQ(effective, r->total.micros() / 10'000) << "seed " << seed;
    EXPECT_LE(unused, r->commitments.size());
    EXPECT_EQ(rows.size() - 1, r->lines.size() + unused) << "seed " << seed;
  }
}

}  // namespace
}  // namespace gpurent
