// BestFit (protocol §6): floor(100*(1 - [1/2 (C-cpu)/Cmax + 1/2 (F-R)/Gmax])), C and F before
// placement. The simulator's min-max normalisation to 0..100 keeps the order of these integers
// (their range is at most 100, so it is injective) and is left out.
// Exact integers: score = floor(100*(2*Cmax*Gmax - (C-cpu)*Gmax - (F-R)*Cmax) / (2*Cmax*Gmax)).
#include "sched/policy/policies.h"

namespace gpurent {
namespace {

class BestFitPolicy final : public ScorePolicy {
 public:
  std::string_view name() const override { return "bestfit"; }
  int score(const AllocCluster& c, int node, const AllocPod& p) const override {
    const AllocNode& n = c.node(node);
    const int64_t num = 2 * kCmax * kGmax - (n.cpu_free() - p.cpu_milli) * kGmax -
                        (n.gpu_free_total() - p.gpu_demand()) * kCmax;
    return static_cast<int>(floor_div(100 * num, 2 * kCmax * kGmax));
  }
};

}  // namespace

std::unique_ptr<ScorePolicy> make_bestfit_policy() { return std::make_unique<BestFitPolicy>(); }

}  // namespace gpurent
