// The node agent end to end: the real `gpurent agent` binary, with the simulated GPU source, reports
// a node's GPUs to the real server as usage samples with a supplier's token; without NVML it says
// so and exits non-zero (docs/resources/usage.md#node-agent).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

// `cmd` run by sh, stderr joined to stdout: its output and exit status.
std::pair<std::string, int> agent_run(const std::string& cmd) {
  std::string out;
  int st = -1;
  if (FILE* p = popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    st = pclose(p);
  }
  return {out, WIFEXITED(st) ? WEXITSTATUS(st) : -1};
}

TEST(AgentCli, ReportsTheSimulatedGpusAsUsageSamples) {
  ServerProcess s;
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "gpn1")), "node");
  const std::string token = make_user_token(s, "dc-agent", "supplier", "", "dc");
  std::ofstream(s.dir() + "/sim.json") << R"({"gpus": [{"index": 0, "utilization_pct": [35, 85], "memory_used_mib": [20000]},
                                                       {"index": 7, "utilization_pct": [0], "power_mw": [95000]}]})";
  const TimeMs from = SystemClock().now() - 1000;
  const std::string env = "GPURENT_SERVER=" + s.url() + " GPURENT_TOKEN=" + token + " ";
  auto [out, rc] = agent_run(env + GPURENT_BIN + " agent --node gpn1 --gpu-sim " + s.dir() + "/sim.json --count 2 --interval-s 1");
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("simulated GPU source (2 GPUs)"), std::string::npos) << out;
  EXPECT_NE(out.find("sent 2 GPU samples"), std::string::npos) << out;
  const TimeMs to = SystemClock().now() + 1000;
  Resp g = s.admin("GET", "/api/v1/usage/gpus?node=gpn1&gpu=0&from=" + format_rfc3339(from) + "&to=" + format_rfc3339(to));
  ASSERT_EQ(g.status, 200) << g.describe();
  ASSERT_EQ(g.body["points"].size(), 2u) << g.body.dump();
  EXPECT_EQ(g.body["points"][0]["utilization_pct"].value("max", -1), 35);
  EXPECT_EQ(g.body["points"][1]["utilization_pct"].value("max", -1), 85);
  EXPECT_EQ(g.body["points"][0]["memory_used_mib"].value("max", -1), 20000);

  // A node that is not the supplier's is refused, and the agent says why.
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("other")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("other", "theirs")), "node");
  auto [refused, rc2] = agent_run(env + GPURENT_BIN + " agent --node theirs --gpu-sim " + s.dir() + "/sim.json --count 1");
  EXPECT_EQ(rc2, 1) << refused;
  EXPECT_EQ(refused.find("sent"), std::string::npos) << "stopped before it reported: " << refused;
  // The two sources exclude each other.
  auto [both, rc6] = agent_run(env + GPURENT_BIN + " agent --node gpn1 --gpu-sim " + s.dir() +
                               "/sim.json --nvml-library libnvidia-ml.so.1 --count 1");
  EXPECT_EQ(rc6, 2) << both;
  // A machine whose card UUIDs are not the node's (a copied config naming another node) stops
  // before it reports anything; the node's own UUIDs pass.
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "gpn2")), "node");
  const json listed = s.admin("GET", "/api/v1/nodes/gpn2").body["gpus"];
  std::ofstream(s.dir() + "/other.json") << json{{"gpus", {{{"index", 0}, {"uuid", "GPU-00000000-0000-4000-8000-000000000000"},
                                                            {"utilization_pct", {50}}}}}}.dump();
  auto [wrong, rc4] = agent_run(env + GPURENT_BIN + " agent --node gpn2 --gpu-sim " + s.dir() + "/other.json --count 1");
  EXPECT_NE(rc4, 0) << wrong;
  EXPECT_NE(wrong.find("but node gpn2 lists " + listed[0]["uuid"].get<std::string>() + " there"), std::string::npos) << wrong;
  std::ofstream(s.dir() + "/same.json") << json{{"gpus", {{{"index", 0}, {"uuid", listed[0]["uuid"]}, {"utilization_pct", {50}}}}}}.dump();
  auto [same, rc5] = agent_run(env + GPURENT_BIN + " agent --node gpn2 --gpu-sim " + s.dir() + "/same.json --count 1");
  EXPECT_EQ(rc5, 0) << same;

  // Without NVML (no NVIDIA driver here) the agent stops at once and says what is missing.
  auto [no_nvml, rc3] = agent_run(env + GPURENT_BIN + " agent --node gpn1 --nvml-library /nonexistent/libnvidia-ml.so.1 --count 1");
  EXPECT_NE(rc3, 0);
  EXPECT_NE(no_nvml.find("cannot load NVML (/nonexistent/libnvidia-ml.so.1)"), std::string::npos) << no_nvml;
}

}  // namespace
}  // namespace gpurent::testing
