#include "advisor/demand.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "core/message.h"

namespace gpurent {
namespace {

constexpr TimeMs kMin = 60'000;
const TimeMs kT0 = parse_rfc3339("2017-10-03T05:00:00Z", "t").value();

std::string reason(const Error& e) { return e.fields.empty() ? e.message : e.fields[0].reason; }

TEST(DemandCsv, ReadsTheThreeShapes) {
  auto a = parse_demand_csv("hour,gpus\r\n0,4\r\n1,0\r\n\r\n# a comment\n2, 12 \n", "f.csv");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->gpus, (std::vector<int64_t>{4, 0, 12}));
  EXPECT_FALSE(a->start);

  auto b = parse_demand_csv("hour,gpus\n2017-10-03T05:00:00Z,3\n2017-10-03T06:00:00Z,5\n", "f.csv");
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->gpus, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(b->start, kT0);

  auto c = parse_demand_csv("gpus\n7\n8\n", "f.csv");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->gpus, (std::vector<int64_t>{7, 8}));

  auto d = parse_demand_csv("7\n0\n9", "f.csv");  // no header, no final newline
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->gpus, (std::vector<int64_t>{7, 0, 9}));
}

TEST(DemandCsv, ErrorsNameTheLineAndColumn) {
  auto expect = [](const char* text, const std::string& want) {
    auto r = parse_demand_csv(text, "demand.csv");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code, Code::kInvalid);
    ASSERT_EQ(r.error().fields.size(), 1u);
    EXPECT_EQ(r.error().fields[0].field, "demand.csv");
    EXPECT_EQ(reason(r.error()), want) << text;
  };
  expect("hour,gpus\n0,4\n1,-2\n",
         "line 3, column gpus: expected a whole number of GPUs from 0 to 1000000, got \"-2\"");
  expect("gpus\n4\n2.5\n", "line 3, column gpus: expected a whole number of GPUs from 0 to 1000000, got \"2.5\"");
  expect("hour,gpus\n0,4\n2,4\n",
         "line 3, column hour: expected hour 1 (hour indexes count up from 0 without gaps), got \"2\"");
  expect("hour,gpus\n2017-10-03T05:00:00Z,1\n2017-10-03T07:00:00Z,1\n",
         "line 3, column hour: expected 2017-10-03T06:00:00.000Z (one hour after the previous row), got "
         "\"2017-10-03T07:00:00Z\"");
  expect("hour,gpus\n2017-10-03T05:30:00Z,1\n",
         "line 2, column hour: expected an RFC 3339 time on an hour boundary, got \"2017-10-03T05:30:00Z\"");
  expect("hour,gpus\n0,4,1\n", "line 2: expected 2 cells (hour,gpus), got 3");
  expect("\n\nday,gpus\n0,1\n",
         "line 3: expected the header \"hour,gpus\" or \"gpus\", or a number of GPUs; got \"day,gpus\"");
  expect("hour,gpus\n", "has no hours (the curve is empty)");
  expect("", "has no hours (the curve is empty)");
}

// The reasons are message codes: the line and column wrap the problem, each in the reader's language.
TEST(DemandCsv, ErrorsCarryTheirCodes) {
  auto r = parse_demand_csv("hour,gpus\n0,4\n1,-2\n", "demand.csv");
  ASSERT_FALSE(r.ok());
  const Message& why = r.error().fields[0].coded;
  EXPECT_EQ(why.code, "advisor.demand.csv.line_column");
  EXPECT_EQ(render_en(why), r.error().fields[0].reason);
  EXPECT_EQ(render(why, "zh"), "第 3 行，gpus 列：应为 0 到 1000000 之间的 GPU 整数，实际为 \"-2\"");
  auto cells = parse_demand_csv("hour,gpus\n0,4,1\n", "demand.csv");
  ASSERT_FALSE(cells.ok());
  EXPECT_EQ(render(cells.error().detail, "zh"), "demand.csv：第 2 行：应有 2 个单元格（hour,gpus），实际为 3 个");
}

TEST(DemandCurve, ValidatesEmptyNegativeAndStart) {
  auto empty = make_demand_curve({});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "demand: is empty (at least one hour is needed)");
  auto neg = make_demand_curve({1, 2, -3});
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.error().fields[0].field, "demand[2]");
  EXPECT_EQ(reason(neg.error()), "must be from 0 to 1000000 GPUs (got -3)");
  EXPECT_EQ(neg.error().fields[0].coded.code, "advisor.demand.gpus_range");
  EXPECT_EQ(render(neg.error().detail, "zh"), "demand[2]：必须在 0 到 1000000 张 GPU 之间（实际为 -3）");
  EXPECT_FALSE(make_demand_curve({1}, kT0 + 1).ok());
  auto ok = make_demand_curve({0, 3}, kT0);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->gpus.size(), 2u);
}

