#include "sim/alloc_experiment.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/money.h"
#include "sched/alloc_arrivals.h"
#include "sched/alloc_scheduler.h"
#include "sched/score_policy.h"

namespace gpurent {

int64_t round_half_even(int64_t num, int64_t den) { return div_half_even_sat(num, den); }

std::vector<std::optional<double>> discretize_alloc(const std::vector<AllocSample>& samples, int64_t total) {
  std::vector<double> sum(kAllocPoints, 0.0);
  std::vector<int64_t> count(kAllocPoints, 0);
  for (const auto& s : samples) {
    const int64_t x = round_half_even(s.arrived_milli * 100, total);
    if (x >= kAllocPoints) continue;
    // y in hundredths of a percent: round(U*100/total, 2) = round_half_even(U*10000, total)/100.
    sum[x] += static_cast<double>(round_half_even(s.allocated_milli * 10000, total)) / 100.0;
    ++count[x];
  }
  std::vector<std::optional<double>> out(kAllocPoints);
  for (int x = 0; x < kAllocPoints; ++x) {
    double s = sum[x];
    int64_t c = count[x];
    if (c == 0) {
      for (int d : {-1, 1})
        if (x + d >= 0 && x + d < kAllocPoints) s += sum[x + d], c += count[x + d];
    }
    if (c > 0) out[x] = std::nearbyint(s / static_cast<double>(c) * 100.0) / 100.0;
  }
  return out;
}

Result<AllocExperiment> AllocExperiment::make(std::vector<TraceNode> nodes, std::vector<TracePod> pods) {
  if (nodes.empty()) return Error::invalid("nodes", "no nodes");
  std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  AllocExperiment e;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i > 0 && nodes[i].name == nodes[i - 1].name)
      return Error::invalid("nodes." + nodes[i].name, "duplicate node name");
    auto& n = nodes[i];
    if (auto s = e.cluster_.add_node(n.name, n.cpu_milli, n.memory_mib, n.gpus, n.model); !s) return s.error();
  }
  if (e.cluster_.total_gpu_milli() == 0) return Error::invalid("nodes", "the cluster has no GPUs");
  std::stable_sort(pods.begin(), pods.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (auto& p : pods) {
    e.cluster_.intern_spec(p.pod);
    e.pods_.push_back(std::move(p.pod));
  }
  return e;
}

Result<AllocSeries> AllocExperiment::run(const std::string& policy_name, uint64_t seed, double tune) const {
  if (!(tune > 0)) return Error::invalid("tune", "must be > 0");
  auto policy = make_score_policy(policy_name, memo_);
  if (!policy) return policy.error();
  AllocCluster cluster = cluster_;
  (*policy)->prepare(cluster, pods_);

  SimRng rng(seed);
  const std::vector<int> seq = tuned_arrivals(pods_, cluster.total_gpu_milli(), tune, rng);
  std::vector<int> order = node_priority_order(cluster.size(), rng);

  AllocScheduler sched(cluster, **policy, std::move(order));
  std::vector<AllocSample> samples;
  samples.reserve(seq.size());
  AllocSeries out;
  out.seed = seed;
  int64_t arrived = 0;
  for (int i : seq) {
    arrived += pods_[i].gpu_demand();
    if (!sched.place(pods_[i], rng)) ++out.failed;
    samples.push_back({arrived, cluster.allocated_gpu_milli()});
  }
  out.pods = static_cast<int>(seq.size());
  out.alloc_pct = discretize_alloc(samples, cluster.total_gpu_milli());
  return out;
}

std::vector<std::optional<double>> mean_series(const std::vector<AllocSeries>& runs) {
  std::vector<std::optional<double>> out(kAllocPoints);
  for (int x = 0; x < kAllocPoints; ++x) {
    double s = 0;
    int c = 0;
    for (const auto& r : runs)
      if (x < static_cast<int>(r.alloc_pct.size()) && r.alloc_pct[x]) s += *r.alloc_pct[x], ++c;
    if (c > 0) out[x] = s / c;
  }
  return out;
}

}  // namespace gpurent
