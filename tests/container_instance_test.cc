// local_containers: an instance's way in on real Podman containers (docs/resources/instances.md
// #access): created with the CLI, a real `ssh` client logs in with the tenant's key (and not with another), writes on the
// data volume; the notebook answers its token and refuses requests without it; after a stop and a
// start, and after a restart, the file is still there and the SSH host key is the same (it lives on the volume); the
// notebook's URL (with its token) is shown only to those who may start and stop the instance; a
// minute of low metered utilization stops an instance on its tenant's idle rule, saying why; with
// its host's GPUs taken by another tenant's job a start is refused saying so, and a CPU-only start reaches the data;
// a restart of an instance whose command is its PID 1 does not trip over its own SSH port.
// Skipped without root, Podman or ssh, or (when the image is not built yet) the Debian archive.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "container_fixture.h"
#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

TEST(ContainerInstance, local_containers_SshAndNotebookReachAnInstanceAcrossStopAndStart) {
  if (std::system("command -v ssh >/dev/null && command -v ssh-keygen >/dev/null && command -v curl >/dev/null") != 0)
    GTEST_SKIP() << "needs the OpenSSH client and curl (scripts/install-deps.sh)";
  GPURENT_NEED_LOCAL_CONTAINERS();

  ContainerTestBox b;
  b.dir = make_temp_dir("gpurent-instance");
  ASSERT_NE(b.dir, "");
  for (const char* d : {"/dev", "/out", "/volumes", "/runs", "/ssh"}) fs::create_directories(b.dir + d);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(std::system(("mknod " + b.dir + "/dev/gpu" + std::to_string(i) + " c 1 3").c_str()), 0);
  const std::string key = b.dir + "/ssh/id", stranger = b.dir + "/ssh/other";
  ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -C dev@laptop -f " + key + " && ssh-keygen -q -t ed25519 -N '' -f " +
                         stranger)
                            .c_str()),
            0);
  const std::string pub = run_cmd("cat " + key + ".pub");
  // Node ports of its own, away from another test run's and
  // below the kernel's ephemeral range (32768 up), where clients' and test servers' ports land.
  const int base = 20000 + static_cast<int>(getpid() % 600) * 20;
  ServerProcess s({"--executor", "local", "--containers", "--local-supplier", "dc", "--local-node", "box",
                   "--local-gpu-model", "h100-sxm5-80gb", "--local-driver", "550.90.07", "--local-cuda", "12.4",
                   "--local-run-dir", b.dir + "/runs", "--job-output-dir", b.dir + "/out",
                   "--container-gpu-device", b.dir + "/dev/gpu%d", "--volume-root", b.dir + "/volumes",
                   "--instance-ports", std::to_string(base) + "-" + std::to_string(base + 19), "--instance-bind",
                   "127.0.0.1", "--instance-host", "127.0.0.1", "--sched-interval-ms", "200", "--firewall-interval-s", "1"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  wait_for(s, "/api/v1/nodes?supplier=dc", [](const json& j) { return j["items"].size() == 1; });
  // The tenant's instances stop when idle for a minute, unless they say otherwise.
  json acme = tenant_doc("acme");
  acme["instance_idle_stop"] = {{"below_percent", 10}, {"minutes", 1}};
  const std::string tenant = expect_2xx(s.admin("POST", "/api/v1/tenants", acme), "tenant").body["id"];
  b.network = "gpurent-" + tenant;
  json p = project_doc("acme", "acme-proj");
  p["quota"]["gpus_per_model"] = {{"h100-sxm5-80gb", 2}};
  p["quota"].erase("max_gpus_per_job");
  expect_2xx(s.admin("POST", "/api/v1/projects", p), "project");
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const std::string viewer = make_user_token(s, "acme-viewer", "viewer", "acme");
  expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", "home"}, {"size_gb", 10}}), "volume");

  // Created with the CLI, as a tenant's engineer would (the file below is the CLI's input).
  json box = {{"name", "box"},         {"project", "acme-proj"},  {"gpus", 1},
              {"gpu_model", "h100-sxm5-80gb"}, {"image", kImage}, {"volume", {{"name", "home"}}},
              {"ssh_keys", {pub.substr(0, pub.find('\n'))}},   {"notebook", true},
              {"resources", {{"cpu_cores", 1}, {"memory_gib", 2}}}, {"idle_stop", {{"below_percent", 10}, {"minutes", 0}}}};
  const std::string box_file = b.dir + "/box.json";
  std::ofstream(box_file) << box.dump();
  int cli_rc = -1;
  const char* bin = std::getenv("GPURENT_TEST_BIN");
  const std::string cli_out = run_cmd("GPURENT_SERVER=" + s.url() + " GPURENT_TOKEN=" + dev + " " + (bin && *bin ? bin : GPURENT_BIN) +
                                          " -o json instances create -f " + box_file,
                                      &cli_rc);
  ASSERT_EQ(cli_rc, 0) << cli_out;
  const json created = json::parse(cli_out.substr(cli_out.find('{')));
  // A second instance, on the tenant's idle rule, runs beside it until it is found idle (below).
  expect_2xx(s.req("POST", "/api/v1/instances", dev,
                   json{{"name", "idler"}, {"project", "acme-proj"}, {"gpus", 1}, {"gpu_model", "h100-sxm5-80gb"},
                        {"image", kImage}, {"command", {"sleep", "infinity"}},
                        {"resources", {{"cpu_cores", 1}, {"memory_gib", 1}}}}),
             "idler");
  EXPECT_FALSE(created.contains("notebook_token")) << created.dump();
  EXPECT_EQ(created["ssh_port"], base);
  EXPECT_EQ(created["notebook_port"], base + 1);
  const std::string path = "/api/v1/instances/box";
  auto running = [](const json& j) { return j["state"] == "running"; };
  auto logs = [&](const json& inst) {
    const std::string job = inst["current_job"]["id"];
    Resp r = s.req("GET", "/api/v1/jobs/" + job + "/logs?limit=65536", dev);
    return r.status == 200 ? r.body["data"].get<std::string>() : r.describe();
  };
  json up = wait_for(s, path, running, 120);
  ASSERT_EQ(up["state"], "running") << up.dump() << s.log();
  ASSERT_TRUE(up["access"].is_object()) << up.dump();
  EXPECT_EQ(up["access"]["ssh"]["command"], "ssh -p " + std::to_string(base) + " gpurent@127.0.0.1") << up.dump();
  const std::string url = up["access"]["notebook"]["url"];
  EXPECT_EQ(url.rfind("http://127.0.0.1:" + std::to_string(base + 1) + "/?token=", 0), 0u) << url;
  const json seen_by_viewer = s.req("GET", path, viewer).body;
  EXPECT_TRUE(seen_by_viewer["access"]["notebook"]["url"].is_null()) << seen_by_viewer.dump();
  EXPECT_EQ(seen_by_viewer.dump().find(url.substr(url.find("token=") + 6)), std::string::npos) << "no token for a viewer";

  const std::string known_hosts = b.dir + "/ssh/known_hosts";
  auto ssh = [&](const std::string& with, const std::string& cmd, const std::string& host_check, int* rc) {
    return run_cmd("ssh -i " + with + " -p " + std::to_string(base) + " -o BatchMode=yes -o ConnectTimeout=5" +
                       " -o IdentitiesOnly=yes -o UserKnownHostsFile=" + known_hosts + " -o StrictHostKeyChecking=" +
                       host_check + " gpurent@127.0.0.1 '" + cmd + "'",
                   rc);
  };
  // sshd starts a moment after the container: retry for a while.
  auto ssh_when_up = [&](const std::string& cmd, const std::string& host_check) {
    int rc = -1;
    std::string out;
    for (int i = 0; i < 60 && rc != 0; ++i) {
      out = ssh(key, cmd, host_check, &rc);
      if (rc != 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return std::make_pair(rc, out);
  };
  auto [rc, out] = ssh_when_up("id -un; echo $HOME; echo kept > /data/notes.txt; nvidia-smi >/dev/null 2>&1; ls /dev | grep -c nvidia", "accept-new");
  ASSERT_EQ(rc, 0) << out << logs(up) << s.log();
  EXPECT_NE(out.find("gpurent\n/data\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\n1\n"), std::string::npos) << "exactly its one GPU: " << out;
  int other_rc = 0;
  const std::string refused = ssh(stranger, "true", "yes", &other_rc);
  EXPECT_EQ(other_rc, 255) << "another key is refused: " << refused;
  EXPECT_NE(refused.find("Permission denied"), std::string::npos) << refused;

  // The notebook: its token opens it, nothing else does.
  const std::string nb = "http://127.0.0.1:" + std::to_string(base + 1);
  const std::string token = url.substr(url.find("token=") + 6);
  std::string code;
  for (int i = 0; i < 60 && code != "200"; ++i) {
    code = run_cmd("curl -s -o /dev/null -w '%{http_code}' '" + nb + "/api/status?token=" + token + "'");
    if (code != "200") std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(code, "200") << logs(up);
  EXPECT_EQ(run_cmd("curl -s -o /dev/null -w '%{http_code}' '" + nb + "/api/status'"), "403");
  EXPECT_EQ(run_cmd("curl -s -o /dev/null -w '%{http_code}' '" + nb + "/api/status?token=" + std::string(64, '0') + "'"), "403");
  const std::string files = run_cmd("curl -s '" + nb + "/api/contents?token=" + token + "'");
  EXPECT_NE(files.find("notes.txt"), std::string::npos) << "the notebook serves the data volume: " << files;

  // Stop: nothing answers. Start: the file is there, under the same host key (StrictHostKeyChecking=yes).
  // Stopping while its container goes; stopped once it has gone.
  int64_t stopping_ms = 0;
  json stopped = stop_and_follow(s, path, dev, &stopping_ms);
  std::printf("stopping lasted %lld ms (local executor)\n", static_cast<long long>(stopping_ms));
  EXPECT_TRUE(stopped["access"].is_null()) << stopped.dump();
  int down_rc = 0;
  ssh(key, "true", "yes", &down_rc);
  EXPECT_EQ(down_rc, 255) << "a stopped instance answers no SSH, at once";
  expect_2xx(s.req("POST", path + "/start", dev, json::object()), "start");
  json again = wait_for(s, path, running, 120);
  ASSERT_EQ(again["state"], "running") << again.dump();
  EXPECT_EQ(again["access"]["ssh"]["port"], base) << "the same endpoint after a restart";
  auto [rc2, out2] = ssh_when_up("cat /data/notes.txt", "yes");
  EXPECT_EQ(rc2, 0) << out2 << logs(again);
  EXPECT_EQ(out2, "kept\n");

  // Restart in one step: the new run is submitted only once the old container has gone (without
  // that wait the new one would find the instance's ports still taken and fail).
  const json re = expect_2xx(s.req("POST", path + "/restart", dev, json::object()), "restart").body;
  EXPECT_NE(re["current_job"]["id"], again["current_job"]["id"]) << re.dump();
  const json back = wait_for(s, path, running, 120);
  ASSERT_EQ(back["state"], "running") << back.dump() << s.log();
  auto [rc_re, out_re] = ssh_when_up("cat /data/notes.txt", "yes");
  EXPECT_EQ(rc_re, 0) << out_re << logs(back);
  EXPECT_EQ(out_re, "kept\n");

  // Idle auto-stop: a minute of metered utilization below 10 % stops the idler (the tenant's rule)
  // and records why; box's own rule (minutes 0, off) is the one in force for it.
  json idler = wait_for(s, "/api/v1/instances/idler", running, 120);
  ASSERT_EQ(idler["state"], "running") << idler.dump() << s.log();
  EXPECT_EQ(idler["idle_stop_in_force"], (json{{"below_percent", 10}, {"minutes", 1}, {"source", "tenant"}}));
  EXPECT_EQ(again["idle_stop_in_force"]["source"], "instance");
  auto ms = [](const json& t) { return *parse_rfc3339(t.get<std::string>(), "t"); };
  auto started = [&](const json& inst) {
    const json job = s.admin("GET", "/api/v1/jobs/" + inst["current_job"]["id"].get<std::string>()).body;
    return std::make_pair(ms(job["status"]["updated_at"]), job["status"]["placement"][0]["gpus"][0].get<int64_t>());
  };
  const auto [idler_from, idler_gpu] = started(idler);
  while (SystemClock().now() < idler_from + 63'000) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  json low = {{"idempotency_key", "idle-1"}, {"gpu_samples", json::array()}};
  for (TimeMs at = idler_from + 1000; at < SystemClock().now() - 1000; at += 5000)
    low["gpu_samples"].push_back({{"at", format_rfc3339(at)}, {"node", "box"}, {"gpu", idler_gpu}, {"utilization_pct", 3}});
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", low).status, 201) << s.log();
  json idle = wait_for(s, "/api/v1/instances/idler", [](const json& j) { return j["state"] == "stopped"; }, 30);
  ASSERT_EQ(idle["state"], "stopped") << idle.dump() << s.log();
  const std::string why = idle["stop_reason"];
  EXPECT_NE(why.find("idle"), std::string::npos) << why;
  EXPECT_NE(why.find("10%"), std::string::npos) << why;
  EXPECT_NE(s.req("GET", "/api/v1/instances/idler?lang=zh", dev).body["stop_reason"].get<std::string>().find("空闲"),
            std::string::npos);
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/" + idler["current_job"]["id"].get<std::string>()).body["status"]["state"],
            "cancelled");
  EXPECT_EQ(s.admin("GET", path).body["state"], "running");

  // Its host taken by another tenant's job: a start is refused before anything is submitted,
  // saying so; a CPU-only start reaches the data, with no GPU in the container.
  expect_2xx(s.req("POST", path + "/stop", dev, json::object()), "stop");
  ASSERT_EQ(wait_for(s, path, [](const json& j) { return j["state"] == "stopped"; }, 60)["state"], "stopped");
  const std::string beta_tenant = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("beta")), "tenant").body["id"];
  json bp = project_doc("beta", "beta-proj");
  bp["quota"]["gpus_per_model"] = {{"h100-sxm5-80gb", 2}};
  bp["quota"].erase("max_gpus_per_job");
  expect_2xx(s.admin("POST", "/api/v1/projects", bp), "beta's project");
  const std::string beta = make_user_token(s, "beta-dev", "tenant_member", "beta");
  const json filler = {{"name", "filler"}, {"project", "beta-proj"}, {"kind", "batch"}, {"workers", 1},
                       {"gpus_per_worker", 2}, {"constraints", {{"gpu_models", {"h100-sxm5-80gb"}}}}, {"image", kImage},
                       {"command", {"sleep", "infinity"}}, {"resources", {{"cpu_cores", 1}, {"memory_gib", 1}}}};
  const std::string filler_id = expect_2xx(s.req("POST", "/api/v1/jobs", beta, filler), "filler").body["id"];
  wait_for(s, "/api/v1/jobs/" + filler_id, [](const json& j) { return j["status"]["state"] == "running"; }, 120);
  const json pf = s.req("GET", path + "/preflight", dev).body;
  EXPECT_EQ(pf["host"]["name"], "box") << pf.dump();
  EXPECT_EQ(pf["host_free"], false) << pf.dump();
  EXPECT_EQ(pf["host"]["free_gpus"], 0) << pf.dump();
  const size_t starts = s.req("GET", path, dev).body["job_ids"].size();
  Resp busy = s.req("POST", path + "/start", dev, json::object());
  EXPECT_EQ(busy.status, 409) << busy.describe();
  EXPECT_EQ(s.req("GET", path, dev).body["job_ids"].size(), starts) << "nothing submitted";
  expect_2xx(s.req("POST", path + "/start", dev, json{{"on", "cpu_only"}}), "start CPU-only");
  const json cpu = wait_for(s, path, running, 120);
  ASSERT_EQ(cpu["state"], "running") << cpu.dump() << s.log();
  auto [rc3, out3] = ssh_when_up("cat /data/notes.txt; ls /dev | grep -c nvidia || true", "yes");
  EXPECT_EQ(rc3, 0) << out3 << logs(cpu);
  EXPECT_EQ(out3, "kept\n0\n") << "its data, and no GPU";
  expect_2xx(s.req("POST", "/api/v1/jobs/" + filler_id + "/cancel", beta, json::object()), "cancel the filler");
  (void)std::system(("podman --runtime runc --cgroup-manager cgroupfs rm -f $(podman ps -aq --filter network=gpurent-" + beta_tenant +
                     ") >/dev/null 2>&1; podman network rm -f gpurent-" + beta_tenant + " >/dev/null 2>&1")
                        .c_str());

  // Release: the container goes; the volume keeps the file. Until it has gone, its data disk is
  // still held: a new instance on it is refused (the old container may still write there).
  ASSERT_EQ(s.req("DELETE", path, dev).status, 204);
  Resp early = s.req("POST", "/api/v1/instances", dev,
                     json{{"name", "box2"}, {"project", "acme-proj"}, {"gpus", 0}, {"image", kImage},
                          {"volume", {{"name", "home"}}}, {"resources", {{"cpu_cores", 1}, {"memory_gib", 1}}}});
  EXPECT_EQ(early.status, 409) << "released, its container still stopping: " << early.describe();
  std::string left = "?";
  for (int i = 0; i < 150 && !left.empty(); ++i) {
    left = run_cmd("podman ps -aq --filter name=gpurent-" + cpu["current_job"]["id"].get<std::string>());
    if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(left, "") << s.admin("GET", "/api/v1/jobs/" + cpu["current_job"]["id"].get<std::string>()).body.dump()
                      << run_cmd("date; cat " + b.dir + "/runs/*/wrapper.log " + b.dir + "/runs/*/exit; tail -n 30 " + b.dir + "/out/*.log") << s.log();
  EXPECT_TRUE(fs::exists(b.dir + "/volumes/" + tenant + "/home/notes.txt"));

  // A restart of an instance whose command is its PID 1: the new container is started only once
  // the old one has gone and the runtime has let go of the instance's SSH port (started beside it,
  // or the moment the old run ends, it finds the port still taken and fails, as seen before the
  // settle time was added).
  const json slow = {{"name", "slow"}, {"project", "acme-proj"}, {"gpus", 0}, {"image", kImage},
                     {"command", {"sleep", "infinity"}}, {"ssh_keys", {pub.substr(0, pub.find('\n'))}},
                     {"resources", {{"cpu_cores", 1}, {"memory_gib", 1}}}};
  expect_2xx(s.req("POST", "/api/v1/instances", dev, slow), "slow");
  const json slow_up = wait_for(s, "/api/v1/instances/slow", running, 120);
  ASSERT_EQ(slow_up["state"], "running") << slow_up.dump() << s.log();
  const json slow_re = expect_2xx(s.req("POST", "/api/v1/instances/slow/restart", dev, json::object()), "restart slow").body;
  EXPECT_EQ(slow_re["state"], "requested") << slow_re.dump();
  const json slow_back = wait_for(s, "/api/v1/instances/slow", running, 60);
  ASSERT_EQ(slow_back["state"], "running") << slow_back.dump() << logs(slow_back);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const json still = s.req("GET", "/api/v1/instances/slow", dev).body;
  EXPECT_EQ(still["state"], "running") << "its new container keeps running: " << still.dump() << logs(still);
  EXPECT_EQ(s.req("DELETE", "/api/v1/instances/slow", dev).status, 204);
}

}  // namespace
}  // namespace gpurent::testing
