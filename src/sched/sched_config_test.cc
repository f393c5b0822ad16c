#include "sched/sched_config.h"

#include <gtest/gtest.h>

#include <set>

#include "core/message.h"

namespace gpurent {
namespace {

TEST(SchedConfig, ReadsEveryKnob) {
  auto c = parse_sched_config(
      "policy: bestfit\npreemption: false\nprotect_inference_min: false\ninference_extra_rank: normal\n"
      "spot_notice_seconds: 120\nbackfill: false\ntenant_weights: {acme: 3}\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->score_policy, "bestfit");
  EXPECT_FALSE(c->preemption);
  EXPECT_FALSE(c->protect_inference_min);
  EXPECT_EQ(c->inference_extra_rank, PriorityClass::kNormal);
  EXPECT_EQ(c->spot_notice_ms, 120000);
  EXPECT_FALSE(c->backfill);
  EXPECT_EQ(c->tenant_weights.at("acme"), 3);
}

TEST(SchedConfig, AbsentKeysKeepTheDefaults) {
  SchedConfig d;
  d.score_policy = "fgdpack";
  auto c = parse_sched_config("{}\n", d);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->score_policy, "fgdpack");
  EXPECT_TRUE(c->preemption);
  EXPECT_EQ(c->spot_notice_ms, 30000);
}

TEST(SchedConfig, NamesEveryBadField) {
  auto c = parse_sched_config("policy: nope\nspot_notice_seconds: -1\ntenant_weights: {acme: 0}\ncolour: red\n");
  ASSERT_FALSE(c.ok());
  std::set<std::string> fields;
  for (const auto& f : c.error().fields) fields.insert(f.field);
  EXPECT_EQ(fields, (std::set<std::string>{"policy", "spot_notice_seconds", "tenant_weights.acme", "colour"}));
  EXPECT_EQ(c.error().fields[0].field, "policy");
  EXPECT_EQ(
      c.error().fields[0].reason,
      "unknown policy \"nope\" (known: random, dotprod, gpuclustering, gpupacking, bestfit, fgd, fgdpack, fgdauto)");
  EXPECT_EQ(c.error().fields[0].coded.code, "sched.unknown_policy");
  EXPECT_EQ(render(c.error().fields[0].coded, "zh"),
            "未知的调度策略“nope”（可选：random, dotprod, gpuclustering, gpupacking, bestfit, fgd, fgdpack, fgdauto）");
  for (const auto& f : c.error().fields) {
    if (f.field == "tenant_weights.acme") {
      EXPECT_EQ(f.coded.code, "sched.config.weight_integer");
    }
  }
  EXPECT_EQ(parse_sched_config("[1, 2]").error().fields[0].field, "--sched-config");
  EXPECT_EQ(parse_sched_config("a: [").error().fields[0].field, "--sched-config");
  EXPECT_EQ(parse_sched_config("[1, 2]").error().fields[0].coded.code, "sched.config.not_map");
  EXPECT_EQ(parse_sched_config("a: [").error().fields[0].coded.code, "yaml.malformed_at");
}

}  // namespace
}  // namespace gpurent
