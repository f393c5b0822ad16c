// Tiny clusters and pods shared by the scoring-policy tests (hand-computed scores). Test-only.
#pragma once

#include <gtest/gtest.h>

#include "sched/alloc_cluster.h"

namespace gpurent::testing {

// A pod of `cpu` milli-CPU, 1 GiB, k GPUs of g milli each.
inline AllocPod pod(int64_t cpu, int k, int g) { return AllocPod{cpu, 1024, k, g, "", 0}; }

// Node 0 "a": 64 cores, 2 P100. Node 1 "b": 96 cores, 8 V100.
inline AllocCluster two_nodes() {
  AllocCluster c;
  EXPECT_TRUE(c.add_node("a", 64000, 262144, 2, "P100").ok());
  EXPECT_TRUE(c.add_node("b", 96000, 524288, 8, "V100").ok());
  return c;
}

// Target workload of the FGD-family tests: share (cpu 4000, g 500) x3 and whole (cpu 8000, 1 GPU)
// x1; both types kept (75% < 95%), total = 4. Frag scaled by 4: 3 * F(share) + 1 * F(whole).
inline std::vector<AllocPod> share_whole_workload() {
  return {pod(4000, 1, 500), pod(4000, 1, 500), pod(4000, 1, 500), pod(8000, 1, 1000)};
}

}  // namespace gpurent::testing
