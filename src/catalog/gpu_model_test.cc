#include "catalog/gpu_model.h"

#include <gtest/gtest.h>

#include <map>

#include "catalog/gpu_catalog.h"
#include "core/message.h"

namespace gpurent {
namespace {

// A complete, valid entry; tests break one thing at a time.
json entry(const std::string& id, std::vector<std::string> aliases = {}) {
  return {{"id", id},
          {"name", "Test GPU " + id},
          {"vendor", "nvidia"},
          {"form_factor", "pcie"},
          {"memory_gib", 16},
          {"memory_type", "gddr6"},
          {"memory_bandwidth_gbps", 320},
          {"fp16_tflops", 65},
          {"bf16_tflops", 0},
          {"fp8_tflops", 0},
          {"nvlink_gbps", 0},
          {"pcie_gen", 3},
          {"tdp_watts", 70},
          {"aliases", aliases},
          {"sources", {{"default", "test datasheet"}}}};
}

json doc_of(std::vector<json> models) { return {{"models", models}}; }

// field path -> reason, for a catalog that must fail to load.
std::map<std::string, std::string> errors_of(const json& doc) {
  auto r = GpuCatalog::parse(doc.dump());
  EXPECT_FALSE(r.ok()) << doc.dump();
  std::map<std::string, std::string> out;
  if (r.ok()) return out;
  EXPECT_EQ(r.error().code, Code::kInvalid);
  for (const auto& f : r.error().fields) out[f.field] = f.reason;
  return out;
}

TEST(GpuModel, ValidEntryLoads) {
  auto r = GpuCatalog::parse(doc_of({entry("t-16gb", {"T"})}).dump());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const GpuModel& m = r->models().at(0);
  EXPECT_EQ(m.fp16_tflops_x10, 650);
  EXPECT_EQ(m.bf16_tflops_x10, 0);
  EXPECT_EQ(m.memory_type, MemoryType::kGddr6);
  EXPECT_TRUE(m.verified);
  EXPECT_EQ(m.source_of("pcie_gen"), "test datasheet");
}

TEST(GpuModel, MissingFieldIsNamed) {
  json e = entry("t-16gb");
  e.erase("memory_gib");
  auto errs = errors_of(doc_of({entry("ok-1"), e}));
  EXPECT_EQ(errs["models[1].memory_gib"], "is required");
  EXPECT_EQ(errs.size(), 1u);
}

TEST(GpuModel, NegativeBandwidthIsNamed) {
  json e = entry("t-16gb");
  e["memory_bandwidth_gbps"] = -5;
  auto errs = errors_of(doc_of({entry("a"), entry("b"), entry("c"), e}));
  EXPECT_EQ(errs["models[3].memory_bandwidth_gbps"], "must be at least 1 (got -5)");
  EXPECT_EQ(errs.size(), 1u);
}

TEST(GpuModel, UnknownFormFactorIsNamed) {
  json e = entry("t-16gb");
  e["form_factor"] = "nvl";
  auto errs = errors_of(doc_of({e}));
  EXPECT_NE(errs["models[0].form_factor"].find("unknown value 'nvl' (expected one of: pcie, sxm, oam)"),
            std::string::npos);
}

TEST(GpuModel, ReportsEveryProblemOfAnEntryAtOnce) {
  json e = entry("Bad Id");
  e["memory_type"] = "hbm4";
  e["pcie_gen"] = 0;
  e["tdp_watt"] = 70;  // typo
  e["aliases"] = {"ok", "", 7, " padded"};
  auto errs = errors_of(doc_of({e}));
  EXPECT_NE(errs["models[0].id"].find("lowercase"), std::string::npos);
  EXPECT_NE(errs["models[0].memory_type"].find("expected one of: hbm2, hbm2e, hbm3, hbm3e, gddr6"), std::string::npos);
  EXPECT_EQ(errs["models[0].pcie_gen"], "must be at least 1 (got 0)");
  EXPECT_EQ(errs["models[0].tdp_watt"], "unknown field");
  EXPECT_EQ(errs["models[0].aliases[1]"], "must have 1 to 64 characters");
  EXPECT_EQ(errs["models[0].aliases[2]"], "must be a string");
  EXPECT_EQ(errs["models[0].aliases[3]"], "must not start or end with a space");
  EXPECT_EQ(errs.size(), 7u);
}

TEST(GpuModel, TflopsAreIntegersOrOneDecimalStrings) {
  for (const auto& [value, reason_part] : std::vector<std::pair<json, std::string>>{
           {"18.75", "at most one decimal"},
           {-1, "must not be negative"},
           {18.7, "floating-point numbers are not accepted"},
           {"abc", "'abc' is not valid"},
           {"-3", "'-3' is not valid"},
           {"1.", "'1.' is not valid"},
           {".5", "'.5' is not valid"},
           {"99999999", "must be at most 1000000"},
           {true, "must be an integer or a decimal string"}}) {
    json e = entry("t-16gb");
    e["fp16_tflops"] = value;
    auto errs = errors_of(doc_of({e}));
    EXPECT_NE(errs["models[0].fp16_tflops"].find(reason_part), std::string::npos)
        << value.dump() << " -> " << errs["models[0].fp16_tflops"];
  }
  EXPECT_EQ(parse_tflops_x10(json("18.7")).value(), 187);
  EXPECT_EQ(parse_tflops_x10(json("312")).value(), 3120);
  EXPECT_EQ(parse_tflops_x10(json(312)).value(), 3120);
  EXPECT_EQ(parse_tflops_x10(json(0)).value(), 0);
  EXPECT_EQ(parse_tflops_x10(json::parse("1000000")).value(), 10'000'000);  // unsigned in JSON
  EXPECT_EQ(format_tflops_x10(187), "18.7");
  EXPECT_EQ(format_tflops_x10(3120), "312");
  EXPECT_EQ(format_tflops_x10(5), "0.5");

  // The reasons are codes; the TFLOPS format's help is a code of its own, nested.
  const Error floating = parse_tflops_x10(json(18.7)).error();
  EXPECT_EQ(floating.detail.code, "gpu_model.tflops.float");
  ASSERT_EQ(floating.detail.args.size(), 1u);
  ASSERT_EQ(floating.detail.args[0].nested.size(), 1u);
  EXPECT_EQ(floating.detail.args[0].nested[0].code, "pattern.tflops");
  EXPECT_EQ(floating.message,
            "must be an integer or a decimal string with at most one decimal, such as 312 or \"18.7\": "
            "floating-point numbers are not accepted");
  EXPECT_EQ(render(floating.detail, "zh"), "必须是整数或最多一位小数的十进制字符串，如 312 或 \"18.7\"：不接受浮点数");
  EXPECT_EQ(parse_tflops_x10(json(-1)).error().detail.code, "field.not_negative");

  json e = entry("t-16gb");
  e["fp16_tflops"] = "abc";
  auto r = GpuCatalog::parse(doc_of({e}).dump());
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.error().fields.size(), 1u);
  EXPECT_EQ(r.error().fields[0].coded.code, "gpu_model.tflops.invalid");
  EXPECT_EQ(render(r.error().detail, "zh"),
            "models[0].fp16_tflops：“abc”无效：必须是整数或最多一位小数的十进制字符串，如 312 或 \"18.7\"");
}

TEST(GpuModel, AbsentFigureNeedsANoteInSources) {
  json e = entry("t-16gb");
  e.erase("memory_bandwidth_gbps");
  auto errs = errors_of(doc_of({e}));
  EXPECT_NE(errs["models[0].memory_bandwidth_gbps"].find("say so in sources.memory_bandwidth_gbps"), std::string::npos);

  e["sources"]["memory_bandwidth_gbps"] = "not published";
  auto r = GpuCatalog::parse(doc_of({e}).dump());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->models()[0].memory_bandwidth_gbps.has_value());
}

