#include "insight/stranded.h"

#include <algorithm>
#include <map>
#include <set>

namespace gpurent {

StrandedReport stranded_gpus(const std::vector<StrandedNode>& nodes, const std::vector<WaitingJob>& waiting) {
  StrandedReport out;
  std::map<std::string, std::vector<const StrandedNode*>> by_model;
  for (const StrandedNode& n : nodes) {
    by_model[n.gpu_model].push_back(&n);
    ++out.nodes;
    out.gpus += n.gpus;
    out.free_gpus += n.free_gpus;
  }
  for (const auto& [model, list] : by_model) {
    StrandedModel m;
    m.gpu_model = model;
    int64_t largest = 0;
    for (const StrandedNode* n : list) {
      ++m.nodes;
      m.gpus += n->gpus;
      m.free_gpus += n->free_gpus;
      m.partly_used += n->partly_used;
      largest = std::max(largest, n->gpus);
    }
    auto accepts = [&](const WaitingJob& j) {
      return j.gpus_per_worker > 0 &&
             (j.gpu_models.empty() || std::find(j.gpu_models.begin(), j.gpu_models.end(), model) != j.gpu_models.end());
    };
    std::set<int64_t> shapes;
    for (int64_t k : {1, 2, 4, 8})
      if (k <= largest) shapes.insert(k);
    for (const WaitingJob& j : waiting)
      if (accepts(j)) shapes.insert(j.gpus_per_worker);
    for (int64_t k : shapes) {
      StrandedShape s;
      s.gpus_per_worker = k;
      int64_t workers_that_fit = 0;
      for (const StrandedNode* n : list) {
        const int64_t fit = n->free_gpus / k;
        workers_that_fit += fit;
        s.usable_gpus += fit * k;
        if (fit > 0) ++s.nodes_that_fit;
      }
      s.stranded_gpus = m.free_gpus - s.usable_gpus;
      for (const WaitingJob& j : waiting) {
        if (!accepts(j) || j.gpus_per_worker != k) continue;
        ++s.waiting_jobs;
        if (j.gpus_per_worker * j.workers <= m.free_gpus && j.workers > workers_that_fit) ++s.blocked_by_fragmentation;
      }
      m.shapes.push_back(s);
    }
    out.models.push_back(std::move(m));
  }
  return out;
}

}  // namespace gpurent
