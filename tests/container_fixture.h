// What the container tests share (tests/container_*_test.cc): a shell command's output, the Python
// image they run, built from Debian packages once, and a folder and network cleaned up after them.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "server_fixture.h"

namespace gpurent::testing {

// The image the container tests run (scripts/debian-image: Debian's python3, procps, iproute2, and
// openssh-server and jupyter-notebook for instances' SSH and notebook).
inline constexpr const char* kImage = "localhost/gpurent/dev:bookworm";

// Runs `cmd` with sh, stderr joined to stdout: its output, and its exit status in *rc.
inline std::string run_cmd(const std::string& cmd, int* rc = nullptr) {
  std::string out;
  if (FILE* p = popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int st = pclose(p);
    if (rc) *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  return out;
}

// Podman and kImage, built unless Podman has it (cached by scripts/debian-image): "" when both are
// there; else what is missing, with *skip set when the test should skip (no Podman, or only the
// Debian archive out of reach).
inline std::string container_test_setup(bool* skip) {
  *skip = true;
  if (std::system("command -v podman >/dev/null 2>&1") != 0) return "podman is not installed";
  int rc = 0;
  const std::string out = run_cmd(std::string(GPURENT_SOURCE_DIR) + "/scripts/debian-image " + kImage +
                                      " bookworm python3,procps,iproute2,openssh-server,jupyter-notebook minbase",
                                  &rc);
  *skip = rc == 77;
  return rc == 0 ? "" : out.empty() ? "scripts/debian-image failed" : out;
}

// In a test body: skips the test without root (containers with device nodes) or without Podman and
// kImage (container_test_setup), and fails it when the image cannot be built.
#define GPURENT_NEED_LOCAL_CONTAINERS()                                                        \
  do {                                                                                        \
    if (geteuid() != 0) GTEST_SKIP() << "needs root (Podman containers with device nodes)";   \
    bool skip_ = false;                                                                       \
    const std::string not_ready_ = ::gpurent::testing::container_test_setup(&skip_);          \
    if (skip_) GTEST_SKIP() << not_ready_;                                                    \
    ASSERT_EQ(not_ready_, "");                                                                \
  } while (0)

// A test's folder and its tenant's network: at the end, only this test's containers (those on that
// network: other container tests may run beside it), the network and the folder are removed.
struct ContainerTestBox {
  std::string dir, network;
  std::string image_scope;  // when set, the Podman images localhost/gpurent/<image_scope>/* go too
  ContainerTestBox() = default;
  ContainerTestBox(const ContainerTestBox&) = delete;
  ContainerTestBox& operator=(const ContainerTestBox&) = delete;
  ~ContainerTestBox() {
    if (!network.empty())
      (void)std::system(("podman --runtime runc --cgroup-manager cgroupfs rm -f $(podman ps -aq --filter network=" + network +
                         ") >/dev/null 2>&1; podman network rm -f " + network + " >/dev/null 2>&1")
                            .c_str());
    if (!image_scope.empty())  // a saved image (about 500 MB) each run otherwise
      (void)std::system(("podman rmi -f $(podman images -q --filter reference='localhost/gpurent/" + image_scope +
                         "/*') >/dev/null 2>&1")
                            .c_str());
    if (!dir.empty()) std::filesystem::remove_all(dir);
  }
};

// A local Slurm cluster (scripts/slurm-local, in `dir`) and the tenants' networks its container
// jobs created: at the end only those networks' containers and the networks go (other container
// tests may run beside it), then the cluster's daemons stop and the folder is removed.
struct SlurmContainerCluster {
  std::string dir;
  std::vector<std::string> networks;
  SlurmContainerCluster() = default;
  SlurmContainerCluster(const SlurmContainerCluster&) = delete;
  SlurmContainerCluster& operator=(const SlurmContainerCluster&) = delete;
  ~SlurmContainerCluster() {
    for (const auto& n : networks)
      (void)std::system(("podman --runtime runc --cgroup-manager cgroupfs rm -f $(podman ps -aq --filter network=" + n +
                         ") >/dev/null 2>&1; podman network rm -f " + n + " >/dev/null 2>&1")
                            .c_str());
    if (dir.empty()) return;
    (void)std::system((std::string(GPURENT_SOURCE_DIR) + "/scripts/slurm-local stop " + dir).c_str());
    std::filesystem::remove_all(dir);
  }
};

// Stops the instance at `path` as `token` and follows it to stopped (docs/resources/instances.md
// #stopping): the stop answers stopping (its job cancelled, its container still going); a detach
// of its data disk at once is refused as still stopping; once it reads stopped, no container of that job is left on
// this machine. The last body read; how long it read stopping in *stopping_ms.
inline json stop_and_follow(const ServerProcess& s, const std::string& path, const std::string& token,
                            int64_t* stopping_ms = nullptr) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto stop = s.req("POST", path + "/stop", token, json::object());
  EXPECT_EQ(stop.status, 200) << stop.describe();
  EXPECT_EQ(stop.body.value("state", ""), "stopping") << "the stop answers stopping: " << stop.body.dump();
  const std::string job = stop.body.contains("current_job") ? stop.body["current_job"].value("id", "") : "";
  if (stop.body.contains("volume")) {  // nor may its volumes change while the old container holds them
    const auto detach = s.req("POST", path + "/detach", token, json{{"name", stop.body["volume"]["name"]}});
    EXPECT_EQ(detach.body["detail_message"].value("code", ""), "api.instances.still_stopping") << detach.describe();
  }
  json last = stop.body;
  for (int i = 0; i < 600 && last.value("state", "") == "stopping"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    last = s.req("GET", path, token).body;
  }
  if (stopping_ms)
    *stopping_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(last.value("state", ""), "stopped") << last.dump();
  EXPECT_FALSE(last.contains("stopping_since")) << last.dump();
  EXPECT_EQ(run_cmd("podman --runtime runc --cgroup-manager cgroupfs ps -aq --filter name=gpurent-" + job + "-"), "")
      << "stopped means its container has gone";
  return last;
}

// A new folder /tmp/<prefix>-XXXXXX ("" when it cannot be made).
inline std::string make_temp_dir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
  return mkdtemp(tmpl.data()) ? tmpl : "";
}

