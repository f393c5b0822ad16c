// FgdAuto (policy/fgdauto.cc) and the fgdpack options it chooses among (policy/fgdpack.cc):
// hand-computed scores for the options; for the selector, that it picks the best rehearsal score
// (the earlier candidate on ties), decides the same way every time, and then scores exactly as
// the fgdpack variant it picked.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "sched/alloc_arrivals.h"
#include "sched/alloc_scheduler.h"
#include "sched/policy/policies.h"
#include "sched/policy_test_util.h"
#include "sched/score_policy.h"

namespace gpurent {
namespace {

using testing::pod;
using testing::share_whole_workload;
using testing::two_nodes;

// 48 nodes of three kinds and 400 pods of mixed shapes (fixed seed), CPU-only pods included.
struct Mixed {
  AllocCluster cluster;
  std::vector<AllocPod> pods;
};
Mixed mixed() {
  Mixed m;
  for (int i = 0; i < 48; ++i) {
    const char* model = i % 3 == 0 ? "P100" : i % 3 == 1 ? "V100" : "T4";
    EXPECT_TRUE(m.cluster.add_node("n" + std::to_string(100 + i), i % 3 == 2 ? 32000 : 96000, 524288,
                                   i % 3 == 2 ? 2 : 8, model).ok());
  }
  std::mt19937_64 rng(7);
  const int shares[] = {100, 250, 500, 700};
  for (int i = 0; i < 400; ++i) {
    const int kind = static_cast<int>(rng() % 10);
    const int64_t cpu = 1000 * static_cast<int64_t>(1 + rng() % 16);
    if (kind < 3) m.pods.push_back(pod(cpu, 0, 0));
    else if (kind < 7) m.pods.push_back(pod(cpu, 1, shares[rng() % 4]));
    else if (kind < 9) m.pods.push_back(pod(cpu, 1, 1000));
    else m.pods.push_back(pod(cpu * 2, static_cast<int>(2 << (rng() % 2)), 1000));
  }
  return m;
}

TEST(FgdPackOptions, ScaleSetsThePrimaryKeysRange) {
  auto c = two_nodes();
  auto p = make_fgdpack_policy({60, true, true});
  p->prepare(c, share_whole_workload());
  EXPECT_EQ(p->max_score(), 60 * 321 + 320);
  // Share pod (4000, g 500) on idle a: x = -0.125 (fgdpack_policy_test.cc), 60*sigmoid = 28.13 -> 28.
  EXPECT_EQ(p->score(c, 0, pod(4000, 1, 500)), 28 * 321 + 0);
  c.bind(0, pod(4000, 1, 500), {0});
  // Then on GPU0: x = +0.125 -> 60 * 0.5312 = 31.87 -> 31.
  EXPECT_EQ(p->score(c, 0, pod(4000, 1, 500)), 31 * 321 + 0);
  // Whole pod on idle b: x = 0 -> 30.
  EXPECT_EQ(p->score(c, 1, pod(8000, 1, 1000)), 30 * 321 + 0);
}

TEST(FgdPackOptions, CpuOnlyKeyOff) {
  auto c = two_nodes();
  auto on = make_fgdpack_policy({});
  auto off = make_fgdpack_policy({100, false, true});
  on->prepare(c, share_whole_workload());
  off->prepare(c, share_whole_workload());
  c.bind(0, pod(4000, 1, 500), {0});  // a: F 1500 -> tie (8000 - 1500) / 25 = 260 with the key
  EXPECT_EQ(on->score(c, 0, pod(2000, 0, 0)), 50 * 321 + 260);
  EXPECT_EQ(off->score(c, 0, pod(2000, 0, 0)), 50 * 321 + 0);
  // GPU pods keep their keys.
  EXPECT_EQ(off->score(c, 1, pod(8000, 2, 1000)), on->score(c, 1, pod(8000, 2, 1000)));
}

// The share key needs a CPU-bound workload without model pressure: CPU-only pods carry >= 30%
// of the CPU demand. Here 3 CPU-only pods of 8000 against 3 x 4000 + 8000: 24000 / 44000 = 55%.
TEST(FgdPackOptions, ShareKeyOff) {
  auto c = two_nodes();
  auto w = share_whole_workload();
  for (int i = 0; i < 3; ++i) w.push_back(pod(8000, 0, 0));
  auto on = make_fgdpack_policy({});
  auto off = make_fgdpack_policy({100, true, false});
  on->prepare(c, w);
  off->prepare(c, w);
  c.bind(1, pod(4000, 1, 500), {0});  // b has a GPU in use
  const int on_b = on->score(c, 1, pod(4000, 1, 500)), off_b = off->score(c, 1, pod(4000, 1, 500));
  EXPECT_EQ(on_b % 321, 1);
  EXPECT_EQ(off_b % 321, 0);
  EXPECT_EQ(on_b / 321, off_b / 321);
}

// share_key_always: share pods prefer a node with a GPU in use on any workload (tie 1, else 0);
// the small workload has no CPU-only pods, so version 4's share key is off.
TEST(FgdPackOptions, ShareKeyAlways) {
  auto c = two_nodes();
  auto v4 = make_fgdpack_policy({});
  auto always = make_fgdpack_policy({100, true, true, true, 0});
  v4->prepare(c, share_whole_workload());
  always->prepare(c, share_whole_workload());
  c.bind(1, pod(4000, 1, 500), {0});
  EXPECT_EQ(v4->score(c, 1, pod(4000, 1, 500)) % 321, 0);
  EXPECT_EQ(always->score(c, 1, pod(4000, 1, 500)) % 321, 1);
  EXPECT_EQ(always->score(c, 0, pod(4000, 1, 500)) % 321, 0);  // a: no GPU in use
  EXPECT_EQ(always->score(c, 1, pod(4000, 1, 500)) / 321, v4->score(c, 1, pod(4000, 1, 500)) / 321);
}

// whole_key adds 10 * level to the tie of whole-GPU pods (single or multi): 1 = a GPU in use
// (level 8, else 0); 2 = 8 - fully free GPUs left after placement, clamped to 0..8.
TEST(FgdPackOptions, WholeKeys) {
  auto c = two_nodes();
  auto inuse = make_fgdpack_policy({100, true, true, false, 1});
  auto fit = make_fgdpack_policy({100, true, true, false, 2});
  inuse->prepare(c, share_whole_workload());
  fit->prepare(c, share_whole_workload());
  c.bind(1, pod(4000, 1, 500), {0});  // b: 7 whole free GPUs, one in use; a idle (2 whole)
  // Single whole GPU: version 4's tie is 0. In use: b 80, a 0. Fit: b 8-(7-1)=2 -> 20; a 8-(2-1)=7 -> 70.
  EXPECT_EQ(inuse->score(c, 1, pod(8000, 1, 1000)) % 321, 80);
  EXPECT_EQ(inuse->score(c, 0, pod(8000, 1, 1000)) % 321, 0);
  EXPECT_EQ(fit->score(c, 1, pod(8000, 1, 1000)) % 321, 20);
  EXPECT_EQ(fit->score(c, 0, pod(8000, 1, 1000)) % 321, 70);
  // Two GPUs on a: fit level 8-(2-2) = 8 -> 80, plus version 4's multi-GPU key: C 56000, F 0 ->
  // 56000*1000/1000 = 56000 -> level 7 -> pack 2. 82.
  EXPECT_EQ(fit->score(c, 0, pod(8000, 2, 1000)) % 321, 82);
  // Share and CPU-only pods are untouched.
  auto v4 = make_fgdpack_policy({});
  v4->prepare(c, share_whole_workload());
  for (int n : {0, 1})
    for (const auto& q : {pod(4000, 1, 500), pod(2000, 0, 0)}) EXPECT_EQ(fit->score(c, n, q), v4->score(c, n, q));
}

TEST(FgdAutoPolicy, RegisteredLast) {
  EXPECT_EQ(score_policy_names().back(), "fgdauto");
  auto p = std::move(make_score_policy("FgdAuto").value());
  EXPECT_EQ(p->name(), "fgdauto");
  EXPECT_LE(p->max_score(), kMaxScoreLimit);
}

TEST(FgdAutoPolicy, ChoosesTheBestRehearsalEarliestOnTies) {
  const Mixed m = mixed();
  const FgdAutoRehearsal r = fgdauto_rehearse(m.cluster, m.pods);
  ASSERT_EQ(r.labels, (std::vector<std::string>{"v4", "s60-plain", "s80-plain", "s50", "s90", "v4-wfit", "v4-inuse",
                                                "s60-inuse"}));
  ASSERT_EQ(r.sums.size(), 8u);
  const auto best = std::max_element(r.sums.begin(), r.sums.end());  // the first maximum
  EXPECT_EQ(r.chosen, best - r.sums.begin());
  for (int64_t s : r.sums) {
    EXPECT_GT(s, 0);
    EXPECT_LE(s, 3 * 2 * m.cluster.total_gpu_milli());  // 3 seeds x (x=100 + end)
  }
  // The candidates place differently on this workload (otherwise the test would prove little).
  EXPECT_FALSE(std::all_of(r.sums.begin(), r.sums.end(), [&](int64_t s) { return s == r.sums[0]; }));
  // Deterministic, threads or not.
  const FgdAutoRehearsal again = fgdauto_rehearse(m.cluster, m.pods);
  EXPECT_EQ(again.sums, r.sums);
  EXPECT_EQ(again.chosen, r.chosen);
}

// One GPU, whole-GPU pods: every candidate allocates the GPU at x=100 and at the end, so all tie
// and the first (version 4) is chosen.
TEST(FgdAutoPolicy, TiesGoToTheFirstCandidate) {
  AllocCluster c;
  ASSERT_TRUE(c.add_node("solo", 8000, 65536, 1, "T4").ok());
  const std::vector<AllocPod> pods = {pod(1000, 1, 1000), pod(1000, 1, 1000), pod(1000, 1, 1000)};
  const FgdAutoRehearsal r = fgdauto_rehearse(c, pods);
  EXPECT_EQ(r.sums, std::vector<int64_t>(8, 3 * (1000 + 1000)));
  EXPECT_EQ(r.chosen, 0);
}

// A rehearsal's score is what the protocol's run gives: re-run candidate 0 by hand for seed 1001.
TEST(FgdAutoPolicy, RehearsalScoreIsTheProtocolRun) {
  const Mixed m = mixed();
  int64_t by_hand = 0;
  for (uint64_t seed : {1001, 1002, 1003}) {
    AllocCluster c = m.cluster;
    auto p = make_fgdpack_policy(fgdauto_candidate(0));
    p->prepare(c, m.pods);
    SimRng rng(seed);
    const auto seq = tuned_arrivals(m.pods, c.total_gpu_milli(), 1.3, rng);
    AllocScheduler s(c, *p, node_priority_order(c.size(), rng));
    int64_t arrived = 0, at100 = -1;
    for (int i : seq) {
      arrived += m.pods[i].gpu_demand();
      s.place(m.pods[i], rng);
      if (at100 < 0 && arrived >= c.total_gpu_milli()) at100 = c.allocated_gpu_milli();
    }
    ASSERT_GE(at100, 0);
    by_hand += at100 + c.allocated_gpu_milli();
  }
  EXPECT_EQ(fgdauto_rehearse(m.cluster, m.pods).sums[0], by_hand);
}

TEST(FgdAutoPolicy, ScoresAsTheChosenVariant) {
  Mixed m = mixed();
  const int chosen = fgdauto_rehearse(m.cluster, m.pods).chosen;
  auto a = std::move(make_score_policy("fgdauto").value());
  auto v = make_fgdpack_policy(fgdauto_candidate(chosen));
  a->prepare(m.cluster, m.pods);
  v->prepare(m.cluster, m.pods);
  EXPECT_EQ(a->max_score(), v->max_score());
  m.cluster.bind(0, pod(4000, 1, 500), {3});
  m.cluster.bind(2, pod(30000, 0, 0), {});
  // Every other candidate scores some (node, pod) differently, so the equality below identifies it.
  std::vector<std::unique_ptr<ScorePolicy>> others;
  for (int i = 0; i < 8; ++i)
    if (i != chosen) {
      others.push_back(make_fgdpack_policy(fgdauto_candidate(i)));
      others.back()->prepare(m.cluster, m.pods);
    }
  std::vector<bool> differs(others.size(), false);
  SimRng r1(5), r2(5);
  for (int n = 0; n < m.cluster.size(); ++n)
    for (const auto& q : {pod(4000, 1, 500), pod(2000, 0, 0), pod(8000, 1, 1000), pod(16000, 4, 1000)}) {
      if (!m.cluster.feasible(n, q)) continue;
      EXPECT_EQ(a->score(m.cluster, n, q), v->score(m.cluster, n, q)) << n;
      EXPECT_EQ(a->choose_gpus(m.cluster, n, q, r1), v->choose_gpus(m.cluster, n, q, r2)) << n;
      for (size_t o = 0; o < others.size(); ++o) differs[o] = differs[o] || others[o]->score(m.cluster, n, q) != v->score(m.cluster, n, q);
    }
  for (size_t o = 0; o < others.size(); ++o) EXPECT_TRUE(differs[o]) << "candidate " << o << " scores like the chosen one";
}

TEST(FgdAutoPolicy, WithoutGpuPodsItIsVersion4) {
  auto c = two_nodes();
  auto a = std::move(make_score_policy("fgdauto").value());
  auto v4 = make_fgdpack_policy({});
  const std::vector<AllocPod> cpu_only = {pod(2000, 0, 0), pod(4000, 0, 0)};
  a->prepare(c, cpu_only);
  v4->prepare(c, cpu_only);
  for (int n : {0, 1}) EXPECT_EQ(a->score(c, n, pod(2000, 0, 0)), v4->score(c, n, pod(2000, 0, 0)));
  EXPECT_EQ(a->max_score(), v4->max_score());
}

// Scores of `p` for a few pod shapes on every feasible node.
std::vector<int> score_table(const ScorePolicy& p, const AllocCluster& c) {
  std::vector<int> out;
  for (int n = 0; n < c.size(); ++n)
    for (const auto& q : {pod(4000, 1, 500), pod(2000, 0, 0), pod(8000, 1, 1000), pod(16000, 4, 1000)})
      if (c.feasible(n, q)) out.push_back(p.score(c, n, q));
  return out;
}

TEST(FgdAutoPolicy, DeferredPreparationScoresAsFgdUntilItsChoiceIsAdopted) {
  Mixed m = mixed();
  auto a = std::move(make_score_policy("fgdauto").value());
  auto task = a->prepare_deferred(m.cluster, m.pods);
  ASSERT_TRUE(task) << "a rehearsal to run elsewhere";
  auto fgd = make_fgd_policy();
  fgd->prepare(m.cluster, m.pods);
  EXPECT_EQ(score_table(*a, m.cluster), score_table(*fgd, m.cluster));
  const int chosen = task();
  EXPECT_EQ(chosen, fgdauto_rehearse(m.cluster, m.pods).chosen);
  a->adopt(chosen, m.cluster, m.pods);
  auto v = make_fgdpack_policy(fgdauto_candidate(chosen));
  v->prepare(m.cluster, m.pods);
  EXPECT_EQ(score_table(*a, m.cluster), score_table(*v, m.cluster));
}

TEST(FgdAutoPolicy, AMemoItsOwnerSharesSkipsTheRehearsal) {
  Mixed m = mixed();
  auto memo = std::make_shared<FgdAutoMemo>();
  auto first = std::move(make_score_policy("fgdauto", memo).value());
  auto task = first->prepare_deferred(m.cluster, m.pods);
  ASSERT_TRUE(task);
  const int chosen = task();
  // The same inputs again: the memo answers, nothing is deferred, it scores as the choice.
  auto second = std::move(make_score_policy("fgdauto", memo).value());
  EXPECT_FALSE(second->prepare_deferred(m.cluster, m.pods));
  auto v = make_fgdpack_policy(fgdauto_candidate(chosen));
  v->prepare(m.cluster, m.pods);
  EXPECT_EQ(score_table(*second, m.cluster), score_table(*v, m.cluster));
  // A policy without the memo has its own: it rehearses.
  auto third = std::move(make_score_policy("fgdauto").value());
  EXPECT_TRUE(third->prepare_deferred(m.cluster, m.pods));
}

}  // namespace
}  // namespace gpurent
