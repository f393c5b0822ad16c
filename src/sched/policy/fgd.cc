// FGD (protocol §5): score = floor(100*sigmoid((Frag(n) - Frag(n'))/1000)) where n' is the node
// after placement. Share pods (k=1, g<1000) try every GPU with free >= g and keep the best, the
// lowest index on ties; other pods take the lowest-index fully free GPUs. Frag is kept scaled by
// the target workload's total count (exact int64); only the sigmoid is floating point.
#include <algorithm>
#include <cmath>
#include <span>

#include "sched/fragmentation.h"
#include "sched/policy/policies.h"

namespace gpurent {
namespace {

class FgdPolicy final : public ScorePolicy {
 public:
  std::string_view name() const override { return "fgd"; }
  void prepare(const AllocCluster& cluster, const std::vector<AllocPod>& workload) override {
    target_ = typical_tasks(workload, cluster);
  }
  int score(const AllocCluster& c, int node, const AllocPod& p) const override { return evaluate(c, node, p).first; }
  std::vector<int> choose_gpus(const AllocCluster& c, int node, const AllocPod& p, SimRng&) const override {
    if (!p.is_share()) return pick_gpus_best_fit(c.node(node), p);
    return {evaluate(c, node, p).second};
  }

 private:
  // (score, chosen GPU for share pods).
  std::pair<int, int> evaluate(const AllocCluster& c, int node, const AllocPod& p) const {
    const AllocNode& n = c.node(node);
    const int64_t cpu_after = n.cpu_free() - p.cpu_milli;
    const int64_t before = node_fragmentation_scaled(target_, n.cpu_free(), n.model_id, n.gpu_free);
    std::vector<int32_t>& after = after_;  // scratch kept between calls
    after.assign(n.gpu_free.begin(), n.gpu_free.end());
    if (!p.is_share()) {
      for (int g : pick_gpus_best_fit(n, p)) after[g] = 0;  // whole GPUs (or none)
      return {to_score(before - node_fragmentation_scaled(target_, cpu_after, n.model_id, after)), -1};
    }
    int best = -1, best_gpu = -1;
    for (int i = 0; i < static_cast<int>(after.size()); ++i) {
      if (n.gpu_free[i] < p.gpu_milli) continue;
      // A GPU with as much free as an earlier one leaves the same multiset, so the same score
      // (and ties keep the lower index).
      if (std::find(n.gpu_free.begin(), n.gpu_free.begin() + i, n.gpu_free[i]) != n.gpu_free.begin() + i) continue;
      after[i] -= p.gpu_milli;
      const int s = to_score(before - node_fragmentation_scaled(target_, cpu_after, n.model_id, after));
      after[i] += p.gpu_milli;
      if (s > best) best = s, best_gpu = i;
    }
    return {best, best_gpu};
  }
  int to_score(int64_t delta_scaled) const {
    if (target_.total == 0) return 50;  // no target workload: nothing to fragment
    const double x = static_cast<double>(delta_scaled) / (1000.0 * static_cast<double>(target_.total));
    return static_cast<int>(std::floor(100.0 / (1.0 + std::exp(-x))));
  }

  TargetWorkload target_;
  mutable std::vector<int32_t> after_;  // evaluate()'s free milli after placement
};

}  // namespace

std::unique_ptr<ScorePolicy> make_fgd_policy() { return std::make_unique<FgdPolicy>(); }

}  // namespace gpurent
