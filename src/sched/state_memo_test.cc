// StateMemo against std::unordered_map on random keys of the lengths node states have, through
// growth and clear.
#include "sched/state_memo.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

namespace gpurent {
namespace {

TEST(StateMemo, AgreesWithAMapThroughGrowthAndClear) {
  StateMemo memo;
  std::unordered_map<std::string, int16_t> want;
  std::mt19937_64 rng(7);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 20000; ++i) {
      // Few distinct keys per length, so most lookups find an entry; lengths 0..60.
      std::string key(static_cast<size_t>(rng() % 61), '\0');
      for (char& c : key) c = static_cast<char>(rng() % 3);
      bool added = false;
      int16_t& v = memo.find_or_add(key, added);
      auto [it, fresh] = want.try_emplace(key, static_cast<int16_t>(rng() % 30000));
      ASSERT_EQ(added, fresh) << "round " << round << " key length " << key.size();
      if (added) v = it->second;
      ASSERT_EQ(v, it->second);
    }
    EXPECT_EQ(memo.size(), want.size());
    memo.clear();
    want.clear();
    EXPECT_EQ(memo.size(), 0u);
  }
}

TEST(StateMemo, KeysDifferingOnlyInTheirTailOrLengthAreDistinct) {
  StateMemo memo;
  bool added = false;
  memo.find_or_add(std::string("abcdefgh\0", 9), added) = 1;
  EXPECT_TRUE(added);
  memo.find_or_add("abcdefgh", added) = 2;
  EXPECT_TRUE(added);
  memo.find_or_add(std::string("abcdefgh\0\0", 10), added) = 3;
  EXPECT_TRUE(added);
  EXPECT_EQ(memo.find_or_add(std::string("abcdefgh\0", 9), added), 1);
  EXPECT_FALSE(added);
  EXPECT_EQ(memo.find_or_add("abcdefgh", added), 2);
  EXPECT_EQ(memo.find_or_add(std::string("abcdefgh\0\0", 10), added), 3);
  EXPECT_EQ(memo.size(), 3u);
}

}  // namespace
}  // namespace gpurent
