// The dashboards' day range: defaults, widening to whole UTC days, errors naming the field.
#include "insight/day_range.h"

#include <gtest/gtest.h>

#include "core/message.h"

namespace gpurent {
namespace {

TimeMs at(const std::string& s) { return *parse_rfc3339(s, "t"); }

TEST(DashboardDays, DefaultsToTheSevenDaysEndingTonight) {
  auto r = parse_day_range(std::nullopt, std::nullopt, at("2026-11-29T15:41:30Z"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->from, at("2026-11-23"));
  EXPECT_EQ(r->to, at("2026-11-30"));
  ASSERT_EQ(r->days.size(), 7u);
  EXPECT_EQ(r->days.back(), at("2026-11-29"));
  EXPECT_EQ(r->index_of(at("2026-11-24T23:59:59.999Z")), 1);
  EXPECT_EQ(r->index_of(at("2026-11-30")), -1);
  EXPECT_EQ(r->index_of(at("2026-11-22T23:59:59Z")), -1);
}

TEST(DashboardDays, WidensToWholeUtcDaysAndNamesBadFields) {
  auto r = parse_day_range("2026-11-01T08:00:00+08:00", "2026-11-03T00:00:00.001Z", 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->from, at("2026-11-01"));  // 2026-11-01T00:00Z exactly
  EXPECT_EQ(r->to, at("2026-11-04"));
  EXPECT_EQ(r->days.size(), 3u);
  EXPECT_TRUE(parse_day_range("2026-11-01", "2026-12-02", 0).ok());  // 31 days
  auto long_range = parse_day_range("2026-11-01", "2026-12-03", 0);
  ASSERT_FALSE(long_range.ok());
  EXPECT_EQ(long_range.error().fields.at(0).field, "range");
  EXPECT_EQ(long_range.error().message, "range: at most 31 days (2026-11-01 to 2026-12-03 is 32)");
  EXPECT_EQ(long_range.error().fields.at(0).coded.code, "insight.range.too_long");
  EXPECT_EQ(render(long_range.error().detail, "zh"), "range：最多 31 天（2026-11-01 至 2026-12-03 为 32 天）");
  auto bad = parse_day_range("yesterday", "2026-13-01", 0);
  ASSERT_FALSE(bad.ok());
  ASSERT_EQ(bad.error().fields.size(), 2u);
  EXPECT_EQ(bad.error().fields[0].field, "from");
  EXPECT_EQ(bad.error().fields[1].field, "to");
  EXPECT_EQ(bad.error().fields[0].reason,
            "'yesterday' is not an RFC 3339 time (e.g. 2026-11-29T15:41:30Z or 2026-11-29)");
  EXPECT_EQ(bad.error().fields[0].coded.code, "time.not_rfc3339");
  auto backwards = parse_day_range("2026-11-02", "2026-11-01", 0);
  ASSERT_FALSE(backwards.ok());
  EXPECT_EQ(backwards.error().fields.at(0).field, "to");
  EXPECT_EQ(render(backwards.error().fields.at(0).coded, "zh"), "必须晚于 from");
}

}  // namespace
}  // namespace gpurent
