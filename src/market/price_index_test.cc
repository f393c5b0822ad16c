#include "market/price_index.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

constexpr TimeMs kDay = 86'400'000;
constexpr TimeMs kD0 = 20'000 * kDay;  // some midnight (UTC)

TEST(PriceIndex, EachDayIsTheVolumeWeightedAverageOfItsTrades) {
  // Day 0: 8 GPU-hours at 2.10 and 24 at 2.50 -> (16.80 + 60.00) / 32 = 2.40.
  // Day 2: one trade of 64 GPU-hours at 1.999999. Day 1 traded nothing: no index, not carried over.
  const std::vector<IndexTrade> trades = {{kD0 + 5, 2'100'000, 8},
                                          {kD0 + kDay - 1, 2'500'000, 24},
                                          {kD0 + 2 * kDay, 1'999'999, 64}};
  auto days = daily_index(trades, kD0, kD0 + 3 * kDay);
  ASSERT_TRUE(days.ok()) << days.error().message;
  ASSERT_EQ(days->size(), 2u);
  EXPECT_EQ((*days)[0].day, kD0);
  EXPECT_EQ((*days)[0].vwap_micros, 2'400'000);
  EXPECT_EQ((*days)[0].gpu_hours, 32);
  EXPECT_EQ((*days)[0].trades, 2);
  EXPECT_EQ((*days)[0].low_micros, 2'100'000);
  EXPECT_EQ((*days)[0].high_micros, 2'500'000);
  EXPECT_EQ((*days)[1].day, kD0 + 2 * kDay);
  EXPECT_EQ((*days)[1].vwap_micros, 1'999'999);
}

TEST(PriceIndex, RoundsHalfToEvenAndKeepsToTheRange) {
  // (1 + 2) / 2 = 1.5 micro-units -> 2; (1 + 4) / 2 = 2.5 -> 2 (half to even).
  auto a = daily_index({{kD0, 1, 1}, {kD0, 2, 1}}, kD0, kD0 + kDay);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->at(0).vwap_micros, 2);
  auto b = daily_index({{kD0, 1, 1}, {kD0, 4, 1}, {kD0 - 1, 1'000'000, 1}, {kD0 + kDay, 1'000'000, 1}}, kD0, kD0 + kDay);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->size(), 1u) << "trades outside [from, to) are left out";
  EXPECT_EQ(b->at(0).vwap_micros, 2);
  EXPECT_EQ(b->at(0).trades, 2);
  // Large volumes: the sum is exact (128-bit), the average still fits.
  auto big = daily_index({{kD0, 1'000'000'000'000, 1'000'000'000}, {kD0, 1, 1}}, kD0, kD0 + kDay);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->at(0).vwap_micros, 999'999'999'000);  // (1e21 + 1) / (1e9 + 1) = 999999999000 rest 1001
}

TEST(PriceIndex, RefusesATradeWithoutPriceOrVolume) {
  auto r = daily_index({{kD0, 1'000'000, 1}, {kD0, 0, 5}}, kD0, kD0 + kDay);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "trades[1]");
  EXPECT_FALSE(daily_index({{kD0, 1'000'000, 0}}, kD0, kD0 + kDay).ok());
}

}  // namespace
}  // namespace gpurent
