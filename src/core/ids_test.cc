#include "core/ids.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace gpurent {
namespace {

TEST(Ids, RandomIdsHaveThePrefixAndSixteenHexDigits) {
  const std::regex shape("job_[0-9a-f]{16}");
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string id = new_id("job");
    EXPECT_TRUE(std::regex_match(id, shape)) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

// --demo-clock: the same seed gives the same ids in the same order, distinct and of the same
// shape; another seed gives others; token secrets stay random.
TEST(Ids, ReproducibleIdsRepeatForTheSameSeed) {
  auto draw = [](uint64_t seed) {
    use_reproducible_ids(seed);
    std::vector<std::string> ids;
    for (int i = 0; i < 1000; ++i) ids.push_back(new_id(i % 2 ? "alc" : "job"));
    use_random_ids();
    return ids;
  };
  const auto a = draw(1795867200000), b = draw(1795867200000), c = draw(1795867200001);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a[0].substr(0, 4), "job_");
  EXPECT_EQ(a[1].substr(0, 4), "alc_");
  const std::regex shape("(job|alc)_[0-9a-f]{16}");
  std::set<std::string> distinct;
  for (const auto& id : a) {
    EXPECT_TRUE(std::regex_match(id, shape)) << id;
    distinct.insert(id.substr(4));
  }
  EXPECT_EQ(distinct.size(), a.size());
  use_reproducible_ids(7);
  EXPECT_NE(random_hex(32), random_hex(32));
  use_random_ids();
  EXPECT_NE(new_id("job"), draw(7)[0]);
}

}  // namespace
}  // namespace gpurent
