// FgdPack (policy/fgdpack.cc, version 4) against hand-computed scores: FGD's integer, less the
// model pressure penalty for whole-GPU pods, as the primary key, the packing tie-break as the
// secondary one (score = primary * 321 + tie; tie 0 for single-GPU pods, and for share pods
// unless the workload is CPU-bound without model pressure).
#include <gtest/gtest.h>

#include "sched/alloc_scheduler.h"
#include "sched/policy/policies.h"
#include "sched/policy_test_util.h"
#include "sched/score_policy.h"

namespace gpurent {
namespace {

using testing::pod;
using testing::two_nodes;

std::vector<AllocPod> workload() { return testing::share_whole_workload(); }

std::unique_ptr<ScorePolicy> prepared(const char* name, const AllocCluster& c) {
  auto p = std::move(make_score_policy(name).value());
  p->prepare(c, workload());
  return p;
}

TEST(FgdPackPolicy, RegisteredAfterFgdWithWiderRange) {
  EXPECT_EQ(score_policy_names()[score_policy_names().size() - 2], "fgdpack");
  auto p = std::move(make_score_policy("FgdPack").value());
  EXPECT_EQ(p->name(), "fgdpack");
  EXPECT_EQ(p->max_score(), 100 * 321 + 320);
  EXPECT_LE(p->max_score(), kMaxScoreLimit);
}

TEST(FgdPackPolicy, SharePodsAndSingleGpuPodsKeepFgdOrder) {
  auto c = two_nodes();
  auto p = prepared("fgdpack", c);
  SimRng rng(1);
  // a idle: Frag = 0. Share pod (4000, g 500) on GPU0 -> f [500,1000]: F(share) = 0, F(whole) = 500
  // -> scaled 500; x = -500/(1000*4) = -0.125, 100*sigmoid = 46.88 -> 46. Share pods: tie 0.
  EXPECT_EQ(p->score(c, 0, pod(4000, 1, 500)), 46 * 321 + 0);
  EXPECT_EQ(p->choose_gpus(c, 0, pod(4000, 1, 500), rng), std::vector<int>{0});
  c.bind(0, pod(4000, 1, 500), {0});
  // a: f [500,1000], Frag 500. On GPU0 -> [0,1000]: Frag 0, x = +0.125 -> 53.12 -> 53.
  // On GPU1 -> [500,500]: F(whole) = 1000, x = -0.125 -> 46. Best 53 on GPU0; no tie key even
  // though a GPU is in use (version 2 added 10 + 8 here).
  EXPECT_EQ(p->score(c, 0, pod(4000, 1, 500)), 53 * 321 + 0);
  EXPECT_EQ(p->choose_gpus(c, 0, pod(4000, 1, 500), rng), std::vector<int>{0});
  // Whole-GPU pod (8000, 1 GPU) on a: takes GPU1 -> [500,0]: F(share) = 0 (500 fits),
  // F(whole) = 500 (no GPU fits: all free is fragment) -> Frag 500, x = 0 -> 50; tie 0.
  // No gpu_spec in the workload: no penalty.
  EXPECT_EQ(p->score(c, 0, pod(8000, 1, 1000)), 50 * 321 + 0);
  // The same pod on idle b: Frag stays 0 (seven whole GPUs left) -> 50; tie 0: equal to the used
  // node a, so the node priority decides, as in FGD.
  EXPECT_EQ(p->score(c, 1, pod(8000, 1, 1000)), 50 * 321 + 0);
}

TEST(FgdPackPolicy, CpuOnlyPodPrefersLessFreeGpu) {
  auto c = two_nodes();
  auto p = prepared("fgdpack", c);
  c.bind(0, pod(4000, 1, 500), {0});  // a: C 60000, F 1500
  // CPU-only pods never change F and leave enough CPU for both types here: dFrag 0 -> 50.
  // Tie = (8000 - F) / 25: a (8000-1500)/25 = 260; b (8000-8000)/25 = 0.
  EXPECT_EQ(p->score(c, 0, pod(2000, 0, 0)), 50 * 321 + 260);
  EXPECT_EQ(p->score(c, 1, pod(2000, 0, 0)), 50 * 321 + 0);
  SimRng rng(1);
  EXPECT_TRUE(p->choose_gpus(c, 0, pod(2000, 0, 0), rng).empty());
  // A CPU-only pod that leaves a 3000 milli CPU: neither type fits any more, so every free GPU
  // milli (1500) is fragment for both: 3*1500 + 1*1500 = 6000 against 500 before, dFrag = -5500
  // scaled, x = -5500/4000 = -1.375, 100*sigmoid = 20.18 -> 20; tie still 260.
  EXPECT_EQ(p->score(c, 0, pod(57000, 0, 0)), 20 * 321 + 260);
}

TEST(FgdPackPolicy, PrimaryKeyIsFgdScore) {
  auto c = two_nodes();
  auto fgd = prepared("fgd", c);
  auto ours = prepared("fgdpack", c);
  c.bind(1, pod(4000, 1, 300), {2});
  c.bind(1, pod(8000, 2, 1000), {0, 1});
  c.bind(0, pod(60000, 0, 0), {});
  for (int node : {0, 1})
    for (const auto& q : {pod(4000, 1, 500), pod(1000, 1, 200), pod(8000, 1, 1000), pod(8000, 2, 1000), pod(500, 0, 0)})
      EXPECT_EQ(ours->score(c, node, q) / 321, fgd->score(c, node, q)) << node << " " << q.gpu_milli;
}

// Multi-GPU pods prefer the node left with less CPU per free GPU:
// pack = 9 - min(9, floor(C_after * 1000 / (F_after + 1000) / 8000)).
TEST(FgdPackPolicy, MultiGpuPodPrefersLessCpuPerFreeGpu) {
  AllocCluster c;
  ASSERT_TRUE(c.add_node("a", 96000, 524288, 8, "V100").ok());
  ASSERT_TRUE(c.add_node("b", 16000, 262144, 4, "V100").ok());
  auto p = prepared("fgdpack", c);
  // Both idle, Frag 0 before and after (8000 CPU is left on b: both types still fit) -> 50.
  // a: C 88000, F 6000 -> 88000*1000/7000 = 12571 -> level 1 -> pack 8.
  // b: C 8000, F 2000 -> 8000*1000/3000 = 2666 -> level 0 -> pack 9.
  EXPECT_EQ(p->score(c, 0, pod(8000, 2, 1000)), 50 * 321 + 8);
  EXPECT_EQ(p->score(c, 1, pod(8000, 2, 1000)), 50 * 321 + 9);
  SimRng rng(1);
  EXPECT_EQ(p->choose_gpus(c, 1, pod(8000, 2, 1000), rng), (std::vector<int>{0, 1}));
}

// Model pressure: the workload locks a whole-GPU type to P100. P(P100) = 1000 named milli /
// 2000 milli of P100 = 0.5, P(V100) = 0, so P100 has excess 0.5 and whole-GPU pods pay
// 0.03 * 0.5 * k on P100 nodes in the sigmoid's argument; share pods pay nothing.
TEST(FgdPackPolicy, WholeGpuPodsPayForPressuredModels) {
  auto c = two_nodes();
  const std::vector<AllocPod> locked = {pod(4000, 1, 500), pod(4000, 1, 500), pod(4000, 1, 500),
                                        AllocPod{8000, 1024, 1, 1000, "P100", 0}};
  auto fgd = std::move(make_score_policy("fgd").value());
  auto ours = std::move(make_score_policy("fgdpack").value());
  fgd->prepare(c, locked);
  ours->prepare(c, locked);
  // Whole pod (8000, 1 GPU) on idle a (P100): dFrag 0 (share fits GPU1, the P100 type fits GPU1).
  // FGD: x = 0 -> 50. FgdPack: x = -0.03 * 0.5 * 1 = -0.015 -> 49.63 -> 49; tie 0.
  EXPECT_EQ(fgd->score(c, 0, pod(8000, 1, 1000)), 50);
  EXPECT_EQ(ours->score(c, 0, pod(8000, 1, 1000)), 49 * 321 + 0);
  // Two GPUs on a: [0,0], Frag stays 0 -> FGD 50; x = -0.03 -> 49.25 -> 49; multi pack: C 56000,
  // F 0 -> 56000*1000/1000 = 56000 -> level 7 -> pack 2.
  EXPECT_EQ(fgd->score(c, 0, pod(8000, 2, 1000)), 50);
  EXPECT_EQ(ours->score(c, 0, pod(8000, 2, 1000)), 49 * 321 + 2);
  // On idle b (V100) there is no penalty: the P100 type counts all 8000 free milli as fragment,
  // 7000 after -> dFrag +1000 scaled, x = 1000/4000 = 0.25 -> 56.22 -> 56 for both.
  EXPECT_EQ(fgd->score(c, 1, pod(8000, 1, 1000)), 56);
  EXPECT_EQ(ours->score(c, 1, pod(8000, 1, 1000)) / 321, 56);
  // Share pod on a: GPU0 -> [500,1000]; the P100 type still fits GPU1: fragment 500, dFrag -500
  // scaled, x = -0.125 -> 46 for both (no penalty for share pods).
  EXPECT_EQ(fgd->score(c, 0, pod(4000, 1, 500)), 46);
  EXPECT_EQ(ours->score(c, 0, pod(4000, 1, 500)) / 321, 46);
}

// The grouped fragmentation (types with equal g, k and spec share one GPU scan; CPU thresholds by
// binary search; spec groups filed per model) equals FGD's for pods that pay no penalty: share and
// CPU-only pods, on nodes of both models, before and after CPU and GPUs are taken.
TEST(FgdPackPolicy, GroupedFragmentationEqualsFgd) {
  auto c = two_nodes();
  const std::vector<AllocPod> mixed = {pod(4000, 1, 500),   pod(30000, 1, 500), pod(62000, 1, 500),
                                       pod(8000, 1, 1000),  pod(8000, 2, 1000), pod(2000, 0, 0),
                                       AllocPod{4000, 1024, 1, 500, "P100", 0},
                                       AllocPod{40000, 1024, 1, 500, "P100", 0},
                                       AllocPod{8000, 1024, 2, 1000, "V100|P100", 0}};
  auto fgd = std::move(make_score_policy("fgd").value());
  auto ours = std::move(make_score_policy("fgdpack").value());
  fgd->prepare(c, mixed);
  ours->prepare(c, mixed);
  const std::vector<AllocPod> probes = {pod(4000, 1, 500), pod(1000, 1, 200), pod(36000, 1, 700), pod(500, 0, 0),
                                        pod(33000, 0, 0)};
  auto same = [&](const char* when) {
    for (int node : {0, 1})
      for (const auto& q : probes)
        if (c.feasible(node, q)) {
          EXPECT_EQ(ours->score(c, node, q) / 321, fgd->score(c, node, q)) << when << " node " << node
                                                                          << " cpu " << q.cpu_milli;
        }
  };
  same("idle");
  c.bind(0, pod(30000, 1, 300), {1});
  c.bind(1, pod(50000, 2, 1000), {0, 1});
  c.bind(1, pod(4000, 1, 600), {5});
  same("used");
}

// Share pods prefer a node with a GPU in use only when CPU-only pods carry >= 30% of the
// workload's CPU demand and no model is under pressure. Workload: share (4000, g 500) x3, whole
// (8000, 1 GPU) x1, CPU-only x1 of `cpu_only` milli; all three types kept, total = 5.
std::vector<AllocPod> cpu_workload(int64_t cpu_only, const char* whole_spec = "") {
  return {pod(4000, 1, 500), pod(4000, 1, 500), pod(4000, 1, 500), AllocPod{8000, 1024, 1, 1000, whole_spec, 0},
          pod(cpu_only, 0, 0)};
}

TEST(FgdPackPolicy, SharePodsPreferGpuInUseOnCpuBoundWorkloads) {
  auto c = two_nodes();
  auto p = std::move(make_score_policy("fgdpack").value());
  p->prepare(c, cpu_workload(12000));  // 12000 of 32000 milli-CPU: 37.5% >= 30%
  // Idle a: Frag = 1 * 2000 (CPU-only type: all free). Share on GPU0 -> [500,1000]: F(whole) = 500,
  // F(CPU-only) = 1500 -> 2000; dFrag 0 -> 50. No GPU in use: tie 0.
  EXPECT_EQ(p->score(c, 0, pod(4000, 1, 500)), 50 * 321 + 0);
  // Idle b: 8000 (CPU-only) -> 500 (whole: GPU0 is fragment) + 7500: dFrag 0 -> 50; tie 0.
  EXPECT_EQ(p->score(c, 1, pod(4000, 1, 500)), 50 * 321 + 0);
  c.bind(0, pod(4000, 1, 500), {0});
  // a: f [500,1000], Frag 500 + 1500 = 2000. Share on GPU0 -> [0,1000]: 0 + 1000; dFrag +1000,
  // x = 0.2 -> 54.98 -> 54; a GPU is in use: tie 1.
  EXPECT_EQ(p->score(c, 0, pod(4000, 1, 500)), 54 * 321 + 1);
  EXPECT_EQ(p->score(c, 1, pod(4000, 1, 500)), 50 * 321 + 0);
  // Whole-GPU and CPU-only pods keep their keys: whole on a takes GPU1 -> [500,0]: F(whole) = 500,
  // F(CPU-only) = 500 -> 1000, dFrag +1000 -> 54, tie 0; CPU-only: tie (8000 - 1500) / 25 = 260.
  EXPECT_EQ(p->score(c, 0, pod(8000, 1, 1000)), 54 * 321 + 0);
  EXPECT_EQ(p->score(c, 0, pod(2000, 0, 0)) % 321, 260);

  // 8000 of 28000 (28.6% < 30%): off, a share pod on the same node has tie 0.
  p->prepare(c, cpu_workload(8000));
  EXPECT_EQ(p->score(c, 0, pod(4000, 1, 500)) % 321, 0);
  // CPU-bound, but the whole type is locked to P100 (excess 0.5): off.
  p->prepare(c, cpu_workload(12000, "P100"));
  EXPECT_EQ(p->score(c, 0, pod(4000, 1, 500)) % 321, 0);
  // Back on: the key is a property of the prepared workload only.
  p->prepare(c, cpu_workload(9000));  // 9000 of 29000: 31%
  EXPECT_EQ(p->score(c, 0, pod(4000, 1, 500)) % 321, 1);
}

// Through the scheduler: a share pod that FGD scores alike on both nodes goes to the priority node
// a under FGD, and to b, whose GPU is in use, under FgdPack on a CPU-bound workload.
TEST(FgdPackPolicy, SchedulerStacksSharePodsOnCpuBoundWorkloads) {
  for (const char* name : {"fgd", "fgdpack"}) {
    AllocCluster c;
    ASSERT_TRUE(c.add_node("a", 64000, 262144, 2, "P100").ok());
    ASSERT_TRUE(c.add_node("b", 64000, 262144, 2, "P100").ok());
    c.bind(1, pod(8000, 1, 1000), {0});  // b: f [0,1000]
    auto p = std::move(make_score_policy(name).value());
    p->prepare(c, cpu_workload(12000));
    // a [1000,1000] -> [500,1000]: 2000 -> 500 + 1500, dFrag 0 -> 50. b [0,1000] -> [0,500]:
    // F(whole) 0 -> 500, F(CPU-only) 1000 -> 500: dFrag 0 -> 50. Tie: a 0, b 1 (GPU0 in use).
    const int unit = std::string(name) == "fgd" ? 1 : 321;
    EXPECT_EQ(p->score(c, 0, pod(4000, 1, 500)), 50 * unit) << name;
    EXPECT_EQ(p->score(c, 1, pod(4000, 1, 500)), 50 * unit + (unit == 1 ? 0 : 1)) << name;
    AllocScheduler s(c, *p, {0, 1});
    SimRng rng(1);
    EXPECT_EQ(s.place(pod(4000, 1, 500), rng), std::string(name) == "fgd" ? 0 : 1) << name;
  }
}

// Through the scheduler: FGD ties (50 and 50) go to the priority node a; FgdPack sends the
// CPU-only pod to b, whose GPUs are mostly taken, and scores above 100 survive the scheduler.
TEST(FgdPackPolicy, SchedulerBreaksFgdTieByPacking) {
  for (const char* name : {"fgd", "fgdpack"}) {
    AllocCluster c;
    ASSERT_TRUE(c.add_node("a", 64000, 262144, 2, "P100").ok());
    ASSERT_TRUE(c.add_node("b", 64000, 262144, 2, "P100").ok());
    c.bind(1, pod(8000, 1, 1000), {0});  // b: f [0,1000], F 1000
    auto p = prepared(name, c);
    AllocScheduler s(c, *p, {0, 1});
    SimRng rng(1);
    // Both nodes: dFrag 0 -> 50. FgdPack ties: a (8000-2000)/25 = 240, b (8000-1000)/25 = 280.
    EXPECT_EQ(s.place(pod(1000, 0, 0), rng), std::string(name) == "fgd" ? 0 : 1) << name;
  }
}

}  // namespace
}  // namespace gpurent
