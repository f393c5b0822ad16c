// DotProd (protocol §6): floor(100*(1 - 1/2[(C/Cmax)(cpu/Cmax) + (F/Gmax)(R/Gmax)])) with C, F the
// node's free CPU and GPU before placement and R = k*g; the smallest dot product wins.
// Exact integers: with Cmax^2 = 256*Gmax^2,
//   score = floor(100*(2*Cmax^2 - C*cpu - 256*F*R) / (2*Cmax^2)).
#include "sched/policy/policies.h"

namespace gpurent {
namespace {

class DotProdPolicy final : public ScorePolicy {
 public:
  std::string_view name() const override { return "dotprod"; }
  int score(const AllocCluster& c, int node, const AllocPod& p) const override {
    const AllocNode& n = c.node(node);
    constexpr int64_t kC2 = kCmax * kCmax;
    constexpr int64_t kRatio = kC2 / (kGmax * kGmax);  // 256
    const int64_t num = 2 * kC2 - n.cpu_free() * p.cpu_milli - kRatio * n.gpu_free_total() * p.gpu_demand();
    return static_cast<int>(floor_div(100 * num, 2 * kC2));
  }
};

}  // namespace

std::unique_ptr<ScorePolicy> make_dotprod_policy() { return std::make_unique<DotProdPolicy>(); }

}  // namespace gpurent
