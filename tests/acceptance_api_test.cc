// Acceptance runs end to end on this machine: the real gpurent-accept runs its stages here (the
// simulated GPU source for the GPU and NCCL stages; fio and iperf3 really measure the local disk
// and loopback), and the real server records its report as a run and turns it into measurements
// with their provenance (docs/acceptance.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

bool have_tool(const char* name) { return std::system((std::string("command -v ") + name + " >/dev/null 2>&1").c_str()) == 0; }

json stage_of(const json& run, const std::string& kind) {
  for (const json& s : run["stages"])
    if (s["stage"] == kind) return s;
  return json();
}

TEST(AcceptanceRuns, ARealRunOnThisMachineBecomesMeasurementsWithProvenance) {
  if (!have_tool("fio") || !have_tool("iperf3")) GTEST_SKIP() << "fio or iperf3 is not installed (scripts/install-deps.sh)";
  ServerProcess s({"--acceptance-count-simulated"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  const json node = expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "gpn1")), "node").body;
  const std::string supplier = make_user_token(s, "dc-ops", "supplier", "", "dc");
  const json report = run_accept(s.dir(), "gpn1", node);
  // A contract whose offer's template sets the floors: 900 TFLOPS FP16 per card, 350 GB/s NCCL.
  acme_and_beta(s);
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  expect_2xx(s.admin("POST", "/api/v1/contracts",
                     json{{"name", "acme-dc"}, {"tenant", "acme"}, {"supplier", "dc"}, {"offers", {"h100"}},
                          {"currency", "CNY"}, {"starts_at", "2020-01-01T00:00:00Z"}}),
             "contract");

  Resp created = s.req("POST", "/api/v1/acceptance-runs", supplier,
                       json{{"report", report}, {"note", "burn-in"}, {"contract", "acme-dc"}});
  ASSERT_EQ(created.status, 201) << created.describe();
  const json run = created.body;
  EXPECT_EQ(run["node_id"], node["id"]);
  EXPECT_EQ(run["status"], "recorded");
  EXPECT_TRUE(run["simulated"].get<bool>());
  EXPECT_TRUE(run["simulated_counted"].get<bool>());
  // The simulated cards are the node's cards 5 and 6, found by their UUIDs.
  ASSERT_EQ(run["gpus"].size(), 2u) << run.dump();
  EXPECT_EQ(run["gpus"][0]["card"], 5);
  EXPECT_EQ(run["gpus"][1]["card"], 6);
  const json gpu = stage_of(run, "gpu");
  EXPECT_EQ(gpu["tool"], "gpurent-gpu-sim");
  EXPECT_EQ(gpu["figures"]["gemm"][0], (json{{"card", 5}, {"dtype", "fp16"}, {"tflops", "712.5"}}));
  EXPECT_EQ(stage_of(run, "nccl")["figures"]["busbw_gbps"], "355.50");
  // fio and iperf3 really ran: their figures come from their own JSON, kept whole in the run.
  const json storage = stage_of(run, "storage");
  ASSERT_EQ(storage["status"], "ok") << storage.dump();
  EXPECT_GT(storage["figures"]["read_mbps"].get<int64_t>(), 0);
  EXPECT_GT(storage["figures"]["write_mbps"].get<int64_t>(), 0);
  EXPECT_EQ(storage["tool_version"].get<std::string>().rfind("fio-", 0), 0u);
  EXPECT_NE(storage["output"].get<std::string>().find("\"bw_bytes\""), std::string::npos);
  const json network = stage_of(run, "network");
  ASSERT_EQ(network["status"], "ok") << network.dump();
  EXPECT_GT(network["figures"]["received_mbps"].get<int64_t>(), 0);
  EXPECT_NE(network["peer"].get<std::string>().find("loopback"), std::string::npos);

  // Judged against the contract: one FP16 gate per card of the node — the two measured cards
  // below the floor, the six the report left out missing — and the all-reduce above its own.
  EXPECT_EQ(run["verdict"], "fail");
  ASSERT_EQ(run["gates"].size(), 9u) << run["gates"].dump();
  EXPECT_EQ(run["gates"][0], (json{{"clause", "min_fp16_tflops"}, {"card", 0}, {"floor", "900.0"}, {"status", "missing"}}));
  EXPECT_EQ(run["gates"][5], (json{{"clause", "min_fp16_tflops"}, {"card", 5}, {"floor", "900.0"}, {"measured", "712.5"},
                                   {"status", "fail"}, {"simulated", true}}));
  EXPECT_EQ(run["gates"][6]["status"], "fail");
  EXPECT_EQ(run["gates"][7]["status"], "missing");
  EXPECT_EQ(run["gates"][8]["clause"], "min_nccl_busbw_gbps");
  EXPECT_EQ(run["gates"][8]["measured"], "355");
  EXPECT_EQ(run["gates"][8]["status"], "pass");

  // The contract, its floors and the verdict are its parties': another tenant reading the run
  // (or its report) sees the measurements only; the contract's tenant sees them all.
  const std::string beta = make_user_token(s, "beta-viewer", "viewer", "beta");
  const json seen = s.req("GET", "/api/v1/acceptance-runs/" + run["id"].get<std::string>(), beta).body;
  for (const char* k : {"contract", "contract_id", "gates", "verdict"})
    EXPECT_FALSE(seen.contains(k)) << k << " " << seen.dump();
  EXPECT_EQ(seen["measurements"], run["measurements"]);
  const Resp md = s.req("GET", "/api/v1/acceptance-runs/" + run["id"].get<std::string>() + "/report", beta);
  EXPECT_EQ(md.status, 200) << md.describe();
  EXPECT_EQ(md.text.find("acme-dc"), std::string::npos) << md.text;
  const std::string acme = make_user_token(s, "acme-viewer", "viewer", "acme");
  const json party = s.req("GET", "/api/v1/acceptance-runs?supplier=dc", acme).body.at("items").at(0);
  EXPECT_EQ(party["gates"], run["gates"]);
  EXPECT_EQ(party["contract"], "acme-dc");

  // Its measurements: the cards' FP16 GEMM and the node's all-reduce, with provenance.
  ASSERT_EQ(run["measurements"].size(), 3u) << run.dump();
  const json listed = s.admin("GET", "/api/v1/measurements?supplier=dc").body;
  ASSERT_EQ(listed["items"].size(), 3u) << listed.dump();
  int fp16 = 0, nccl = 0;
  for (const json& m : listed["items"]) {
    EXPECT_EQ(m["acceptance_run"], run["id"]);
    EXPECT_EQ(m["method"], "acceptance");
    EXPECT_EQ(m["status"], "recorded");
    if (m["kind"] == "fp16_tflops") {
      ++fp16;
      if (m["gpu"] == 5) {
        EXPECT_EQ(m["fp16_tflops"], "712.5");
        EXPECT_NE(m["evidence"].get<std::string>().find("\"dtype\":\"fp16\""), std::string::npos);
        EXPECT_NE(m["note"].get<std::string>().find(node["gpus"][5]["uuid"].get<std::string>()), std::string::npos);
      } else {
        EXPECT_EQ(m["gpu"], 6);
        EXPECT_EQ(m["fp16_tflops"], "650");
      }
    } else {
      ++nccl;
      EXPECT_EQ(m["kind"], "nccl_busbw");
      EXPECT_EQ(m["busbw_gbps"], 355);  // 355.50 rounded down
      EXPECT_NE(m["evidence"].get<std::string>().find("busbw"), std::string::npos);
    }
  }
  EXPECT_EQ(fp16, 2);
  EXPECT_EQ(nccl, 1);
  // Every reader decodes them, multi-line evidence and all (invoices read measurements for SLA
  // credits, the supplier dashboard for health): none fails on them.
  Resp inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + format_rfc3339(SystemClock().now()).substr(0, 7));
  EXPECT_EQ(inv.status, 200) << inv.describe();
  Resp health = s.admin("GET", "/api/v1/dashboard/suppliers");
  EXPECT_EQ(health.status, 200) << health.describe();

  // The report, in both languages.
  Resp zh = s.raw("GET", "/api/v1/acceptance-runs/" + run["id"].get<std::string>() + "/report?lang=zh", s.admin_token(), "", "");
  ASSERT_EQ(zh.status, 200) << zh.describe();
  EXPECT_EQ(zh.content_type, "text/markdown");
  EXPECT_NE(zh.text.find("验收运行"), std::string::npos) << zh.text;
  EXPECT_NE(zh.text.find("712.5 TFLOPS"), std::string::npos) << zh.text;
  EXPECT_NE(zh.text.find("对照合同 acme-dc：**fail**"), std::string::npos) << zh.text;
  Resp en = s.raw("GET", "/api/v1/acceptance-runs/" + run["id"].get<std::string>() + "/report", s.admin_token(), "", "");
  EXPECT_NE(en.text.find("# Acceptance run"), std::string::npos) << en.text;

  // The POC advisor takes the run's figures as the supplier's benchmark results: the slowest card,
  // the bus bandwidth, fio's read throughput; a result also typed by hand is refused.
  json poc = {{"model", {{"name", "m"}, {"metric", "samples/s"}, {"baseline_throughput", "100"}}},
              {"thresholds", {{"storage_gbps", "0.001"}, {"nccl_busbw_gbps", "360"}}},
              {"suppliers", {{{"name", "dc"}, {"gpu_model", "h100-sxm5-80gb"}, {"gpus", 2}, {"fp16_tflops", "600"},
                              {"acceptance_runs", {run["id"]}}}}}};
  Resp advice = s.req("POST", "/api/v1/advise/poc", supplier, poc);
  ASSERT_EQ(advice.status, 200) << advice.describe();
  std::map<std::string, json> items;
  for (const json& item : advice.body["suppliers"][0]["items"]) items[item["id"]] = item;
  EXPECT_EQ(items["bench_fp16_gemm"]["status"], "pass") << items["bench_fp16_gemm"].dump();
  EXPECT_EQ(items["bench_fp16_gemm"]["result"]["value"], "650") << items["bench_fp16_gemm"].dump();
  EXPECT_NE(items["bench_fp16_gemm"]["result"]["note"].get<std::string>().find(run["id"].get<std::string>()), std::string::npos);
  EXPECT_EQ(items["bench_nccl"]["status"], "fail") << items["bench_nccl"].dump();  // 355.5 < 360
  EXPECT_EQ(items["bench_storage"]["status"], "pass") << items["bench_storage"].dump();
  poc["suppliers"][0]["results"] = {{"bench_nccl", {{"value", "400"}}}};
  Resp twice = s.req("POST", "/api/v1/advise/poc", supplier, poc);
  EXPECT_EQ(twice.status, 422) << twice.describe();
  EXPECT_NE(twice.reason_for("suppliers[0].results.bench_nccl"), "") << twice.describe();

  // Append-only, like the measurements it made.
  EXPECT_EQ(s.admin("DELETE", "/api/v1/acceptance-runs/" + run["id"].get<std::string>()).status, 405);
  EXPECT_EQ(s.admin("PUT", "/api/v1/acceptance-runs/" + run["id"].get<std::string>(), run).status, 405);
}

