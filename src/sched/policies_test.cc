// Each scoring policy against hand-computed scores on tiny clusters (arithmetic in comments).
#include <gtest/gtest.h>

#include "sched/policy/policies.h"
#include "sched/policy_test_util.h"
#include "sched/score_policy.h"

namespace gpurent {
namespace {

using testing::pod;
using testing::two_nodes;

std::unique_ptr<ScorePolicy> policy(const char* name) { return std::move(make_score_policy(name).value()); }

TEST(Policies, RegistryKnowsSixAndListsThemOnUnknown) {
  EXPECT_EQ(score_policy_names().size(), 8u);
  for (const auto& n : score_policy_names()) EXPECT_EQ(policy(n.c_str())->name(), n);
  EXPECT_TRUE(make_score_policy("FGD").ok());
  auto bad = make_score_policy("tetris");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("known: random, dotprod, gpuclustering, gpupacking, bestfit, fgd, fgdpack, fgdauto"),
            std::string::npos);
}

TEST(Policies, DotProdUsesFreeResources) {
  auto c = two_nodes();
  auto p = policy("dotprod");
  // a: C=64000 F=2000, pod cpu=8000 R=500: 2*128000^2 = 32,768,000,000;
  //    C*cpu = 512,000,000; 256*F*R = 256,000,000 -> num 32,000,000,000; *100/32,768,000,000 = 97.66 -> 97
  EXPECT_EQ(p->score(c, 0, pod(8000, 1, 500)), 97);
  // b: C*cpu = 768,000,000; 256*8000*500 = 1,024,000,000 -> 30,976,000,000 -> 94.53 -> 94
  EXPECT_EQ(p->score(c, 1, pod(8000, 1, 500)), 94);
}

TEST(Policies, BestFit) {
  auto c = two_nodes();
  auto p = policy("bestfit");
  // a: 2*Cmax*Gmax = 2,048,000,000; (64000-8000)*8000 = 448,000,000; (2000-500)*128000 = 192,000,000
  //    -> 1,408,000,000 *100 / 2,048,000,000 = 68.75 -> 68
  EXPECT_EQ(p->score(c, 0, pod(8000, 1, 500)), 68);
  // b: 88000*8000 = 704,000,000; 7500*128000 = 960,000,000 -> 384,000,000 -> 18.75 -> 18
  EXPECT_EQ(p->score(c, 1, pod(8000, 1, 500)), 18);
  // In-node choice: smallest free >= g, lowest index on ties.
  c.bind(1, pod(0, 1, 700), {3});  // b: GPU3 has 300 free
  c.bind(1, pod(0, 1, 400), {5});  // b: GPU5 has 600 free
  SimRng rng(1);
  EXPECT_EQ(p->choose_gpus(c, 1, pod(0, 1, 250), rng), std::vector<int>{3});
  EXPECT_EQ(p->choose_gpus(c, 1, pod(0, 1, 500), rng), std::vector<int>{5});
  EXPECT_EQ(p->choose_gpus(c, 1, pod(0, 2, 1000), rng), (std::vector<int>{0, 1}));
}

TEST(Policies, GpuClusteringTagsAndFixedGmax) {
  auto c = two_nodes();
  auto p = policy("gpuclustering");
  EXPECT_EQ(p->score(c, 0, pod(1000, 0, 0)), 0);  // CPU-only
  // a empty: F=2000, b = floor(25*6000/8000) = floor(18.75) = 18; A empty -> 18+25 = 43
  EXPECT_EQ(p->score(c, 0, pod(1000, 1, 500)), 43);
  c.bind(0, pod(1000, 1, 500), {0});
  // a: F=1500, b = floor(25*6500/8000) = floor(20.3) = 20; A={share}: share pod 95, k-gpu pod 20
  EXPECT_EQ(p->score(c, 0, pod(1000, 1, 300)), 95);
  EXPECT_EQ(p->score(c, 0, pod(1000, 1, 1000)), 20);
  c.bind(0, pod(1000, 1, 1000), {1});
  // a: F=500, b = floor(25*7500/8000) = 23; A={share,k-gpu}, tag in A -> 23+50 = 73
  EXPECT_EQ(p->score(c, 0, pod(1000, 1, 300)), 73);
}

TEST(Policies, GpuPacking) {
  auto c = two_nodes();
  auto p = policy("gpupacking");
  EXPECT_EQ(p->score(c, 0, pod(1000, 0, 0)), 0);
  EXPECT_EQ(p->score(c, 0, pod(1000, 1, 500)), 31);  // all free, G=2: max(33-2, 2)
  EXPECT_EQ(p->score(c, 1, pod(1000, 1, 500)), 25);  // G=8: max(25, 8)
  c.bind(0, pod(0, 1, 500), {0});                    // a: free [500, 1000]
  // g=300: ascending [500, 1000], first fitting is GPU0 (500), u=0 -> 100 - floor(floor(50)/10) = 95
  EXPECT_EQ(p->score(c, 0, pod(0, 1, 300)), 95);
  // g=600: first fitting is GPU1 (1000), u=1 -> max(50-1, 33) = 49
  EXPECT_EQ(p->score(c, 0, pod(0, 1, 600)), 49);
  c.bind(1, pod(0, 1, 800), {0});  // b: [200, 1000 x7]; k=2: two fully free -> max(48, 33) = 48
  EXPECT_EQ(p->score(c, 1, pod(0, 2, 1000)), 48);
}

TEST(Policies, RandomPicksOnlyFeasibleAndFittingGpus) {
  auto c = two_nodes();
  auto p = policy("random");
  c.bind(1, pod(0, 1, 900), {2});
  SimRng rng(7);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(*p->pick_node({1}, rng), 1);
    auto g = p->choose_gpus(c, 1, pod(0, 1, 500), rng);
    ASSERT_EQ(g.size(), 1u);
    EXPECT_NE(g[0], 2);  // GPU2 has only 100 free
  }
}

}  // namespace
}  // namespace gpurent
