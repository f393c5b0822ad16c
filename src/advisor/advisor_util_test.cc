// The advisor's shared helpers: half-to-even division (ties, signs, saturation) and capped price
// fields (absent, zero, over the ceiling, unknown keys still reported).
#include "advisor/advisor_util.h"

#include <gtest/gtest.h>

#include "core/message.h"

#include <limits>
#include <map>
#include <optional>
#include <string>

namespace gpurent {
namespace {

TEST(AdvisorUtil, DivHalfEvenRoundsTiesToEven) {
  EXPECT_EQ(div_half_even(7, 2), 4);    // 3.5 -> 4
  EXPECT_EQ(div_half_even(5, 2), 2);    // 2.5 -> 2
  EXPECT_EQ(div_half_even(-5, 2), -2);  // -2.5 -> -2
  EXPECT_EQ(div_half_even(-7, 2), -4);  // -3.5 -> -4
  EXPECT_EQ(div_half_even(10, 3), 3);   // 3.33 -> 3
  EXPECT_EQ(div_half_even(11, 3), 4);   // 3.67 -> 4
  EXPECT_EQ(div_half_even(-11, 3), -4);
  EXPECT_EQ(div_half_even(9, 3), 3);
  // Past the int64 range, unclamped: INT64_MAX + 0.5 rounds up to the even INT64_MAX + 1.
  const __int128 max = std::numeric_limits<int64_t>::max();
  EXPECT_TRUE(div_half_even(max * 4 + 2, 4) == max + 1);
}

TEST(AdvisorUtil, DivHalfEvenSatClampsToInt64) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  const __int128 huge = static_cast<__int128>(kMax) * 10;
  EXPECT_EQ(div_half_even_sat(huge, 3), kMax);
  EXPECT_EQ(div_half_even_sat(-huge, 3), kMin);
  EXPECT_EQ(div_half_even_sat(static_cast<__int128>(kMax) * 2, 2), kMax);
  EXPECT_EQ(div_half_even_sat(642857, 1000), 643);
  EXPECT_EQ(div_half_even_sat(2500, 1000), 2);
}

std::map<std::string, std::string> read_all(const json& body, std::map<std::string, std::optional<Money>>& got) {
  FieldErrors errs;
  Fields f(body, "", errs);
  got["req"] = read_capped_money(f, "req", Currency::kUSD, 100, true, false);
  got["opt"] = read_capped_money(f, "opt", Currency::kUSD, 100, false, false);
  got["pos"] = read_capped_money(f, "pos", Currency::kUSD, 100, false, true);
  f.finish();
  std::map<std::string, std::string> reasons;
  for (const auto& e : errs.list()) reasons[e.field] = e.reason;
  return reasons;
}

TEST(AdvisorUtil, ReadCappedMoneyAcceptsPricesUpToTheCeiling) {
  std::map<std::string, std::optional<Money>> got;
  auto errs = read_all(json::parse(R"({"req":"100","opt":"0","pos":"0.000001"})"), got);
  EXPECT_TRUE(errs.empty());
  EXPECT_EQ(got["req"]->micros(), 100'000'000);
  EXPECT_EQ(got["opt"]->micros(), 0);
  EXPECT_EQ(got["pos"]->micros(), 1);
  errs = read_all(json::parse(R"({"req":"1"})"), got);
  EXPECT_TRUE(errs.empty());
  EXPECT_FALSE(got["opt"]);
  EXPECT_FALSE(got["pos"]);
}

TEST(AdvisorUtil, ReadCappedMoneyNamesEachProblem) {
  std::map<std::string, std::optional<Money>> got;
  auto errs = read_all(json::parse(R"({"opt":"100.000001","pos":"0","typo":1})"), got);
  EXPECT_EQ(errs["req"], "is required");
  EXPECT_EQ(errs["opt"], "must be at most 100 USD");
  EXPECT_EQ(errs["pos"], "must be greater than 0");
  EXPECT_EQ(errs["typo"], "unknown field");
  EXPECT_EQ(errs.size(), 4u);
  EXPECT_FALSE(got["req"]);
  EXPECT_FALSE(got["opt"]);
  EXPECT_FALSE(got["pos"]);
}

TEST(AdvisorUtil, ReadCappedMoneyReasonsAreCoded) {
  FieldErrors errs;
  const json body = json::parse(R"({"opt":"100.000001","pos":"0"})");
  Fields f(body, "", errs);
  read_capped_money(f, "req", Currency::kUSD, 100, true, false);
  read_capped_money(f, "opt", Currency::kCNY, 100, false, false);
  read_capped_money(f, "pos", Currency::kUSD, 100, false, true);
  ASSERT_EQ(errs.list().size(), 3u);
  EXPECT_EQ(errs.list()[0].coded.code, "field.required");
  EXPECT_EQ(errs.list()[1].coded.code, "advisor.price.at_most");
  EXPECT_EQ(errs.list()[1].reason, "must be at most 100 CNY");
  EXPECT_EQ(render(errs.list()[1].coded, "zh"), "不能超过 100 CNY");
  EXPECT_EQ(errs.list()[2].coded.code, "advisor.price.positive");
  EXPECT_EQ(render(errs.to_error().detail, "zh"), "req：为必填项（另有 2 处错误）");
}

}  // namespace
}  // namespace gpurent