TEST(AcceptanceRuns, BadReportsAreRefusedNamingTheField) {
  if (!have_tool("fio") || !have_tool("iperf3")) GTEST_SKIP() << "fio or iperf3 is not installed (scripts/install-deps.sh)";
  ServerProcess s;
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("other")), "supplier");
  const json node = expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "gpn1")), "node").body;
  const json report = run_accept(s.dir(), "gpn1", node, "--stages gpu,storage");

  // Without --acceptance-count-simulated the simulated stages make no measurement.
  Resp ok = s.admin("POST", "/api/v1/acceptance-runs", json{{"report", report}});
  ASSERT_EQ(ok.status, 201) << ok.describe();
  EXPECT_TRUE(ok.body["simulated"].get<bool>());
  EXPECT_FALSE(ok.body["simulated_counted"].get<bool>());
  EXPECT_EQ(ok.body["measurements"], json::array());
  EXPECT_EQ(s.admin("GET", "/api/v1/measurements").body["items"].size(), 0u);

  // A GPU that is not the node's.
  json foreign = report;
  foreign["gpus"][0]["uuid"] = "GPU-00000000-0000-4000-8000-00000000dead";
  for (json& st : foreign["stages"])
    if (st["stage"] == "gpu") {
      std::string out = st["output"];
      const std::string from = node["gpus"][5]["uuid"];
      for (size_t at; (at = out.find(from)) != std::string::npos;) out.replace(at, from.size(), "GPU-00000000-0000-4000-8000-00000000dead");
      st["output"] = out;
    }
  Resp r = s.admin("POST", "/api/v1/acceptance-runs", json{{"report", foreign}});
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_NE(r.reason_for("report.gpus[0].uuid"), "") << r.describe();
  // A tool output that is not what the tool writes: the figure cannot be derived.
  json tampered = report;
  for (json& st : tampered["stages"])
    if (st["stage"] == "storage") st["output"] = "{\"jobs\": []}";
  r = s.admin("POST", "/api/v1/acceptance-runs", json{{"report", tampered}});
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_NE(r.reason_for("report.stages[1].output"), "") << r.describe();
  // A node that does not exist; neither job nor report; both.
  json nowhere = report;
  nowhere["node"] = "gpn9";
  EXPECT_EQ(s.admin("POST", "/api/v1/acceptance-runs", json{{"report", nowhere}}).status, 422);
  EXPECT_NE(s.admin("POST", "/api/v1/acceptance-runs", json::object()).reason_for("report"), "");
  EXPECT_EQ(s.admin("POST", "/api/v1/acceptance-runs", json{{"report", report}, {"job", "x"}}).status, 422);
  // A contract with another supplier.
  acme_and_beta(s);
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("other", "h100-other")), "offer");
  expect_2xx(s.admin("POST", "/api/v1/contracts",
                     json{{"name", "acme-other"}, {"tenant", "acme"}, {"supplier", "other"}, {"offers", {"h100-other"}},
                          {"currency", "CNY"}, {"starts_at", "2020-01-01T00:00:00Z"}}),
             "contract");
  r = s.admin("POST", "/api/v1/acceptance-runs", json{{"report", report}, {"contract", "acme-other"}});
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_NE(r.reason_for("contract"), "") << r.describe();
  // Another supplier may not record about this supplier's node; a tenant member may not at all.
  const std::string other = make_user_token(s, "other-ops", "supplier", "", "other");
  EXPECT_EQ(s.req("POST", "/api/v1/acceptance-runs", other, json{{"report", report}}).status, 403);
  const std::string member = make_user_token(s, "acme-dev", "tenant_member", "acme");
  EXPECT_EQ(s.req("POST", "/api/v1/acceptance-runs", member, json{{"report", report}}).status, 403);
  // A tenant's admin whose jobs never ran on the node.
  const std::string admin = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  r = s.req("POST", "/api/v1/acceptance-runs", admin, json{{"report", report}});
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_NE(r.reason_for("report.node"), "") << r.describe();
}

