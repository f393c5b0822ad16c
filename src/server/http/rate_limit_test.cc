#include "server/http/rate_limit.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

RateLimits limits(int64_t per_second, int64_t burst, int64_t addr_per_second = 0, int64_t addr_burst = 0) {
  RateLimits l;
  for (size_t i = 0; i < 3; ++i) {
    l.per_token[i] = {per_second, burst};
    l.per_address[i] = {addr_per_second, addr_burst};
  }
  return l;
}

TEST(RateLimiter, ABurstPassesThenTheSustainedRateWithRetryAfter) {
  RateLimiter rl(limits(10, 5));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(rl.check(RateClass::kRead, "a", "t", 0).allowed) << i;
  auto refused = rl.check(RateClass::kRead, "a", "t", 0);
  EXPECT_FALSE(refused.allowed);
  EXPECT_STREQ(refused.by, "token");
  EXPECT_EQ(refused.retry_after_ms, 100);  // 10 a second: one token every 100 ms
  EXPECT_FALSE(rl.check(RateClass::kRead, "a", "t", 99).allowed);
  EXPECT_TRUE(rl.check(RateClass::kRead, "a", "t", 199).allowed);   // 199 ms refilled 1.99 tokens
  EXPECT_FALSE(rl.check(RateClass::kRead, "a", "t", 199).allowed);  // 0.99 left
  EXPECT_TRUE(rl.check(RateClass::kRead, "a", "t", 200).allowed);
  EXPECT_EQ(rl.refused()[0], 3u);
}

TEST(RateLimiter, ClassesAndTokensHaveTheirOwnBuckets) {
  RateLimiter rl(limits(1, 1));
  EXPECT_TRUE(rl.check(RateClass::kRead, "a", "t1", 0).allowed);
  EXPECT_FALSE(rl.check(RateClass::kRead, "a", "t1", 0).allowed);
  EXPECT_TRUE(rl.check(RateClass::kWrite, "a", "t1", 0).allowed);
  EXPECT_TRUE(rl.check(RateClass::kIngest, "a", "t1", 0).allowed);
  EXPECT_TRUE(rl.check(RateClass::kRead, "a", "t2", 0).allowed);
  EXPECT_EQ(rl.refused(), (std::array<uint64_t, 3>{1, 0, 0}));
}

TEST(RateLimiter, TheAddressLimitHoldsAcrossTokensAndARefusalTakesNothing) {
  RateLimiter rl(limits(100, 100, 1, 2));
  EXPECT_TRUE(rl.check(RateClass::kWrite, "10.0.0.1", "t1", 0).allowed);
  EXPECT_TRUE(rl.check(RateClass::kWrite, "10.0.0.1", "t2", 0).allowed);
  auto d = rl.check(RateClass::kWrite, "10.0.0.1", "t3", 0);
  EXPECT_FALSE(d.allowed);
  EXPECT_STREQ(d.by, "address");
  EXPECT_EQ(d.retry_after_ms, 1000);
  EXPECT_TRUE(rl.check(RateClass::kWrite, "10.0.0.2", "t3", 0).allowed);  // t3 lost nothing
}

// All of a tenant's tokens draw on one tenant bucket: more tokens do not mean more requests.
TEST(RateLimiter, ATenantsBucketHoldsAcrossItsTokens) {
  RateLimits l = limits(100, 100, 100, 100);
  for (auto& r : l.per_tenant) r = {1, 3};
  RateLimiter rl(l);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(rl.check_tenant(RateClass::kWrite, "ten_a", 0).allowed) << i;
  auto d = rl.check_tenant(RateClass::kWrite, "ten_a", 0);
  EXPECT_FALSE(d.allowed);
  EXPECT_STREQ(d.by, "tenant");
  EXPECT_EQ(d.retry_after_ms, 1000);
  EXPECT_TRUE(rl.check_tenant(RateClass::kWrite, "ten_b", 0).allowed);  // another tenant
  EXPECT_TRUE(rl.check_tenant(RateClass::kRead, "ten_a", 0).allowed);   // another class
  EXPECT_TRUE(rl.check_tenant(RateClass::kWrite, "ten_a", 1000).allowed);
  EXPECT_TRUE(rl.check_tenant(RateClass::kWrite, "", 0).allowed);  // no tenant: not counted
  EXPECT_EQ(rl.refused()[1], 1u);
  for (auto& r : l.per_tenant) r = {};  // 0: unlimited
  RateLimiter unlimited(l);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(unlimited.check_tenant(RateClass::kRead, "ten_a", 0).allowed);
  EXPECT_EQ(rate_class_of("GET", "/api/v1/jobs"), RateClass::kRead);
  EXPECT_EQ(rate_class_of("POST", "/api/v1/jobs/j1/metrics"), RateClass::kIngest);
  EXPECT_EQ(rate_class_of("POST", "/api/v1/usage"), RateClass::kIngest);
  EXPECT_EQ(rate_class_of("DELETE", "/api/v1/jobs/j1"), RateClass::kWrite);
}

