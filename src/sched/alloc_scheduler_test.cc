#include "sched/alloc_scheduler.h"

#include <gtest/gtest.h>

#include "sched/alloc_arrivals.h"

namespace gpurent {
namespace {

AllocPod pod(int64_t cpu, int64_t mem, int k, int g, std::string spec = "") {
  return AllocPod{cpu, mem, k, g, std::move(spec), 0};
}

AllocCluster three_nodes() {
  AllocCluster c;
  EXPECT_TRUE(c.add_node("n0", 32000, 65536, 2, "P100").ok());
  EXPECT_TRUE(c.add_node("n1", 32000, 65536, 2, "P100").ok());
  EXPECT_TRUE(c.add_node("n2", 32000, 1024, 4, "V100").ok());
  return c;
}

TEST(AllocScheduler, FeasibilityFilter) {
  auto c = three_nodes();
  EXPECT_FALSE(c.feasible(2, pod(1000, 2048, 1, 500)));  // memory
  EXPECT_FALSE(c.feasible(0, pod(33000, 1, 0, 0)));      // CPU
  AllocPod v = pod(1000, 512, 1, 500, "V100|T4");
  c.intern_spec(v);
  EXPECT_FALSE(c.feasible(0, v));  // model
  EXPECT_TRUE(c.feasible(2, v));
  AllocPod a10 = pod(1000, 512, 1, 500, "A10");
  c.intern_spec(a10);
  EXPECT_FALSE(c.feasible(2, a10));  // a model the cluster lacks matches no node
  EXPECT_FALSE(c.feasible(0, pod(0, 0, 3, 1000)));  // only 2 GPUs
  c.bind(0, pod(0, 0, 1, 600), {0});
  EXPECT_FALSE(c.feasible(0, pod(0, 0, 2, 1000)));  // one fully free GPU left
  EXPECT_TRUE(c.feasible(0, pod(0, 0, 1, 400)));    // GPU0 shares: 600 + 400 <= 1000
  EXPECT_EQ(c.allocated_gpu_milli(), 600);
}

// A spec naming no model of the cluster sets bit 63 of its mask, which no model may have: at most
// 63 models (a 64th would be matched by every such spec).
TEST(AllocScheduler, AtMost63ModelsSoAnUnknownSpecMatchesNone) {
  AllocCluster c;
  for (int m = 0; m < 63; ++m) ASSERT_TRUE(c.add_node("n" + std::to_string(m), 1000, 1024, 1, "M" + std::to_string(m)).ok());
  auto sixty_fourth = c.add_node("n63", 1000, 1024, 1, "M63");
  ASSERT_FALSE(sixty_fourth.ok());
  EXPECT_EQ(sixty_fourth.error().fields.at(0).field, "nodes.n63.model");
  AllocPod unknown = pod(100, 1, 1, 500, "A10");
  c.intern_spec(unknown);
  for (int n = 0; n < 63; ++n) EXPECT_FALSE(c.feasible(n, unknown)) << n;
}

TEST(AllocScheduler, TiesGoToPriorityAndDropsWhenNothingFits) {
  auto c = three_nodes();
  auto p = std::move(make_score_policy("dotprod").value());
  AllocScheduler s(c, *p, {1, 0, 2});  // n1 has the highest priority
  SimRng rng(3);
  // n0 and n1 tie; n2 is out on memory.
  EXPECT_EQ(s.place(pod(1000, 2048, 1, 1000), rng), 1);
  // n1 now has less free CPU and GPU, so its dot product with the pod is smaller: DotProd stays on n1.
  EXPECT_EQ(s.place(pod(1000, 2048, 1, 1000), rng), 1);
  EXPECT_EQ(s.place(pod(1000, 2048, 1, 1000), rng), 0);  // n1 full
  EXPECT_EQ(s.place(pod(1000, 2048, 1, 1000), rng), 0);
  EXPECT_EQ(s.place(pod(1000, 2048, 1, 1000), rng), std::nullopt);  // n2 lacks memory
  EXPECT_EQ(s.place(pod(1000, 512, 1, 1000), rng), 2);              // single feasible node
  EXPECT_EQ(c.allocated_gpu_milli(), 5000);
}

}  // namespace
}  // namespace gpurent

namespace gpurent {
namespace {

// The indexed placer chooses exactly what the scan chooses, for every policy, on a mixed random
// cluster (five models, 1 to 8 GPUs) fed the protocol's tuned arrivals at x = 130: shares, whole and
// multi-GPU pods, CPU-only pods, model constraints. Node by node and GPU by GPU.
TEST(AllocScheduler, IndexedChoosesWhatTheScanChooses) {
  const char* models[] = {"P100", "V100", "T4", "A10", "G2"};
  SimRng gen(99);
  AllocCluster start;
  for (int i = 0; i < 300; ++i) {
    const int gpus = 1 << (gen() % 4);
    ASSERT_TRUE(start.add_node("n" + std::to_string(i), 32000 + 32000 * static_cast<int64_t>(gen() % 3),
                               131072 * (1 + static_cast<int64_t>(gen() % 2)), gpus, models[gen() % 5])
                    .ok());
  }
  std::vector<AllocPod> pods;
  for (int i = 0; i < 1200; ++i) {
    const int kind = static_cast<int>(gen() % 6);
    const int k = kind == 0 ? 0 : kind <= 2 ? 1 : 1 << (gen() % 4);
    const int g = kind == 1 ? 100 * static_cast<int>(1 + gen() % 9) : k ? 1000 : 0;
    std::string spec = k && gen() % 4 == 0 ? std::string(models[gen() % 5]) + (gen() % 2 ? "|T4" : "") : "";
    AllocPod p{1000 * static_cast<int64_t>(1 + gen() % 16), 1024 * static_cast<int64_t>(1 + gen() % 64), k, g,
               std::move(spec), 0};
    start.intern_spec(p);
    pods.push_back(std::move(p));
  }
  for (const std::string& name : score_policy_names()) {
    std::vector<std::vector<int64_t>> runs[2];  // per arrival: node, allocated milli, the node's free GPUs
    for (const auto mode : {AllocScheduler::Mode::kScan, AllocScheduler::Mode::kIndexed}) {
      AllocCluster c = start;
      auto policy = std::move(make_score_policy(name).value());
      policy->prepare(c, pods);
      SimRng rng(42);
      const std::vector<int> seq = tuned_arrivals(pods, c.total_gpu_milli(), 1.3, rng);
      AllocScheduler s(c, *policy, node_priority_order(c.size(), rng), mode);
      auto& out = runs[mode == AllocScheduler::Mode::kIndexed];
      for (int p : seq) {
        const std::optional<int> n = s.place(pods[p], rng);
        std::vector<int64_t> row{n.value_or(-1), c.allocated_gpu_milli()};
        if (n) row.insert(row.end(), c.node(*n).gpu_free.begin(), c.node(*n).gpu_free.end());
        out.push_back(std::move(row));
      }
    }
    ASSERT_EQ(runs[0].size(), runs[1].size()) << name;
    for (size_t i = 0; i < runs[0].size(); ++i)
      ASSERT_EQ(runs[0][i], runs[1][i]) << name << ": arrival " << i << " of " << runs[0].size();
    EXPECT_GT(runs[0].back()[1], 0) << name;
  }
}

}  // namespace
}  // namespace gpurent
