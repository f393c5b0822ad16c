// slurm_containers: an instance on the real local Slurm cluster with Podman containers
// (`gpurent serve --executor slurm --containers`), reached as its tenant reaches it: a real `ssh`
// client logs in with the tenant's key through the port the API names and writes on the data
// volume, the notebook answers its token (and refuses requests without it), a stop reads stopping
// until Slurm's job has gone (its data disk cannot be detached meanwhile), a stopped instance
// answers no SSH, and after a start, and after a restart, the file is there under the same host
// key. The same as container_instance_test on the local executor, here through sbatch, the batch script and scancel.
// Skipped without root, Slurm, Podman, ssh or curl, or (when the image is not built yet) the
// Debian archive.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "container_fixture.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

TEST(ContainerSlurmInstance, slurm_containers_AnInstanceIsReachedBySshAndNotebookAcrossStopAndStart) {
  if (const std::string why = local_slurm_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  if (std::getenv("SLURM_LOCAL_IMAGE")) GTEST_SKIP() << "containers run on the host's Slurm (22.05) only";
  if (std::system("command -v ssh >/dev/null && command -v ssh-keygen >/dev/null && command -v curl >/dev/null") != 0)
    GTEST_SKIP() << "needs the OpenSSH client and curl (scripts/install-deps.sh)";
  bool skip = false;
  const std::string not_ready = container_test_setup(&skip);
  if (skip) GTEST_SKIP() << not_ready;
  ASSERT_EQ(not_ready, "");

  SlurmContainerCluster c;
  c.dir = make_temp_dir("gpurent-slurm-instance");
  ASSERT_NE(c.dir, "");
  ASSERT_EQ(std::system((std::string(GPURENT_SOURCE_DIR) + "/scripts/slurm-local start " + c.dir + " 1 2").c_str()), 0);
  use_local_slurm_tools(c.dir);
  for (const char* d : {"/out", "/volumes", "/ssh"}) fs::create_directories(c.dir + d);
  const std::string key = c.dir + "/ssh/id";
  ASSERT_EQ(std::system(("ssh-keygen -q -t ed25519 -N '' -C dev@laptop -f " + key).c_str()), 0);
  const std::string pub = run_cmd("cat " + key + ".pub");
  const int base = 20000 + static_cast<int>(getpid() % 600) * 20 + 15;  // beside the other instance tests' ports
  ServerProcess s({"--executor", "slurm", "--slurm-conf", c.dir + "/slurm.conf", "--slurm-gres-type", "h100",
                   "--slurm-supplier", "dc", "--slurm-gpu-model", "h100-sxm5-80gb", "--slurm-driver", "550.90.07",
                   "--slurm-cuda", "12.4", "--slurm-output-dir", c.dir + "/out", "--containers", "--container-gpu-device",
                   c.dir + "/dev/gpu%d", "--volume-root", c.dir + "/volumes", "--instance-ports",
                   std::to_string(base) + "-" + std::to_string(base + 4), "--instance-bind", "127.0.0.1",
                   "--instance-host", "127.0.0.1", "--sched-interval-ms", "200", "--firewall-interval-s", "3600"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  wait_for(s, "/api/v1/nodes?supplier=dc", [](const json& j) { return j["items"].size() == 1; });
  const std::string tenant = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant").body["id"];
  c.networks.push_back("gpurent-" + tenant);
  json p = project_doc("acme", "acme-proj");
  p["quota"]["gpus_per_model"] = {{"h100-sxm5-80gb", 2}};
  p["quota"].erase("max_gpus_per_job");
  expect_2xx(s.admin("POST", "/api/v1/projects", p), "project");
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", "home"}, {"size_gb", 10}}), "volume");
  expect_2xx(s.req("POST", "/api/v1/instances", dev,
                   json{{"name", "box"}, {"project", "acme-proj"}, {"gpus", 1}, {"gpu_model", "h100-sxm5-80gb"},
                        {"image", kImage}, {"volume", {{"name", "home"}}}, {"ssh_keys", {pub.substr(0, pub.find('\n'))}},
                        {"notebook", true}, {"resources", {{"cpu_cores", 1}, {"memory_gib", 2}}}}),
             "instance");
  const std::string path = "/api/v1/instances/box";
  auto running = [](const json& j) { return j["state"] == "running"; };
  json up = wait_for(s, path, running, 120);
  ASSERT_EQ(up["state"], "running") << up.dump() << s.log();
  ASSERT_TRUE(up["access"].is_object()) << up.dump();
  EXPECT_EQ(up["access"]["ssh"]["command"], "ssh -p " + std::to_string(base) + " gpurent@127.0.0.1");

  const std::string known_hosts = c.dir + "/ssh/known_hosts";
  auto ssh = [&](const std::string& cmd, const std::string& host_check, int* rc) {
    return run_cmd("ssh -i " + key + " -p " + std::to_string(base) + " -o BatchMode=yes -o ConnectTimeout=5 -o IdentitiesOnly=yes" +
                       " -o UserKnownHostsFile=" + known_hosts + " -o StrictHostKeyChecking=" + host_check + " gpurent@127.0.0.1 '" +
                       cmd + "'",
                   rc);
  };
  auto ssh_when_up = [&](const std::string& cmd, const std::string& host_check) {
    int rc = -1;
    std::string out;
    for (int i = 0; i < 60 && rc != 0; ++i) {
      out = ssh(cmd, host_check, &rc);
      if (rc != 0) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return std::make_pair(rc, out);
  };
  auto [rc, out] = ssh_when_up("id -un; echo kept > /data/notes.txt; ls /dev | grep -c nvidia", "accept-new");
  ASSERT_EQ(rc, 0) << out << s.log();
  EXPECT_NE(out.find("gpurent\n1\n"), std::string::npos) << "its user, exactly its one GPU: " << out;

  const std::string url = up["access"]["notebook"]["url"];
  const std::string nb = "http://127.0.0.1:" + std::to_string(base + 1);
  std::string code;
  for (int i = 0; i < 60 && code != "200"; ++i) {
    code = run_cmd("curl -s -o /dev/null -w '%{http_code}' '" + nb + "/api/status?token=" + url.substr(url.find("token=") + 6) + "'");
    if (code != "200") std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(code, "200");
  EXPECT_EQ(run_cmd("curl -s -o /dev/null -w '%{http_code}' '" + nb + "/api/status'"), "403");

  // Stopped through scancel: nothing answers. Started again: the file, under the same host key.
  // Stopping while Slurm's job completes; stopped once it has gone.
  int64_t stopping_ms = 0;
  ASSERT_EQ(stop_and_follow(s, path, dev, &stopping_ms)["state"], "stopped");
  std::printf("stopping lasted %lld ms (Slurm)\n", static_cast<long long>(stopping_ms));
  int down = 0;
  ssh("true", "yes", &down);
  EXPECT_EQ(down, 255) << "a stopped instance answers no SSH, at once";
  expect_2xx(s.req("POST", path + "/start", dev, json::object()), "start");
  ASSERT_EQ(wait_for(s, path, running, 120)["state"], "running");
  auto [rc2, out2] = ssh_when_up("cat /data/notes.txt", "yes");
  EXPECT_EQ(rc2, 0) << out2;
  EXPECT_EQ(out2, "kept\n");
  const json re = expect_2xx(s.req("POST", path + "/restart", dev, json::object()), "restart").body;
  const json back = wait_for(s, path, running, 120);
  ASSERT_EQ(back["state"], "running") << back.dump() << s.log();
  EXPECT_NE(back["current_job"]["id"], up["current_job"]["id"]);
  auto [rc3, out3] = ssh_when_up("cat /data/notes.txt", "yes");
  EXPECT_EQ(out3, "kept\n") << "after a restart";
  (void)re;
  EXPECT_EQ(s.req("DELETE", path, dev).status, 204);
}

}  // namespace
}  // namespace gpurent::testing
