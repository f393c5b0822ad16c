// Fragmentation and FGD scores on a hand example (protocol §5).
#include "sched/fragmentation.h"

#include <gtest/gtest.h>

#include "sched/score_policy.h"

namespace gpurent {
namespace {

AllocPod pod(int64_t cpu, int k, int g, std::string spec = "") { return AllocPod{cpu, 1024, k, g, std::move(spec), 0}; }

// Workload: 3 x (cpu 4000, k=1, g=500) and 1 x CPU-only (cpu 2000): p = 3/4 and 1/4, total 4.
std::vector<AllocPod> workload() { return {pod(4000, 1, 500), pod(4000, 1, 500), pod(2000, 0, 0), pod(4000, 1, 500)}; }

TEST(Fragmentation, TypicalTasksKeepsShortestPrefixOver95Percent) {
  AllocCluster c;
  ASSERT_TRUE(c.add_node("n", 8000, 65536, 2, "P100").ok());
  auto w = typical_tasks(workload(), c);
  ASSERT_EQ(w.types.size(), 2u);  // 3/4 = 75% < 95%, so the CPU-only type is kept too
  EXPECT_EQ(w.types[0].count, 3);
  EXPECT_EQ(w.types[0].gpu_milli, 500);
  EXPECT_EQ(w.total, 4);
  std::vector<AllocPod> many(19, pod(1000, 1, 100));
  many.push_back(pod(2000, 1, 200));
  auto w2 = typical_tasks(many, c);  // 19/20 = 95% reaches the threshold
  EXPECT_EQ(w2.types.size(), 1u);
  EXPECT_EQ(w2.distinct_types, 2);
  // Equal counts: the larger (cpu, g, k, spec) first.
  auto w3 = typical_tasks({pod(1000, 1, 100), pod(3000, 1, 100)}, c);
  EXPECT_EQ(w3.types[0].cpu_milli, 3000);
}

TEST(Fragmentation, HandExample) {
  AllocCluster c;
  ASSERT_TRUE(c.add_node("n", 8000, 65536, 2, "P100").ok());
  ASSERT_TRUE(c.add_node("v", 8000, 65536, 2, "V100").ok());
  auto w = typical_tasks(workload(), c);
  const std::vector<int32_t> free{1000, 300};  // F = 1300
  // t1 (4000, 500): GPU0 fits and C=8000 >= 4000 -> fragment = GPUs below 500 = 300.
  EXPECT_EQ(task_fragment(w.types[0], 8000, 0, free), 300);
  // CPU short (C=3000 < 4000): all of F.
  EXPECT_EQ(task_fragment(w.types[0], 3000, 0, free), 1300);
  // CPU-only type: all of F.
  EXPECT_EQ(task_fragment(w.types[1], 8000, 0, free), 1300);
  // scaled Frag = 3*300 + 1*1300 = 2200 (Frag = 550 milli)
  EXPECT_EQ(node_fragmentation_scaled(w, 8000, 0, free), 2200);
  // A type whose spec excludes the node's model: all of F.
  TaskType v100{4000, 500, 1, "V100", c.spec_mask("V100"), 1};
  EXPECT_EQ(task_fragment(v100, 8000, 0, free), 1300);
  EXPECT_EQ(task_fragment(v100, 8000, 1, free), 300);
}

TEST(Fragmentation, FgdScoreAndGpuChoice) {
  AllocCluster c;
  ASSERT_TRUE(c.add_node("n", 8000, 65536, 2, "P100").ok());
  auto fgd = std::move(make_score_policy("fgd").value());
  fgd->prepare(c, workload());
  c.bind(0, pod(0, 1, 400), {0});  // free [600, 1000], C = 8000
  // before: t1 both fit -> 0; CPU-only -> 1600; scaled 1600.
  // GPU0 -> [100, 1000], C=4000: t1 100, CPU-only 1100: 3*100+1100 = 1400; delta 200/4 = 50 milli
  //   -> floor(100*sigmoid(0.05)) = floor(51.25) = 51
  // GPU1 -> [600, 500]: t1 0, CPU-only 1100: 1100; delta 500/4 = 125 -> floor(100*sigmoid(0.125)) = 53
  SimRng rng(1);
  EXPECT_EQ(fgd->score(c, 0, pod(4000, 1, 500)), 53);
  EXPECT_EQ(fgd->choose_gpus(c, 0, pod(4000, 1, 500), rng), std::vector<int>{1});  // best fit would take GPU0
  // Whole GPU (cpu 0): GPU1 -> [600, 0]: t1 0 (GPU0 fits), CPU-only 600 -> 600; delta 1000/4 = 250
  //   -> floor(100*sigmoid(0.25)) = floor(56.22) = 56
  EXPECT_EQ(fgd->score(c, 0, pod(0, 1, 1000)), 56);
  EXPECT_EQ(fgd->choose_gpus(c, 0, pod(0, 1, 1000), rng), std::vector<int>{1});
}

// node_fragmentation_scaled sorts the GPUs once for every type; it must equal the sum of
// task_fragment, type by type, on any node state (random ones here, up to 20 GPUs).
TEST(Fragmentation, NodeSumEqualsTaskFragmentsOnRandomStates) {
  AllocCluster c;
  ASSERT_TRUE(c.add_node("a", 64000, 65536, 8, "V100").ok());
  ASSERT_TRUE(c.add_node("b", 64000, 65536, 8, "T4").ok());
  std::vector<AllocPod> pods;
  SimRng rng(5);
  for (int i = 0; i < 300; ++i) {
    const int k = static_cast<int>(rng() % 5);
    pods.push_back(pod(1000 * static_cast<int64_t>(rng() % 33), k, k == 1 ? 100 * static_cast<int>(1 + rng() % 10) : 1000,
                       rng() % 4 == 0 ? (rng() % 2 ? "V100" : "T4|V100") : ""));
  }
  const TargetWorkload w = typical_tasks(pods, c, 100);
  ASSERT_GT(w.types.size(), 20u);
  for (int round = 0; round < 2000; ++round) {
    std::vector<int32_t> free(1 + rng() % 20);
    for (auto& f : free) f = static_cast<int32_t>(rng() % 3 == 0 ? 1000 : rng() % 1001);
    const int64_t cpu = static_cast<int64_t>(rng() % 40000);
    const int model = static_cast<int>(rng() % 3) - 1;
    int64_t want = 0;
    for (const auto& t : w.types) want += t.count * task_fragment(t, cpu, model, free);
    ASSERT_EQ(node_fragmentation_scaled(w, cpu, model, free), want) << "round " << round;
  }
}

}  // namespace
}  // namespace gpurent
