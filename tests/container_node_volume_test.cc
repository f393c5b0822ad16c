// slurm_containers: an instance's data disk kept on its node's own disk (a node volume,
// docs/resources/volumes.md#node-volumes) on a real local Slurm cluster of two nodes with Podman
// containers. Its first run creates it on that node; its size is measured when a run ends; with
// that node's GPUs taken, the preflight estimates the copy to another node, a start on another
// host copies the data there before the container starts (the file written on the first node is
// read on the second), the copy is measured and the volume moves; the next start returns to the
// new host and copies nothing; a CPU-only start goes where the volume is.
// Each "node" keeps its volumes under <dir>/nodes/<node name> (--node-volume-root with %n): one
// machine playing two; the copy is a local rsync (--volume-copy-command), where a real cluster's
// default is rsync over SSH between the nodes.
// Skipped without root, Slurm, Podman, rsync or (when the image is not built yet) the Debian archive.
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

TEST(ContainerNodeVolume, slurm_containers_ANodeVolumeIsCopiedWhenItsInstanceMovesAndTheCopyMeasured) {
  if (const std::string why = local_slurm_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  if (std::getenv("SLURM_LOCAL_IMAGE")) GTEST_SKIP() << "containers run on the host's Slurm (22.05) only";
  if (std::system("command -v rsync >/dev/null 2>&1") != 0) GTEST_SKIP() << "needs rsync (scripts/install-deps.sh)";
  bool skip = false;
  const std::string not_ready = container_test_setup(&skip);
  if (skip) GTEST_SKIP() << not_ready;
  ASSERT_EQ(not_ready, "");

  SlurmContainerCluster c;
  c.dir = make_temp_dir("gpurent-nodevol");
  ASSERT_NE(c.dir, "");
  ASSERT_EQ(std::system((std::string(GPURENT_SOURCE_DIR) + "/scripts/slurm-local start " + c.dir + " 2 2").c_str()), 0);
  use_local_slurm_tools(c.dir);
  fs::create_directories(c.dir + "/out");
  ServerProcess s({"--executor", "slurm", "--slurm-conf", c.dir + "/slurm.conf", "--slurm-gres-type", "h100",
                   "--slurm-supplier", "dc", "--slurm-gpu-model", "h100-sxm5-80gb", "--slurm-driver", "550.90.07",
                   "--slurm-cuda", "12.4", "--slurm-output-dir", c.dir + "/out", "--containers", "--container-gpu-device",
                   c.dir + "/dev/gpu%d", "--volume-root", c.dir + "/shared", "--node-volume-root", c.dir + "/nodes/%n",
                   "--volume-copy-command", "mkdir -p {dir} && rsync -a --delete {from_dir}/ {dir}/",
                   "--volume-copy-mbps", "800", "--sched-interval-ms", "200", "--firewall-interval-s", "3600"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  wait_for(s, "/api/v1/nodes?supplier=dc", [](const json& j) { return j["items"].size() == 2; });
  const std::string tenant = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant").body["id"];
  c.networks.push_back("gpurent-" + tenant);
  json p = project_doc("acme", "acme-proj");
  p["quota"]["gpus_per_model"] = {{"h100-sxm5-80gb", 4}};
  p["quota"].erase("max_gpus_per_job");
  expect_2xx(s.admin("POST", "/api/v1/projects", p), "project");
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", "home"}, {"size_gb", 10}, {"placement", "node"}}), "volume");

  // Its first run writes 20 MB and a note; every run prints the note, then waits, ending at once
  // on a stop (as PID 1 it would otherwise ignore SIGTERM until Podman kills it, 2 s later here:
  // half this cluster's KillWait of 5 s, leaving the batch script little time to measure the volume).
  const std::string program =
      "trap 'exit 0' TERM; "
      "[ -f /data/first ] || { echo \"written on $GPURENT_NODE\" > /data/first; head -c 20000000 /dev/zero > /data/blob; }; "
      "echo NOTE $(cat /data/first); sleep infinity & wait";
  const json box = {{"name", "box"}, {"project", "acme-proj"}, {"gpus", 1}, {"gpu_model", "h100-sxm5-80gb"},
                    {"image", kImage}, {"volume", {{"name", "home"}}}, {"command", {"sh", "-c", program}},
                    {"resources", {{"cpu_cores", 1}, {"memory_gib", 1}}}};
  expect_2xx(s.req("POST", "/api/v1/instances", dev, box), "instance");
  const std::string path = "/api/v1/instances/box";
  auto running = [](const json& j) { return j["state"] == "running"; };
  auto stopped = [](const json& j) { return j["state"] == "stopped"; };
  auto node_of = [&](const json& inst) {
    const json job = s.admin("GET", "/api/v1/jobs/" + inst["current_job"]["id"].get<std::string>()).body;
    return s.admin("GET", "/api/v1/nodes/" + job["status"]["placement"][0]["node"].get<std::string>()).body["name"].get<std::string>();
  };
  auto log_of = [&](const json& inst, const std::string& what) {
    std::string out;
    for (int i = 0; i < 150; ++i) {
      Resp r = s.req("GET", "/api/v1/jobs/" + inst["current_job"]["id"].get<std::string>() + "/logs?limit=65536", dev);
      out = r.status == 200 ? r.body["data"].get<std::string>() : r.describe();
      if (out.find(what) != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return out;
  };
  json up = wait_for(s, path, running, 120);
  ASSERT_EQ(up["state"], "running") << up.dump() << s.log();
  const std::string first = node_of(up);
  const std::string other = first == "gpn1" ? "gpn2" : "gpn1";
  EXPECT_NE(log_of(up, "NOTE").find("NOTE written on " + first), std::string::npos) << log_of(up, "NOTE");
  // Created on that node's disk, and recorded there.
  json vol = wait_for(s, "/api/v1/volumes/" + s.req("GET", "/api/v1/volumes/home", dev).body["id"].get<std::string>(),
                      [](const json& j) { return j.contains("node"); }, 30);
  EXPECT_EQ(vol["node"], first) << vol.dump();
  EXPECT_TRUE(fs::exists(c.dir + "/nodes/" + first + "/" + tenant + "/home/first"));

  // Stopped: the run measures what the volume holds.
  expect_2xx(s.req("POST", path + "/stop", dev, json::object()), "stop");
  ASSERT_EQ(wait_for(s, path, stopped, 60)["state"], "stopped");
  vol = wait_for(s, "/api/v1/volumes/" + vol["id"].get<std::string>(),
                 [](const json& j) { return j.value("used_bytes", int64_t{0}) > 20'000'000; }, 60);
  const int64_t used = vol.value("used_bytes", int64_t{0});
  ASSERT_GT(used, 20'000'000) << vol.dump();

  // Its host taken: the preflight estimates the copy another host means (its measured size at the
  // assumed 800 Mbit/s: 20 MB is a second).
  json filler = job_doc("acme-proj", "filler");
  filler["gpus_per_worker"] = 2;
  filler["image"] = kImage;
  filler["command"] = {"sleep", "infinity"};
  filler["resources"] = {{"cpu_cores", 1}, {"memory_gib", 1}};
  filler["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}, {"nodes", {first}}};
  const std::string filler_id = expect_2xx(s.req("POST", "/api/v1/jobs", dev, filler), "filler").body["id"];
  wait_for(s, "/api/v1/jobs/" + filler_id, [](const json& j) { return j["status"]["state"] == "running"; }, 120);
  const json pf = s.req("GET", path + "/preflight", dev).body;
  EXPECT_EQ(pf["host_free"], false) << pf.dump();
  EXPECT_EQ(pf["volume"]["placement"], "node") << pf.dump();
  EXPECT_EQ(pf["volume"]["node"]["name"], first) << pf.dump();
  EXPECT_EQ(pf["volume"]["copy"]["bytes"], used) << pf.dump();
  EXPECT_EQ(pf["volume"]["copy"]["bytes_measured"], true);
  EXPECT_EQ(pf["volume"]["copy"]["rate_basis"], "assumed");
  EXPECT_EQ(pf["volume"]["copy"]["rate_mbps"], 800);
  EXPECT_EQ(pf["volume"]["copy"]["estimate_seconds"], (used * 8 + 800'000'000 - 1) / 800'000'000);
  const std::string advice = pf["advice"];
  EXPECT_NE(advice.find("copies its volume home from node " + first), std::string::npos) << advice;
  EXPECT_NE(s.req("GET", path + "/preflight?lang=zh", dev).body["advice"].get<std::string>().find("复制数据卷 home"), std::string::npos);

  // Started on another host: the volume is copied there first, read there, and the copy measured.
  expect_2xx(s.req("POST", path + "/start", dev, json{{"on", "any_host"}}), "start elsewhere");
  json moved = wait_for(s, path, running, 120);
  ASSERT_EQ(moved["state"], "running") << moved.dump() << s.log();
  EXPECT_EQ(node_of(moved), other);
  const std::string log = log_of(moved, "NOTE");
  EXPECT_NE(log.find("NOTE written on " + first), std::string::npos) << "the first node's file, on the second: " << log;
  EXPECT_NE(log.find("gpurent: copied volume home"), std::string::npos) << log;
  vol = wait_for(s, "/api/v1/volumes/" + vol["id"].get<std::string>(), [&](const json& j) { return j.value("node", "") == other; }, 30);
  ASSERT_EQ(vol["node"], other) << vol.dump();
  ASSERT_TRUE(vol["last_copy"].is_object()) << vol.dump();
  EXPECT_EQ(vol["last_copy"]["from_node_name"], first);
  EXPECT_EQ(vol["last_copy"]["to_node_name"], other);
  EXPECT_GE(vol["last_copy"]["bytes"].get<int64_t>(), used);
  EXPECT_GE(vol["last_copy"]["ms"].get<int64_t>(), 0);
  std::cout << "node volume copy: " << vol["last_copy"]["bytes"] << " bytes in " << vol["last_copy"]["ms"]
            << " ms (estimated " << pf["volume"]["copy"]["estimate_seconds"] << " s)\n";
  const json after = s.req("GET", path + "/preflight", dev).body;
  EXPECT_EQ(after["volume"]["copy"]["last"]["from"], first) << after.dump();

  // Back on its new host next time: nothing copied (the last copy stays the one above).
  expect_2xx(s.req("POST", path + "/stop", dev, json::object()), "stop");
  ASSERT_EQ(wait_for(s, path, stopped, 60)["state"], "stopped");
  expect_2xx(s.req("POST", path + "/start", dev, json::object()), "start home");
  json home = wait_for(s, path, running, 120);
  EXPECT_EQ(node_of(home), other);
  EXPECT_EQ(log_of(home, "NOTE").find("gpurent: copying volume"), std::string::npos) << "no copy at home";
  EXPECT_EQ(s.req("GET", "/api/v1/volumes/home", dev).body["last_copy"], vol["last_copy"]);

  // CPU-only goes where the volume is.
  expect_2xx(s.req("POST", path + "/stop", dev, json::object()), "stop");
  ASSERT_EQ(wait_for(s, path, stopped, 60)["state"], "stopped");
  expect_2xx(s.req("POST", path + "/start", dev, json{{"on", "cpu_only"}}), "start CPU-only");
  json cpu = wait_for(s, path, running, 120);
  ASSERT_EQ(cpu["state"], "running") << cpu.dump();
  EXPECT_EQ(node_of(cpu), other);
  EXPECT_EQ(s.req("DELETE", path, dev).status, 204);
  expect_2xx(s.req("POST", "/api/v1/jobs/" + filler_id + "/cancel", dev, json::object()), "cancel the filler");
}

}  // namespace
}  // namespace gpurent::testing
