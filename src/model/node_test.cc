#include "model/node.h"

#include <gtest/gtest.h>

#include "catalog/scenario_files_test_util.h"
#include "model/model_test_util.h"

#include <fstream>
#include <functional>
#include <sstream>

#include "catalog/gpu_catalog.h"
#include "core/yaml_json.h"

namespace gpurent {
namespace {

using testing_util::fails_only_on;
using testing_util::load_example;
using testing_util::test_catalog;
using testing_util::BadCase;
using testing_util::expect_each_case_fails;

json gpu(int index, int numa, const char* domain = "nvs0") {
  json g = {{"index", index}, {"numa_node", numa}, {"pcie_gen", 5}};
  if (domain) g["nvlink_domain"] = domain;
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "GPU-5d0b3f4e-1c2a-4b7e-9f00-0000000000%02d", index);
  g["uuid"] = uuid;
  return g;
}

json valid_node() {
  json gpus = json::array();
  for (int i = 0; i < 8; ++i) gpus.push_back(gpu(i, i / 4));
  json nics = json::array();
  for (int i = 0; i < 8; ++i)
    nics.push_back({{"name", "mlx5_" + std::to_string(i)}, {"rdma", "infiniband"}, {"gbps", 400}, {"fabric", "ib-east"}});
  nics.push_back({{"name", "eth0"}, {"rdma", "none"}, {"gbps", 100}});
  return {{"name", "sh1-h100-001"},
          {"supplier", "huadong-compute"},
          {"site", "sh-pudong-1"},
          {"region", "cn-east"},
          {"gpu_model", "sxm-test-80gb"},
          {"gpus", gpus},
          {"cpu", {{"model", "Intel Xeon Platinum 8480+"}, {"cores", 112}, {"sockets", 2}}},
          {"memory_gib", 2048},
          {"numa_nodes", 2},
          {"nics", nics},
          {"software", {{"driver", "550.54.15"}, {"cuda", "12.4"}, {"cudnn", "9.1.0"}, {"nccl", "2.21.5-1+cuda12.4"}}},
          {"images", {{{"name", "nvcr.io/nvidia/pytorch:24.03-py3"}, {"cve_patched_at", "2026-01-15T00:00:00Z"}}}},
          {"state", "available"}};
}

std::map<std::string, std::string> errors_of(const json& body) {
  auto r = parse_node(body, test_catalog());
  std::map<std::string, std::string> out;
  if (r.ok()) return out;
  EXPECT_EQ(r.error().code, Code::kInvalid);
  for (const auto& e : r.error().fields) out[e.field] = e.reason;
  return out;
}

TEST(Node, ValidExampleParses) {
  auto r = parse_node(valid_node(), test_catalog());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Node& n = *r;
  EXPECT_EQ(n.gpus.size(), 8u);
  EXPECT_EQ(n.gpus[5].numa_node, 1);
  EXPECT_EQ(n.gpus[5].nvlink_domain, "nvs0");
  EXPECT_EQ(n.nics.size(), 9u);
  EXPECT_EQ(n.nics[0].rdma, RdmaType::kInfiniband);
  EXPECT_EQ(n.nics[0].fabric, "ib-east");
  EXPECT_EQ(n.nics[8].fabric, "");
  EXPECT_EQ(n.software.nccl, "2.21.5-1+cuda12.4");
  EXPECT_EQ(n.images[0].cve_patched_at, parse_rfc3339("2026-01-15T00:00:00Z", "t").value());
  EXPECT_EQ(n.state, NodeState::kAvailable);
  EXPECT_TRUE(n.supplier_id.empty());
}

TEST(Node, RoundTrips) {
  Node n = parse_node(valid_node(), test_catalog()).value();
  json doc = to_json(n);
  EXPECT_FALSE(doc.contains("supplier_id"));
  auto again = parse_node(doc, test_catalog());
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, n);
  EXPECT_EQ(to_json(*again), doc);
}

