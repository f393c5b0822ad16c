// Helpers shared by the model's unit tests: a small catalog with known figures (independent of
// data/gpu_catalog.yaml), the "fails on exactly this field" assertion, and example loading.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <vector>
#include <sstream>
#include <string>

#include "catalog/gpu_catalog.h"
#include "core/message.h"
#include "core/result.h"
#include "core/yaml_json.h"

namespace gpurent::testing_util {

// Two models: sxm-test-80gb (alias SXM-TEST) and pcie-test-48gb.
inline const GpuCatalog& test_catalog() {
  static const GpuCatalog cat = GpuCatalog::parse(R"(
models:
  - id: sxm-test-80gb
    name: Test SXM 80GB
    vendor: nvidia
    form_factor: sxm
    memory_gib: 80
    memory_type: hbm3
    memory_bandwidth_gbps: 3350
    fp16_tflops: 989
    bf16_tflops: 989
    fp8_tflops: 1979
    nvlink_gbps: 900
    pcie_gen: 5
    tdp_watts: 700
    aliases: [SXM-TEST]
    sources: {default: test fixture}
  - id: pcie-test-48gb
    name: Test PCIe 48GB
    vendor: nvidia
    form_factor: pcie
    memory_gib: 48
    memory_type: gddr6
    memory_bandwidth_gbps: 864
    fp16_tflops: 362
    bf16_tflops: 362
    fp8_tflops: 733
    nvlink_gbps: 0
    pcie_gen: 4
    tdp_watts: 350
    sources: {default: test fixture}
  - id: old-test-16gb
    name: Test Old 16GB
    vendor: nvidia
    form_factor: sxm
    memory_gib: 16
    memory_type: hbm2
    memory_bandwidth_gbps: 900
    fp16_tflops: 125
    bf16_tflops: 0
    fp8_tflops: 0
    nvlink_gbps: 300
    pcie_gen: 3
    tdp_watts: 300
    sources: {default: test fixture}
)").value();
  return cat;
}

// The result must be a kInvalid error with exactly one field error, on `field`, whose reason
// contains `part`.
template <class T>
::testing::AssertionResult fails_only_on(const Result<T>& r, const std::string& field, const std::string& part) {
  if (r.ok()) return ::testing::AssertionFailure() << "parsed, expected an error on '" << field << "'";
  const auto& fields = r.error().fields;
  if (fields.size() != 1) {
    auto out = ::testing::AssertionFailure() << fields.size() << " errors, expected 1 on '" << field << "':";
    for (const auto& e : fields) out << " [" << e.field << ": " << e.reason << "]";
    return out;
  }
  if (fields[0].field != field || fields[0].reason.find(part) == std::string::npos)
    return ::testing::AssertionFailure() << "got [" << fields[0].field << ": " << fields[0].reason << "], expected ["
                                         << field << ": ..." << part << "...]";
  if (r.error().code != Code::kInvalid) return ::testing::AssertionFailure() << "code is not kInvalid";
  return ::testing::AssertionSuccess();
}

// The single field error of a failed result (a default FieldError, and a test failure, otherwise).
template <class T>
FieldError only_field_error(const Result<T>& r) {
  if (r.ok() || r.error().fields.size() != 1) {
    ADD_FAILURE() << (r.ok() ? std::string("parsed") : r.error().message) << ": expected exactly one field error";
    return {};
  }
  return r.error().fields[0];
}

// The code of the message given as argument `name` of m ("" when there is none).
inline std::string nested_code(const Message& m, const std::string& name) {
  for (const auto& a : m.args)
    if (a.name == name && !a.nested.empty()) return a.nested.front().code;
  return "";
}

// One table-driven negative case: a mutation of a valid body and the single field error it must cause.
struct BadCase {
  const char* what;
  std::function<void(nlohmann::json&)> mutate;
  const char* field;
  const char* reason;  // substring of the reason
};

// Applies each case to a fresh copy of `valid` and checks that `parse` fails on exactly that field.
template <class Parse>
void expect_each_case_fails(const nlohmann::json& valid, const std::vector<BadCase>& cases, Parse parse) {
  for (const auto& c : cases) {
    nlohmann::json body = valid;
    c.mutate(body);
    EXPECT_TRUE(fails_only_on(parse(body), c.field, c.reason)) << c.what;
  }
}

// examples/<name> from the source tree, YAML converted to JSON.
inline Result<nlohmann::json> load_example(const std::string& name) {
  std::ifstream in(std::string(GPURENT_SOURCE_DIR) + "/examples/" + name);
  if (!in) return Error::make(Code::kNotFound, "cannot open examples/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return yaml_to_json(ss.str());
}

}  // namespace gpurent::testing_util
