// An acceptance run as a job (docs/acceptance.md): gpurent-accept, uploaded as an artifact, runs in
// a container through the local executor on two of the node's (fake) GPUs, with Debian's fio and
// iperf3 in its image measuring the container's disk and loopback; the server then records the
// run from the job's log: the node and cards from the job's run, every figure from the raw output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "container_fixture.h"
#include "core/ids.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kAcceptImage = "localhost/gpurent/accept:bookworm";

auto accept_job_is(const std::string& want) {
  return [want](const json& j) {
    const std::string st = j["status"]["state"];
    return st == want || st == "failed" || st == "cancelled";
  };
}

TEST(ContainerAccept, local_containers_AnAcceptanceJobRunsInAContainerAndIsRecordedFromItsLog) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (Podman containers with device nodes)";
  if (std::system("command -v podman >/dev/null 2>&1") != 0) GTEST_SKIP() << "podman is not installed";
  int rc = 0;
  const std::string built = run_cmd(std::string(GPURENT_SOURCE_DIR) + "/scripts/debian-image " + kAcceptImage +
                                        " bookworm fio,iperf3 minbase",
                                    &rc);
  if (rc == 77) GTEST_SKIP() << built;
  ASSERT_EQ(rc, 0) << built;

  ContainerTestBox b;
  const std::string box = prepare_local_box(b, "gpurent-accept", 4);
  ASSERT_EQ(box, "");
  ServerProcess s(local_executor_flags(b, {"--sched-interval-ms", "200", "--acceptance-count-simulated"}));
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  json nodes = wait_for(s, "/api/v1/nodes?supplier=dc", [](const json& j) { return j["items"].size() == 1; });
  ASSERT_EQ(nodes["items"].size(), 1u) << nodes.dump();
  const std::string tenant = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", "CNY")), "tenant").body["id"];
  b.network = "gpurent-" + tenant;
  json p = project_doc("acme", "acme-proj");
  p["quota"]["gpus_per_model"] = {{"h100-sxm5-80gb", 4}};
  p["quota"].erase("max_gpus_per_job");
  expect_2xx(s.admin("POST", "/api/v1/projects", p), "project");
  const std::string token = make_user_token(s, "acme-dev", "tenant_member", "acme");

  // The runner, as the project's artifact (mounted read-only, so started through the loader).
  std::ifstream in(GPURENT_ACCEPT_BIN, std::ios::binary);
  std::stringstream bin;
  bin << in.rdbuf();
  const std::string program = bin.str();
  ASSERT_GT(program.size(), 1000u);
  const std::string sha = sha256_hex(program);
  expect_2xx(s.req("POST", "/api/v1/projects/acme-proj/artifacts", token,
                   json{{"name", "gpurent-accept"}, {"sha256", sha}, {"size_bytes", program.size()}, {"kind", "file"}}),
             "artifact");
  for (size_t at = 0; at < program.size(); at += 1 << 20)
    expect_2xx(s.raw("PUT", "/api/v1/projects/acme-proj/artifacts/gpurent-accept/content?offset=" + std::to_string(at),
                     token, program.substr(at, 1 << 20), "application/octet-stream"),
               "chunk");

  const json sim = {{"gpus", {{{"index", 0}, {"fp16_tflops", 701.2}, {"hbm_gbps", 3010}},
                              {{"index", 1}, {"fp16_tflops", 688.0}, {"hbm_gbps", 2990}}}},
                    {"nccl_busbw_gbps", 301.7}};
  const std::string script = "printf '%s' '" + sim.dump() +
                             "' > /tmp/sim.json && exec /lib64/ld-linux-x86-64.so.2 /opt/gpurent-accept --node box "
                             "--gpu-sim /tmp/sim.json --storage-dir /tmp/fio --storage-size-mb 32 --network-seconds 1";
  json j = job_doc("acme-proj", "accept-box");
  j["gpus_per_worker"] = 2;
  j["image"] = kAcceptImage;
  j["command"] = {"sh", "-c", script};
  j["expected_duration_seconds"] = 600;
  j["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}};
  j["resources"] = {{"cpu_cores", 1}, {"memory_gib", 1}};
  j["artifacts"] = {{{"name", "gpurent-accept"}, {"sha256", sha}, {"mount", "/opt/gpurent-accept"}}};
  const std::string id = expect_2xx(s.req("POST", "/api/v1/jobs", token, j), "job").body["id"];
  auto logs = [&] {
    Resp r = s.req("GET", "/api/v1/jobs/" + id + "/logs?limit=1048576", token);
    return r.status == 200 ? r.body["data"].get<std::string>() : r.describe();
  };
  json done = wait_for(s, "/api/v1/jobs/" + id, accept_job_is("succeeded"), 180);
  ASSERT_EQ(done["status"]["state"], "succeeded") << done.dump() << logs() << s.log();
  EXPECT_NE(logs().find("GPURENT-ACCEPTANCE-REPORT "), std::string::npos) << logs();

  // Recorded from the job: the cards are the ones its run held.
  std::vector<int64_t> held;
  const json allocations = s.admin("GET", "/api/v1/allocations?limit=100").body;
  for (const json& a : allocations["items"])
    if (a["job_id"] == id) held = a["placement"][0]["gpus"].get<std::vector<int64_t>>();
  ASSERT_EQ(held.size(), 2u) << allocations.dump();
  Resp run = s.admin("POST", "/api/v1/acceptance-runs", json{{"job", id}});
  ASSERT_EQ(run.status, 201) << run.describe() << logs();
  EXPECT_EQ(run.body["job_id"], id);
  EXPECT_EQ(run.body["node"], "box");
  EXPECT_EQ(run.body["gpus"][0]["card"], held[0]);
  EXPECT_EQ(run.body["gpus"][1]["card"], held[1]);
  std::map<std::string, json> stages;
  for (const json& st : run.body["stages"]) stages[st["stage"]] = st;
  EXPECT_EQ(stages["gpu"]["figures"]["gemm"][0]["tflops"], "701.2");
  EXPECT_EQ(stages["nccl"]["figures"]["busbw_gbps"], "301.70");
  ASSERT_EQ(stages["storage"]["status"], "ok") << stages["storage"].dump();
  EXPECT_GT(stages["storage"]["figures"]["write_mbps"].get<int64_t>(), 0);
  ASSERT_EQ(stages["network"]["status"], "ok") << stages["network"].dump();
  EXPECT_GT(stages["network"]["figures"]["received_mbps"].get<int64_t>(), 0);
  ASSERT_EQ(run.body["measurements"].size(), 3u) << run.body.dump();
  const json m = s.admin("GET", "/api/v1/measurements/" + run.body["measurements"][0].get<std::string>()).body;
  EXPECT_EQ(m["acceptance_run"], run.body["id"]);
  EXPECT_EQ(m["gpu"], held[0]);
  EXPECT_EQ(m["fp16_tflops"], "701.2");

  // What a job prints is its own word: a stage dated outside its run, or an all-reduce whose ranks
  // name another node than the one it ran on, is refused (it would date or place measurements
  // that SLA credits read).
  const auto forged_job = [&](const std::string& name, const std::string& command) {
    json f = job_doc("acme-proj", name);
    f["gpus_per_worker"] = 2;
    f["image"] = kAcceptImage;
    f["command"] = {"sh", "-c", command};
    f["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}};
    f["resources"] = {{"cpu_cores", 1}, {"memory_gib", 1}};
    f["artifacts"] = {{{"name", "gpurent-accept"}, {"sha256", sha}, {"mount", "/opt/gpurent-accept"}}};
    const std::string fid = expect_2xx(s.req("POST", "/api/v1/jobs", token, f), name).body["id"];
    const json fdone = wait_for(s, "/api/v1/jobs/" + fid, accept_job_is("succeeded"), 120);
    EXPECT_EQ(fdone["status"]["state"], "succeeded") << fdone.dump();
    return s.admin("POST", "/api/v1/acceptance-runs", json{{"job", fid}});
  };
  json elsewhere = sim;
  elsewhere["nccl_hosts"] = {"box", "gpn9"};
  const std::string accept = "/lib64/ld-linux-x86-64.so.2 /opt/gpurent-accept --node box --gpu-sim /tmp/sim.json";
  Resp across = forged_job(
      "across", "printf '%s' '" + elsewhere.dump() + "' > /tmp/sim.json && exec " + accept + " --stages gpu,nccl");
  EXPECT_EQ(across.status, 422) << across.describe();
  EXPECT_NE(across.reason_for("job.report.stages[1].output")
                .find("rank host gpn9 of the all-reduce is not node box, the one node job across ran on"),
            std::string::npos)
      << across.describe();
  Resp dated =
      forged_job("back-dated", "printf '%s' '" + sim.dump() + "' > /tmp/sim.json && " + accept +
                                   " --stages gpu --out /tmp/r.json > /dev/null && printf "
                                   "'GPURENT-ACCEPTANCE-REPORT %s\\n' \"$(tr -d '\\n' < /tmp/r.json | sed "
                                   "'s/\"started_at\": *\"[^\"]*\"/\"started_at\":\"2026-01-01T00:00:00Z\"/g')\"");
  EXPECT_EQ(dated.status, 422) << dated.describe();
  EXPECT_NE(dated.reason_for("job.report.stages[0].started_at").find("outside the run of job back-dated"),
            std::string::npos)
      << dated.describe();

  // A job whose log holds no report, and one another tenant cannot name.
  json plain = job_doc("acme-proj", "no-report");
  plain["image"] = kAcceptImage;
  plain["command"] = {"sh", "-c", "echo hello"};
  plain["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}};
  plain["resources"] = {{"cpu_cores", 1}, {"memory_gib", 1}};
  const std::string other = expect_2xx(s.req("POST", "/api/v1/jobs", token, plain), "job").body["id"];
  json ended = wait_for(s, "/api/v1/jobs/" + other, accept_job_is("succeeded"), 120);
  ASSERT_EQ(ended["status"]["state"], "succeeded") << ended.dump();
  Resp none = s.admin("POST", "/api/v1/acceptance-runs", json{{"job", other}});
  EXPECT_EQ(none.status, 422) << none.describe();
  EXPECT_NE(none.reason_for("job").find("GPURENT-ACCEPTANCE-REPORT"), std::string::npos) << none.describe();

  // A supplier names only a job that ran on one of its nodes: another tenant's job elsewhere reads
  // as one that does not exist (its runs and log unread), the node's own supplier records it.
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("rival")), "supplier");
  const std::string rival = make_user_token(s, "rival-ops", "supplier", "", "rival");
  const std::string ghost_id = "job_00000000000000ff";
  Resp probe = s.req("POST", "/api/v1/acceptance-runs", rival, json{{"job", other}});
  Resp ghost = s.req("POST", "/api/v1/acceptance-runs", rival, json{{"job", ghost_id}});
  EXPECT_EQ(probe.status, 422) << probe.describe();
  EXPECT_EQ(ghost.status, 422) << ghost.describe();
  std::string said = probe.reason_for("job");
  said.replace(said.find(other), other.size(), ghost_id);
  EXPECT_EQ(said, ghost.reason_for("job")) << probe.describe() << ghost.describe();
  const std::string dc = make_user_token(s, "dc-ops", "supplier", "", "dc");
  EXPECT_EQ(s.req("POST", "/api/v1/acceptance-runs", dc, json{{"job", id}}).status, 201);
}

}  // namespace
}  // namespace gpurent::testing
