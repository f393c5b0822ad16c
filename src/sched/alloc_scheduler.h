// One-pod-at-a-time placement for the allocation experiment (protocol §3, §4, §7): filter every
// node, take a single feasible node without scoring, otherwise the highest score with ties to the
// highest node priority, then bind on the GPUs the policy chooses.
// Scores are cached per node and per pod shape (cpu, k, g) and dropped when the node changes.
// Behind that, a memo keyed by (shape, node state) shares scores between nodes in the same state
// (many nodes start identical). Both rely on the ScorePolicy contract (score_policy.h).
// A scoring policy reads the best node from an index per pod filter (cpu, memory, k, g, models): a
// max tree over the nodes in priority order of (score, priority), -1 where the pod does not fit,
// brought up to date from the nodes bound since that filter was last used; the same choices as a
// scan (kScan, kept as the benchmarks' baseline; Random always scans: it draws among all feasible).
// Owns neither cluster nor policy; not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sched/alloc_cluster.h"
#include "sched/max_tree.h"
#include "sched/score_policy.h"
#include "sched/state_memo.h"

namespace gpurent {

class AllocScheduler {
 public:
  // `priority_order`: node indices, highest priority (smallest name prefix) first; a permutation
  // of 0..cluster.size()-1.
  enum class Mode { kIndexed, kScan };
  AllocScheduler(AllocCluster& cluster, ScorePolicy& policy, std::vector<int> priority_order,
                 Mode mode = Mode::kIndexed);

  // Places the pod; the node index, or nullopt when no node is feasible (the pod is dropped).
  std::optional<int> place(const AllocPod& pod, SimRng& rng);

 private:
  int shape_id(const AllocPod& pod);
  int memo_score(int node, int shape, const AllocPod& pod);
  int cached_score(int node, int shape, const AllocPod& pod);
  std::optional<int> best_indexed(const AllocPod& pod);

  struct Index {
    MaxTree tree;       // leaves: positions in order_
    size_t cursor = 0;  // into bound_
  };

  AllocCluster& cluster_;
  ScorePolicy& policy_;
  std::vector<int> order_;
  std::map<std::tuple<int64_t, int32_t, int32_t>, int> shapes_;
  std::vector<std::vector<int16_t>> cache_;  // [node][shape] score, -1 = unknown
  std::vector<int> feasible_;
  StateMemo memo_;
  std::string key_;
  int max_score_;  // the policy's max_score(), capped at kMaxScoreLimit
  bool indexed_;
  std::vector<int> position_;  // node -> position in order_
  std::vector<int> bound_;     // nodes in the order they were bound
  std::map<std::tuple<int64_t, int64_t, int32_t, int32_t, uint64_t>, Index> indexes_;
};

}  // namespace gpurent
