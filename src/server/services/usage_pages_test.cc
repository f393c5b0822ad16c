#include "server/services/usage_pages.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpurent {
namespace {

struct Point {
  TimeMs at;
  int n;
};

// A store read over `all` (sorted by time): the points of [from, to), at most `limit`.
auto reader(const std::vector<Point>& all, int* reads) {
  return [&all, reads](TimeMs from, TimeMs to, int limit) -> Result<std::vector<Point>> {
    ++*reads;
    std::vector<Point> out;
    for (const Point& p : all)
      if (p.at >= from && p.at < to && out.size() < static_cast<size_t>(limit)) out.push_back(p);
    return out;
  };
}

TEST(UsagePages, EveryPointIsReadOnceAcrossPagesAndInstantsSplitByAPage) {
  std::vector<Point> all;
  for (int i = 0; i < 25; ++i) all.push_back({i / 3, i});  // three points per instant
  int reads = 0;
  auto got = all_points(reader(all, &reads), 0, 100, 4);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), all.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ((*got)[i].n, all[i].n) << i;
  EXPECT_GT(reads, 1);
  // The range's end holds: nothing at or after it.
  reads = 0;
  EXPECT_EQ(all_points(reader(all, &reads), 2, 4, 4)->size(), 6u);
}

TEST(UsagePages, AnInstantHoldingMoreThanAPageIsAnErrorNotAShortRead) {
  std::vector<Point> all(5, Point{7, 0});
  int reads = 0;
  auto got = all_points(reader(all, &reads), 0, 100, 4);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.error().message.find("more than 4 usage points at one instant"), std::string::npos);
}

}  // namespace
}  // namespace gpurent
