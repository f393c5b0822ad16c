// Factories for the allocation-experiment policies, one file each (protocol §5-§6), and the
// integer helpers they share. Each policy object is used by one simulation; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "sched/score_policy.h"

namespace gpurent {

std::unique_ptr<ScorePolicy> make_random_policy();
std::unique_ptr<ScorePolicy> make_dotprod_policy();
std::unique_ptr<ScorePolicy> make_gpuclustering_policy();
std::unique_ptr<ScorePolicy> make_gpupacking_policy();
std::unique_ptr<ScorePolicy> make_bestfit_policy();
std::unique_ptr<ScorePolicy> make_fgd_policy();
// fgdpack's knobs (policy/fgdpack.cc); the defaults are fgdpack version 4. The tie keys add up:
// tie = (whole_key level 0..8) * 10 + (version 4's key for the pod's class, or the share key).
struct FgdPackOptions {
  int scale = 100;            // primary key floor(scale * sigmoid(x)), clamped to 1..100
  bool cpu_only_key = true;   // CPU-only pods prefer nodes with less free GPU
  bool share_key = true;      // share pods prefer opened nodes on CPU-bound workloads
  bool share_key_always = false;  // ... on every workload
  int whole_key = 0;          // whole-GPU pods: 0 none, 1 prefer a GPU in use, 2 fewer free GPUs left
};
std::unique_ptr<ScorePolicy> make_fgdpack_policy(const FgdPackOptions& options = {});
// fgdauto's choices by (cluster state, workload) fingerprint, up to 64 of them (then it starts
// over). Owned by whoever prepares policies for the same inputs more than once; thread-safe.
class FgdAutoMemo {
 public:
  std::optional<int> find(uint64_t key) const;
  void put(uint64_t key, int choice);

 private:
  mutable std::mutex mu_;
  std::map<uint64_t, int> choices_;
};
// Chooses among fgdpack variants by rehearsing the workload (policy/fgdauto.cc). prepare()
// rehearses on the caller's thread (unless `memo` knows the inputs); prepare_deferred() scores as
// FGD until the rehearsal it returns is adopted. Without a memo the policy keeps its own.
std::unique_ptr<ScorePolicy> make_fgdauto_policy(std::shared_ptr<FgdAutoMemo> memo = nullptr);
// fgdauto's rehearsal, uncached: per candidate its label and its score (allocated GPU milli at
// x = 100 plus at the end, summed over the rehearsal seeds), and the index it chooses.
struct FgdAutoRehearsal {
  std::vector<std::string> labels;
  std::vector<int64_t> sums;
  int chosen = 0;
};
// On up to `threads` threads (0: hardware_concurrency()).
FgdAutoRehearsal fgdauto_rehearse(const AllocCluster& cluster, const std::vector<AllocPod>& workload,
                                  unsigned threads = 0);
FgdPackOptions fgdauto_candidate(int index);  // throws std::out_of_range past the last

// floor(a / b) for b > 0, also for negative a.
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

inline constexpr int64_t kCmax = 128000;  // CPU milli normaliser of DotProd and BestFit
inline constexpr int64_t kGmax = 8000;    // GPU milli normaliser

}  // namespace gpurent
