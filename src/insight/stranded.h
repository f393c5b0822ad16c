// GPUs stranded by fragmentation: free GPUs a job shape cannot use because no node has enough of
// them together. A worker of a k-GPU shape runs on one node, so on a node with f free GPUs k-GPU
// workers can use floor(f / k) × k of them and the rest are stranded for that shape; summed per
// GPU model (jobs ask for models). Waiting jobs of a shape are "blocked by fragmentation" when
// their GPUs are free in total on a model they accept but not together: as many k-GPU workers
// as they need do not fit. Pure; value types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpurent {

struct StrandedNode {
  std::string node, gpu_model;
  int64_t gpus = 0;          // cards
  int64_t free_gpus = 0;     // cards no run holds
  int64_t partly_used = 0;   // cards shared by fractional runs with room left (not free for whole-GPU shapes)
};

struct WaitingJob {
  int64_t gpus_per_worker = 0;  // whole GPUs (fractional jobs are left out)
  int64_t workers = 1;
  std::vector<std::string> gpu_models;  // accepted models; empty: any
};

struct StrandedShape {
  int64_t gpus_per_worker = 0;
  int64_t usable_gpus = 0, stranded_gpus = 0;
  int64_t nodes_that_fit = 0;  // nodes with at least one worker's worth free
  int64_t waiting_jobs = 0, blocked_by_fragmentation = 0;
};

struct StrandedModel {
  std::string gpu_model;
  int64_t nodes = 0, gpus = 0, free_gpus = 0, partly_used = 0;
  std::vector<StrandedShape> shapes;  // 1, 2, 4, 8 (up to the largest node) and every waiting shape, ascending
};

struct StrandedReport {
  int64_t nodes = 0, gpus = 0, free_gpus = 0;
  std::vector<StrandedModel> models;  // by model id
};

// `nodes`: the nodes in service (available: not drained, not unavailable).
StrandedReport stranded_gpus(const std::vector<StrandedNode>& nodes, const std::vector<WaitingJob>& waiting);

}  // namespace gpurent