TEST(RateLimiter, MetricPointsAreCountedPerPointPerTenant) {
  RateLimits l = limits(100, 100, 100, 100);
  l.metric_points_per_tenant = {100, 200};
  RateLimiter rl(l);
  EXPECT_TRUE(rl.check_points("ten_a", 150, 0).allowed);
  auto d = rl.check_points("ten_a", 100, 0);  // 50 left
  EXPECT_FALSE(d.allowed);
  EXPECT_STREQ(d.by, "metric_points");
  EXPECT_EQ(d.retry_after_ms, 500);
  EXPECT_TRUE(rl.check_points("ten_b", 200, 0).allowed);  // another tenant's bucket
  EXPECT_TRUE(rl.check_points("ten_a", 100, 500).allowed);
  EXPECT_EQ(rl.refused()[static_cast<size_t>(RateClass::kIngest)], 1u);
  // Every point is paid: at 1 a second with room for a 10,000-point batch, one such batch and the
  // next point waits 10,000 s for the bucket to refill (not a bucket's worth of seconds).
  l.metric_points_per_tenant = {1, 10'000};
  RateLimiter slow(l);
  EXPECT_TRUE(slow.check_points("ten_a", 10'000, 0).allowed);
  EXPECT_FALSE(slow.check_points("ten_a", 1, 500).allowed);  // half a point back
  EXPECT_FALSE(slow.check_points("ten_a", 10'000, 9'999'000).allowed);
  EXPECT_TRUE(slow.check_points("ten_a", 10'000, 10'000'000).allowed);
  l.metric_points_per_tenant = {};  // 0: unlimited
  RateLimiter unlimited(l);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(unlimited.check_points("ten_a", 1'000'000, 0).allowed);
}

// A bucket idle for a long time at a high rate refills to full without multiplying out (it would
// overflow int64: 10^11 a second for three days).
TEST(RateLimiter, ALongIdleAtAHighRateRefillsWithoutOverflow) {
  RateLimits l = limits(100, 100, 100, 100);
  for (auto& r : l.per_tenant) r = {100'000'000'000, 200'000'000'000};
  RateLimiter rl(l);
  EXPECT_TRUE(rl.check_tenant(RateClass::kRead, "ten_a", 0).allowed);
  const int64_t days = 3 * 86'400'000;  // 2.6e8 ms x 1e11 a second: past int64
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(rl.check_tenant(RateClass::kRead, "ten_a", days).allowed) << i;
}

TEST(RateLimiter, UnlimitedClassesAndNoTokenAreNotCounted) {
  RateLimiter rl(limits(0, 0));
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(rl.check(RateClass::kRead, "a", "t", 0).allowed);
  RateLimiter addr_only(limits(1, 1, 1000, 1000));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(addr_only.check(RateClass::kRead, "a", "", 0).allowed);
}

TEST(RateLimiter, AFloodOfKeysKeepsTheTableBounded) {
  RateLimits l = limits(1, 1);
  l.max_keys = 100;
  RateLimiter rl(l);
  for (int i = 0; i < 10000; ++i) rl.check(RateClass::kRead, "a", "tok-" + std::to_string(i), i);
  // A recent caller keeps its (empty) bucket: it is still refused, not handed a fresh one.
  EXPECT_FALSE(rl.check(RateClass::kRead, "a", "tok-9999", 9999).allowed);
}

}  // namespace
}  // namespace gpurent
