// Benchmark: how long an interactive instance takes to be reachable by SSH, measured from outside
// with a real `ssh` client against a real server (`gpurent serve --executor local --containers` on
// fake GPU device nodes, scheduler tick 100 ms): create -> first successful `ssh … true`, and, for
// the same instance, start after a stop -> first successful ssh. Beside it, in the same run, the
// baseline: a bare `podman run -d` of the same image with the same sshd entry
// (instance_entry_script) and a published port, to the first successful ssh. Figures are p50 and
// p95 wall milliseconds over N rounds, with the image cached.
// Usage: bench/run instance_start [N]   (default 10). Needs root, Podman and the OpenSSH client.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "exec/process.h"
#include "server/services/instance_entry.h"

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr const char* kImage = "localhost/gpurent/dev:bookworm";

// Runs `cmd` with sh, stderr joined to stdout: its output, its exit status in *rc.
std::string sh(const std::string& cmd, int* rc = nullptr) {
  auto r = gpurent::run_process({"sh", "-c", cmd + " 2>&1"}, {}, "", 180'000);
  if (rc) *rc = r ? r->exit_code : -1;
  return r ? r->out : "";
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

struct Bench {
  std::string dir, url, token, key;

  json api(const std::string& method, const std::string& path, const json& body = nullptr) {
    std::string cmd = "curl -sS -X " + method + " -H 'Authorization: Bearer " + token + "' " + url + "/api/v1" + path;
    if (!body.is_null()) {
      std::ofstream(dir + "/body.json") << body.dump();
      cmd += " -H 'Content-Type: application/json' --data-binary @" + dir + "/body.json";
    }
    const std::string out = sh(cmd);
    json j = json::parse(out, nullptr, false);
    return j.is_discarded() ? json{{"raw", out}} : j;
  }
  // The first successful `ssh … true` on `port`, polled; false after 120 s.
  bool ssh_ready(int port) {
    const auto t0 = Clock::now();
    while (ms_since(t0) < 120'000) {
      int rc = 0;
      sh("ssh -i " + key + " -p " + std::to_string(port) +
             " -o BatchMode=yes -o ConnectTimeout=2 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null"
             " -o LogLevel=ERROR gpurent@127.0.0.1 true",
         &rc);
      if (rc == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  // Whether a container (running or not) still holds the node port.
  bool published(int port) {
    return sh("podman ps -a --format '{{.Ports}}' | grep -c ':" + std::to_string(port) + "->' || true") != "0\n";
  }
  bool wait_state(const std::string& name, const std::string& want) {

    for (int i = 0; i < 2400; ++i) {
      if (api("GET", "/instances/" + name).value("state", "") == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }
};

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "instance_start: %s\n", why.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::max(2, std::atoi(argv[1])) : 10;
  int have = 0;
  sh("command -v podman && command -v ssh && command -v ssh-keygen && command -v curl", &have);
  if (geteuid() != 0 || have != 0) {
    std::printf("instance_start: skipped (needs root, podman, ssh and curl)\n");
    return 0;
  }
  int rc = 0;
  sh("scripts/debian-image " + std::string(kImage) + " bookworm python3,procps,iproute2,openssh-server,jupyter-notebook minbase", &rc);
  if (rc != 0) {
    std::printf("instance_start: skipped (no image %s and scripts/debian-image could not build it)\n", kImage);
    return 0;
  }
  Bench b;
  char tmpl[] = "/tmp/gpurent-bench-instance-XXXXXX";
  if (!mkdtemp(tmpl)) fail("cannot make a folder");
  b.dir = tmpl;
  for (const char* d : {"/dev", "/out", "/volumes", "/runs"}) fs::create_directories(b.dir + d);
  sh("mknod " + b.dir + "/dev/gpu0 c 1 3; mknod " + b.dir + "/dev/gpu1 c 1 3");
  b.key = b.dir + "/id";
  sh("ssh-keygen -q -t ed25519 -N '' -f " + b.key);
  const std::string pub = sh("cat " + b.key + ".pub");
  const std::string bin = fs::path(fs::read_symlink("/proc/self/exe")).parent_path().string() + "/gpurent";
  const int base = 20000 + static_cast<int>(getpid() % 600) * 20;
  sh(bin + " serve --db " + b.dir + "/db --port 0 --executor local --containers --local-supplier huadong-compute" +
     " --local-node box --local-gpu-model h100-sxm5-80gb --local-driver 550.90.07 --local-cuda 12.4 --local-run-dir " +
     b.dir + "/runs --job-output-dir " + b.dir + "/out --container-gpu-device " + b.dir + "/dev/gpu%d --volume-root " +
     b.dir + "/volumes --instance-ports " + std::to_string(base) + "-" + std::to_string(base + 19) +
     " --instance-bind 127.0.0.1 --instance-host 127.0.0.1 --sched-interval-ms 100 --firewall-interval-s 0" +
     " > " + b.dir + "/server.out 2>&1 & echo $! > " + b.dir + "/server.pid");
  for (int i = 0; i < 200 && b.url.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(b.dir + "/server.out");
    for (std::string line; std::getline(in, line);) {
      json j = json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.value("event", "") == "listening") b.url = j.value("url", "");
    }
  }
  if (b.url.empty()) fail("the server did not start: " + sh("cat " + b.dir + "/server.out"));
  b.token = sh("cat " + b.dir + "/db.admin-token");
  while (!b.token.empty() && (b.token.back() == '\n' || b.token.back() == ' ')) b.token.pop_back();
  auto yaml = [&](const std::string& path, const std::string& file) {
    sh("curl -sS -X POST -H 'Authorization: Bearer " + b.token + "' -H 'Content-Type: application/yaml' --data-binary @" +
       file + " " + b.url + "/api/v1" + path);
  };
  yaml("/suppliers", "examples/supplier.yaml");
  for (int i = 0; i < 100 && b.api("GET", "/nodes")["items"].empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  b.api("POST", "/tenants", {{"name", "acme"}, {"currency", "USD"}, {"contact_email", "ops@acme.example.com"}});
  yaml("/projects", "examples/project.yaml");
  b.api("POST", "/volumes", {{"name", "home"}, {"tenant", "acme"}, {"size_gb", 10}});

  std::vector<double> create, restart, bare;
  for (int i = 0; i < n; ++i) {
    const std::string name = "b" + std::to_string(i);
    const auto t0 = Clock::now();
    json made = b.api("POST", "/instances",
                      {{"name", name}, {"project", "vision"}, {"gpus", 1}, {"gpu_model", "h100-sxm5-80gb"},
                       {"image", kImage}, {"volume", {{"name", "home"}}}, {"ssh_keys", {pub.substr(0, pub.find('\n'))}},
                       {"resources", {{"cpu_cores", 1}, {"memory_gib", 1}}}});
    if (!made.contains("ssh_port")) fail("create: " + made.dump());
    const int port = made["ssh_port"].get<int>();
    if (!b.ssh_ready(port)) fail("no SSH after create: " + b.api("GET", "/instances/" + name).dump());
    create.push_back(ms_since(t0));
    b.api("POST", "/instances/" + name + "/stop", json::object());
    if (!b.wait_state(name, "stopped")) fail("no stop");
    // The old container must be gone before the port can be published again.
    for (int k = 0; k < 600 && b.published(port); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto t1 = Clock::now();
    b.api("POST", "/instances/" + name + "/start", json::object());
    if (!b.ssh_ready(port)) fail("no SSH after start: " + b.api("GET", "/instances/" + name).dump());
    restart.push_back(ms_since(t1));
    b.api("DELETE", "/instances/" + name);
    for (int k = 0; k < 600 && b.published(port); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Baseline: the same image and sshd entry, started by hand.
  gpurent::InstanceEntry e;
  e.ssh_keys = {pub.substr(0, pub.find('\n'))};
  e.ssh_port = base + 19;
  const std::string entry = gpurent::instance_entry_script(e);
  std::ofstream(b.dir + "/entry.sh") << entry;
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    sh("podman --runtime runc --cgroup-manager cgroupfs run -d --name gpurent-bench-bare --user 1000:1000"
       " --passwd-entry 'gpurent:*:$UID:$GID:gpurent:/tmp:/bin/sh' --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 -p 127.0.0.1:" +
       std::to_string(e.ssh_port) + ":2222 " + kImage + " sh -c \"$(cat " + b.dir + "/entry.sh)\" gpurent-instance", &rc);
    if (rc != 0 || !b.ssh_ready(static_cast<int>(e.ssh_port))) fail("the bare container did not answer SSH");
    bare.push_back(ms_since(t0));
    sh("podman rm -f -t 0 gpurent-bench-bare");
  }
  sh("kill $(cat " + b.dir + "/server.pid); sleep 1; podman network rm -f $(podman network ls -q --filter name=gpurent-ten_) >/dev/null 2>&1");
  fs::remove_all(b.dir);
  const std::string head = "to the first successful ssh, ms (n=" + std::to_string(n) + ")";
  std::printf("%-50s %10s %10s\n", head.c_str(), "p50", "p95");
  std::printf("%-50s %10.0f %10.0f\n", "instance create -> SSH ready (gpurent)", pct(create, 0.5), pct(create, 0.95));
  std::printf("%-50s %10.0f %10.0f\n", "instance stop -> start -> SSH ready (gpurent)", pct(restart, 0.5), pct(restart, 0.95));
  std::printf("%-50s %10.0f %10.0f\n", "podman run -d + the same sshd entry (baseline)", pct(bare, 0.5), pct(bare, 0.95));
  std::printf("instance_start: create p50 %.0f ms p95 %.0f ms, restart p50 %.0f ms p95 %.0f ms (baseline: podman run p50 %.0f ms p95 %.0f ms)\n",
              pct(create, 0.5), pct(create, 0.95), pct(restart, 0.5), pct(restart, 0.95), pct(bare, 0.5), pct(bare, 0.95));
  return 0;
}
