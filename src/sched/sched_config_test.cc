#include "sched/sched_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>

#include <unistd.h>

namespace gpurent {
namespace {

std::string write_temp(const std::string& text) {
  char name[] = "/tmp/gpurent_sched_cfg_XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

TEST(SchedConfigFile, ReadsEveryKnob) {
  const std::string p = write_temp(
      "policy: bestfit\npreemption: false\nprotect_inference_min: false\ninference_extra_rank: normal\n"
      "spot_notice_seconds: 120\nbackfill: false\ntenant_weights: {acme: 3}\n");
  auto c = load_sched_config_file(p);
  std::remove(p.c_str());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->score_policy, "bestfit");
  EXPECT_FALSE(c->preemption);
  EXPECT_FALSE(c->protect_inference_min);
  EXPECT_EQ(c->inference_extra_rank, PriorityClass::kNormal);
  EXPECT_EQ(c->spot_notice_ms, 120000);
  EXPECT_FALSE(c->backfill);
  EXPECT_EQ(c->tenant_weights.at("acme"), 3);
}

TEST(SchedConfigFile, AbsentKeysKeepTheDefaults) {
  const std::string p = write_temp("{}\n");
  SchedConfig d;
  d.score_policy = "fgdpack";
  auto c = load_sched_config_file(p, d);
  std::remove(p.c_str());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->score_policy, "fgdpack");
  EXPECT_TRUE(c->preemption);
  EXPECT_EQ(c->spot_notice_ms, 30000);
}

TEST(SchedConfigFile, NamesEveryBadField) {
  const std::string p = write_temp("policy: nope\nspot_notice_seconds: -1\ntenant_weights: {acme: 0}\ncolour: red\n");
  auto c = load_sched_config_file(p);
  std::remove(p.c_str());
  ASSERT_FALSE(c.ok());
  std::set<std::string> fields;
  for (const auto& f : c.error().fields) fields.insert(f.field);
  EXPECT_EQ(fields, (std::set<std::string>{"policy", "spot_notice_seconds", "tenant_weights.acme", "colour"}));
  EXPECT_FALSE(load_sched_config_file("/nonexistent/x.yaml").ok());
}

}  // namespace
}  // namespace gpurent
