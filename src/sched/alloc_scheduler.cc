#include "sched/alloc_scheduler.h"

#include <algorithm>

namespace gpurent {

AllocScheduler::AllocScheduler(AllocCluster& cluster, ScorePolicy& policy, std::vector<int> priority_order)
    : cluster_(cluster),
      policy_(policy),
      order_(std::move(priority_order)),
      cache_(cluster.size()),
      max_score_(std::clamp(policy.max_score(), 0, kMaxScoreLimit)) {}

int AllocScheduler::shape_id(const AllocPod& p) {
  auto [it, added] = shapes_.try_emplace({p.cpu_milli, p.num_gpu, p.gpu_milli}, static_cast<int>(shapes_.size()));
  return it->second;
}

int AllocScheduler::memo_score(int node, int shape, const AllocPod& pod) {
  const AllocNode& n = cluster_.node(node);
  auto put = [this](int64_t v) { key_.append(reinterpret_cast<const char*>(&v), sizeof v); };
  key_.clear();
  put(shape);
  put(n.cpu_free());
  put(n.model_id * 4 + (n.has_share_pod ? 2 : 0) + (n.has_kgpu_pod ? 1 : 0));
  key_.append(reinterpret_cast<const char*>(n.gpu_free.data()), n.gpu_free.size() * sizeof(int32_t));
  auto [it, added] = memo_.try_emplace(key_, int16_t{0});
  if (added) it->second = static_cast<int16_t>(std::clamp(policy_.score(cluster_, node, pod), 0, max_score_));
  return it->second;
}

std::optional<int> AllocScheduler::place(const AllocPod& pod, SimRng& rng) {
  feasible_.clear();
  for (int n : order_)
    if (cluster_.feasible(n, pod)) feasible_.push_back(n);
  if (feasible_.empty()) return std::nullopt;
  std::optional<int> chosen;
  if (feasible_.size() == 1) {
    chosen = feasible_.front();
  } else {
    chosen = policy_.pick_node(feasible_, rng);
    if (!chosen) {
      const int shape = shape_id(pod);
      int best = -1;
      for (int n : feasible_) {  // priority order: strict > keeps the first of equal scores
        auto& row = cache_[n];
        if (static_cast<int>(row.size()) <= shape) row.resize(shape + 1, -1);
        if (row[shape] < 0) row[shape] = static_cast<int16_t>(memo_score(n, shape, pod));
        if (row[shape] > best) best = row[shape], chosen = n;
      }
    }
  }
  cluster_.bind(*chosen, pod, policy_.choose_gpus(cluster_, *chosen, pod, rng));
  std::fill(cache_[*chosen].begin(), cache_[*chosen].end(), int16_t{-1});
  return chosen;
}

}  // namespace gpurent
