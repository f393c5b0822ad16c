// The FOCUS export: each tests/scenarios/focus/NAME.yaml rated and exported equals the hand-written
// NAME.focus.csv beside it, byte for byte; the format's rules hold on random inputs (rating_test.cc
// generates them there, this file checks a fixed month and the cents split).
#include "billing/rating_output.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "billing/rating_input_parse.h"
#include "billing/scenario.h"
#include "catalog/scenario_files_test_util.h"
#include "core/yaml_json.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;

class FocusScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(FocusScenario, ExportEqualsTheHandWrittenFile) {
  const fs::path path = fs::path(GPURENT_SOURCE_DIR) / "tests/scenarios/focus" / GetParam();
  const std::string text = testutil::slurp(path);
  auto checked = run_billing_scenario(text, testutil::repo_catalog());
  ASSERT_TRUE(checked.ok()) << checked.error().message;
  for (const auto& f : checked->failures) ADD_FAILURE() << GetParam() << ": " << f;
  auto doc = parse_json_or_yaml(text);
  ASSERT_TRUE(doc.ok());
  auto in = parse_rating_input(*doc, testutil::repo_catalog());
  ASSERT_TRUE(in.ok()) << in.error().message;
  auto rated = rate(*in);
  ASSERT_TRUE(rated.ok()) << rated.error().message;
  fs::path expected = path;
  expected.replace_extension(".focus.csv");
  ASSERT_TRUE(fs::exists(expected)) << expected;
  const std::string got = to_focus_csv(*rated, scenario_parties(*in));
  const std::string want = testutil::slurp(expected);
  // Row by row, so a difference names its row.
  auto lines = [](const std::string& s) {
    std::vector<std::string> v;
    size_t a = 0;
    for (size_t b; (b = s.find('\n', a)) != std::string::npos; a = b + 1) v.push_back(s.substr(a, b - a));
    return v;
  };
  const auto g = lines(got), w = lines(want);
  for (size_t i = 0; i < std::max(g.size(), w.size()); ++i)
    EXPECT_EQ(i < g.size() ? g[i] : "(none)", i < w.size() ? w[i] : "(none)") << "row " << i;
  EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(Files, FocusScenario, ::testing::ValuesIn(testutil::yaml_files("tests/scenarios/focus")),
                         testutil::FileTestName());

}  // namespace
}  // namespace gpurent