TEST(Node, ServerFilledSupplierIdIsStoredButNeverReadFromABody) {
  Node n = parse_node(valid_node(), test_catalog()).value();
  n.supplier_id = "sup_0123456789abcdef";
  json doc = to_json(n);
  EXPECT_EQ(doc["supplier_id"], "sup_0123456789abcdef");
  IndexCols ix = index_of(n);
  EXPECT_EQ(ix.name, "sh1-h100-001");
  EXPECT_EQ(ix.supplier_id, "sup_0123456789abcdef");
  EXPECT_EQ(ix.region, "cn-east");
  EXPECT_EQ(ix.gpu_model, "sxm-test-80gb");
  EXPECT_EQ(ix.state, "available");
  doc["supplier_id"] = "sup_ffffffffffffffff";  // a client cannot redirect the node this way
  doc["id"] = "nod_0123456789abcdef";
  doc["version"] = 2;
  Node back = parse_node(doc, test_catalog()).value();
  EXPECT_TRUE(back.supplier_id.empty());
  EXPECT_EQ(back.supplier, "huadong-compute");
}

TEST(Node, ResolvesAnAliasToTheCatalogId) {
  json body = valid_node();
  body["gpu_model"] = "sxm-test";  // alias, case-insensitive
  EXPECT_EQ(parse_node(body, test_catalog()).value().gpu_model, "sxm-test-80gb");
}

TEST(Node, SortsGpusByIndexAndDefaultsState) {
  json body = valid_node();
  std::swap(body["gpus"][0], body["gpus"][7]);
  body.erase("state");
  Node n = parse_node(body, test_catalog()).value();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(n.gpus[i].index, i);
  EXPECT_EQ(n.state, NodeState::kAvailable);
}

TEST(Node, PcieCardsMayLackAnNvlinkDomain) {
  json body = valid_node();
  body["gpu_model"] = "pcie-test-48gb";
  body["gpus"] = {gpu(0, 0, nullptr), gpu(1, 0, "bridge-a"), gpu(2, 1, "bridge-a"), gpu(3, 1, nullptr)};
  for (auto& g : body["gpus"]) g["pcie_gen"] = 4;
  auto r = parse_node(body, test_catalog());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->gpus[0].nvlink_domain.has_value());
  EXPECT_EQ(to_json(*r)["gpus"][0].contains("nvlink_domain"), false);
}

