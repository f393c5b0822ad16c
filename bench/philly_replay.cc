// bench/run philly_replay [PHILLY_CSV] [POLICIES]: replays all 82,247 Philly jobs (arrivals and
// departures) through the live scheduler per policy on the cluster sized from the trace (headroom
// 1.25 over the mean load; `gpurent simulate philly` with its defaults), and prints queueing delay,
// JCT, utilisation and run time. Baseline in the same run: the random policy.
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>

#include "sim/philly.h"

using namespace gpurent;

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "../shared/data/traces/philly/philly.csv";
  const std::string list = argc > 2 ? argv[2] : "random,bestfit,fgd,fgdpack";
  if (!std::filesystem::exists(path)) {
    std::printf("skipping: %s not found (see README: data sets)\n", path.c_str());
    return 0;
  }
  auto jobs = read_philly_file(path);
  if (!jobs) return std::printf("%s\n", jobs.error().message.c_str()), 1;
  const int64_t nodes = philly_nodes_for(*jobs, 1.25);
  const ReplayInput in = philly_replay_input(*jobs, nodes);
  std::printf("%zu jobs, %lld nodes x 8 GPUs\n", in.jobs.size(), static_cast<long long>(nodes));
  std::printf("%-9s %10s %10s %10s %10s %7s %9s %8s\n", "policy", "wait mean", "wait p95", "JCT mean", "JCT p95",
              "util%", "unplaced", "run s");
  double base = 0, best = 0;
  std::string best_name;
  std::stringstream ss(list);
  for (std::string name; std::getline(ss, name, ',');) {
    SchedConfig cfg;
    cfg.score_policy = name;
    auto r = replay(in, cfg);
    if (!r) return std::printf("%s\n", r.error().message.c_str()), 1;
    std::printf("%-9s %9.0fs %9.0fs %9.0fs %9.0fs %7.1f %9lld %8.1f\n", name.c_str(), r->wait_mean_s, r->wait_p95_s,
                r->jct_mean_s, r->jct_p95_s, r->utilization_pct, static_cast<long long>(r->never_started),
                r->run_seconds);
    std::fflush(stdout);
    if (name == "random") base = r->jct_mean_s;
    if (name != "random" && (best == 0 || r->jct_mean_s < best)) best = r->jct_mean_s, best_name = name;
  }
  std::printf("philly_replay: %.0f s mean JCT, %s (baseline: %.0f s mean JCT, random)\n", best, best_name.c_str(), base);
  return 0;
}
