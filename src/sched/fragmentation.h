// Fragmentation measure of the FGD paper (protocol §5): the typical-task target workload built
// from the untuned trace, and a node's fragmentation against it in exact integers.
// Frag(n) = sum_t p_t * F_n(t) with p_t = count_t / total; we keep total * Frag(n) =
// sum_t count_t * F_n(t) as an int64 (milli-GPU times pod count). Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sched/alloc_cluster.h"

namespace gpurent {

struct TaskType {
  int64_t cpu_milli = 0;
  int32_t gpu_milli = 0;  // g
  int32_t num_gpu = 0;    // k
  std::string gpu_spec;
  uint64_t spec_mask = 0;
  int64_t count = 0;
};

struct TargetWorkload {
  std::vector<TaskType> types;  // the kept prefix, by count descending
  int64_t total = 0;            // sum of the kept counts (denominator of p_t)
  int distinct_types = 0;       // before truncation
  // For node_fragmentation_scaled: per model id + 1 (0: a node of no known model), the GPU types a
  // node of that model may run (spec admits it) grouped by (gpu_milli, num_gpu), by gpu_milli
  // descending; a group's CPU thresholds ascending with the running sum of their counts. Filled
  // by typical_tasks.
  struct GpuGroup {
    int32_t gpu_milli = 0, num_gpu = 0;
    std::vector<int64_t> cpu;  // ascending
    std::vector<int64_t> cum;  // cum[i]: the counts of the types with cpu[0..i]
  };
  std::vector<std::vector<GpuGroup>> gpu_groups_by_model;
};

// Groups pods by (cpu, g, k, spec), sorts by count descending (ties: larger key first) and keeps
// the shortest prefix covering >= threshold_pct percent of pods. spec masks come from `cluster`.
TargetWorkload typical_tasks(const std::vector<AllocPod>& pods, const AllocCluster& cluster,
                             int threshold_pct = 95);

// F_n(t) for a node with free CPU `cpu_free`, GPU model id `model_id` and free GPU milli `gpu_free`.
int64_t task_fragment(const TaskType& t, int64_t cpu_free, int model_id, std::span<const int32_t> gpu_free);
// total * Frag(n).
int64_t node_fragmentation_scaled(const TargetWorkload& w, int64_t cpu_free, int model_id,
                                  std::span<const int32_t> gpu_free);

}  // namespace gpurent
