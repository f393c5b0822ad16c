// SchedJob::nodes: a job pinned to nodes runs only there (an instance returning to its host), waits
// with a reason that names them while they are full, and leaves other jobs' placement alone.
#include <gtest/gtest.h>

#include "core/message.h"
#include "sched/engine.h"

namespace gpurent {
namespace {

SchedNode pin_test_node(const std::string& id) {
  return SchedNode{.id = id,
                   .name = id + "-name",
                   .gpu_model = "h100-sxm5-80gb",
                   .gpu_memory_gib = 80,
                   .cpu_cores = 64,
                   .memory_gib = 512,
                   .gpu_domains = std::vector<std::string>(8, "")};
}

TEST(EnginePin, APinnedJobRunsOnlyOnItsNodesAndSaysWhichWhileItWaits) {
  auto made = SchedEngine::make(SchedConfig{});
  ASSERT_TRUE(made.ok());
  auto e = std::move(*made);
  ASSERT_TRUE(e->add_node(pin_test_node("n1")).ok());
  ASSERT_TRUE(e->add_node(pin_test_node("n2")).ok());
  SchedProject p{.id = "p", .name = "p", .tenant = "t"};
  p.quota.gpus_per_model["*"] = 64;
  e->set_project(p);
  auto job = [](const char* id, int64_t gpus, std::vector<std::string> nodes) {
    return SchedJob{.id = id, .tenant = "t", .project = "p", .gpus_per_worker = gpus, .nodes = std::move(nodes)};
  };
  ASSERT_TRUE(e->submit(job("fill", 8, {"n1"})).ok());
  e->schedule(1000);
  ASSERT_TRUE(e->is_running("fill"));
  EXPECT_EQ(e->placement("fill")[0].node, "n1");
  // The same shape pinned to the full node waits, naming it; unpinned, it runs on the other node
  // (a pinned job's failure does not mark its shape as failing for everyone).
  ASSERT_TRUE(e->submit(job("home", 1, {"n1"})).ok());
  ASSERT_TRUE(e->submit(job("anywhere", 1, {})).ok());
  e->schedule(2000);
  EXPECT_FALSE(e->is_running("home"));
  EXPECT_NE(e->reason("home").find("on node n1-name"), std::string::npos) << e->reason("home");
  ASSERT_TRUE(e->is_running("anywhere"));
  EXPECT_EQ(e->placement("anywhere")[0].node, "n2");
  // Pinned to either: the one with room.
  ASSERT_TRUE(e->submit(job("either", 2, {"n1", "n2"})).ok());
  e->schedule(3000);
  ASSERT_TRUE(e->is_running("either"));
  EXPECT_EQ(e->placement("either")[0].node, "n2");
  // The host frees up: the waiting job goes home.
  e->remove("fill");
  e->schedule(4000);
  ASSERT_TRUE(e->is_running("home"));
  EXPECT_EQ(e->placement("home")[0].node, "n1");
}

}  // namespace
}  // namespace gpurent
