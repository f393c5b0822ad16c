// Placement scoring for the allocation experiment (protocol §5-§7): a ScorePolicy scores one
// feasible node for a pod (integer 0..max_score(), higher is better; 100 for the protocol's
// policies) and chooses the GPUs inside the chosen node. Policies are chosen by name through make_score_policy.
// Contract: score() depends only on the pod's (cpu_milli, num_gpu, gpu_milli) and the node's free
// CPU, GPU model, free milli per GPU and pod tags (has_share_pod, has_kgpu_pod), so callers may
// cache it per node until the node changes and share it between nodes in the same state.
// A policy is not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sched/alloc_cluster.h"

namespace gpurent {

using SimRng = std::mt19937_64;

// The largest max_score() a policy may declare (schedulers keep scores in 16 bits).
inline constexpr int kMaxScoreLimit = 32767;

class ScorePolicy {
 public:
  virtual ~ScorePolicy() = default;
  virtual std::string_view name() const = 0;
  // Called once with the cluster and the untuned workload before any pod is placed.
  virtual void prepare(const AllocCluster& /*cluster*/, const std::vector<AllocPod>& /*workload*/) {}
  // prepare() for callers that must not wait (the live engine on the server's control loop): a
  // policy whose preparation is slow (fgdauto's rehearsal) prepares an interim now and returns
  // the slow part, which reads only what it captured (run it on any thread) and yields a choice
  // to hand to adopt(); until then it scores as its interim. The default prepares fully and
  // returns nothing.
  virtual std::function<int()> prepare_deferred(const AllocCluster& cluster, const std::vector<AllocPod>& workload) {
    prepare(cluster, workload);
    return {};
  }
  // Installs a choice prepare_deferred's work returned (on the policy's own thread).
  virtual void adopt(int /*choice*/, const AllocCluster& /*cluster*/, const std::vector<AllocPod>& /*workload*/) {}
  // Policies that do not score (Random) pick among the feasible nodes here; nullopt = score them.
  virtual std::optional<int> pick_node(const std::vector<int>& /*feasible*/, SimRng& /*rng*/) {
    return std::nullopt;
  }
  // Upper end of score()'s range, at most kMaxScoreLimit; the protocol's policies use 0..100.
  virtual int max_score() const { return 100; }
  virtual int score(const AllocCluster& cluster, int node, const AllocPod& pod) const = 0;
  // GPUs for the pod inside `node` (feasible); empty for CPU-only pods.
  virtual std::vector<int> choose_gpus(const AllocCluster& cluster, int node, const AllocPod& pod,
                                       SimRng& rng) const {
    (void)rng;
    return pick_gpus_best_fit(cluster.node(node), pod);
  }
};

// Known names: the protocol's, in its order (random, dotprod, gpuclustering, gpupacking, bestfit,
// fgd), then ours (fgdpack, fgdauto).
const std::vector<std::string>& score_policy_names();
class FgdAutoMemo;  // policies.h
// The policy by name (case-insensitive); an error listing the known names otherwise. `memo`:
// fgdauto's remembered choices, shared by whoever prepares several policies for the same inputs
// (the allocation experiment: one per seed); without one a policy keeps its own.
Result<std::unique_ptr<ScorePolicy>> make_score_policy(std::string_view name,
                                                       std::shared_ptr<FgdAutoMemo> memo = nullptr);

}  // namespace gpurent