TEST(Node, RejectsEachBadFieldWithItsPath) {
  const std::vector<BadCase> cases = {
      {"missing gpu model", [](json& b) { b.erase("gpu_model"); }, "gpu_model", "is required"},
      {"unknown gpu model", [](json& b) { b["gpu_model"] = "h999"; }, "gpu_model", "unknown GPU model 'h999'"},
      {"bad supplier ref", [](json& b) { b["supplier"] = "Huadong!"; }, "supplier", "an id such as sup_"},
      {"name not a slug", [](json& b) { b["name"] = "-node"; }, "name", "lowercase letters"},
      {"no gpus", [](json& b) { b["gpus"] = json::array(); }, "gpus", "must list at least one GPU"},
      {"too many gpus",
       [](json& b) {
         for (int i = 8; i < 17; ++i) b["gpus"].push_back(gpu(i, 0));
       },
       "gpus", "at most 16 items (got 17)"},
      {"duplicate index", [](json& b) { b["gpus"][3]["index"] = 2; }, "gpus[3].index",
       "duplicate index 2 (also gpus[2])"},
      {"gap in indices", [](json& b) { b["gpus"][7]["index"] = 8; }, "gpus[7].index",
       "must be less than the number of GPUs (8)"},
      {"negative index", [](json& b) { b["gpus"][0]["index"] = -1; }, "gpus[0].index", "at least 0"},
      {"numa node beyond numa_nodes", [](json& b) { b["gpus"][5]["numa_node"] = 2; }, "gpus[5].numa_node",
       "must be less than numa_nodes (2)"},
      {"sxm gpu without nvlink domain", [](json& b) { b["gpus"][4].erase("nvlink_domain"); },
       "gpus[4].nvlink_domain", "is required: sxm-test-80gb is an sxm module"},
      {"pcie gen absurd", [](json& b) { b["gpus"][0]["pcie_gen"] = 7; }, "gpus[0].pcie_gen",
       "must be at most 6 (got 7)"},
      {"pcie gen above the card's",
       [](json& b) {
         b["gpu_model"] = "pcie-test-48gb";
         for (auto& g : b["gpus"]) g["pcie_gen"] = 4;
         b["gpus"][6]["pcie_gen"] = 5;
       },
       "gpus[6].pcie_gen", "must not exceed the PCIe generation of pcie-test-48gb (4)"},
      {"malformed uuid", [](json& b) { b["gpus"][1]["uuid"] = "5d0b3f4e"; }, "gpus[1].uuid", "GPU UUID"},
      {"duplicate uuid", [](json& b) { b["gpus"][1]["uuid"] = b["gpus"][0]["uuid"]; }, "gpus[1].uuid",
       "duplicate uuid (also gpus[0])"},
      {"gpu not an object", [](json& b) { b["gpus"][2] = 2; }, "gpus[2]", "must be a JSON object"},
      {"memory as text", [](json& b) { b["memory_gib"] = "2048"; }, "memory_gib", "must be an integer"},
      {"negative memory", [](json& b) { b["memory_gib"] = -1; }, "memory_gib", "at least 1"},
      {"absurd memory", [](json& b) { b["memory_gib"] = 100000; }, "memory_gib", "at most 65536"},
      {"absurd cores", [](json& b) { b["cpu"]["cores"] = 5000; }, "cpu.cores", "at most 1024"},
      {"fewer cores than sockets", [](json& b) { b["cpu"]["cores"] = 1; }, "cpu.cores",
       "must be at least cpu.sockets (2)"},
      {"fewer numa nodes than sockets",
       [](json& b) {
         b["numa_nodes"] = 1;
         for (auto& g : b["gpus"]) g["numa_node"] = 0;
       },
       "numa_nodes", "every socket is at least one NUMA node"},
      {"unknown rdma", [](json& b) { b["nics"][0]["rdma"] = "omnipath"; }, "nics[0].rdma",
       "unknown value 'omnipath' (expected one of: infiniband, roce_v2, none)"},
      {"absurd nic speed", [](json& b) { b["nics"][1]["gbps"] = 5000; }, "nics[1].gbps", "at most 3200"},
      {"duplicate nic", [](json& b) { b["nics"][1]["name"] = "mlx5_0"; }, "nics[1].name", "duplicate NIC name"},
      {"bad fabric", [](json& b) { b["nics"][2]["fabric"] = "East Wing"; }, "nics[2].fabric", "lowercase letters, digits and '-'"},
      {"missing cuda", [](json& b) { b["software"].erase("cuda"); }, "software.cuda", "is required"},
      {"bad driver version", [](json& b) { b["software"]["driver"] = "latest"; }, "software.driver",
       "a version such as"},
      {"bad cve date", [](json& b) { b["images"][0]["cve_patched_at"] = "last week"; }, "images[0].cve_patched_at",
       "'last week' is not an RFC 3339 time"},
      {"unknown state", [](json& b) { b["state"] = "broken"; }, "state", "unknown value 'broken'"},
      {"unknown field", [](json& b) { b["gpu_count"] = 8; }, "gpu_count", "unknown field"},
      {"unknown gpu field", [](json& b) { b["gpus"][0]["memory_gib"] = 80; }, "gpus[0].memory_gib",
       "unknown field"},
  };
  expect_each_case_fails(valid_node(), cases, [](const json& b) { return parse_node(b, test_catalog()); });
}

