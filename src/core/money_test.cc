#include "core/money.h"

#include <gtest/gtest.h>

#include <limits>

#include "core/message.h"

namespace gpurent {
namespace {

Money usd(const char* s) { return Money::parse(s, Currency::kUSD).value(); }

TEST(Money, ParsesExactDecimals) {
  EXPECT_EQ(usd("3.2").micros(), 3'200'000);
  EXPECT_EQ(usd("0.000125").micros(), 125);
  EXPECT_EQ(usd("-12").micros(), -12'000'000);
  EXPECT_EQ(usd("98.32").amount_string(), "98.32");
  EXPECT_EQ(usd("0.000125").amount_string(), "0.000125");
  EXPECT_EQ(usd("5").amount_string(), "5.00");
}

TEST(Money, RejectsWhatItCannotRepresentExactly) {
  for (const char* bad : {"", "1.", ".5", "1.0000001", "1e3", "abc", "1,5", " 1", "--1", "99999999999999"}) {
    auto r = Money::parse(bad, Currency::kUSD);
    EXPECT_FALSE(r.ok()) << bad;
  }
  // 13 whole digits, but past what int64 micro-units hold: refused, never wrapped into another sign.
  for (const char* big : {"9999999999999", "-9999999999999", "9223372036854.775808", "-9223372036854.775808"}) {
    auto r = Money::parse(big, Currency::kUSD);
    ASSERT_FALSE(r.ok()) << big << " parsed as " << r.value().amount_string();
    EXPECT_NE(r.error().fields[0].reason.find("too large"), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(usd("9223372036854.775807").micros(), INT64_MAX);
  EXPECT_EQ(usd("-9223372036854.775807").micros(), -INT64_MAX);
  auto r = Money::parse("1.", Currency::kUSD);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "amount: '1.' is not a decimal amount: no digits after the decimal point");
  EXPECT_EQ(r.error().fields[0].coded.code, "money.not_decimal");
  EXPECT_EQ(render(r.error().detail, "zh"), "amount：“1.”不是十进制金额：小数点后没有数字");
  EXPECT_EQ(Money::parse("1.0000001", Currency::kUSD).error().fields[0].reason,
            "'1.0000001' is not a decimal amount: more than 6 decimals (amounts are exact to 1e-6)");
}

TEST(Money, AddsOnlySameCurrency) {
  auto a = usd("1.10");
  auto b = Money::parse("2", Currency::kCNY).value();
  EXPECT_FALSE(a.plus(b).ok());
  EXPECT_EQ(a.plus(b).error().message, "currency mismatch: USD vs CNY");
  EXPECT_EQ(render(a.plus(b).error().detail, "zh"), "币种不一致：USD 与 CNY");
  EXPECT_EQ(Money(INT64_MAX, Currency::kUSD).plus(usd("1")).error().detail.code, "money.overflow");
  EXPECT_EQ(a.plus(usd("2.25"))->micros(), 3'350'000);
  EXPECT_EQ(a.minus(usd("2.25"))->amount_string(), "-1.15");
  EXPECT_FALSE(Money(INT64_MAX, Currency::kUSD).plus(usd("1")).ok());
}

TEST(Money, MulRatioRoundsHalfToEven) {
  // 0.000001 * 1/2 = 0.0000005 -> 0 (even); 0.000003 * 1/2 = 1.5 micros -> 2.
  EXPECT_EQ(Money(1, Currency::kUSD).mul_ratio(1, 2)->micros(), 0);
  EXPECT_EQ(Money(3, Currency::kUSD).mul_ratio(1, 2)->micros(), 2);
  EXPECT_EQ(Money(-3, Currency::kUSD).mul_ratio(1, 2)->micros(), -2);
  EXPECT_EQ(Money(5, Currency::kUSD).mul_ratio(1, 2)->micros(), 2);
  // $3.20/h for 1 second: 3.2/3600 = 0.000888...  -> 889 micros.
  EXPECT_EQ(usd("3.20").mul_ratio(1, 3600)->micros(), 889);
  EXPECT_FALSE(usd("1").mul_ratio(1, 0).ok());
  EXPECT_FALSE(Money(INT64_MAX, Currency::kUSD).mul_ratio(3, 1).ok());
}

TEST(Money, RoundsToCentsHalfToEven) {
  EXPECT_EQ(usd("0.125").round_to_cents().amount_string(), "0.12");
  EXPECT_EQ(usd("0.135").round_to_cents().amount_string(), "0.14");
  EXPECT_EQ(usd("0.1251").round_to_cents().amount_string(), "0.13");
  EXPECT_EQ(usd("-0.125").round_to_cents().amount_string(), "-0.12");
  // At int64's ends the nearest cent does not fit: the cent toward zero does (no overflow).
  EXPECT_EQ(Money(std::numeric_limits<int64_t>::max(), Currency::kUSD).round_to_cents().amount_string(),
            "9223372036854.77");
  EXPECT_EQ(Money(std::numeric_limits<int64_t>::min(), Currency::kUSD).round_to_cents().amount_string(),
            "-9223372036854.77");
}

TEST(Money, Currency) {
  EXPECT_EQ(parse_currency("CNY").value(), Currency::kCNY);
  EXPECT_FALSE(parse_currency("usd").ok());
  const Error e = parse_currency("usd").error();
  EXPECT_EQ(e.message, "currency: unknown currency 'usd' (expected USD or CNY)");
  EXPECT_EQ(e.fields[0].coded.code, "money.unknown_currency");
  EXPECT_EQ(render(e.fields[0].coded, "zh"), "未知币种“usd”（应为 USD 或 CNY）");
}

}  // namespace
}  // namespace gpurent

namespace gpurent {
namespace {

// The one half-to-even division and its three ways of meeting an int64 overflow.
TEST(HalfEven, RoundsTiesToEvenBothSigns) {
  EXPECT_EQ(div_half_even_wide(5, 2), 2);    // 2.5 -> 2
  EXPECT_EQ(div_half_even_wide(7, 2), 4);    // 3.5 -> 4
  EXPECT_EQ(div_half_even_wide(-5, 2), -2);  // -2.5 -> -2
  EXPECT_EQ(div_half_even_wide(-7, 2), -4);
  EXPECT_EQ(div_half_even_wide(10, 3), 3);   // 3.33 -> 3
  EXPECT_EQ(div_half_even_wide(-11, 3), -4); // -3.67 -> -4
  const __int128 big = static_cast<__int128>(INT64_MAX) * 4 + 2;  // wide results stay wide
  EXPECT_TRUE(div_half_even_wide(big, 2) == static_cast<__int128>(INT64_MAX) * 2 + 1);
}

TEST(HalfEven, EachVariantMeetsOverflowItsOwnWay) {
  const __int128 too_big = static_cast<__int128>(INT64_MAX) * 3;
  bool overflow = false;
  EXPECT_EQ(div_round_half_even(too_big, 1, &overflow), 0);
  EXPECT_TRUE(overflow);
  overflow = false;
  EXPECT_EQ(div_round_half_even(7, 2, &overflow), 4);
  EXPECT_FALSE(overflow);
  EXPECT_THROW((void)div_half_even_checked(too_big, 1), std::overflow_error);
  EXPECT_EQ(div_half_even_checked(-7, 2), -4);
  EXPECT_EQ(div_half_even_sat(too_big, 1), INT64_MAX);
  EXPECT_EQ(div_half_even_sat(-too_big, 1), INT64_MIN);
  EXPECT_EQ(div_half_even_sat(5, 2), 2);
}

}  // namespace
}  // namespace gpurent
