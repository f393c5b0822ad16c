// bench/run fgd_alloc [TRACE_DIR] [SEEDS]: the FGD paper's allocation experiment grid (6 policies x
// 5 traces x seeds 42..42+SEEDS-1, default 10) against the published 10-seed means at x = 100 and
// 130 (PROTOCOL.md §8), and the time per experiment (one policy, one seed, tune 1.3).
// The baselines are quoted from PROTOCOL.md, not measured here.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sched/score_policy.h"
#include "sim/alloc_experiment.h"

using namespace gpurent;

namespace {

struct Published {
  const char* trace;
  double at100[6], at130[6];  // random, dotprod, gpuclustering, gpupacking, bestfit, fgd
};

const Published kPublished[] = {
    {"default", {86.30, 90.62, 91.65, 91.78, 92.86, 95.23}, {87.47, 90.85, 91.88, 92.00, 93.08, 95.39}},
    {"gpushare40", {84.86, 89.30, 89.76, 89.77, 91.44, 93.96}, {86.00, 89.56, 90.02, 90.03, 91.69, 94.15}},
    {"multigpu20", {86.92, 91.85, 93.34, 93.50, 93.73, 95.53}, {88.69, 92.06, 93.56, 93.71, 93.93, 95.65}},
    {"gpuspec20", {85.90, 88.29, 89.11, 89.28, 88.46, 94.66}, {87.24, 89.97, 92.24, 92.94, 93.30, 94.84}},
    {"cpu050", {89.02, 93.03, 93.52, 93.46, 93.56, 95.00}, {91.24, 93.27, 93.79, 93.72, 93.79, 95.21}},
};

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : GPURENT_SOURCE_DIR "/../shared/data/traces/alibaba-gpu-v2023";
  const int nseeds = argc > 2 ? std::atoi(argv[2]) : 10;
  if (nseeds < 1) {
    std::fprintf(stderr, "SEEDS must be >= 1\n");
    return 2;
  }
  auto nodes = read_trace_nodes_file(dir + "/openb_node_list_gpu_node.csv");
  if (!nodes) {
    std::fprintf(stderr, "%s\n", nodes.error().message.c_str());
    return 2;
  }
  std::printf("seeds 42..%d, tune 1.3; allocation %% at x=100 / x=130, ours (mean) vs published\n", 41 + nseeds);
  std::printf("%-11s %-14s %7s %7s %7s %7s %7s %7s %8s\n", "trace", "policy", "ours100", "pub100", "ours130",
              "pub130", "d130", "spread", "s/exp");
  double total_s = 0;
  int experiments = 0;
  for (const auto& pub : kPublished) {
    auto pods = read_trace_pods_file(dir + "/openb_pod_list_" + pub.trace + ".csv");
    if (!pods) {
      std::fprintf(stderr, "%s\n", pods.error().message.c_str());
      return 2;
    }
    auto exp = AllocExperiment::make(*nodes, std::move(*pods));
    if (!exp) {
      std::fprintf(stderr, "%s\n", exp.error().message.c_str());
      return 2;
    }
    for (size_t pi = 0; pi < score_policy_names().size(); ++pi) {
      const std::string& policy = score_policy_names()[pi];
      std::vector<AllocSeries> runs;
      const auto t0 = std::chrono::steady_clock::now();
      for (int s = 0; s < nseeds; ++s) runs.push_back(std::move(exp->run(policy, 42 + s, 1.3).value()));
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      total_s += secs;
      experiments += nseeds;
      auto mean = mean_series(runs);
      double lo = 1e9, hi = -1e9;
      for (const auto& r : runs)
        if (r.alloc_pct[130]) lo = std::min(lo, *r.alloc_pct[130]), hi = std::max(hi, *r.alloc_pct[130]);
      const double m100 = mean[100].value_or(0), m130 = mean[130].value_or(0);
      std::printf("%-11s %-14s %7.2f %7.2f %7.2f %7.2f %+7.2f %7.2f %8.3f\n", pub.trace, policy.c_str(), m100,
                  pub.at100[pi], m130, pub.at130[pi], m130 - pub.at130[pi], hi - lo, secs / nseeds);
      std::fflush(stdout);
    }
  }
  std::printf("fgd_alloc: %.3f s per experiment (baseline: ~600 s per experiment, the published Go simulator; "
              "~2 s, a plain Python implementation; both quoted from PROTOCOL.md, not measured)\n",
              total_s / experiments);
  return 0;
}