TEST(Node, ReasonsAreMessageCodesThatRenderInEveryLanguage) {
  json body = valid_node();
  body["numa_nodes"] = 1;
  for (auto& g : body["gpus"]) g["numa_node"] = 0;
  auto r = parse_node(body, test_catalog());
  FieldError e = testing_util::only_field_error(r);
  EXPECT_EQ(e.coded.code, "node.numa_nodes.below_sockets");
  EXPECT_EQ(e.coded.text_of("sockets"), "2");
  EXPECT_EQ(render_en(e.coded), e.reason);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(render_en(r.error().detail), r.error().message);
  EXPECT_EQ(render(r.error().detail, "zh"), "numa_nodes：不能小于 cpu.sockets（2）：每个插槽至少是一个 NUMA 节点");

  body = valid_node();
  body["gpus"][4].erase("nvlink_domain");
  e = testing_util::only_field_error(parse_node(body, test_catalog()));
  EXPECT_EQ(e.coded.code, "node.gpu.nvlink_domain_required");
  EXPECT_EQ(render(e.coded, "zh"), "为必填项：sxm-test-80gb 是 sxm 模组，每张 GPU 都位于一个 NVLink（或同类互连）域中");

  // A pattern's help is a code of its own, nested in the shared "field.pattern" reason.
  body = valid_node();
  body["gpus"][1]["uuid"] = "5d0b3f4e";
  e = testing_util::only_field_error(parse_node(body, test_catalog()));
  EXPECT_EQ(e.coded.code, "field.pattern");
  EXPECT_EQ(testing_util::nested_code(e.coded, "help"), "pattern.gpu_uuid");
  EXPECT_NE(render(e.coded, "zh").find("nvidia-smi -L 输出的 NVIDIA GPU UUID"), std::string::npos) << render(e.coded, "zh");

  body = valid_node();
  body["region"] = "East";
  e = testing_util::only_field_error(parse_node(body, test_catalog()));
  EXPECT_EQ(testing_util::nested_code(e.coded, "help"), "pattern.region");
  EXPECT_EQ(e.reason, "'East' is not valid: a region such as cn-east or us-west-2 (two lowercase letters, then '-' parts)");

  body = valid_node();
  body["gpu_model"] = "h999";
  e = testing_util::only_field_error(parse_node(body, test_catalog()));
  EXPECT_EQ(e.coded.code, "gpu_model.unknown");
  EXPECT_EQ(render(e.coded, "zh"), "未知的 GPU 型号“h999”（不在 GPU 目录中；请查看 GET /api/v1/gpu-models）");
}

TEST(Node, ReportsAllErrorsAtOnce) {
  json body = valid_node();
  body["gpus"][0]["pcie_gen"] = 2;
  body["gpus"][1].erase("nvlink_domain");
  body["nics"][0]["rdma"] = 1;
  body.erase("software");
  auto errs = errors_of(body);
  EXPECT_EQ(errs.size(), 4u) << json(errs).dump();
  EXPECT_TRUE(errs.count("gpus[0].pcie_gen") && errs.count("gpus[1].nvlink_domain") && errs.count("nics[0].rdma") &&
              errs.count("software"));
}

TEST(Node, ExampleFileParsesAgainstTheShippedCatalog) {
  auto catalog = testutil::catalog_file(GPURENT_SOURCE_DIR "/data/gpu_catalog.yaml");
  ASSERT_TRUE(catalog.ok()) << catalog.error().message;
  auto doc = load_example("node.yaml");
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  auto n = parse_node(*doc, *catalog);
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(n->gpu_model, "h100-sxm5-80gb");
  ASSERT_EQ(n->gpus.size(), 8u);
  std::set<std::string> domains;
  for (const auto& g : n->gpus) domains.insert(g.nvlink_domain.value_or(""));
  EXPECT_EQ(domains.size(), 1u);
  EXPECT_EQ(n->numa_nodes, 2);
  int ib400 = 0;
  for (const auto& nic : n->nics) ib400 += nic.rdma == RdmaType::kInfiniband && nic.gbps == 400;
  EXPECT_EQ(ib400, 8);
  EXPECT_EQ(parse_node(to_json(*n), *catalog).value(), *n);
}

}  // namespace
}  // namespace gpurent
