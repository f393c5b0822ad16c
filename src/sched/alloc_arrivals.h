// The allocation experiment's seeded inputs (PROTOCOL.md §2): the tuned arrival sequence and the
// node priority order. Shared by the experiment (sim/alloc_experiment.cc) and by policies that
// rehearse a workload before they place it (policy/fgdauto.cc), so both draw them the same way.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/alloc_cluster.h"
#include "sched/score_policy.h"

namespace gpurent {

// §2 steps 2-4: `rng` freshly seeded; one draw is discarded, the pod indices (0..n-1, the list in
// name order) are shuffled (Fisher-Yates), then extended by random picks or trimmed at random
// until the GPU demand reaches tune * total_gpu_milli. A list of CPU-only pods is not extended.
std::vector<int> tuned_arrivals(const std::vector<AllocPod>& pods, int64_t total_gpu_milli, double tune, SimRng& rng);

// §2 step 5 and §7, drawn after tuned_arrivals from the same rng: node indices, highest priority
// (smallest random name prefix) first.
std::vector<int> node_priority_order(int nodes, SimRng& rng);

}  // namespace gpurent
