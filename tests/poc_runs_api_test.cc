// A tenant's 48-hour POC kept as a run on the real server (docs/advisor/poc.md#poc-runs): pass marks
// from the contract's floors, an acceptance run's figures as the benchmark results, a result typed
// by hand, the verdict judged on every read, and the report in both languages.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "meter/acceptance.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

std::map<std::string, json> poc_items(const json& run) {
  std::map<std::string, json> out;
  for (const json& it : run["plan"]["items"]) out[it["id"]] = it;
  return out;
}

TEST(PocRuns, AnAcceptanceRunAndTypedResultsDecideTheVerdictAgainstTheContract) {
  ServerProcess s({"--acceptance-count-simulated"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "gpn1")), "node");
  acme_and_beta(s);
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");  // floors: 900 TFLOPS, 350 GB/s
  expect_2xx(s.admin("POST", "/api/v1/contracts",
                     json{{"name", "acme-dc"}, {"tenant", "acme"}, {"supplier", "dc"}, {"offers", {"h100"}},
                          {"currency", "CNY"}, {"starts_at", "2020-01-01T00:00:00Z"}}),
             "contract");
  const std::string admin = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  const json poc = {{"name", "dc-poc"},
                    {"supplier", "dc"},
                    {"contract", "acme-dc"},
                    {"start", "2026-12-07T01:00:00Z"},
                    {"model", {{"name", "llama-8b-sft"}, {"metric", "samples/s"}, {"baseline_throughput", "1000"}}},
                    {"gpus", 8},
                    {"thresholds", {{"storage_gbps", "0.1"}}}};
  Resp created = s.req("POST", "/api/v1/poc-runs", admin, poc);
  ASSERT_EQ(created.status, 201) << created.describe();
  const std::string id = created.body["id"];
  EXPECT_EQ(created.body["plan"]["verdict"], "pending");
  auto items = poc_items(created.body);
  EXPECT_EQ(items["bench_fp16_gemm"]["threshold"], "900") << "the contract's floor is the pass mark";
  EXPECT_EQ(items["bench_nccl"]["threshold"], "350");
  EXPECT_EQ(items["bench_fp16_gemm"]["at"]["from"], "2026-12-07T05:00:00.000Z") << items["bench_fp16_gemm"].dump();

  // The supplier's node measured (simulated GPU source, counted by this server; fio's recorded output):
  // an acceptance run on `node` whose cards' FP16 figures are tflops_x10[i], recorded; its id.
  std::ifstream fio_in(std::string(GPURENT_SOURCE_DIR) + "/src/meter/testdata/acceptance/fio_write_then_read.json");
  std::stringstream fio;
  fio << fio_in.rdbuf();
  auto stage = [](const char* kind, const char* tool, std::string out) {
    return json{{"stage", kind}, {"tool", tool}, {"status", "ok"}, {"started_at", "2026-12-07T03:00:00Z"},
                {"finished_at", "2026-12-07T03:10:00Z"}, {"output", std::move(out)}};
  };
  auto measured = [&](const std::string& node, const std::vector<int64_t>& tflops_x10) -> std::string {
    std::vector<SimulatedGpu> cards;
    json gpus = json::array();
    for (int64_t i = 0; i < static_cast<int64_t>(tflops_x10.size()); ++i) {
      cards.push_back({i, "", "", tflops_x10[i], 0, 0, 0, 0, 0});
      gpus.push_back({{"index", i}});
    }
    const json report = {
        {"format", kAcceptanceFormat},
        {"node", node},
        {"started_at", "2026-12-07T03:00:00Z"},
        {"finished_at", "2026-12-07T03:10:00Z"},
        {"gpus", gpus},
        {"stages",
         {stage("gpu", "gpurent-gpu-sim", simulated_gpu_bench(cards)),
          stage("nccl", "nccl-sim", simulated_nccl_tests(36012, 8)), stage("storage", "fio", fio.str())}}};
    return expect_2xx(s.admin("POST", "/api/v1/acceptance-runs", json{{"report", report}}), "run").body["id"];
  };
  const std::string acc = measured("gpn1", {9500, 9501, 9502, 9503, 9504, 9505, 9506, 9507});

  Resp with_run = s.req("POST", "/api/v1/poc-runs/" + id + "/results", admin, json{{"acceptance_run", acc}});
  ASSERT_EQ(with_run.status, 200) << with_run.describe();
  items = poc_items(with_run.body);
  EXPECT_EQ(items["bench_fp16_gemm"]["status"], "pass") << items["bench_fp16_gemm"].dump();
  EXPECT_EQ(items["bench_fp16_gemm"]["result"]["value"], "950") << "the slowest card";
  EXPECT_EQ(items["bench_nccl"]["result"]["value"], "360.12");
  EXPECT_EQ(items["bench_nccl"]["status"], "pass");
  EXPECT_EQ(items["bench_storage"]["result"]["value"], "0.642");
  EXPECT_EQ(items["bench_storage"]["status"], "pass");

  // A card measured again replaces its earlier figure (a slow card found, then replaced and
  // measured again); the other cards' and nodes' count too: the slowest card across them.
  auto fp16_after = [&](const std::string& run) {
    Resp r = s.req("POST", "/api/v1/poc-runs/" + id + "/results", admin, json{{"acceptance_run", run}});
    EXPECT_EQ(r.status, 200) << r.describe();
    return poc_items(r.body)["bench_fp16_gemm"];
  };
  EXPECT_EQ(fp16_after(measured("gpn1", {9500, 9500, 9500, 8000, 9500, 9500, 9500, 9500}))["status"], "fail");
  EXPECT_EQ(fp16_after(measured("gpn1", {9900}))["result"]["value"], "800")
      << "a run of card 0 alone replaces card 0's figure, not the slow card's";
  json again = fp16_after(measured("gpn1", {9600, 9600, 9600, 9600, 9600, 9600, 9600, 9600}));
  EXPECT_EQ(again["result"]["value"], "960") << "the node's later run, not the lowest of all: " << again.dump();
  EXPECT_EQ(again["status"], "pass");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "gpn2")), "node");
  EXPECT_EQ(fp16_after(measured("gpn2", {9400, 9400, 9400, 9400, 9400, 9400, 9400, 9400}))["result"]["value"], "940");
  // An all-reduce across gpn1 and gpn2 measured again from the other node replaces the first: the
  // same pair of nodes, whichever ran it.
  auto allreduce = [&](const std::string& node, const std::vector<std::string>& hosts, int64_t busbw_x100) {
    const json report = {{"format", kAcceptanceFormat},
                         {"node", node},
                         {"started_at", "2026-12-07T03:00:00Z"},
                         {"finished_at", "2026-12-07T03:10:00Z"},
                         {"gpus", json::array({{{"index", 0}}})},
                         {"stages", {stage("nccl", "nccl-sim", simulated_nccl_tests(busbw_x100, 2, hosts))}}};
    const std::string run =
        expect_2xx(s.admin("POST", "/api/v1/acceptance-runs", json{{"report", report}}), "run").body["id"];
    Resp r = s.req("POST", "/api/v1/poc-runs/" + id + "/results", admin, json{{"acceptance_run", run}});
    EXPECT_EQ(r.status, 200) << r.describe();
    return poc_items(r.body)["bench_nccl"];
  };
  EXPECT_EQ(allreduce("gpn1", {"gpn1", "gpn2"}, 10000)["result"]["value"], "100");
  EXPECT_EQ(allreduce("gpn2", {"gpn2", "gpn1"}, 38000)["result"]["value"], "360.12")
      << "the pair's 100 GB/s replaced; gpn1's own 360.12 is the lowest left";

  // The tenant's model runs 15% slower than its baseline: rejected whatever else passed.
  Resp model = s.req("POST", "/api/v1/poc-runs/" + id + "/results", admin,
                     json{{"item", "model_throughput"}, {"value", "850"}, {"note", "8×H100, bf16"}});
  ASSERT_EQ(model.status, 200) << model.describe();
  EXPECT_EQ(model.body["plan"]["verdict"], "reject") << model.body["plan"].dump();
  EXPECT_EQ(model.body["results"].size(), 8u);
  EXPECT_EQ(model.body["results"][7]["recorded_by"].get<std::string>().rfind("usr_", 0), 0u);

  Resp zh = s.raw("GET", "/api/v1/poc-runs/" + id + "/report?lang=zh", admin, "", "");
  ASSERT_EQ(zh.status, 200) << zh.describe();
  EXPECT_NE(zh.text.find("# POC 验证 dc-poc"), std::string::npos) << zh.text;
  EXPECT_NE(zh.text.find("**reject**"), std::string::npos) << zh.text;
  EXPECT_NE(zh.text.find("850 samples/s"), std::string::npos) << zh.text;
  Resp en = s.raw("GET", "/api/v1/poc-runs/" + id + "/report", admin, "", "");
  EXPECT_NE(en.text.find("## Stages"), std::string::npos) << en.text;

  // The CLI: a result recorded and the report printed, through the real binary.
  {
    const std::string cli = "GPURENT_SERVER=" + s.url() + " GPURENT_TOKEN=" + admin + " " + GPURENT_BIN;
    std::string out;
    if (FILE* p = popen((cli + " poc-runs record dc-poc --item env_rdma --passed --note 'ib_write_bw 390 Gb/s' 2>&1").c_str(), "r")) {
      char buf[4096];
      while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
      EXPECT_EQ(pclose(p), 0) << out;
    }
    EXPECT_NE(out.find("POC dc-poc: reject"), std::string::npos) << out;
    out.clear();
    if (FILE* p = popen((cli + " poc-runs report dc-poc --lang zh 2>&1").c_str(), "r")) {
      char buf[4096];
      while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
      EXPECT_EQ(pclose(p), 0) << out;
    }
    EXPECT_NE(out.find("# POC 验证 dc-poc"), std::string::npos) << out;
    EXPECT_NE(out.find("ib_write_bw 390 Gb/s"), std::string::npos) << out;
  }

  // Results the advisor cannot read are refused naming the field; others may not write or see.
  Resp unknown = s.req("POST", "/api/v1/poc-runs/" + id + "/results", admin, json{{"item", "bench_fp32"}, {"value", "1"}});
  EXPECT_EQ(unknown.status, 422) << unknown.describe();
  EXPECT_NE(unknown.reason_for("item"), "") << unknown.describe();
  Resp yes_item = s.req("POST", "/api/v1/poc-runs/" + id + "/results", admin, json{{"item", "env_rdma"}, {"value", "1"}});
  EXPECT_EQ(yes_item.status, 422) << yes_item.describe();
  Resp both = s.req("POST", "/api/v1/poc-runs/" + id + "/results", admin, json{{"acceptance_run", acc}, {"value", "1"}});
  EXPECT_EQ(both.status, 422) << both.describe();
  const std::string member = make_user_token(s, "acme-dev", "tenant_member", "acme");
  EXPECT_EQ(s.req("POST", "/api/v1/poc-runs/" + id + "/results", member, json{{"item", "env_rdma"}, {"passed", true}}).status, 403);
  EXPECT_EQ(s.req("GET", "/api/v1/poc-runs/" + id, member).status, 200);
  const std::string beta = make_user_token(s, "beta-admin", "tenant_admin", "beta");
  EXPECT_EQ(s.req("GET", "/api/v1/poc-runs/" + id, beta).status, 404);
  EXPECT_EQ(s.req("POST", "/api/v1/poc-runs/" + id + "/results", beta, json{{"item", "env_rdma"}, {"passed", true}}).status, 404);
  EXPECT_EQ(s.req("PUT", "/api/v1/poc-runs/" + id, admin, poc).status, 405);

  // Creation is checked as the advisor checks its input, naming the run's own fields.
  json bad = poc;
  bad["name"] = "bad";
  bad["gpus"] = 0;
  Resp r = s.req("POST", "/api/v1/poc-runs", admin, bad);
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_NE(r.reason_for("gpus"), "") << r.describe();
  bad = poc;
  bad["name"] = "other";
  bad["contract"] = "nope";
  EXPECT_NE(s.req("POST", "/api/v1/poc-runs", admin, bad).reason_for("contract"), "");

  // A pass mark the run sets plan-wide stands; the contract's floor fills only the others.
  json own = poc;
  own["name"] = "own-marks";
  own["thresholds"]["fp16_tflops"] = "750";
  Resp marks = s.req("POST", "/api/v1/poc-runs", admin, own);
  ASSERT_EQ(marks.status, 201) << marks.describe();
  EXPECT_EQ(poc_items(marks.body)["bench_fp16_gemm"]["threshold"], "750");
  EXPECT_EQ(poc_items(marks.body)["bench_nccl"]["threshold"], "350");
}

}  // namespace
}  // namespace gpurent::testing