// Hand-checked: A holds 2 GPUs over [00:30, 01:30), B 4 GPUs over [00:45, 00:50), C 3 GPUs from
// 01:30 (when A ends: half-open, so they never overlap) to 03:00.
//   peak:    hour 0: 2 + 4 = 6; hour 1: max(2, 3) = 3; hour 2: 3
//   average: hour 0: (2×30 + 4×5) / 60 = 80/60 -> 2; hour 1: (2×30 + 3×30) / 60 = 2.5 -> 3; hour 2: 3
TEST(DemandIntervals, PeakAndAverageByHand) {
  const std::vector<GpuInterval> iv = {{kT0 + 30 * kMin, kT0 + 90 * kMin, 2},
                                       {kT0 + 45 * kMin, kT0 + 50 * kMin, 4},
                                       {kT0 + 90 * kMin, kT0 + 180 * kMin, 3},
                                       {kT0 + 100 * kMin, kT0 + 100 * kMin, 50}};  // zero length: holds nothing
  auto peak = demand_from_intervals(iv, HourlyMeasure::kPeak);
  ASSERT_TRUE(peak.ok()) << peak.error().message;
  EXPECT_EQ(peak->start, kT0);  // 00:30 rounded down to the hour
  EXPECT_EQ(peak->gpus, (std::vector<int64_t>{6, 3, 3}));
  auto avg = demand_from_intervals(iv, HourlyMeasure::kAverageCeil);
  ASSERT_TRUE(avg.ok());
  EXPECT_EQ(avg->gpus, (std::vector<int64_t>{2, 3, 3}));
  // Over a window: the idle hours before and after the runs are hours of 0 GPUs (a reservation
  // pays for them too), not left out.
  auto windowed =
      demand_from_intervals(iv, HourlyMeasure::kPeak, std::make_pair(kT0 - 2 * kMsPerHour, kT0 + 5 * kMsPerHour));
  ASSERT_TRUE(windowed.ok()) << windowed.error().message;
  EXPECT_EQ(windowed->start, kT0 - 2 * kMsPerHour);
  EXPECT_EQ(windowed->gpus, (std::vector<int64_t>{0, 0, 6, 3, 3, 0, 0}));

  EXPECT_FALSE(demand_from_intervals({}, HourlyMeasure::kPeak).ok());
  EXPECT_FALSE(demand_from_intervals({{kT0, kT0, 4}}, HourlyMeasure::kPeak).ok());
  auto bad = demand_from_intervals({{kT0, kT0 + kMin, -1}}, HourlyMeasure::kPeak);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().fields[0].field, "intervals[0].gpus");
  EXPECT_EQ(bad.error().fields[0].coded.code, "advisor.demand.interval_gpus_range");
  EXPECT_EQ(render(bad.error().fields[0].coded, "zh"), "必须在 0 到 1000000 之间（实际为 -1）");
  auto longest = demand_from_intervals({{kT0, kT0 + (kMaxDemandHours + 1) * kMsPerHour, 1}}, HourlyMeasure::kPeak);
  EXPECT_FALSE(longest.ok());
}

// Random intervals on a minute grid: the peak of an hour is the most intervals' GPUs live at any
// of its minutes, the average the GPU-minutes / 60 rounded up; checked minute by minute.
TEST(DemandIntervals, MatchMinuteByMinuteCount) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<GpuInterval> iv;
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      const TimeMs s = kT0 + static_cast<TimeMs>(rng() % 600) * kMin;
      iv.push_back({s, s + static_cast<TimeMs>(rng() % 200) * kMin, static_cast<int64_t>(rng() % 9)});
    }
    auto peak = demand_from_intervals(iv, HourlyMeasure::kPeak);
    auto avg = demand_from_intervals(iv, HourlyMeasure::kAverageCeil);
    bool any = false;
    for (const auto& x : iv) any = any || (x.end > x.start && x.gpus > 0);
    ASSERT_EQ(peak.ok(), any);
    if (!any) continue;
    ASSERT_TRUE(avg.ok());
    ASSERT_EQ(peak->gpus.size(), avg->gpus.size());
    for (size_t h = 0; h < peak->gpus.size(); ++h) {
      int64_t most = 0, minutes = 0;
      for (int k = 0; k < 60; ++k) {
        const TimeMs t = *peak->start + static_cast<TimeMs>(h) * kMsPerHour + k * kMin;
        int64_t live = 0;
        for (const auto& x : iv)
          if (x.start <= t && t < x.end) live += x.gpus;
        most = std::max(most, live);
        minutes += live;
      }
      EXPECT_EQ(peak->gpus[h], most) << "round " << round << " hour " << h;
      EXPECT_EQ(avg->gpus[h], (minutes + 59) / 60) << "round " << round << " hour " << h;
      EXPECT_LE(avg->gpus[h], peak->gpus[h]);
    }
  }
}

TEST(DemandPhilly, JobsRunFromSubmission) {
  std::istringstream csv(
      "timestamp,duration,num_gpus,gpu_time,cluster\n"
      "2017-10-03 05:10:00,3000.0,8,24000.0,vc1\n"    // 05:10-06:00
      "2017-10-03 05:20:00,600.5,1,600.5,vc2\n"       // 05:20-05:30:00.5
      "2017-10-03 06:00:00,7200.0,4,28800.0,vc1\n");  // 06:00-08:00
  auto jobs = read_philly(csv, "philly.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  auto peak = demand_from_philly(*jobs);
  ASSERT_TRUE(peak.ok());
  EXPECT_EQ(peak->start, kT0);
  EXPECT_EQ(peak->gpus, (std::vector<int64_t>{9, 4, 4}));
  // Hour 0: 8 GPUs × 50 min + 1 × 10.008 min = 410.008 GPU-minutes -> 6.83 -> 7.
  auto avg = demand_from_philly(*jobs, HourlyMeasure::kAverageCeil);
  ASSERT_TRUE(avg.ok());
  EXPECT_EQ(avg->gpus, (std::vector<int64_t>{7, 4, 4}));
}

TEST(DemandLevels, HistogramInAscendingOrder) {
  DemandCurve d{{3, 0, 3, 5, 0, 3}, std::nullopt};
  const auto l = demand_levels(d);
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0].gpus, 0);
  EXPECT_EQ(l[0].hours, 2);
  EXPECT_EQ(l[1].gpus, 3);
  EXPECT_EQ(l[1].hours, 3);
  EXPECT_EQ(l[2].gpus, 5);
  EXPECT_EQ(l[2].hours, 1);
}

}  // namespace
}  // namespace gpurent
