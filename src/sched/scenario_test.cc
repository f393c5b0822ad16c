// Runs every scheduler scenario file in tests/scenarios/sched (one test per file), and checks that
// the runner itself notices a wrong expectation.
#include "sched/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "catalog/scenario_files_test_util.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;

using testutil::slurp;

const GpuCatalog& catalog() { return testutil::repo_catalog(); }

class SchedScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedScenario, Holds) {
  const auto path = fs::path(GPURENT_SOURCE_DIR) / "tests/scenarios/sched" / GetParam();
  auto r = run_scenario(slurp(path), catalog());
  ASSERT_TRUE(r.ok()) << GetParam() << ": " << r.error().message;
  EXPECT_GT(r->steps, 0);
  for (const auto& f : r->failures) ADD_FAILURE() << GetParam() << " — " << r->description << "\n  " << f;
}

INSTANTIATE_TEST_SUITE_P(Files, SchedScenario, ::testing::ValuesIn(testutil::yaml_files("tests/scenarios/sched")),
                         testutil::FileTestName());

constexpr const char* kTiny = R"(
description: one node, one job
nodes: [{name: n1, model: h100-sxm5-80gb, gpus: 8}]
projects: [{name: p, tenant: t}]
steps:
  - at: 0
    submit: [{name: a, project: p, workers: 1, gpus_per_worker: 4}]
    expect: {running: [b]}
)";

TEST(ScenarioRunner, ReportsAWrongExpectation) {
  auto r = run_scenario(kTiny, catalog());
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->failures.size(), 2u);
  EXPECT_NE(r->failures[0].find("expected b running"), std::string::npos) << r->failures[0];
  EXPECT_NE(r->failures[1].find("expected a not running"), std::string::npos) << r->failures[1];
}

TEST(ScenarioRunner, RejectsUnknownFieldsNamingThem) {
  std::string text = kTiny;
  text.replace(text.find("gpus: 8}"), 8, "gpus: 8, colour: red}");
  auto r = run_scenario(text, catalog());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("nodes[0].colour"), std::string::npos) << r.error().message;
}

TEST(ScenarioRunner, BoundsTheJobsAScenarioSubmits) {
  // Found by fuzz/run (scenarios): repeat 9,999,912 was reported and then allocated anyway.
  const std::string head = R"(description: bounds
nodes:
  - {name: n, model: a100-sxm4-80gb, gpus: 4}
projects:
  - {name: ps, tenant: small}
steps:
)";
  auto huge = run_scenario(head + "  - {at: 0, submit: [{name: s, project: ps, gpus_per_worker: 1, repeat: 9999912}]}\n",
                           catalog());
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("steps[0].submit[0].repeat"), std::string::npos) << huge.error().message;
  std::string many = head;
  for (int i = 0; i < 3; ++i)
    many += "  - {at: " + std::to_string(i) + ", submit: [{name: s" + std::to_string(i) +
            ", project: ps, gpus_per_worker: 1, repeat: 40000}]}\n";
  auto total = run_scenario(many, catalog());
  ASSERT_FALSE(total.ok());
  EXPECT_NE(total.error().message.find("at most 100000 jobs in all"), std::string::npos) << total.error().message;
}

}  // namespace
}  // namespace gpurent
