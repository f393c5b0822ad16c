#include "insight/stranded.h"

#include <gtest/gtest.h>

#include <map>

namespace gpurent {
namespace {

// Three 8-GPU H100 nodes with 3, 3 and 2 free GPUs: 8 free, yet no 4- or 8-GPU worker fits.
TEST(Stranded, FreeGpusScatteredOverNodesAreStrandedForLargerShapes) {
  std::vector<StrandedNode> nodes = {{"n1", "h100", 8, 3, 0}, {"n2", "h100", 8, 3, 1}, {"n3", "h100", 8, 2, 0},
                                     {"a1", "a100", 4, 4, 0}};
  std::vector<WaitingJob> waiting = {{8, 1, {"h100"}},          // 8 free in all, none together: blocked
                                     {4, 1, {}},                // fits on the A100 node
                                     {2, 5, {"h100"}},          // needs 10 > 8 free: short, not fragmented
                                     {3, 2, {"h100", "a100"}},  // a shape of its own
                                     {0, 1, {}}};               // fractional: left out
  StrandedReport r = stranded_gpus(nodes, waiting);
  EXPECT_EQ(r.nodes, 4);
  EXPECT_EQ(r.free_gpus, 12);
  ASSERT_EQ(r.models.size(), 2u);
  const StrandedModel& a100 = r.models[0];
  EXPECT_EQ(a100.gpu_model, "a100");
  ASSERT_EQ(a100.shapes.size(), 4u);  // 1, 2, 3 (a waiting shape), 4; no 8 on a 4-GPU node
  EXPECT_EQ(a100.shapes[3].gpus_per_worker, 4);
  EXPECT_EQ(a100.shapes[3].stranded_gpus, 0);
  EXPECT_EQ(a100.shapes[3].waiting_jobs, 1);
  EXPECT_EQ(a100.shapes[3].blocked_by_fragmentation, 0);
  const StrandedModel& h100 = r.models[1];
  EXPECT_EQ(h100.free_gpus, 8);
  EXPECT_EQ(h100.partly_used, 1);
  std::map<int64_t, StrandedShape> by;
  for (const auto& s : h100.shapes) by[s.gpus_per_worker] = s;
  ASSERT_EQ(h100.shapes.size(), 5u);  // 1, 2, 3, 4, 8
  EXPECT_EQ(by[1].stranded_gpus, 0);
  EXPECT_EQ(by[2].usable_gpus, 6);  // 2 + 2 + 2
  EXPECT_EQ(by[2].stranded_gpus, 2);
  EXPECT_EQ(by[2].waiting_jobs, 1);
  EXPECT_EQ(by[2].blocked_by_fragmentation, 0);  // 10 GPUs wanted, 8 free: capacity, not fragmentation
  EXPECT_EQ(by[3].usable_gpus, 6);
  EXPECT_EQ(by[3].blocked_by_fragmentation, 0);  // two 3-GPU workers fit (n1, n2)
  EXPECT_EQ(by[4].usable_gpus, 0);
  EXPECT_EQ(by[4].stranded_gpus, 8);
  EXPECT_EQ(by[4].waiting_jobs, 1);  // the any-model 4-GPU job counts here too
  EXPECT_EQ(by[4].blocked_by_fragmentation, 1);
  EXPECT_EQ(by[8].stranded_gpus, 8);
  EXPECT_EQ(by[8].nodes_that_fit, 0);
  EXPECT_EQ(by[8].blocked_by_fragmentation, 1);
}

TEST(Stranded, AnEmptyClusterReportsNothing) {
  StrandedReport r = stranded_gpus({}, {{8, 1, {}}});
  EXPECT_EQ(r.nodes, 0);
  EXPECT_TRUE(r.models.empty());
}

}  // namespace
}  // namespace gpurent
