// The cost-performance arithmetic: ranking, medians, flags, GPU-hours and cost per gain.
#include "insight/efficiency.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpurent {
namespace {

constexpr __int128 kGpuHour = 1000LL * 3'600'000;  // milli-GPU × ms

JobEfficiency job(const std::string& name, const std::string& metric, double gain, __int128 gpu_milli_ms,
                  std::optional<int64_t> util = std::nullopt) {
  JobEfficiency j;
  j.job_id = "job_" + name;
  j.job = name;
  j.metric = metric;
  j.first = 0.5;
  j.last = 0.5 + gain;
  j.gain = gain;
  j.gpu_milli_ms = gpu_milli_ms;
  j.cost = Money(0, Currency::kUSD);
  j.mean_util_pct = util;
  return j;
}

std::vector<std::string> keys(const JobEfficiency& j) {
  std::vector<std::string> out;
  for (const auto& f : j.flags) out.push_back(f.key);
  return out;
}

TEST(DashboardRank, RanksByGainPerGpuHourWithinEachMetric) {
  std::vector<JobEfficiency> jobs = {job("a", "val_accuracy", 0.2, 10 * kGpuHour),   // 0.02
                                     job("b", "val_accuracy", 0.1, 1 * kGpuHour),    // 0.1
                                     job("c", "val_accuracy", 0.03, 2 * kGpuHour),   // 0.015
                                     job("d", "val_accuracy", 0.001, 4 * kGpuHour),  // 0.00025
                                     job("e", "loss", 1.0, 0),                       // no GPU time
                                     job("f", "loss", 0.5, kGpuHour / 2)};           // 1.0
  auto medians = rank_jobs(jobs);
  ASSERT_EQ(jobs.size(), 6u);
  // Metrics in name order, best first; a job without GPU time last.
  EXPECT_EQ(jobs[0].job, "f");
  EXPECT_EQ(jobs[0].rank, 1);
  EXPECT_EQ(jobs[1].job, "e");
  EXPECT_EQ(jobs[1].rank, 2);
  EXPECT_FALSE(jobs[1].gain_per_gpu_hour.has_value());
  EXPECT_EQ(jobs[2].job, "b");
  EXPECT_EQ(jobs[3].job, "a");
  EXPECT_EQ(jobs[4].job, "c");
  EXPECT_EQ(jobs[5].job, "d");
  EXPECT_EQ(jobs[5].rank, 4);
  EXPECT_DOUBLE_EQ(*jobs[3].gain_per_gpu_hour, 0.02);
  // Median of {0.1, 0.02, 0.015, 0.00025} = (0.02 + 0.015) / 2; a quarter of it is 0.004375.
  EXPECT_DOUBLE_EQ(*medians.at("val_accuracy"), 0.0175);
  EXPECT_DOUBLE_EQ(*medians.at("loss"), 1.0);
  EXPECT_EQ(keys(jobs[5]), std::vector<std::string>{"low_gain"});
  EXPECT_NE(render_en(jobs[5].flags[0].text).find("0.0175"), std::string::npos) << render_en(jobs[5].flags[0].text);
  EXPECT_NE(render(jobs[5].flags[0].text, "zh").find("四分之一"), std::string::npos);
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(jobs[i].flags.empty()) << jobs[i].job;
  // Two jobs of a metric are too few to call one of them low.
  std::vector<JobEfficiency> two = {job("a", "m", 1, kGpuHour), job("b", "m", 0.01, kGpuHour)};
  rank_jobs(two);
  EXPECT_TRUE(two[1].flags.empty());
}

TEST(DashboardRank, FlagsNoGainAndLowUtilization) {
  JobEfficiency worse = job("worse", "val_loss", -0.1, kGpuHour, 39);
  worse.higher_is_better = false;
  std::vector<JobEfficiency> jobs = {worse, job("flat", "val_loss", 0, kGpuHour, 40), job("ok", "val_loss", 0.3, kGpuHour)};
  rank_jobs(jobs);
  EXPECT_EQ(jobs[0].job, "ok");
  EXPECT_TRUE(jobs[0].flags.empty());  // no utilization known: not flagged
  EXPECT_EQ(jobs[1].job, "flat");
  EXPECT_EQ(keys(jobs[1]), std::vector<std::string>{"no_gain"});  // 40% is not below 40%
  EXPECT_EQ(jobs[2].job, "worse");
  EXPECT_EQ(keys(jobs[2]), (std::vector<std::string>{"no_gain", "low_utilization"}));
  EXPECT_EQ(render_en(jobs[2].flags[1].text), "Mean GPU utilization 39% is below 40%");
  EXPECT_EQ(render(jobs[2].flags[1].text, "zh"), "GPU 平均利用率 39%，低于 40%");
}

TEST(DashboardRank, GpuHoursAndCostPerGainAreExact) {
  EXPECT_EQ(gpu_hours_text(0), "0.000");
  EXPECT_EQ(gpu_hours_text(kGpuHour * 123 + kGpuHour * 456 / 1000), "123.456");
  EXPECT_EQ(gpu_hours_text(1'800'000), "0.000");  // 0.0005 GPU-hour: half to even → 0.000
  EXPECT_EQ(gpu_hours_text(5'400'000), "0.002");  // 0.0015 → 0.002
  EXPECT_EQ(gpu_hours_text(500 * 60'000), "0.008");  // half a GPU for a minute: 0.00833…
  const Money cost(12'340'000, Currency::kCNY);  // 12.34
  EXPECT_EQ(cost_per_unit_gain(cost, 0.5)->amount_string(), "24.68");
  EXPECT_EQ(cost_per_unit_gain(cost, 3)->amount_string(), "4.113333");
  EXPECT_EQ(cost_per_unit_gain(cost, 3)->currency(), Currency::kCNY);
  EXPECT_FALSE(cost_per_unit_gain(cost, 0).has_value());
  EXPECT_FALSE(cost_per_unit_gain(cost, -1).has_value());
  EXPECT_FALSE(cost_per_unit_gain(cost, 1e-30).has_value());  // does not fit
  // Exact, not through a double: 2^62 + 1 micro-units halved is 2^61 + 0.5, to even 2^61; a double
  // holds neither 2^62 + 1 nor the quotient.
  const Money big(int64_t{4'611'686'018'427'387'905}, Currency::kUSD);
  EXPECT_EQ(cost_per_unit_gain(big, 2)->micros(), int64_t{2'305'843'009'213'693'952});
  EXPECT_EQ(cost_per_unit_gain(Money(int64_t{3}, Currency::kUSD), 2)->micros(), 2);  // 1.5 to even
  EXPECT_EQ(cost_per_unit_gain(Money(int64_t{5}, Currency::kUSD), 2)->micros(), 2);  // 2.5 to even
  EXPECT_EQ(cost_per_unit_gain(Money(int64_t{-5}, Currency::kUSD), 2)->micros(), -2);
  // A small gain (2^-70 = 8.5e-22): 1 micro-unit / 2^-70 = 2^70 does not fit; 0 does.
  EXPECT_FALSE(cost_per_unit_gain(Money(int64_t{1}, Currency::kUSD), std::ldexp(1.0, -70)).has_value());
  EXPECT_EQ(cost_per_unit_gain(Money(int64_t{0}, Currency::kUSD), std::ldexp(1.0, -70))->micros(), 0);
  // 0.1 is 3602879701896397 / 2^55 exactly: 7 / that = 69.99999999999999611… → 70.
  EXPECT_EQ(cost_per_unit_gain(Money(int64_t{7}, Currency::kUSD), 0.1)->micros(), 70);
  // A gain of 3e-15 (2^-101 × an odd 53-bit mantissa): the quotient past 2^63 / mant in steps.
  EXPECT_EQ(cost_per_unit_gain(Money(int64_t{12345}, Currency::kUSD), 3e-15)->micros(),
            int64_t{4'115'000'000'000'000'221});
  EXPECT_EQ(cost_per_unit_gain(Money(int64_t{1}, Currency::kUSD), 3e-15)->micros(), int64_t{333'333'333'333'333});
  // A huge gain: the quotient rounds to 0.
  EXPECT_EQ(cost_per_unit_gain(big, 1e300)->micros(), 0);
}

}  // namespace
}  // namespace gpurent
