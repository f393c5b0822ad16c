#include "sched/fragmentation.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

namespace gpurent {

TargetWorkload typical_tasks(const std::vector<AllocPod>& pods, const AllocCluster& cluster, int threshold_pct) {
  using Key = std::tuple<int64_t, int32_t, int32_t, std::string>;  // (cpu, g, k, spec)
  std::map<Key, int64_t> counts;
  for (const auto& p : pods) ++counts[Key{p.cpu_milli, p.gpu_milli, p.num_gpu, p.gpu_spec}];
  std::vector<std::pair<Key, int64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return a.first > b.first;
  });
  TargetWorkload w;
  w.distinct_types = static_cast<int>(sorted.size());
  const int64_t n = static_cast<int64_t>(pods.size());
  for (const auto& [key, count] : sorted) {
    if (w.total * 100 >= n * threshold_pct) break;
    TaskType t{std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), 0, count};
    t.spec_mask = cluster.spec_mask(t.gpu_spec);
    w.types.push_back(std::move(t));
    w.total += count;
  }
  w.gpu_groups_by_model.resize(65);
  for (int m = -1; m < 64; ++m) {
    // (g descending, k) -> (cpu, count) of the types a node of model m may run.
    std::map<std::pair<int32_t, int32_t>, std::map<int64_t, int64_t>> groups;
    for (const auto& t : w.types)
      if (t.num_gpu != 0 && (t.spec_mask == 0 || (m >= 0 && ((t.spec_mask >> m) & 1))))
        groups[{-t.gpu_milli, t.num_gpu}][t.cpu_milli] += t.count;
    auto& list = w.gpu_groups_by_model[static_cast<size_t>(m + 1)];
    for (const auto& [key, by_cpu] : groups) {
      TargetWorkload::GpuGroup gr;
      gr.gpu_milli = -key.first;
      gr.num_gpu = key.second;
      int64_t sum = 0;
      for (const auto& [cpu, count] : by_cpu) gr.cpu.push_back(cpu), gr.cum.push_back(sum += count);
      list.push_back(std::move(gr));
    }
  }
  return w;
}

int64_t task_fragment(const TaskType& t, int64_t cpu_free, int model_id, std::span<const int32_t> gpu_free) {
  int64_t all = 0;
  for (int32_t f : gpu_free) all += f;
  if (t.num_gpu == 0) return all;  // CPU-only task: every idle GPU is fragment
  if (t.spec_mask != 0 && (model_id < 0 || !((t.spec_mask >> model_id) & 1))) return all;
  if (cpu_free < t.cpu_milli) return all;
  int fit = 0;
  int64_t small = 0;
  for (int32_t f : gpu_free) {
    if (f >= t.gpu_milli) ++fit;
    else small += f;
  }
  return fit >= t.num_gpu ? small : all;
}

int64_t node_fragmentation_scaled(const TargetWorkload& w, int64_t cpu_free, int model_id,
                                  std::span<const int32_t> gpu_free) {
  // task_fragment for every type, with the node's GPUs sorted once: the GPUs with at least g free
  // are a prefix of the descending order, and what the others hold is the total minus its sum.
  constexpr size_t kInline = 16;
  int32_t inline_free[kInline];
  int64_t inline_prefix[kInline + 1];
  std::vector<int32_t> heap_free;
  std::vector<int64_t> heap_prefix;
  const size_t n = gpu_free.size();
  int32_t* sorted = inline_free;
  int64_t* prefix = inline_prefix;
  if (n > kInline) {
    heap_free.resize(n);
    heap_prefix.resize(n + 1);
    sorted = heap_free.data();
    prefix = heap_prefix.data();
  }
  std::copy(gpu_free.begin(), gpu_free.end(), sorted);
  if (n <= kInline) {  // a node's few GPUs: insertion sort, descending
    for (size_t i = 1; i < n; ++i) {
      const int32_t v = sorted[i];
      size_t k = i;
      for (; k > 0 && sorted[k - 1] < v; --k) sorted[k] = sorted[k - 1];
      sorted[k] = v;
    }
  } else {
    std::sort(sorted, sorted + n, std::greater<>());
  }
  prefix[0] = 0;
  for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + sorted[i];
  const int64_t all = prefix[n];
  if (static_cast<size_t>(model_id + 1) < w.gpu_groups_by_model.size()) {
    // Every type counts all of F except those the node could run now, which count what their GPUs
    // leave out; by gpu_milli descending, the GPUs that fit grow as a prefix, found in one sweep,
    // and a group's types with CPU enough are a prefix of its thresholds.
    int64_t s = all * w.total;
    size_t fit = 0;
    for (const auto& gr : w.gpu_groups_by_model[static_cast<size_t>(model_id + 1)]) {
      while (fit < n && sorted[fit] >= gr.gpu_milli) ++fit;
      if (static_cast<int64_t>(fit) < gr.num_gpu || cpu_free < gr.cpu.front()) continue;
      size_t c = 1;
      while (c < gr.cpu.size() && gr.cpu[c] <= cpu_free) ++c;
      s -= gr.cum[c - 1] * prefix[fit];
    }
    return s;
  }
  int64_t s = 0;
  for (const auto& t : w.types) {
    int64_t f = all;
    if (t.num_gpu != 0 && (t.spec_mask == 0 || (model_id >= 0 && ((t.spec_mask >> model_id) & 1))) &&
        cpu_free >= t.cpu_milli) {
      size_t fit = 0;
      while (fit < n && sorted[fit] >= t.gpu_milli) ++fit;
      if (static_cast<int64_t>(fit) >= t.num_gpu) f = all - prefix[fit];
    }
    s += t.count * f;
  }
  return s;
}

}  // namespace gpurent
