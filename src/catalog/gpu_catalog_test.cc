#include "catalog/gpu_catalog.h"

#include "catalog/scenario_files_test_util.h"

#include <gtest/gtest.h>

#include "core/message.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace gpurent {
namespace {

const std::string kDataFile = GPURENT_SOURCE_DIR "/data/gpu_catalog.yaml";
// Shared public data sets (not part of the repository); the test that reads them skips without.
const std::string kTraces = GPURENT_SOURCE_DIR "/../shared/data/traces";

const GpuCatalog& real_catalog() {
  static const GpuCatalog cat = [] {
    auto r = testutil::catalog_file(kDataFile);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? std::move(r).value() : GpuCatalog();
  }();
  return cat;
}

const GpuModel& must_find(std::string_view name) {
  const GpuModel* m = real_catalog().find(name);
  if (!m) throw std::runtime_error("not in catalog: " + std::string(name));
  return *m;
}

TEST(GpuCatalog, RealCatalogHoldsTheRequiredModels) {
  ASSERT_TRUE(testutil::catalog_file(kDataFile).ok()) << testutil::catalog_file(kDataFile).error().message;
  EXPECT_GE(real_catalog().models().size(), 13u);
  for (const char* id : {"a100-pcie-80gb", "a100-sxm4-80gb", "h100-pcie-80gb", "h100-sxm5-80gb", "h200-sxm-141gb",
                         "b200-sxm-192gb", "l40s-48gb", "ascend-910b-64gb", "t4-16gb", "p100-pcie-16gb",
                         "v100-sxm2-16gb", "v100-sxm2-32gb", "a10-24gb"}) {
    const GpuModel* m = real_catalog().find(id);
    ASSERT_NE(m, nullptr) << id;
    EXPECT_EQ(m->id, id);
  }
}

TEST(GpuCatalog, HandCheckedFigures) {
  const GpuModel& h100 = must_find("h100-sxm5-80gb");
  EXPECT_EQ(h100.name, "NVIDIA H100 SXM5 80GB");
  EXPECT_EQ(h100.form_factor, FormFactor::kSxm);
  EXPECT_EQ(h100.memory_type, MemoryType::kHbm3);
  EXPECT_EQ(h100.memory_gib, 80);
  EXPECT_EQ(h100.memory_bandwidth_gbps, 3350);  // 3.35 TB/s
  EXPECT_EQ(h100.fp16_tflops_x10, 9890);
  EXPECT_EQ(h100.bf16_tflops_x10, 9890);
  EXPECT_EQ(h100.fp8_tflops_x10, 19790);
  EXPECT_EQ(h100.nvlink_gbps, 900);
  EXPECT_EQ(h100.pcie_gen, 5);
  EXPECT_EQ(h100.tdp_watts, 700);

  const GpuModel& a100 = must_find("a100-pcie-80gb");
  EXPECT_EQ(a100.memory_bandwidth_gbps, 1935);
  EXPECT_EQ(a100.fp16_tflops_x10, 3120);
  EXPECT_EQ(a100.fp8_tflops_x10, 0);
  EXPECT_EQ(must_find("a100-sxm4-80gb").memory_bandwidth_gbps, 2039);

  const GpuModel& h200 = must_find("h200-sxm-141gb");
  EXPECT_EQ(h200.memory_gib, 141);
  EXPECT_EQ(h200.memory_bandwidth_gbps, 4800);
  EXPECT_EQ(h200.memory_type, MemoryType::kHbm3e);

  const GpuModel& b200 = must_find("b200-sxm-192gb");
  EXPECT_EQ(b200.memory_bandwidth_gbps, 8000);
  EXPECT_EQ(b200.fp16_tflops_x10, 22500);
  EXPECT_EQ(b200.nvlink_gbps, 1800);
  EXPECT_EQ(b200.tdp_watts, 1000);

  const GpuModel& l40s = must_find("l40s-48gb");
  EXPECT_EQ(l40s.memory_type, MemoryType::kGddr6);
  EXPECT_EQ(l40s.nvlink_gbps, 0);
  EXPECT_EQ(l40s.fp8_tflops_x10, 7330);

  const GpuModel& p100 = must_find("p100-pcie-16gb");
  EXPECT_EQ(p100.fp16_tflops_x10, 187);
  EXPECT_EQ(p100.bf16_tflops_x10, 0);  // Pascal: no BF16
  EXPECT_EQ(must_find("t4-16gb").bf16_tflops_x10, 0);
  EXPECT_EQ(must_find("v100-sxm2-32gb").memory_gib, 32);
  EXPECT_EQ(must_find("a10-24gb").bf16_tflops_x10, 1250);

  const GpuModel& ascend = must_find("ascend-910b-64gb");
  EXPECT_EQ(ascend.vendor, Vendor::kHuawei);
  EXPECT_FALSE(ascend.verified);
  EXPECT_FALSE(ascend.memory_bandwidth_gbps.has_value());  // not published
  EXPECT_NE(ascend.sources.at("memory_bandwidth_gbps").find("not published"), std::string::npos);
  EXPECT_EQ(ascend.fp16_tflops_x10, 3200);
  for (const auto& m : real_catalog().models())
    EXPECT_EQ(m.verified, m.id != "ascend-910b-64gb") << m.id;
}

TEST(GpuCatalog, EveryFigureHasASource) {
  for (const auto& m : real_catalog().models())
    for (const auto& figure : gpu_figure_names()) EXPECT_FALSE(m.source_of(figure).empty()) << m.id << " " << figure;
  EXPECT_NE(to_json(must_find("H100-SXM"))["sources"]["default"].get<std::string>().find("PB-11133-001"),
            std::string::npos);
}

TEST(GpuCatalog, TraceAndPriceListSpellingsResolve) {
  const std::vector<std::pair<std::string, std::string>> kSpellings = {
      // Alibaba cluster-trace-gpu-v2023 (node "model", pod "gpu_spec") and PAI 2020 (gpu_type)
      {"A10", "a10-24gb"},
      {"P100", "p100-pcie-16gb"},
      {"T4", "t4-16gb"},
      {"V100M16", "v100-sxm2-16gb"},
      {"V100M32", "v100-sxm2-32gb"},
      {"V100", "v100-sxm2-16gb"},
      // SkyPilot price lists (accelerators, Lambda, RunPod)
      {"A100", "a100-sxm4-40gb"},
      {"A100-80GB", "a100-pcie-80gb"},
      {"A100-80GB-SXM", "a100-sxm4-80gb"},
      {"H100", "h100-pcie-80gb"},
      {"H100-SXM", "h100-sxm5-80gb"},
      {"H100-MEGA", "h100-sxm5-80gb"},
      {"H200", "h200-sxm-141gb"},
      {"H200-SXM", "h200-sxm-141gb"},
      {"B200", "b200-sxm-192gb"},
      {"L40S", "l40s-48gb"},
      {"V100-32GB", "v100-sxm2-32gb"},
      // nvidia-smi names, for the node agent
      {"NVIDIA H100 80GB HBM3", "h100-sxm5-80gb"},
      {"NVIDIA A100-SXM4-80GB", "a100-sxm4-80gb"},
      {"Tesla V100-SXM2-32GB", "v100-sxm2-32gb"},
      {"Tesla T4", "t4-16gb"},
  };
  for (const auto& [spelling, id] : kSpellings) {
    const GpuModel* m = real_catalog().find(spelling);
    ASSERT_NE(m, nullptr) << spelling;
    EXPECT_EQ(m->id, id) << spelling;
  }
}

TEST(GpuCatalog, LookupIgnoresCaseOfIdsAndAliases) {
  EXPECT_EQ(real_catalog().find("h100-sxm")->id, "h100-sxm5-80gb");
  EXPECT_EQ(real_catalog().find("v100m32")->id, "v100-sxm2-32gb");
  EXPECT_EQ(real_catalog().find("H100-SXM5-80GB")->id, "h100-sxm5-80gb");
  EXPECT_EQ(real_catalog().find("TESLA t4")->id, "t4-16gb");
  EXPECT_EQ(real_catalog().find("H100 "), nullptr);  // no trimming or fuzzy matching
  EXPECT_EQ(real_catalog().find(""), nullptr);
}

TEST(GpuCatalog, UndisclosedAndUncataloguedNamesDoNotResolve) {
  for (const char* name : {"G1", "G2", "G3", "MISC", "CPU", "A10G", "H100-NVL", "L4", "MI300X"})
    EXPECT_EQ(real_catalog().find(name), nullptr) << name;
}

// Every GPU model spelling in the shared Alibaba traces is either catalogued or one of the
// undisclosed names the data file documents as unmapped.
TEST(GpuCatalog, EveryTraceSpellingIsMappedOrKnownUndisclosed) {
  if (!std::filesystem::exists(kTraces)) GTEST_SKIP() << "shared traces not present at " << kTraces;
  const std::set<std::string> kUndisclosed = {"G1", "G2", "G3", "MISC", "CPU"};
  std::set<std::string> names;
  auto column = [](const std::string& line, size_t col) {
    std::stringstream ss(line);
    std::string cell;
    for (size_t i = 0; i <= col && std::getline(ss, cell, ','); ++i) {
    }
    return cell;
  };
  auto scan = [&](const std::string& path, size_t col, bool header) {
    std::ifstream in(path);
    ASSERT_TRUE(in) << path;
    std::string line;
    if (header) std::getline(in, line);
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      std::stringstream spec(column(line, col));
      for (std::string name; std::getline(spec, name, '|');)
        if (!name.empty()) names.insert(name);
    }
  };
  const std::string v2023 = kTraces + "/alibaba-gpu-v2023";
  scan(v2023 + "/openb_node_list_gpu_node.csv", 4, true);
  scan(v2023 + "/openb_node_list_all_node.csv", 4, true);
  for (const auto& f : std::filesystem::directory_iterator(v2023)) {
    const std::string name = f.path().filename().string();
    if (name.starts_with("openb_pod_list_") && name != "openb_pod_list_multigpu20.csv")  // no gpu_spec there
      scan(f.path().string(), 5, true);
  }
  scan(kTraces + "/alibaba-pai-2020/pai_machine_spec.csv", 1, false);
  EXPECT_GE(names.size(), 8u);  // the scan did read the files
  for (const auto& name : names)
    EXPECT_TRUE(real_catalog().find(name) != nullptr || kUndisclosed.count(name)) << "unmapped spelling: " << name;
}