TEST(GpuModel, EveryPresentFigureNeedsASource) {
  json e = entry("t-16gb");
  e["sources"] = {{"memory_gib", "datasheet"}, {"memory_type", "datasheet"}};
  auto errs = errors_of(doc_of({e}));
  EXPECT_EQ(errs["models[0].sources"],
            "gives no source for form_factor, memory_bandwidth_gbps, fp16_tflops, bf16_tflops, fp8_tflops, "
            "nvlink_gbps, pcie_gen, tdp_watts (add sources.<figure> or sources.default)");

  e.erase("sources");
  EXPECT_EQ(errors_of(doc_of({e}))["models[0].sources"], "is required (where each figure comes from)");
  auto r = GpuCatalog::parse(doc_of({e}).dump());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).coded.code, "gpu_model.sources.required");
  EXPECT_EQ(render(r.error().fields.at(0).coded, "zh"), "为必填项（说明每个数值的来源）");
}

TEST(GpuModel, SourcesKeysMustBeFigures) {
  json e = entry("t-16gb");
  e["sources"]["bandwith"] = "typo";
  e["sources"]["pcie_gen"] = "";
  auto errs = errors_of(doc_of({e}));
  EXPECT_NE(errs["models[0].sources.bandwith"].find("unknown figure (expected one of: default, form_factor"),
            std::string::npos);
  EXPECT_EQ(errs["models[0].sources.pcie_gen"], "must be a non-empty string");
  EXPECT_EQ(errs.size(), 2u);
}

TEST(GpuModel, ToJsonRoundTrips) {
  json e = entry("t-16gb", {"T", "Tesla T"});
  e["fp16_tflops"] = "18.7";
  e["verified"] = false;
  e.erase("pcie_gen");
  e["sources"]["pcie_gen"] = "not published";
  auto r = GpuCatalog::parse(doc_of({e}).dump());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const GpuModel& m = r->models()[0];
  json j = to_json(m);
  EXPECT_EQ(j["fp16_tflops"], "18.7");
  EXPECT_EQ(j["bf16_tflops"], "0");
  EXPECT_FALSE(j.contains("pcie_gen"));
  EXPECT_EQ(j["sources"]["pcie_gen"], "not published");
  EXPECT_EQ(j["verified"], false);

  FieldErrors errs;
  Fields f(j, "", errs);
  GpuModel back = read_gpu_model(f);
  f.finish();
  EXPECT_TRUE(errs.empty()) << errs.to_error().message;
  EXPECT_EQ(back, m);
}

}  // namespace
}  // namespace gpurent
