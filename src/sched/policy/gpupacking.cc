// GpuPacking (protocol §6): CPU-only pods score 0. If all G GPUs are free: max(33-G, G).
// Otherwise take the first k GPUs in ascending free order (stable) with free >= g; u = how many of
// them are fully free. Score max(50-u, 33) if u > 0, else
// max(100 - floor(sum_i floor(f_i*100/1000) / 10), 50) over those k GPUs.
#include <algorithm>
#include <numeric>

#include "sched/policy/policies.h"

namespace gpurent {
namespace {

class GpuPackingPolicy final : public ScorePolicy {
 public:
  std::string_view name() const override { return "gpupacking"; }
  int score(const AllocCluster& c, int node, const AllocPod& p) const override {
    if (p.num_gpu == 0 || p.gpu_milli == 0) return 0;
    const auto& f = c.node(node).gpu_free;
    const int g_count = static_cast<int>(f.size());
    if (std::all_of(f.begin(), f.end(), [](int32_t x) { return x == kGpuMilli; }))
      return std::max(33 - g_count, g_count);
    std::vector<int> idx(f.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) { return f[a] < f[b]; });
    int taken = 0, full = 0, pct_sum = 0;
    for (int i : idx) {
      if (taken == p.num_gpu) break;
      if (f[i] < p.gpu_milli) continue;
      ++taken;
      if (f[i] == kGpuMilli) ++full;
      pct_sum += f[i] * 100 / kGpuMilli;
    }
    if (full > 0) return std::max(50 - full, 33);
    return std::max(100 - pct_sum / 10, 50);
  }
};

}  // namespace

std::unique_ptr<ScorePolicy> make_gpupacking_policy() { return std::make_unique<GpuPackingPolicy>(); }

}  // namespace gpurent
