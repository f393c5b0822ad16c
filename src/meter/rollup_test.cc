#include "meter/rollup.h"

#include <gtest/gtest.h>

#include <random>

namespace gpurent {
namespace {

GpuSample gs(TimeMs at, int64_t util, std::optional<int64_t> mem = std::nullopt,
             std::optional<int64_t> power = std::nullopt) {
  GpuSample s;
  s.at = at;
  s.metrics.utilization_pct = util;
  s.metrics.memory_used_mib = mem;
  s.metrics.power_mw = power;
  return s;
}

TEST(Rollup, MinuteOfFloors) {
  EXPECT_EQ(minute_of(0), 0);
  EXPECT_EQ(minute_of(59'999), 0);
  EXPECT_EQ(minute_of(60'000), 60'000);
  EXPECT_EQ(minute_of(-1), -60'000);
}

TEST(Rollup, GpuMinutesCountSumAndMaxPerMetric) {
  const TimeMs m0 = 1'800'000'000'000 / kMinuteMs * kMinuteMs;
  std::vector<GpuSample> in = {gs(m0 + 75'000, 10), gs(m0 + 15'000, 80, 1000, 300'000), gs(m0, 41, 3000),
                               gs(m0 + 59'999, 100)};
  auto out = roll_up_gpu(in);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].minute, m0);
  EXPECT_EQ(out[0].samples, 3);
  EXPECT_EQ(out[0].utilization_pct, (MetricStat{3, 221, 100}));
  EXPECT_EQ(out[0].utilization_pct.avg(), 74);  // 73.67 rounds to 74
  EXPECT_EQ(out[0].memory_used_mib, (MetricStat{2, 4000, 3000}));
  EXPECT_EQ(out[0].power_mw, (MetricStat{1, 300'000, 300'000}));
  EXPECT_EQ(out[0].sm_clock_mhz.avg(), std::nullopt);
  EXPECT_EQ(out[1].minute, m0 + kMinuteMs);
  EXPECT_EQ(out[1].samples, 1);
}

TEST(Rollup, AverageRoundsHalfUp) {
  EXPECT_EQ((MetricStat{2, 3, 2}).avg(), 2);
  EXPECT_EQ((MetricStat{4, 9, 3}).avg(), 2);
  EXPECT_EQ((MetricStat{3, 5, 3}).avg(), 2);
}

// Rolling up in pieces and merging equals rolling up at once: what lets the store roll up a
// minute in two passes (late samples) without changing the result.
TEST(Rollup, MergingPartsEqualsTheWhole) {
  std::mt19937_64 rng(7);
  std::vector<GpuSample> all;
  for (int i = 0; i < 2000; ++i) {
    std::optional<int64_t> mem;
    if (rng() % 3) mem = static_cast<int64_t>(rng() % 80'000);
    all.push_back(gs(static_cast<TimeMs>(rng() % (30 * kMinuteMs)), static_cast<int64_t>(rng() % 101), mem));
  }
  auto whole = roll_up_gpu(all);
  std::vector<GpuSample> a(all.begin(), all.begin() + 700), b(all.begin() + 700, all.end());
  auto pa = roll_up_gpu(a), pb = roll_up_gpu(b);
  std::map<TimeMs, GpuMinute> merged;
  for (auto* part : {&pa, &pb})
    for (const auto& m : *part) {
      auto [it, fresh] = merged.emplace(m.minute, m);
      if (!fresh) it->second.merge(m);
    }
  ASSERT_EQ(merged.size(), whole.size());
  for (const auto& m : whole) EXPECT_EQ(merged.at(m.minute), m);
  int64_t n = 0;
  for (const auto& m : whole) n += m.samples;
  EXPECT_EQ(n, 2000);
}

TEST(Rollup, JobMinutesSumDeltas) {
  std::vector<JobSample> in = {
      {120'000, "j", {1, 2, 3, 4, 5}}, {61'000, "j", {10, 20, 30, 40, 50}}, {119'999, "j", {100, 0, 0, 0, 1}}};
  auto out = roll_up_job(in);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (JobMinute{60'000, 2, {110, 20, 30, 40, 51}}));
  EXPECT_EQ(out[1], (JobMinute{120'000, 1, {1, 2, 3, 4, 5}}));
  EXPECT_EQ(job_totals(in), (JobCounters{111, 22, 33, 44, 56}));
}

}  // namespace
}  // namespace gpurent
