// Cluster state for the FGD allocation experiment (docs: shared/data/traces/alibaba-gpu-v2023/PROTOCOL.md):
// nodes with CPU milli, memory MiB and GPUs of 1000 milli each, filled by pods that never leave.
// Integer arithmetic only. GPU models are interned to small ids so a pod's gpu_spec is a bit mask.
// Value type; not thread-safe (one simulation owns one cluster).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/result.h"

namespace gpurent {

inline constexpr int32_t kGpuMilli = 1000;

// A pod as the experiment sees it: demand only (protocol §2). k=0 means CPU-only (then g=0).
struct AllocPod {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;    // k
  int32_t gpu_milli = 0;  // g, per GPU, in [0, 1000]
  std::string gpu_spec;   // "" or "A|B|..."; kept only when k > 0
  uint64_t spec_mask = 0; // allowed model ids (bit i = model id i); 0 = any. Set by AllocCluster::intern_spec.

  int64_t gpu_demand() const { return int64_t{num_gpu} * gpu_milli; }  // D = k*g
  bool is_share() const { return num_gpu == 1 && gpu_milli < kGpuMilli; }
};

struct AllocNode {
  std::string name;
  std::string model;
  int model_id = -1;
  int64_t cpu_cap = 0, mem_cap = 0;
  int64_t cpu_used = 0, mem_used = 0;
  std::vector<int32_t> gpu_free;  // free milli per GPU, index order
  int32_t max_free = 0;           // the most free milli on one GPU, and how many GPUs are
  int32_t whole_free = 0;         // wholly free (kept by AllocCluster beside gpu_free)
  bool has_share_pod = false;     // tags of GPU pods bound here (GpuClustering)
  bool has_kgpu_pod = false;
  int32_t share_pods = 0;         // how many of each are bound; unbind clears a tag at 0
  int32_t kgpu_pods = 0;

  int64_t cpu_free() const { return cpu_cap - cpu_used; }
  int64_t gpu_free_total() const;
};

class AllocCluster {
 public:
  // Adds a node with `gpus` fully free GPUs. Errors on a duplicate name or more than 63 models.
  Status add_node(std::string name, int64_t cpu_milli, int64_t memory_mib, int gpus, std::string model);
  // Fills pod.spec_mask from pod.gpu_spec (models the cluster lacks are ignored; a spec naming
  // none of the cluster's models gets a mask that matches nothing).
  void intern_spec(AllocPod& pod) const;
  // The mask for a spec string; 0 for "".
  uint64_t spec_mask(const std::string& spec) const;

  // Feasibility filter (protocol §4): CPU, memory, and for g>0 model and GPU capacity. Inline:
  // every index fill runs it for every node.
  bool feasible(int node, const AllocPod& p) const {
    const AllocNode& n = nodes_[node];
    if (n.cpu_used + p.cpu_milli > n.cpu_cap || n.mem_used + p.memory_mib > n.mem_cap) return false;
    if (p.gpu_milli <= 0) return true;
    if (n.gpu_free.empty()) return false;
    if (p.spec_mask != 0 && (n.model_id < 0 || !((p.spec_mask >> n.model_id) & 1))) return false;
    return gpus_fit(n, p.num_gpu, p.gpu_milli);
  }
  // Places the pod on `gpus` of `node` (empty for CPU-only). The caller checked feasibility.
  void bind(int node, const AllocPod& pod, const std::vector<int>& gpus);

  const std::vector<AllocNode>& nodes() const { return nodes_; }
  const AllocNode& node(int i) const { return nodes_[i]; }
  int size() const { return static_cast<int>(nodes_.size()); }
  int64_t total_gpu_milli() const { return total_gpu_milli_; }
  int64_t allocated_gpu_milli() const { return allocated_gpu_milli_; }
  // Undoes bind() with the same arguments (the live engine releases and preempts pods).
  void unbind(int node, const AllocPod& pod, const std::vector<int>& gpus);
  // Back to empty nodes (same nodes, nothing bound).
  void clear_allocations();
  // Whether the node has num_gpu GPUs with at least gpu_milli free each (g > 0).
  static bool gpus_fit(const AllocNode& n, int32_t num_gpu, int32_t gpu_milli) {
    if (num_gpu <= 1) return n.max_free >= gpu_milli;
    if (gpu_milli >= kGpuMilli) return n.whole_free >= num_gpu;
    int fit = 0;
    for (int32_t f : n.gpu_free)
      if (f >= gpu_milli && ++fit >= num_gpu) return true;
    return false;
  }

 private:
  static void recount(AllocNode& n);  // max_free and whole_free from gpu_free
  std::vector<AllocNode> nodes_;
  std::vector<std::string> models_;
  std::unordered_set<std::string> names_;
  int64_t total_gpu_milli_ = 0;
  int64_t allocated_gpu_milli_ = 0;
};

// GPU choice shared by most policies (protocol §6): for k=1 the GPU with the smallest free >= g
// (lowest index on ties); for k>1 the lowest-index GPUs with free >= g. Empty for CPU-only pods.
std::vector<int> pick_gpus_best_fit(const AllocNode& n, const AllocPod& pod);
// Appends what a ScorePolicy's score reads of a node (score_policy.h): free CPU, model, pod tags and
// free milli per GPU. Nodes with equal keys score every pod alike.
void append_score_state(std::string& key, const AllocNode& n);

}  // namespace gpurent