TEST(GpuCatalog, DuplicateAliasIsNamed) {
  json doc = {{"models", json::array()}};
  for (const auto& m : real_catalog().models()) doc["models"].push_back(to_json(m));
  ASSERT_TRUE(GpuCatalog::parse(doc.dump()).ok());  // the real catalog round-trips through JSON

  json& last = doc["models"].back();
  const size_t n = doc["models"].size() - 1;
  const size_t k = last["aliases"].size();
  last["aliases"].push_back("v100m32");         // an alias of v100-sxm2-32gb, in another case
  last["aliases"].push_back("H100-sxm5-80GB");  // another entry's id
  auto bad = GpuCatalog::parse(doc.dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, Code::kInvalid);
  std::map<std::string, std::string> errs;
  for (const auto& f : bad.error().fields) errs[f.field] = f.reason;
  ASSERT_EQ(errs.size(), 2u) << bad.error().message;
  const std::string at = "models[" + std::to_string(n) + "].aliases[";
  const GpuModel& v100 = must_find("V100M32");
  const size_t v100_pos = &v100 - real_catalog().models().data();
  EXPECT_EQ(errs[at + std::to_string(k) + "]"],
            "'v100m32' is already used by models[" + std::to_string(v100_pos) +
                "].aliases[0] (v100-sxm2-32gb); ids and aliases must be unique, ignoring case");
  EXPECT_NE(errs[at + std::to_string(k + 1) + "]"].find("is already used by models[4].id (h100-sxm5-80gb)"),
            std::string::npos);
}

