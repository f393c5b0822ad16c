// Random (protocol §6): a uniformly random feasible node; inside it a uniformly random GPU with
// free >= g (whole-GPU pods take the lowest-index fully free GPUs).
#include "sched/policy/policies.h"

namespace gpurent {
namespace {

class RandomPolicy final : public ScorePolicy {
 public:
  std::string_view name() const override { return "random"; }
  std::optional<int> pick_node(const std::vector<int>& feasible, SimRng& rng) override {
    std::uniform_int_distribution<size_t> d(0, feasible.size() - 1);
    return feasible[d(rng)];
  }
  int score(const AllocCluster&, int, const AllocPod&) const override { return 0; }
  std::vector<int> choose_gpus(const AllocCluster& c, int node, const AllocPod& p, SimRng& rng) const override {
    if (!p.is_share()) return pick_gpus_best_fit(c.node(node), p);
    std::vector<int> fit;
    const auto& f = c.node(node).gpu_free;
    for (int i = 0; i < static_cast<int>(f.size()); ++i)
      if (f[i] >= p.gpu_milli) fit.push_back(i);
    std::uniform_int_distribution<size_t> d(0, fit.size() - 1);
    return {fit[d(rng)]};
  }
};

}  // namespace

std::unique_ptr<ScorePolicy> make_random_policy() { return std::make_unique<RandomPolicy>(); }

}  // namespace gpurent
