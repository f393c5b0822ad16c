#include "sched/alloc_cluster.h"

#include <algorithm>
#include <sstream>

namespace gpurent {

int64_t AllocNode::gpu_free_total() const {
  int64_t f = 0;
  for (int32_t x : gpu_free) f += x;
  return f;
}

Status AllocCluster::add_node(std::string name, int64_t cpu_milli, int64_t memory_mib, int gpus,
                              std::string model) {
  if (names_.count(name)) return Error::invalid("nodes." + name, Message("sched.duplicate_node"));
  if (cpu_milli < 0 || memory_mib < 0 || gpus < 0)
    return Error::invalid("nodes." + name, Message("sched.negative_capacity"));
  AllocNode n;
  n.name = std::move(name);
  n.cpu_cap = cpu_milli;
  n.mem_cap = memory_mib;
  n.gpu_free.assign(gpus, kGpuMilli);
  recount(n);
  if (!model.empty()) {
    auto it = std::find(models_.begin(), models_.end(), model);
    if (it == models_.end()) {
      // 63: bit 63 of a pod's mask means "no model of this cluster" (spec_mask).
      if (models_.size() == 63)
        return Error::invalid("nodes." + n.name + ".model", Message("sched.too_many_models").arg("max", "63"));
      models_.push_back(model);
      it = models_.end() - 1;
    }
    n.model_id = static_cast<int>(it - models_.begin());
  }
  n.model = std::move(model);
  names_.insert(n.name);
  total_gpu_milli_ += int64_t{gpus} * kGpuMilli;
  nodes_.push_back(std::move(n));
  return ok_status();
}

uint64_t AllocCluster::spec_mask(const std::string& spec) const {
  if (spec.empty()) return 0;
  uint64_t mask = 0;
  bool any = false;
  std::stringstream ss(spec);
  for (std::string m; std::getline(ss, m, '|');) {
    any = true;
    auto it = std::find(models_.begin(), models_.end(), m);
    if (it != models_.end()) mask |= uint64_t{1} << (it - models_.begin());
  }
  // A spec that names no model of this cluster must still exclude every node.
  return any && mask == 0 ? (uint64_t{1} << 63) : mask;
}

void AllocCluster::intern_spec(AllocPod& pod) const { pod.spec_mask = spec_mask(pod.gpu_spec); }

void AllocCluster::recount(AllocNode& n) {
  n.max_free = n.whole_free = 0;
  for (int32_t f : n.gpu_free) {
    n.max_free = std::max(n.max_free, f);
    if (f >= kGpuMilli) ++n.whole_free;
  }
}

void AllocCluster::bind(int i, const AllocPod& p, const std::vector<int>& gpus) {
  AllocNode& n = nodes_[i];
  n.cpu_used += p.cpu_milli;
  n.mem_used += p.memory_mib;
  for (int g : gpus) n.gpu_free[g] -= p.gpu_milli;
  recount(n);
  if (p.num_gpu > 0 && p.gpu_milli > 0) {
    (p.is_share() ? n.has_share_pod : n.has_kgpu_pod) = true;
    ++(p.is_share() ? n.share_pods : n.kgpu_pods);
    allocated_gpu_milli_ += int64_t{static_cast<int>(gpus.size())} * p.gpu_milli;
  }
}

void AllocCluster::unbind(int i, const AllocPod& p, const std::vector<int>& gpus) {
  AllocNode& n = nodes_[i];
  n.cpu_used -= p.cpu_milli;
  n.mem_used -= p.memory_mib;
  for (int g : gpus) n.gpu_free[g] += p.gpu_milli;
  recount(n);
  if (p.num_gpu > 0 && p.gpu_milli > 0) {
    int32_t& count = p.is_share() ? n.share_pods : n.kgpu_pods;
    if (--count == 0) (p.is_share() ? n.has_share_pod : n.has_kgpu_pod) = false;
    allocated_gpu_milli_ -= int64_t{static_cast<int>(gpus.size())} * p.gpu_milli;
  }
}

void AllocCluster::clear_allocations() {
  for (auto& n : nodes_) {
    n.cpu_used = n.mem_used = 0;
    std::fill(n.gpu_free.begin(), n.gpu_free.end(), kGpuMilli);
    recount(n);
    n.has_share_pod = n.has_kgpu_pod = false;
    n.share_pods = n.kgpu_pods = 0;
  }
  allocated_gpu_milli_ = 0;
}

std::vector<int> pick_gpus_best_fit(const AllocNode& n, const AllocPod& p) {
  std::vector<int> out;
  if (p.num_gpu == 0 || p.gpu_milli <= 0) return out;
  if (p.num_gpu == 1) {
    int best = -1;
    for (int i = 0; i < static_cast<int>(n.gpu_free.size()); ++i)
      if (n.gpu_free[i] >= p.gpu_milli && (best < 0 || n.gpu_free[i] < n.gpu_free[best])) best = i;
    if (best >= 0) out.push_back(best);
    return out;
  }
  for (int i = 0; i < static_cast<int>(n.gpu_free.size()) && static_cast<int>(out.size()) < p.num_gpu; ++i)
    if (n.gpu_free[i] >= p.gpu_milli) out.push_back(i);
  return out;
}

void append_score_state(std::string& key, const AllocNode& n) {
  auto put = [&key](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(n.cpu_free());
  put(n.model_id * 4 + (n.has_share_pod ? 2 : 0) + (n.has_kgpu_pod ? 1 : 0));
  key.append(reinterpret_cast<const char*>(n.gpu_free.data()), n.gpu_free.size() * sizeof(int32_t));
}

}  // namespace gpurent
