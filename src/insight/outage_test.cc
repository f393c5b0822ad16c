// The supplier-health arithmetic: incidents and outage split across UTC days, events outside the
// period dropped, and the decimal text.
#include "insight/outage.h"

#include <gtest/gtest.h>

#include "insight/decimal.h"

namespace gpurent {
namespace {

TimeMs at(const char* s) { return *parse_rfc3339(s, "t"); }

TEST(OutageTally, SplitsDownTimeAcrossUtcDaysAndDropsEventsOutside) {
  // Asked for [Nov 1 06:00, Nov 4 00:00), seen at Nov 3 12:00.
  OutageTally t(at("2026-11-01T06:00:00Z"), at("2026-11-03T12:00:00Z"), at("2026-11-04T00:00:00Z"));
  ASSERT_EQ(t.days(), 3u);
  EXPECT_EQ(t.first_day(), at("2026-11-01T00:00:00Z"));
  t.count_incident(at("2026-11-01T05:59:59Z"));  // before the period
  t.count_incident(at("2026-11-02T23:00:00Z"));
  t.count_incident(at("2026-11-03T12:00:00Z"));  // at the end: outside
  t.add_down(at("2026-11-02T23:00:00Z"), at("2026-11-03T01:30:00Z"));
  t.add_node_time(48 * kMsPerHour);
  EXPECT_EQ(t.total_incidents(), 1);
  EXPECT_EQ(t.incidents(1), 1);
  EXPECT_EQ(t.outage_ms(0), 0);
  EXPECT_EQ(t.outage_ms(1), kMsPerHour);
  EXPECT_EQ(t.outage_ms(2), 90 * kMsPerMinute);
  EXPECT_EQ(static_cast<int64_t>(t.down_ms()), 150 * kMsPerMinute);
  EXPECT_EQ(static_cast<int64_t>(t.node_ms()), 48 * kMsPerHour);
}

TEST(FixedDecimal, PrintsTheScaledValue) {
  EXPECT_EQ(fixed_decimal(9912, 2), "99.12");
  EXPECT_EQ(fixed_decimal(5, 3), "0.005");
  EXPECT_EQ(fixed_decimal(-5, 1), "-0.5");
  EXPECT_EQ(fixed_decimal(7, 0), "7");
}

}  // namespace
}  // namespace gpurent
