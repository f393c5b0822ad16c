// Placement indexes: the best node for a job's next worker without scanning every node.
// A filter (model, reservation phase, contract pass, gang lock, and the job fields its checks and pod
// shape read: index_key) keeps a max tree over the nodes passing its static checks, each leaf the
// node's score for the pod packed with its position (ties go to the lowest node index, as a scan in
// node order does), or -1 where the pod does not fit now. A decision costs the nodes changed since
// the filter last looked (each a score, cached per node version, and log(n) tree steps; none for a
// node a bind changed where the pod did not fit), not the cluster: the same choices as the scan,
// which Random (it draws among all feasible nodes) still uses.
#include <algorithm>

#include "sched/engine_impl.h"

namespace gpurent {
namespace {

// Bound on the leaves every index holds together; beyond it they are all dropped and rebuilt on demand.
constexpr size_t kMaxIndexCells = size_t{1} << 25;

}  // namespace

bool SchedEngine::Impl::policy_scores(ScorePolicy& policy) {
  SimRng probe;  // a policy that picks (Random) draws among every feasible node: it keeps the scan
  return !policy.pick_node({0, 1}, probe).has_value();
}

void SchedEngine::Impl::note_change(int node, bool freed) {
  auto log_to = [&](size_t k) {
    auto& log = change_log[k];
    log.push_back(freed ? ~node : node);
    if (log.size() > 4 * model_nodes[k].size() + 4096) {  // every index would rather refill
      change_base[k] += log.size();
      log.clear();
    }
  };
  log_to(0);
  if (const int m = cluster.node(node).model_id; m >= 0) log_to(static_cast<size_t>(m) + 1);
}

std::string SchedEngine::Impl::index_key(const SchedJob& j) const {
  std::string k;
  auto num = [&](int64_t v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
  num(j.gpus_per_worker);  // the pod's shape: kShapeKeyBytes
  num(j.gpu_milli.value_or(-1));
  num(j.cpu_cores.value_or(-1));
  num(j.memory_gib.value_or(-1));
  num(j.cpu_milli.value_or(-1));
  num(j.memory_mib.value_or(-1));
  num(j.form_factor ? static_cast<int>(*j.form_factor) : -1);
  num(j.min_gpu_memory_gib.value_or(-1));
  num(static_cast<int>(j.rdma));
  // The tenant matters for reserved nodes and for every term (terms_ok reads these fields), and for
  // a share (a GPU's shares are one tenant's: fits).
  if (!tenant_reserved_nodes.empty() || commercial || j.reserved || j.terms.any() ||
      j.gpu_milli.value_or(kGpuMilli) < kGpuMilli) {
    k += j.tenant;
    k += '\x1f';
  }
  if (commercial || j.reserved || j.terms.any()) {
    num(j.milli_per_replica());
    k += j.spot ? 's' : '-';
    k += terms_key(j);
  }
  return k;
}

std::string SchedEngine::Impl::reason_key(const SchedJob& j) const {
  std::string k = index_key(j);
  auto num = [&](int64_t v) { k.append(reinterpret_cast<const char*>(&v), sizeof v); };
  num(j.workers);
  num(j.replicas_min);
  num(static_cast<int>(j.placement));
  k += j.terms.span_sites ? 'x' : '-';
  k += j.tenant;  // terms_block names none of it, but the tenant's contracts decide the terms
  for (const auto* v : {&j.gpu_models, &j.nodes}) {
    k += '\x1e';
    for (const std::string& s : *v) k += s + '\x1f';
  }
  return k;
}

int SchedEngine::Impl::best_indexed(const SchedJob& j, const std::string& job_key, int model, int phase,
                                    bool contract_pass, const GangLock& lock) {
  if (indexed_layout != layout_version || indexed_terms != terms_version || index_cells > kMaxIndexCells) {
    indexes.clear();
    filters.clear();
    index_cells = 0;
    indexed_layout = layout_version;
    indexed_terms = terms_version;
  }
  std::string& key = index_lookup;
  key.assign(job_key);
  key += '\x1d';
  for (const int v : {model, phase, contract_pass ? 1 : 0, lock.offer_set ? lock.offer : -9, lock.site_set ? lock.site : -9, lock.supplier})
    key.append(reinterpret_cast<const char*>(&v), sizeof v);
  const size_t k = static_cast<size_t>(model + 1);
  const std::vector<int>& universe = model_nodes[k];
  auto it = indexes.find(key);
  const bool added = it == indexes.end();
  if (added) it = indexes.try_emplace(key).first;
  PlaceIndex& x = it->second;
  // The trace's jobs state their CPUs and memory: one pod and shape for every node.
  const bool fixed = pod_is_fixed(j);
  const AllocPod fixed_pod = fixed && !nodes.empty() ? pod_for(j, 0) : AllocPod{};
  const int fixed_shape = fixed ? shape_id(fixed_pod) : -1;
  const int tenant = tenant_slot(j.tenant);
  auto value = [&](size_t pos) {
    const int i = x.nodes->members[pos];
    if (fixed)
      return fits(i, fixed_pod, -1, tenant) ? MaxTree::pack(score_shape(i, fixed_shape, fixed_pod), pos)
                                            : MaxTree::kNone;
    const AllocPod p = pod_for(j, i);
    return fits(i, p, -1, tenant) ? MaxTree::pack(score(i, p), pos) : MaxTree::kNone;
  };
  const uint64_t end = change_base[k] + change_log[k].size();
  if (added) {
    // node_ok reads of the pod's shape only whether it asks for GPUs.
    filter_lookup.assign(1, j.milli_per_worker() == 0 ? 'c' : 'g');
    filter_lookup.append(key, kShapeKeyBytes, std::string::npos);
    auto [f, fresh] = filters.try_emplace(filter_lookup);
    FilterNodes& fn = f->second;
    if (fresh) {
      fn.leaf_of.assign(universe.size(), -1);
      for (size_t u = 0; u < universe.size(); ++u) {
        const int i = universe[u];
        if (node_ok(j, i, model, phase) && (!contract_pass || under_contract(j, i)) && lock_ok(j, lock, i)) {
          fn.leaf_of[u] = static_cast<int>(fn.members.size());
          fn.members.push_back(i);
        }
      }
      index_cells += fn.leaf_of.size() + fn.members.size();
    }
    x.nodes = &fn;
  }
  const std::vector<int>& members = x.nodes->members;
  if (added || x.cursor < change_base[k] || end - x.cursor > members.size()) {
    index_cells -= x.tree.cells();
    x.tree.fill(members.size(), value);
    index_cells += x.tree.cells();
  } else {
    const auto& log = change_log[k];
    for (uint64_t c = x.cursor - change_base[k]; c < log.size(); ++c) {
      const bool freed = log[c] < 0;
      const int node = freed ? ~log[c] : log[c];
      const int pos = x.nodes->leaf_of[k == 0 ? node : model_pos[node]];
      if (pos < 0) continue;
      // A bind only takes room: where the pod did not fit it still does not (its score is moot).
      if (!freed && x.tree.leaf(static_cast<size_t>(pos)) == MaxTree::kNone) continue;
      x.tree.set(static_cast<size_t>(pos), value(static_cast<size_t>(pos)));
    }
  }
  x.cursor = end;
  return x.tree.top() < 0 ? -1 : members[MaxTree::position(x.tree.top())];
}

}  // namespace gpurent
