#include "sched/alloc_scheduler.h"

#include <algorithm>

namespace gpurent {

AllocScheduler::AllocScheduler(AllocCluster& cluster, ScorePolicy& policy, std::vector<int> priority_order, Mode mode)
    : cluster_(cluster),
      policy_(policy),
      order_(std::move(priority_order)),
      cache_(cluster.size()),
      max_score_(std::clamp(policy.max_score(), 0, kMaxScoreLimit)) {
  SimRng probe;  // a policy that picks draws among every feasible node: it scans
  indexed_ = mode == Mode::kIndexed && !policy.pick_node({0, 1}, probe).has_value();
  position_.assign(cluster.size(), -1);
  for (size_t p = 0; p < order_.size(); ++p) position_[order_[p]] = static_cast<int>(p);
}

int AllocScheduler::cached_score(int n, int shape, const AllocPod& pod) {
  auto& row = cache_[n];
  if (static_cast<int>(row.size()) <= shape) row.resize(shape + 1, -1);
  if (row[shape] < 0) row[shape] = static_cast<int16_t>(memo_score(n, shape, pod));
  return row[shape];
}

std::optional<int> AllocScheduler::best_indexed(const AllocPod& pod) {
  const int shape = shape_id(pod);
  auto [it, added] = indexes_.try_emplace({pod.cpu_milli, pod.memory_mib, pod.num_gpu, pod.gpu_milli, pod.spec_mask});
  Index& x = it->second;
  auto value = [&](size_t pos) {
    const int n = order_[pos];
    return cluster_.feasible(n, pod) ? MaxTree::pack(cached_score(n, shape, pod), pos) : MaxTree::kNone;
  };
  if (added || bound_.size() - x.cursor > order_.size()) {
    x.tree.fill(order_.size(), value);
  } else {
    // Binding only takes room: a node the pod did not fit keeps not fitting.
    for (size_t c = x.cursor; c < bound_.size(); ++c) {
      const size_t pos = static_cast<size_t>(position_[bound_[c]]);
      if (x.tree.leaf(pos) != MaxTree::kNone) x.tree.set(pos, value(pos));
    }
  }
  x.cursor = bound_.size();
  if (x.tree.top() < 0) return std::nullopt;
  return order_[MaxTree::position(x.tree.top())];
}

int AllocScheduler::shape_id(const AllocPod& p) {
  auto [it, added] = shapes_.try_emplace({p.cpu_milli, p.num_gpu, p.gpu_milli}, static_cast<int>(shapes_.size()));
  return it->second;
}

int AllocScheduler::memo_score(int node, int shape, const AllocPod& pod) {
  key_.assign(reinterpret_cast<const char*>(&shape), sizeof shape);
  append_score_state(key_, cluster_.node(node));
  bool added = false;
  int16_t& score = memo_.find_or_add(key_, added);
  if (added) score = static_cast<int16_t>(std::clamp(policy_.score(cluster_, node, pod), 0, max_score_));
  return score;
}

std::optional<int> AllocScheduler::place(const AllocPod& pod, SimRng& rng) {
  if (indexed_) {
    const std::optional<int> chosen = best_indexed(pod);
    if (!chosen) return std::nullopt;
    cluster_.bind(*chosen, pod, policy_.choose_gpus(cluster_, *chosen, pod, rng));
    std::fill(cache_[*chosen].begin(), cache_[*chosen].end(), int16_t{-1});
    bound_.push_back(*chosen);
    return chosen;
  }
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
        const int s = cached_score(n, shape, pod);
        if (s > best) best = s, chosen = n;
      }
    }
  }
  cluster_.bind(*chosen, pod, policy_.choose_gpus(cluster_, *chosen, pod, rng));
  std::fill(cache_[*chosen].begin(), cache_[*chosen].end(), int16_t{-1});
  return chosen;
}

}  // namespace gpurent
