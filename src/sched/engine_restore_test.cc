// SchedEngine::restore: a job running when the server restarted comes back on its GPUs. Whether a
// unit borrowed its project's quota is not stored: a restored job over its project's quota counts
// as lent (reclaimable by a sibling project) only where lending is on.
#include <gtest/gtest.h>

#include "sched/engine.h"
#include "sched/engine_test_util.h"

namespace gpurent {
namespace {

// One 8-GPU node; tenant t's projects p (quota 4) and q (quota 8); `crit`, a critical job of p,
// restored on all 8 GPUs (over p's quota: an operator lowered it, or p borrowed), then q submits
// a best-effort job of 8 GPUs.
std::unique_ptr<SchedEngine> restored(bool lending) {
  SchedConfig cfg;
  cfg.quota_lending = lending;
  cfg.preemption = true;
  auto e = testing::make_engine(cfg);
  testing::add_h100_node(*e, "n1", "nvs");
  for (auto [id, gpus] : {std::pair{"p", 4}, std::pair{"q", 8}}) {
    SchedProject p{.id = id, .name = id, .tenant = "t"};
    p.quota.gpus_per_model["*"] = gpus;
    e->set_project(p);
  }
  SchedJob crit{.id = "crit", .tenant = "t", .project = "p", .gpus_per_worker = 8};
  crit.priority = PriorityClass::kCritical;
  SchedWorker w{.node = "n1", .gpus = {0, 1, 2, 3, 4, 5, 6, 7}};
  EXPECT_TRUE(e->restore(crit, {w}, 1000).ok());
  SchedJob low{.id = "low", .tenant = "t", .project = "q", .gpus_per_worker = 8};
  low.priority = PriorityClass::kBestEffort;
  EXPECT_TRUE(e->submit(low).ok());
  e->schedule(2000);
  return e;
}

TEST(EngineRestore, AJobOverItsQuotaIsLentOnlyWhereLendingIsOn) {
  // Lending off: it cannot have borrowed, and a best-effort job does not preempt a critical one.
  auto off = restored(false);
  EXPECT_TRUE(off->is_running("crit"));
  EXPECT_FALSE(off->is_running("low"));
  // Lending on: what it holds over its quota goes back to the sibling project that asks.
  auto on = restored(true);
  EXPECT_FALSE(on->is_running("crit"));
}

}  // namespace
}  // namespace gpurent
