// Benchmark: how long a worker takes to start and finish in a container, gpurent's way: the worker
// script of exec/container.h (tenant network check, image check, `podman run` with gpurent's
// limits, OOM inspect, rm) around the command `true`, run N times; beside it, in the same run,
// a bare `podman run --rm IMAGE true` and the baseline a bare process start (`true`, fork and
// exec). Figures are p50 and p95 wall milliseconds.
// Usage: container_start [N] [IMAGE]   (default 20 starts, localhost/gpurent/python:bookworm,
// built from Debian packages by scripts/debian-image when missing). Needs root and Podman.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "exec/container.h"
#include "exec/process.h"

namespace {

using Clock = std::chrono::steady_clock;

// Runs argv n times; returns the wall times in milliseconds, exits on a failed run.
std::vector<double> times(const std::vector<std::string>& argv, int n, const std::map<std::string, std::string>& env) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    const auto t0 = Clock::now();
    auto r = gpurent::run_process(argv, env, "", 120'000);
    const double took = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!r || r->exit_code != 0) {
      std::fprintf(stderr, "%s failed: %s\n", argv[0].c_str(), r ? r->err.c_str() : r.error().message.c_str());
      std::exit(1);
    }
    ms.push_back(took);
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

double pct(const std::vector<double>& sorted, double p) {
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5));
  return sorted[i];
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::max(2, std::atoi(argv[1])) : 20;
  const std::string image = argc > 2 ? argv[2] : "localhost/gpurent/python:bookworm";
  if (geteuid() != 0 || std::system("command -v podman >/dev/null 2>&1") != 0) {
    std::printf("container_start: skipped (needs root and podman)\n");
    return 0;
  }
  if (std::system(("podman image exists " + image + " 2>/dev/null").c_str()) != 0 &&
      std::system(("scripts/debian-image " + image + " bookworm python3,procps,iproute2 minbase >/dev/null").c_str()) != 0) {
    std::printf("container_start: skipped (no image %s and scripts/debian-image could not build it)\n", image.c_str());
    return 0;
  }
  gpurent::ContainerSettings s;
  gpurent::ContainerRun r;
  r.job_id = "job_bench0000000001";
  r.tenant_id = "ten_bench000000001";
  r.image = image;
  r.command = {"true"};
  r.cpus = 1;
  r.memory_gib = 1;
  const std::string script = gpurent::container_script(s, r);
  const std::map<std::string, std::string> env = {{"SLURMD_NODENAME", "bench"}, {"SLURM_JOB_GPUS", ""}};

  times({"bash", "-c", script}, 1, env);  // creates the tenant's network once, warms the image
  const auto worker = times({"bash", "-c", script}, n, env);
  std::vector<std::string> plain = {"podman"};
  plain.insert(plain.end(), s.podman_args.begin(), s.podman_args.end());
  plain.insert(plain.end(), {"run", "--rm", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096", image, "true"});
  const auto podman = times(plain, n, {});
  const auto bare = times({"true"}, n, {});
  const std::string head = "start to exit of `true`, ms (n=" + std::to_string(n) + ")";
  std::printf("%-44s %10s %10s\n", head.c_str(), "p50", "p95");
  std::printf("%-44s %10.1f %10.1f\n", "gpurent worker script (container)", pct(worker, 0.5), pct(worker, 0.95));
  std::printf("%-44s %10.1f %10.1f\n", "podman run --rm (no gpurent flags)", pct(podman, 0.5), pct(podman, 0.95));
  std::printf("%-44s %10.2f %10.2f\n", "bare process (fork+exec true)", pct(bare, 0.5), pct(bare, 0.95));
  (void)std::system("podman network rm -f gpurent-ten_bench000000001 >/dev/null 2>&1");
  std::printf("container_start: p50 %.0f ms, p95 %.0f ms (baseline: bare process p50 %.2f ms, p95 %.2f ms)\n",
              pct(worker, 0.5), pct(worker, 0.95), pct(bare, 0.5), pct(bare, 0.95));
  return 0;
}
