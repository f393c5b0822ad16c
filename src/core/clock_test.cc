#include "core/clock.h"

#include <gtest/gtest.h>

#include "core/message.h"

namespace gpurent {
namespace {

TEST(Time, RoundTripsRfc3339) {
  auto t = parse_rfc3339("2026-11-29T15:41:30Z", "at").value();
  EXPECT_EQ(t, 1'795'966'890'000);
  EXPECT_EQ(format_rfc3339(t), "2026-11-29T15:41:30.000Z");
  EXPECT_EQ(parse_rfc3339("2026-11-29T23:41:30.250+08:00", "at").value(), t + 250);
  EXPECT_EQ(parse_rfc3339("2026-11-29", "at").value(), 1'795'910'400'000);
  EXPECT_EQ(format_rfc3339(0), "1970-01-01T00:00:00.000Z");
}

TEST(Time, RejectsBadTimesNamingTheField) {
  for (const char* bad : {"2026-02-29", "2026-13-01", "2026-11-29T24:00:00Z", "2026-11-29T10:00:00", "yesterday", ""}) {
    auto r = parse_rfc3339(bad, "spec.start");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().fields[0].field, "spec.start");
  }
  EXPECT_TRUE(parse_rfc3339("2024-02-29", "x").ok());
  const Error e = parse_rfc3339("yesterday", "spec.start").error();
  EXPECT_EQ(e.message, "spec.start: 'yesterday' is not an RFC 3339 time (e.g. 2026-11-29T15:41:30Z or 2026-11-29)");
  EXPECT_EQ(e.fields[0].coded.code, "time.not_rfc3339");
  EXPECT_EQ(render(e.detail, "zh"),
            "spec.start：“yesterday”不是 RFC 3339 时间（例如 2026-11-29T15:41:30Z 或 2026-11-29）");
}

TEST(Time, FakeClockIsInjected) {
  FakeClock c(1000);
  c.advance(500);
  EXPECT_EQ(c.now(), 1500);
}

TEST(Time, MergeIntervalsJoinsOverlappingAndTouchingOnes) {
  EXPECT_TRUE(merge_intervals({}).empty());
  const std::vector<TimeInterval> got = merge_intervals({{50, 60}, {0, 10}, {10, 20}, {15, 18}, {30, 40}, {35, 45}});
  EXPECT_EQ(got, (std::vector<TimeInterval>{{0, 20}, {30, 45}, {50, 60}}));
}

}  // namespace
}  // namespace gpurent