TEST(GpuCatalog, DuplicateIdIsNamed) {
  const std::string yaml = R"(
models:
  - {id: x-1, name: X, vendor: nvidia, form_factor: pcie, memory_gib: 8, memory_type: gddr6,
     memory_bandwidth_gbps: 100, fp16_tflops: 10, bf16_tflops: 10, fp8_tflops: 0, nvlink_gbps: 0,
     pcie_gen: 4, tdp_watts: 75, sources: {default: test}}
  - {id: X-1, name: X again, vendor: nvidia, form_factor: pcie, memory_gib: 8, memory_type: gddr6,
     memory_bandwidth_gbps: -100, fp16_tflops: 10, bf16_tflops: 10, fp8_tflops: 0, nvlink_gbps: 0,
     pcie_gen: 4, tdp_watts: 75, sources: {default: test}}
)";
  auto r = GpuCatalog::parse(yaml);
  ASSERT_FALSE(r.ok());
  std::multimap<std::string, std::string> errs;
  for (const auto& f : r.error().fields) errs.emplace(f.field, f.reason);
  ASSERT_EQ(errs.size(), 3u) << r.error().message;
  EXPECT_EQ(errs.find("models[1].memory_bandwidth_gbps")->second, "must be at least 1 (got -100)");
  // The id breaks the slug rule and, ignoring case, repeats models[0]'s: both are reported.
  std::vector<std::string> id_reasons;
  for (auto [it, end] = errs.equal_range("models[1].id"); it != end; ++it) id_reasons.push_back(it->second);
  ASSERT_EQ(id_reasons.size(), 2u);
  EXPECT_NE(id_reasons[0].find("lowercase"), std::string::npos) << id_reasons[0];
  EXPECT_EQ(id_reasons[1], "'X-1' is already used by models[0].id (x-1); ids and aliases must be unique, ignoring case");

  const FieldError& taken = r.error().fields.back();
  ASSERT_EQ(taken.field, "models[1].id");
  EXPECT_EQ(taken.coded.code, "gpu_model.catalog.name_taken_by_id");
  EXPECT_EQ(taken.coded.text_of("id"), "x-1");
  EXPECT_EQ(render(taken.coded, "zh"), "“X-1”已被 models[0].id（x-1）使用；ID 和别名必须唯一（不区分大小写）");
}