// A local-executor server's folder in b.dir (a new /tmp/<prefix>-XXXXXX): runs, job output, volumes
// and `gpus` fake GPU device nodes (character devices, which containers get passed through). ""
// when it is ready, else what failed.
inline std::string prepare_local_box(ContainerTestBox& b, const std::string& prefix, int gpus) {
  b.dir = make_temp_dir(prefix);
  if (b.dir.empty()) return "cannot make a folder under /tmp";
  for (const char* d : {"/dev", "/out", "/volumes", "/runs"}) std::filesystem::create_directories(b.dir + d);
  for (int i = 0; i < gpus; ++i)
    if (std::system(("mknod " + b.dir + "/dev/gpu" + std::to_string(i) + " c 1 3").c_str()) != 0)
      return "mknod " + b.dir + "/dev/gpu" + std::to_string(i) + " failed";
  return "";
}

// The flags of a server running containers on this machine as node "box" of supplier "dc"
// (H100s, the box's folders), followed by `extra`.
inline std::vector<std::string> local_executor_flags(const ContainerTestBox& b, std::vector<std::string> extra) {
  std::vector<std::string> flags = {"--executor", "local", "--containers", "--local-supplier", "dc", "--local-node", "box",
                                    "--local-gpu-model", "h100-sxm5-80gb", "--local-driver", "550.90.07", "--local-cuda", "12.4",
                                    "--local-run-dir", b.dir + "/runs", "--job-output-dir", b.dir + "/out",
                                    "--container-gpu-device", b.dir + "/dev/gpu%d", "--volume-root", b.dir + "/volumes"};
  flags.insert(flags.end(), extra.begin(), extra.end());
  return flags;
}

}  // namespace gpurent::testing
