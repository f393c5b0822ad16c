#include "sched/alloc_scheduler.h"

#include <gtest/gtest.h>

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
