// GpuClustering (protocol §6): CPU-only pods score 0. Otherwise b = floor(25*(Gmax-F)/Gmax) with
// the fixed Gmax = 8000, and the pod's tag ("share": k=1, g<1000; else "k-gpu") against the set A
// of tags already on the node: b+75 if A = {tag}, b+50 if tag in A and |A| > 1, b+25 if A is
// empty, b otherwise.
#include "sched/policy/policies.h"

namespace gpurent {
namespace {

class GpuClusteringPolicy final : public ScorePolicy {
 public:
  std::string_view name() const override { return "gpuclustering"; }
  int score(const AllocCluster& c, int node, const AllocPod& p) const override {
    if (p.num_gpu == 0 || p.gpu_milli == 0) return 0;
    const AllocNode& n = c.node(node);
    const int b = static_cast<int>(floor_div(25 * (kGmax - n.gpu_free_total()), kGmax));
    const bool mine = p.is_share() ? n.has_share_pod : n.has_kgpu_pod;
    const bool other = p.is_share() ? n.has_kgpu_pod : n.has_share_pod;
    if (mine && !other) return b + 75;
    if (mine) return b + 50;
    if (!other) return b + 25;
    return b;
  }
};

}  // namespace

std::unique_ptr<ScorePolicy> make_gpuclustering_policy() { return std::make_unique<GpuClusteringPolicy>(); }

}  // namespace gpurent