// An all-reduce across two nodes (the simulated source's ranks on gpn1 and gpn2, as mpirun across
// them prints them): its bus bandwidth is a measurement on each node; a rank on a host that is not a
// node of the supplier is refused, naming the stage.
TEST(AcceptanceRuns, AnAllReduceAcrossNodesMeasuresEveryNodeItRanOn) {
  ServerProcess s({"--acceptance-count-simulated"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  const json gpn1 = expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "gpn1")), "node").body;
  const json gpn2 = expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "gpn2")), "node").body;
  const std::string supplier = make_user_token(s, "dc-ops", "supplier", "", "dc");
  const json report = run_accept(s.dir(), "gpn1", gpn1, "--stages gpu,nccl", json{"gpn1", "gpn2"});
  Resp created = s.req("POST", "/api/v1/acceptance-runs", supplier, json{{"report", report}});
  ASSERT_EQ(created.status, 201) << created.describe();
  const json nccl = stage_of(created.body, "nccl");
  EXPECT_EQ(nccl["figures"]["ranks"], 4) << nccl.dump();  // two simulated cards on each of the two nodes
  EXPECT_EQ(nccl["figures"]["hosts"], (json{"gpn1", "gpn2"}));
  EXPECT_EQ(created.body["nccl_nodes"], (json{{{"node", "gpn2"}, {"node_id", gpn2["id"]}}}));
  std::map<std::string, int> nccl_on;
  const json measured = s.admin("GET", "/api/v1/measurements?supplier=dc").body;
  for (const json& m : measured.at("items"))
    if (m["kind"] == "nccl_busbw") {
      ++nccl_on[m["node_id"].get<std::string>()];
      EXPECT_EQ(m["busbw_gbps"], 355);
      EXPECT_EQ(m["acceptance_run"], created.body["id"]);
      EXPECT_NE(m["note"].get<std::string>().find("across 2 nodes (gpn1, gpn2)"), std::string::npos) << m.dump();
    }
  EXPECT_EQ(nccl_on, (std::map<std::string, int>{{gpn1["id"], 1}, {gpn2["id"], 1}})) << measured.dump();
  Resp md = s.raw("GET", "/api/v1/acceptance-runs/" + created.body["id"].get<std::string>() + "/report", s.admin_token(), "", "");
  EXPECT_NE(md.text.find("across nodes gpn1, gpn2"), std::string::npos) << md.text;

  // The runner puts --nccl-launch's words in front of all_reduce_perf, one rank per GPU: here a
  // stand-in all_reduce_perf (it prints its arguments and a recorded 2 x 8 H100 run) under env.
  fs::create_directories(s.dir() + "/nccl");
  std::ofstream(s.dir() + "/nccl/all_reduce_perf")
      << "#!/bin/sh\necho \"# args: $* FOO=$FOO\"\ncat " << GPURENT_SOURCE_DIR
      << "/src/meter/testdata/acceptance/nccl_all_reduce_2x8_h100.txt\n";
  fs::permissions(s.dir() + "/nccl/all_reduce_perf", fs::perms::owner_all);
  const json launched = run_accept(s.dir(), "gpn1", gpn1,
                                   "--stages gpu,nccl --nccl-tests " + s.dir() + "/nccl --nccl-launch 'env FOO=launched'");
  const json launched_nccl = launched["stages"][1];
  EXPECT_EQ(launched_nccl["status"], "ok") << launched_nccl.dump();
  EXPECT_NE(launched_nccl["output"].get<std::string>().find("# args: -b 8M -e 1G -f 2 -g 1 FOO=launched"), std::string::npos)
      << launched_nccl.dump();
  // Its hosts are not dc's nodes: refused, naming the stage.
  Resp foreign = s.req("POST", "/api/v1/acceptance-runs", supplier, json{{"report", launched}});
  EXPECT_EQ(foreign.status, 422) << foreign.describe();
  EXPECT_NE(foreign.reason_for("report.stages[1].output").find("rank host ztan-mig-235z"), std::string::npos)
      << foreign.describe();

  const json ghost = run_accept(s.dir(), "gpn1", gpn1, "--stages gpu,nccl", json{"gpn1", "ghost"});
  Resp refused = s.req("POST", "/api/v1/acceptance-runs", supplier, json{{"report", ghost}});
  EXPECT_EQ(refused.status, 422) << refused.describe();
  EXPECT_NE(refused.reason_for("report.stages[1].output").find("rank host ghost"), std::string::npos) << refused.describe();
}

}  // namespace
}  // namespace gpurent::testing
