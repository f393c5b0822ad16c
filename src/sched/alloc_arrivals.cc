#include "sched/alloc_arrivals.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpurent {

std::vector<int> tuned_arrivals(const std::vector<AllocPod>& pods, int64_t total_gpu_milli, double tune, SimRng& rng) {
  rng();  // the protocol discards one draw after seeding (§2 step 2)
  const int64_t n = static_cast<int64_t>(pods.size());
  std::vector<int> seq(pods.size());
  std::iota(seq.begin(), seq.end(), 0);
  for (int64_t i = n - 1; i > 0; --i)  // Fisher-Yates over the name-sorted list
    std::swap(seq[i], seq[std::uniform_int_distribution<int64_t>(0, i)(rng)]);

  // Tune to T = tune * cluster GPU milli (§2 step 4).
  const int64_t target = std::llround(tune * static_cast<double>(total_gpu_milli));
  int64_t demand = 0;
  for (int i : seq) demand += pods[i].gpu_demand();
  const bool any_gpu = std::any_of(pods.begin(), pods.end(), [](const AllocPod& p) { return p.gpu_milli > 0; });
  if (demand < target && any_gpu) {  // CPU-only pods alone could never reach the target
    std::uniform_int_distribution<int64_t> pick(0, n - 1);
    for (;;) {
      const int idx = static_cast<int>(pick(rng));
      if (demand + pods[idx].gpu_milli > target) break;
      seq.push_back(idx);
      demand += pods[idx].gpu_demand();
    }
  } else if (demand > target) {
    while (demand > target && !seq.empty()) {
      const size_t pos = std::uniform_int_distribution<size_t>(0, seq.size() - 1)(rng);
      demand -= pods[seq[pos]].gpu_demand();
      seq.erase(seq.begin() + static_cast<std::ptrdiff_t>(pos));
    }
  }
  return seq;
}

std::vector<int> node_priority_order(int nodes, SimRng& rng) {
  // Node i (name order) gets prefix perm[i]; the smallest prefix comes first.
  std::vector<int> perm(nodes);
  std::iota(perm.begin(), perm.end(), 0);
  for (int i = nodes - 1; i > 0; --i) std::swap(perm[i], perm[std::uniform_int_distribution<int>(0, i)(rng)]);
  std::vector<int> order(nodes);
  for (int i = 0; i < nodes; ++i) order[perm[i]] = i;
  return order;
}

}  // namespace gpurent
