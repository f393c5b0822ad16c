#include "demo/demo_week.h"

#include <gtest/gtest.h>

#include <set>

#include "model/job.h"

namespace gpurent {
namespace {

constexpr TimeMs kMin = 60'000, kHour = 60 * kMin, kDay = 24 * kHour;

TimeMs at(const char* s) { return *parse_rfc3339(s, "t"); }

GpuModel h100() {
  GpuModel m;
  m.id = "h100-sxm5-80gb";
  m.memory_gib = 80;
  m.tdp_watts = 700;
  return m;
}

TEST(DemoWeek, SubmissionsLieInTheWeekInTimeOrderWithUniqueValidNames) {
  const TimeMs end = at("2026-11-30T02:47:13Z");
  DemoWeek w = demo_week(end, 7);
  EXPECT_EQ(w.start, at("2026-11-23T02:00:00Z"));  // 7 days back, floored to the hour
  EXPECT_EQ(w.end, end);
  ASSERT_GT(w.submissions.size(), 30u);
  std::set<std::string> names;
  TimeMs prev = w.start;
  for (const WeekSubmission& s : w.submissions) {
    EXPECT_GE(s.at, prev);
    EXPECT_LT(s.at, end - 30 * kMin);
    prev = s.at;
    EXPECT_EQ(s.job.kind, "jobs");
    EXPECT_TRUE(s.job.as_tenant == "aurora-ai" || s.job.as_tenant == "qingyun-tech") << s.job.as_tenant;
    const std::string name = s.job.body.value("name", "");
    EXPECT_TRUE(names.insert(name).second) << "duplicate job name " << name;
    auto job = parse_job(s.job.body, s.job.as_tenant == "aurora-ai" ? Currency::kUSD : Currency::kCNY);
    EXPECT_TRUE(job.ok()) << name << ": " << (job ? "" : job.error().message);
  }
  EXPECT_TRUE(names.count("detr-sweep-1124-a"));
  EXPECT_TRUE(names.count("llama-cpt-1125") || names.count("llama-cpt-1124"));
  // Same input, same week.
  DemoWeek again = demo_week(end, 7);
  ASSERT_EQ(again.submissions.size(), w.submissions.size());
  for (size_t i = 0; i < w.submissions.size(); ++i) EXPECT_EQ(again.submissions[i].job.body, w.submissions[i].job.body);
}

TEST(DemoWeek, OutagesAndBurstsFallInsideTheWeekAndRespondWithinTheOutage) {
  DemoWeek w = demo_week(at("2026-11-30T02:47:13Z"), 7);
  ASSERT_EQ(w.outages.size(), 2u);
  for (const WeekOutage& o : w.outages) {
    EXPECT_GT(o.from, w.start);
    EXPECT_LT(o.to, w.end);
    EXPECT_GT(o.responded_at, o.from);
    EXPECT_LE(o.responded_at, o.to);
    EXPECT_FALSE(o.reason.empty());
  }
  ASSERT_EQ(w.bursts.size(), 1u);
  EXPECT_EQ(w.bursts[0].job, "code-assist");
  // A one-day demo has no room for the failures.
  EXPECT_TRUE(demo_week(at("2026-11-30T02:47:13Z"), 1).outages.empty());
}

TEST(DemoWeek, WhichOutagesAShortReplayHoldsDoesNotDependOnTheHour) {
  for (int hour = 0; hour < 24; ++hour) {
    const TimeMs end = at("2026-11-30T00:17:00Z") + hour * kHour;
    const DemoWeek two = demo_week(end, 2), four = demo_week(end, 4);
    ASSERT_EQ(two.outages.size(), 1u) << "hour " << hour;
    EXPECT_EQ(two.outages[0].node, "runpod-ustx3-h200-01");
    EXPECT_EQ(four.outages.size(), 2u) << "hour " << hour;
  }
}

TEST(DemoWeek, WorkloadsDifferWhereTheDashboardShouldShowIt) {
  const Workload good = workload_of("detr-sweep-1124-a", "training");
  const Workload plateau = workload_of("detr-sweep-1124-b", "training");
  const Workload io = workload_of("detr-sweep-1124-c", "training");
  EXPECT_EQ(good.metric, "val_map");
  EXPECT_LT(plateau.metric_last - plateau.metric_first, (good.metric_last - good.metric_first) / 4);
  EXPECT_LT(io.busy_pct, 40);
  EXPECT_GT(io.storage_mb_per_gpu_min, 10 * good.storage_mb_per_gpu_min);
  EXPECT_FALSE(workload_of("qwen-sft-72b", "training").higher_is_better);
  EXPECT_LT(workload_of("nb-sam-1124", "debug").busy_pct, 10);
  EXPECT_GT(workload_of("chat-70b", "inference").swing_pct, 0);
}

TEST(DemoWeek, CardSamplesStayInRangeAndScaleWithTheShare) {
  const Workload w = workload_of("vit-h-pretrain", "training");
  int64_t sum_whole = 0, sum_half = 0;
  for (int i = 0; i < 600; ++i) {
    const TimeMs m = at("2026-11-25T00:00:00Z") + i * kMin;
    CardSample whole = busy_card(w, h100(), 42, m, 1000), half = busy_card(w, h100(), 42, m, 500);
    for (const CardSample& s : {whole, half}) {
      EXPECT_GE(s.utilization_pct, 0);
      EXPECT_LE(s.utilization_pct, 100);
      EXPECT_LE(s.memory_used_mib, 80 * 1024);
      EXPECT_GE(s.power_mw, 60'000);
      EXPECT_LE(s.power_mw, 700'000);
    }
    sum_whole += whole.utilization_pct;
    sum_half += half.utilization_pct;
    EXPECT_EQ(whole.utilization_pct, busy_card(w, h100(), 42, m, 1000).utilization_pct);  // deterministic
  }
  EXPECT_NEAR(static_cast<double>(sum_whole) / 600, 93, 2);
  EXPECT_NEAR(static_cast<double>(sum_half) / 600, 46.5, 2);
  EXPECT_EQ(idle_card(h100(), 7, at("2026-11-25T00:00:00Z")).utilization_pct, 0);
}

TEST(DemoWeek, TrafficCountsWholeMinutesAndTheBurstMultipliesEgress) {
  DemoWeek w = demo_week(at("2026-11-30T02:47:13Z"), 7);
  const WeekBurst b = w.bursts.at(0);
  const Workload ca = workload_of("code-assist", "inference");
  const Workload sft = workload_of("qwen-sft-72b", "training");
  // Storage: MB per GPU-minute × GPUs × minutes.
  JobTraffic t = job_traffic(sft, "qwen-sft-72b", 64'000, 1, b.from - 10 * kMin, b.from, w);
  EXPECT_EQ(t.storage_io_bytes, sft.storage_mb_per_gpu_min * 64 * 10 * 1'000'000);
  EXPECT_EQ(t.egress_bytes, 0);
  // Egress in the burst is `factor` times the rate outside it (same hour of day, so same swing).
  JobTraffic in = job_traffic(ca, "code-assist", 2000, 1, b.from, b.from + 5 * kMin, w);
  JobTraffic out = job_traffic(ca, "code-assist", 2000, 1, b.from - kDay, b.from - kDay + 5 * kMin, w);
  EXPECT_NEAR(static_cast<double>(in.egress_bytes) / static_cast<double>(out.egress_bytes),
              static_cast<double>(b.factor), 1.0);
  EXPECT_EQ(in.input_tokens + in.output_tokens, in.requests * ca.tokens_per_request);
  EXPECT_EQ(job_traffic(ca, "code-assist", 2000, 1, b.from, b.from, w).egress_bytes, 0);
}

TEST(DemoWeek, MetricsMoveTowardTheirLastValue) {
  const Workload loss = workload_of("llama-cpt-1124", "training");
  EXPECT_NEAR(metric_value(loss, 1, 0), loss.metric_first, 0.02);
  EXPECT_LT(metric_value(loss, 1, 20), metric_value(loss, 1, 2));
  EXPECT_NEAR(metric_value(loss, 1, 200), loss.metric_last, 0.02);
}

}  // namespace
}  // namespace gpurent
