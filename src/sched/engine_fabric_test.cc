// A gang stays on one RDMA fabric of its site (SchedNode::fabric) unless it may span sites, and
// says so while it waits.
#include <gtest/gtest.h>

#include <set>

#include "core/message.h"
#include "sched/engine.h"

namespace gpurent {
namespace {

SchedNode fabric_node(const std::string& id, const std::string& fabric) {
  return SchedNode{.id = id,
                   .gpu_model = "h100-sxm5-80gb",
                   .gpu_memory_gib = 80,
                   .rdma = kRdmaIb,
                   .cpu_cores = 64,
                   .memory_gib = 512,
                   .gpu_domains = std::vector<std::string>(8, ""),
                   .supplier = "sup",
                   .site = "s1",
                   .fabric = fabric};
}

TEST(EngineFabric, AGangStaysOnOneFabricUnlessItMaySpan) {
  auto made = SchedEngine::make(SchedConfig{});
  ASSERT_TRUE(made.ok());
  auto e = std::move(*made);
  for (const auto& [id, fabric] : {std::pair{"n1", "a"}, {"n2", "a"}, {"n3", "b"}, {"n4", "b"}})
    ASSERT_TRUE(e->add_node(fabric_node(id, fabric)).ok());
  SchedProject p{.id = "p", .name = "p", .tenant = "t"};
  p.quota.gpus_per_model["*"] = 64;
  e->set_project(p);
  auto job = [](const char* id, int64_t workers, std::vector<std::string> nodes) {
    return SchedJob{.id = id, .tenant = "t", .project = "p", .workers = workers, .gpus_per_worker = 8,
                    .rdma = RdmaRequirement::kInfiniband, .nodes = std::move(nodes)};
  };
  // One node of each fabric is taken: a gang of two whole nodes fits only across fabrics.
  ASSERT_TRUE(e->submit(job("fill-a", 1, {"n1"})).ok());
  ASSERT_TRUE(e->submit(job("fill-b", 1, {"n3"})).ok());
  e->schedule(1000);
  ASSERT_TRUE(e->is_running("fill-a") && e->is_running("fill-b"));
  SchedJob spans = job("spans", 2, {});
  spans.terms.span_sites = true;
  ASSERT_TRUE(e->submit(spans).ok());
  e->schedule(2000);
  ASSERT_TRUE(e->is_running("spans"));
  std::set<std::string> on;
  for (const auto& w : e->placement("spans")) on.insert(w.node);
  EXPECT_EQ(on, (std::set<std::string>{"n2", "n4"}));
  e->remove("spans");
  ASSERT_TRUE(e->submit(job("gang", 2, {})).ok());
  e->schedule(3000);
  EXPECT_FALSE(e->is_running("gang"));
  EXPECT_NE(render_en(e->reason_message("gang")).find("on one site and RDMA fabric"), std::string::npos)
      << render_en(e->reason_message("gang"));
  // Within one fabric a gang runs once it has room there.
  e->remove("fill-b");
  e->schedule(4000);
  ASSERT_TRUE(e->is_running("gang"));
  on.clear();
  for (const auto& w : e->placement("gang")) on.insert(w.node);
  EXPECT_EQ(on, (std::set<std::string>{"n3", "n4"}));
}

}  // namespace
}  // namespace gpurent
