// One-pod-at-a-time placement for the allocation experiment (protocol §3, §4, §7): filter every
// node, take a single feasible node without scoring, otherwise the highest score with ties to the
// highest node priority, then bind on the GPUs the policy chooses.
// Scores are cached per node and per pod shape (cpu, k, g) and dropped when the node changes, so
// a placement rescans cheap feasibility checks and rescores only changed nodes. Behind that, a
// memo keyed by (shape, node state) shares scores between nodes in the same state (many nodes
// start identical). Both rely on the ScorePolicy contract (score_policy.h).
// Owns neither cluster nor policy; not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sched/alloc_cluster.h"
#include "sched/score_policy.h"

namespace gpurent {

class AllocScheduler {
 public:
  // `priority_order`: node indices, highest priority (smallest name prefix) first; a permutation
  // of 0..cluster.size()-1.
  AllocScheduler(AllocCluster& cluster, ScorePolicy& policy, std::vector<int> priority_order);

  // Places the pod; the node index, or nullopt when no node is feasible (the pod is dropped).
  std::optional<int> place(const AllocPod& pod, SimRng& rng);

 private:
  int shape_id(const AllocPod& pod);
  int memo_score(int node, int shape, const AllocPod& pod);

  AllocCluster& cluster_;
  ScorePolicy& policy_;
  std::vector<int> order_;
  std::map<std::tuple<int64_t, int32_t, int32_t>, int> shapes_;
  std::vector<std::vector<int16_t>> cache_;  // [node][shape] score, -1 = unknown
  std::vector<int> feasible_;
  std::unordered_map<std::string, int16_t> memo_;
  std::string key_;
  int max_score_;  // the policy's max_score(), capped at kMaxScoreLimit
};

}  // namespace gpurent
