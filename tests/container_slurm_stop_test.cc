// slurm_containers: a cancelled job's container whose command ignores SIGTERM has stopped before
// its GPUs can go to another job, on a real local Slurm cluster whose KillWait (5 s) is shorter than
// Podman's default stop timeout (10 s). The batch script's trap stops the container with
// `podman stop -t N`; Slurm kills that `podman stop` KillWait seconds after its SIGTERM, and the
// container is no child of slurmstepd, so with N = 10 it would run on, outside its job. The server
// reads KillWait and gives containers half of it (docs/containers.md). Skipped without root,
// Slurm, Podman or (when the image is not built yet) the Debian archive.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <thread>

#include "container_fixture.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

TEST(ContainerSlurmStop, slurm_containers_ACancelledContainerThatIgnoresSigtermStopsWithItsJob) {
  if (const std::string why = local_slurm_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  if (std::getenv("SLURM_LOCAL_IMAGE")) GTEST_SKIP() << "containers run on the host's Slurm (22.05) only";
  bool skip = false;
  const std::string not_ready = container_test_setup(&skip);
  if (skip) GTEST_SKIP() << not_ready;
  ASSERT_EQ(not_ready, "");

  SlurmContainerCluster c;
  c.dir = make_temp_dir("gpurent-stop");
  ASSERT_NE(c.dir, "");
  ASSERT_EQ(std::system((std::string(GPURENT_SOURCE_DIR) + "/scripts/slurm-local start " + c.dir + " 1 1").c_str()), 0);
  ASSERT_NE(run_cmd("grep -x KillWait=5 " + c.dir + "/slurm.conf"), "") << "the cluster this test is about";
  use_local_slurm_tools(c.dir);
  fs::create_directories(c.dir + "/out");
  ServerProcess s({"--executor",
                   "slurm",
                   "--slurm-conf",
                   c.dir + "/slurm.conf",
                   "--slurm-gres-type",
                   "h100",
                   "--slurm-supplier",
                   "dc",
                   "--slurm-gpu-model",
                   "h100-sxm5-80gb",
                   "--slurm-driver",
                   "550.90.07",
                   "--slurm-cuda",
                   "12.4",
                   "--slurm-output-dir",
                   c.dir + "/out",
                   "--containers",
                   "--container-gpu-device",
                   c.dir + "/dev/gpu%d",
                   "--sched-interval-ms",
                   "200",
                   "--firewall-interval-s",
                   "3600"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  wait_for(s, "/api/v1/nodes?supplier=dc", [](const json& j) { return j["items"].size() == 1; });
  const std::string tenant = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant").body["id"];
  c.networks.push_back("gpurent-" + tenant);
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");

  // Its command ignores SIGTERM (a training loop that traps it and carries on, say).
  json j = job_doc("vision", "stubborn");
  j["image"] = kImage;
  j["expected_duration_seconds"] = 600;
  j["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}};
  j["resources"] = {{"cpu_cores", 1}, {"memory_gib", 1}};
  j.erase("env");
  j["command"] = {"sh", "-c", "trap '' TERM; echo started; while :; do sleep 1; done"};
  const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", j), "job").body["id"];
  const std::string running_filter =
      "podman --runtime runc --cgroup-manager cgroupfs ps -q --filter name=gpurent-" + id + "-";
  bool up = false;
  for (int i = 0; i < 600 && !up; ++i) {  // the job running and its container up (a loaded machine: a minute)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    up = !run_cmd(running_filter).empty();
  }
  ASSERT_TRUE(up) << s.admin("GET", "/api/v1/jobs/" + id).describe();

  expect_2xx(s.admin("POST", "/api/v1/jobs/" + id + "/cancel", json::object()), "cancel");
  EXPECT_EQ(wait_for(s, "/api/v1/jobs/" + id,
                     [](const json& b) { return b["status"]["state"] == "cancelled"; })["status"]["state"],
            "cancelled");
  // Slurm lets the job go KillWait (5 s) after the cancel at the latest, killing what is left of
  // the batch script. With the container's stop fitted inside that, Podman has stopped the
  // container by then (SIGKILL at the latest) and the script has removed it, or, when Podman is
  // slower than the rest of KillWait (a loaded machine), left it exited (the cluster fixture removes it at the
  // end; docs/containers.md on such leftovers). A `podman stop -t 10` would have been killed half-way,
  // leaving the container `Stopping` (running on where Slurm's cgroups do not hold it).
  const auto t0 = std::chrono::steady_clock::now();
  const std::string all =
      "podman --runtime runc --cgroup-manager cgroupfs ps -a --format '{{.Status}}' --filter name=gpurent-" + id + "-";
  auto not_exited = [&] {  // the job's containers not stopped: running, stopping, paused…
    std::string out = run_cmd(all), left;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
      if (!line.empty() && line.rfind("Exited", 0) != 0) left += line + "\n";
    return left;
  };
  std::string left = not_exited();
  while (!left.empty() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    left = not_exited();
  }
  EXPECT_EQ(left, "") << "the cancelled job's container has not stopped "
                      << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0).count()
                      << " s after the job was cancelled";
}

}  // namespace
}  // namespace gpurent::testing
