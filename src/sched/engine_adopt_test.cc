// SchedEngine::adopt_gpus: a running job's GPUs on a node move to the indices the executor chose
// (Slurm picks device indices itself); a job in the way makes room; bad requests change nothing.
#include <gtest/gtest.h>

#include "core/message.h"
#include "sched/engine.h"
#include "sched/engine_test_util.h"

namespace gpurent {
namespace {

std::unique_ptr<SchedEngine> engine_with_two_jobs() {
  auto e = testing::make_engine(SchedConfig{});
  testing::add_h100_node(*e, "n1", "nvs");
  SchedProject p{.id = "p", .name = "p", .tenant = "t"};
  p.quota.gpus_per_model["*"] = 64;
  e->set_project(p);
  for (const char* id : {"a", "b"}) {
    SchedJob j{.id = id, .tenant = "t", .project = "p", .gpus_per_worker = 2};
    EXPECT_TRUE(e->submit(j).ok());
  }
  e->schedule(1000);
  return e;
}

std::vector<int64_t> gpus_of(const SchedEngine& e, const std::string& job) {
  auto ws = e.placement(job);
  return ws.empty() ? std::vector<int64_t>{} : ws[0].gpus;
}

TEST(EngineAdopt, MovesJobsToTheExecutorsGpusAndMakesRoom) {
  auto e = engine_with_two_jobs();
  ASSERT_TRUE(e->is_running("a") && e->is_running("b"));
  const auto a = gpus_of(*e, "a"), b = gpus_of(*e, "b");
  ASSERT_EQ(a.size(), 2u);
  // Free GPUs: taken.
  std::vector<int64_t> free;
  for (int64_t g = 0; g < 8 && free.size() < 2; ++g)
    if (std::find(a.begin(), a.end(), g) == a.end() && std::find(b.begin(), b.end(), g) == b.end()) free.push_back(g);
  ASSERT_TRUE(e->adopt_gpus("a", "n1", {free[1], free[0]}).ok());
  EXPECT_EQ(gpus_of(*e, "a"), free);
  EXPECT_EQ(e->allocated_gpu_milli(), 4000);
  // b's GPUs: b (not yet placed by the executor) makes room on the lowest GPUs nobody wants.
  ASSERT_TRUE(e->adopt_gpus("a", "n1", b).ok());
  EXPECT_EQ(gpus_of(*e, "a"), b);
  std::vector<int64_t> lowest;
  for (int64_t g = 0; g < 8 && lowest.size() < 2; ++g)
    if (std::find(b.begin(), b.end(), g) == b.end()) lowest.push_back(g);
  EXPECT_EQ(gpus_of(*e, "b"), lowest);
  EXPECT_EQ(e->allocated_gpu_milli(), 4000);
  // Both named at once (Slurm's consistent view): a swap. Both moved, and the caller is told.
  std::vector<std::string> moved;
  ASSERT_TRUE(e->adopt_node_gpus("n1", {{"a", lowest}, {"b", b}}, &moved).ok());
  EXPECT_EQ(gpus_of(*e, "a"), lowest);
  EXPECT_EQ(gpus_of(*e, "b"), b);
  EXPECT_EQ(moved, (std::vector<std::string>{"a", "b"}));
  // Named on the GPUs it holds: nothing moved.
  moved.clear();
  ASSERT_TRUE(e->adopt_node_gpus("n1", {{"b", b}}, &moved).ok());
  EXPECT_TRUE(moved.empty());
  // Its own GPUs: unchanged. A wrong count, a GPU given twice, an unknown job: errors, nothing moves.
  EXPECT_TRUE(e->adopt_gpus("b", "n1", b).ok());
  EXPECT_EQ(e->adopt_gpus("b", "n1", {b[0]}).error().code, Code::kInvalid);
  EXPECT_EQ(e->adopt_gpus("b", "n1", {b[0], b[0]}).error().code, Code::kInvalid);
  EXPECT_EQ(e->adopt_node_gpus("n1", {{"a", {0, 1}}, {"b", {1, 2}}}).error().code, Code::kInvalid);
  EXPECT_EQ(e->adopt_gpus("zz", "n1", b).error().code, Code::kNotFound);
  EXPECT_EQ(e->adopt_gpus("a", "n1", {8, 9}).error().code, Code::kConflict);
  const Error count = e->adopt_gpus("b", "n1", {b[0]}).error();
  EXPECT_EQ(count.message, "job b holds 2 whole GPUs on n1, not 1");
  EXPECT_EQ(count.detail.code, "sched.adopt.count_mismatch");
  EXPECT_EQ(render(count.detail, "zh"), "作业 b 在 n1 上占用 2 张整卡 GPU，而不是 1 张");
  EXPECT_EQ(e->adopt_gpus("zz", "n1", b).error().message, "job zz is not running");
  const Error held = e->adopt_gpus("a", "n1", {8, 9}).error();
  EXPECT_EQ(held.message, "GPU 8 of node n1 is held by another job");
  EXPECT_EQ(render(held.detail, "zh"), "节点 n1 的 GPU 8 已被其他作业占用");
  EXPECT_EQ(gpus_of(*e, "a"), lowest);
  EXPECT_EQ(gpus_of(*e, "b"), b);
  // Freed and reusable: removing both leaves nothing allocated.
  e->remove("a");
  e->remove("b");
  EXPECT_EQ(e->allocated_gpu_milli(), 0);
}

}  // namespace
}  // namespace gpurent
