// The FGD paper's allocation experiment (shared/data/traces/alibaba-gpu-v2023/PROTOCOL.md):
// per seed, build the tuned arrival sequence (§2), place pods one at a time with a policy and no
// departures (§3), sample the allocation after every pod and discretise to x = 0..130 (§8).
// The RNG is std::mt19937_64, not Go's math/rand: compare means over seeds, not single runs.
// Not thread-safe; one experiment object per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sched/policy/policies.h"
#include "sim/trace_reader.h"

namespace gpurent {

inline constexpr int kAllocPoints = 131;  // x = 0..130 (% of cluster GPU arrived)

struct AllocSample {
  int64_t arrived_milli = 0;    // A_j: every attempted pod's k*g so far
  int64_t allocated_milli = 0;  // U_j
};

struct AllocSeries {
  uint64_t seed = 0;
  std::vector<std::optional<double>> alloc_pct;  // kAllocPoints values, nullopt = blank
  int pods = 0, failed = 0;
};

// round(num/den) with halves to even (Python round); den > 0, num >= 0.
int64_t round_half_even(int64_t num, int64_t den);
// §8: x_j = round(A_j/(total/100)), y_j = round(U_j/(total/100), 2); per X the mean of y at x=X,
// else at X-1..X+1, else blank; rounded to 2 decimals.
std::vector<std::optional<double>> discretize_alloc(const std::vector<AllocSample>& samples, int64_t total_gpu_milli);

class AllocExperiment {
 public:
  // Validates inputs (duplicate node names, no nodes, no GPUs).
  static Result<AllocExperiment> make(std::vector<TraceNode> nodes, std::vector<TracePod> pods);

  // One run; `policy` by name (make_score_policy). tune > 0.
  Result<AllocSeries> run(const std::string& policy, uint64_t seed, double tune = 1.3) const;

  int64_t total_gpu_milli() const { return cluster_.total_gpu_milli(); }
  int pod_count() const { return static_cast<int>(pods_.size()); }

 private:
  AllocExperiment() = default;
  AllocCluster cluster_;           // empty, nodes sorted by name
  std::vector<AllocPod> pods_;     // sorted by pod name, spec masks set
  // fgdauto's choice for these inputs, shared by every run (one per seed); thread-safe.
  std::shared_ptr<FgdAutoMemo> memo_ = std::make_shared<FgdAutoMemo>();
};

// Mean over seeds per x (blank cells skipped; blank when every seed is blank).
std::vector<std::optional<double>> mean_series(const std::vector<AllocSeries>& runs);

}  // namespace gpurent