TEST(GpuCatalog, DocumentShapeErrors) {
  auto fields_of = [](const std::string& text) {
    auto r = GpuCatalog::parse(text);
    EXPECT_FALSE(r.ok()) << text;
    std::map<std::string, std::string> out;
    if (!r.ok()) {
      for (const auto& f : r.error().fields) out[f.field] = f.reason;
    }
    return out;
  };
  EXPECT_EQ(fields_of("gpus: []\n")["models"], "is required");
  EXPECT_EQ(fields_of("gpus: []\n")["gpus"], "unknown field");
  EXPECT_EQ(fields_of("models: []\n")["models"], "must list at least one model");
  auto empty = GpuCatalog::parse("models: []\n");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().detail.code, "error.field");
  EXPECT_EQ(render(empty.error().detail, "zh"), "models：至少要列出一个型号");
  EXPECT_EQ(fields_of("models: [1]\n")["models[0]"], "must be a JSON object");
  EXPECT_EQ(fields_of("- a\n")[""], "must be a JSON object");
  auto malformed = GpuCatalog::parse("models: [\n");
  ASSERT_FALSE(malformed.ok());
  EXPECT_NE(malformed.error().message.find("line"), std::string::npos);
}

TEST(GpuCatalog, EmptyCatalogFindsNothing) {
  GpuCatalog empty;
  EXPECT_TRUE(empty.models().empty());
  EXPECT_EQ(empty.find("H100"), nullptr);
}

}  // namespace
}  // namespace gpurent
