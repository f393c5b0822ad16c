// Runs every billing scenario file in tests/scenarios/billing (one test per file).
// Further runner tests below.
#include "billing/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "catalog/scenario_files_test_util.h"
#include "core/message.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;

using testutil::slurp;

const GpuCatalog& catalog() { return testutil::repo_catalog(); }

class BillingScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(BillingScenario, Holds) {
  const auto path = fs::path(GPURENT_SOURCE_DIR) / "tests/scenarios/billing" / GetParam();
  auto r = run_billing_scenario(slurp(path), catalog());
  ASSERT_TRUE(r.ok()) << GetParam() << ": " << r.error().message;
  EXPECT_TRUE(r->rated.has_value() || r->failures.empty());
  for (const auto& f : r->failures) ADD_FAILURE() << GetParam() << " — " << r->description << "\n  " << f;
  // Every line's description is a message of the catalogues: its English is the description, and
  // in 简体中文 every part is translated and filled in.
  if (r->rated)
    for (const auto& l : r->rated->lines) {
      EXPECT_EQ(render_en(l.description_message), l.description) << l.rule;
      const std::string zh = render(l.description_message, "zh");
      EXPECT_NE(zh, l.description) << l.rule;
      EXPECT_EQ(zh.find("invoice_line."), std::string::npos) << l.rule << ": a code without a text: " << zh;
      EXPECT_EQ(zh.find('{'), std::string::npos) << l.rule << ": a placeholder left: " << zh;
      EXPECT_EQ(l.description.find('{'), std::string::npos) << l.rule << ": a placeholder left: " << l.description;
    }
}

INSTANTIATE_TEST_SUITE_P(Files, BillingScenario, ::testing::ValuesIn(testutil::yaml_files("tests/scenarios/billing")),
                         testutil::FileTestName());

// reserved_hybrid.yaml: a1 (2 GPUs, 14 days) and a4 (1 GPU, 24 h) run inside the 2.80/h commitment.
// Their reserved_covered lines bill 0 and carry the covered time's value: 672 GPU-h x 2.80 =
// 1881.60 and 24 x 2.80 = 67.20; every other line carries none.
TEST(BillingScenarioRunner, CoveredLinesCarryTheirValueAtTheCommitmentsPrice) {
  const auto path = fs::path(GPURENT_SOURCE_DIR) / "tests/scenarios/billing/reserved_hybrid.yaml";
  auto r = run_billing_scenario(slurp(path), catalog());
  ASSERT_TRUE(r.ok() && r->rated) << (r.ok() ? "" : r.error().message);
  std::map<std::string, int64_t> value;
  for (const auto& l : r->rated->lines) {
    EXPECT_EQ(l.covered_value.currency(), Currency::kUSD);
    if (l.rule == "reserved_covered") {
      EXPECT_EQ(l.amount_exact.micros(), 0);
      value[l.allocation] = l.covered_value.micros();
    } else {
      EXPECT_EQ(l.covered_value.micros(), 0) << l.rule;
    }
  }
  EXPECT_EQ(value, (std::map<std::string, int64_t>{{"a1", 1'881'600'000}, {"a4", 67'200'000}}));
}

TEST(BillingScenarioRunner, ReportsWrongExpectationsAndUnknownKeys) {
  const std::string base = R"(
period: {from: "2026-11-01", to: "2026-12-01"}
offers:
  - {name: h100, gpu_model: h100-sxm5-80gb, currency: USD, prices: {on_demand: "3.20"}, fees: {billing_starts: ready}}
allocations:
  - {id: a1, offer: h100, gpus: 1, requested_at: "2026-11-01", ready_at: "2026-11-01", ended_at: "2026-11-02"}
)";
  auto good = run_billing_scenario(base + "expect: {totals: {total: \"76.80\"}, line_count: 1}\n", catalog());
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_TRUE(good->failures.empty()) << good->failures.at(0);

  auto wrong = run_billing_scenario(base + "expect: {totals: {total: \"76.81\"}, lines: [{rule: spot}]}\n", catalog());
  ASSERT_TRUE(wrong.ok());
  ASSERT_EQ(wrong->failures.size(), 2u);
  EXPECT_NE(wrong->failures[0].find("no line matches"), std::string::npos) << wrong->failures[0];
  EXPECT_NE(wrong->failures[1].find("expected total 76.81; got 76.80"), std::string::npos) << wrong->failures[1];

  auto typo = run_billing_scenario(base + "expect: {totel: \"1\"}\n", catalog());
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.error().fields.at(0).field, "expect.totel");
  EXPECT_EQ(typo.error().fields.at(0).coded.code, "rating.scenario.expect_key");
  EXPECT_EQ(render(typo.error().fields.at(0).coded, "zh"), "未知的键（应为 lines、totals、line_count 或 error）");

  auto bad_gpus = run_billing_scenario(
      base + "  - {id: a2, offer: h100, gpus: 1, gpu_milli: 500, requested_at: \"2026-11-01\"}\n", catalog());
  ASSERT_FALSE(bad_gpus.ok());
  const FieldError& both = bad_gpus.error().fields.at(0);
  EXPECT_EQ(both.field, "allocations[1].gpu_milli");
  EXPECT_EQ(both.reason, "give gpus or gpu_milli, not both");
  EXPECT_EQ(render(both.coded, "zh"), "gpus 和 gpu_milli 只能给出其一，不能同时给出");

  auto bad_key = run_billing_scenario(base + "alocations: []\n", catalog());
  ASSERT_FALSE(bad_key.ok());
  EXPECT_EQ(bad_key.error().fields.at(0).field, "alocations");
}

}  // namespace
}  // namespace gpurent
