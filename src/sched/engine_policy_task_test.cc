// SchedConfig::defer_slow_prepare: a slow policy preparation (fgdauto's rehearsal) is handed out
// as a task instead of running inside schedule(); the engine places jobs meanwhile and adopts the
// choice when it is given back. Policies without slow preparation hand out nothing.
#include <gtest/gtest.h>

#include "sched/engine.h"
#include "sched/engine_test_util.h"

namespace gpurent {
namespace {

std::unique_ptr<SchedEngine> engine(const std::string& policy, bool defer) {
  SchedConfig cfg;
  cfg.score_policy = policy;
  cfg.defer_slow_prepare = defer;
  auto e = testing::make_engine(cfg);
  for (int i = 0; i < 4; ++i) testing::add_h100_node(*e, "n" + std::to_string(i), "nvs" + std::to_string(i));
  SchedProject p{.id = "p", .name = "p", .tenant = "t"};
  p.quota.gpus_per_model["*"] = 64;
  e->set_project(p);
  return e;
}

void submit(SchedEngine& e, const std::string& id, int64_t gpus) {
  SchedJob j{.id = id, .tenant = "t", .project = "p", .gpus_per_worker = gpus};
  EXPECT_TRUE(e.submit(j).ok());
}

TEST(EnginePolicyTask, FgdautoRehearsesOffThePassAndIsAdoptedLater) {
  auto e = engine("fgdauto", true);
  submit(*e, "a", 2);
  submit(*e, "b", 1);
  e->schedule(1000);
  EXPECT_TRUE(e->is_running("a") && e->is_running("b")) << "placed under the interim scores";
  auto task = e->take_policy_task();
  ASSERT_TRUE(task);
  EXPECT_FALSE(e->take_policy_task()) << "handed out once";
  // While the choice is awaited, passes go on and nothing new is planned.
  submit(*e, "c", 4);
  e->schedule(2000);
  EXPECT_TRUE(e->is_running("c"));
  EXPECT_FALSE(e->take_policy_task());
  const int choice = task();  // on "another thread": it reads only its own copies
  EXPECT_GE(choice, 0);
  e->adopt_policy_choice(choice);
  submit(*e, "d", 8);
  e->schedule(3000);
  EXPECT_TRUE(e->is_running("d"));
  EXPECT_EQ(e->allocated_gpu_milli(), 15000);
}

TEST(EnginePolicyTask, NothingIsHandedOutWithoutDeferralOrForAFastPolicy) {
  for (const auto& [policy, defer] : std::vector<std::pair<std::string, bool>>{{"fgdauto", false}, {"fgd", true}}) {
    auto e = engine(policy, defer);
    submit(*e, "a", 2);
    e->schedule(1000);
    EXPECT_TRUE(e->is_running("a")) << policy;
    EXPECT_FALSE(e->take_policy_task()) << policy << (defer ? " deferred" : "");
  }
}

}  // namespace
}  // namespace gpurent
