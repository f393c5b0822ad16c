// Placement of one replica (a gang of workers) under the hard constraints, scored by the
// configured ScorePolicy; binding and release on the cluster.
#include <algorithm>
#include <numeric>

#include "sched/engine_impl.h"

namespace gpurent {

AllocPod SchedEngine::Impl::pod_for(const SchedJob& j, int node) const {
  const SchedNode& n = nodes[node].spec;
  AllocPod p;
  const int64_t ngpu = static_cast<int64_t>(n.gpu_domains.size());
  const int64_t milli = j.milli_per_worker();
  // Absent CPU/memory: the node's share for the worker's GPUs (a whole node for a CPU-only job
  // would be wrong, so CPU-only jobs must state them; parse_job enforces it).
  p.cpu_milli = j.cpu_cores ? *j.cpu_cores * 1000 : (ngpu ? n.cpu_cores * 1000 * milli / (ngpu * 1000) : 0);
  p.memory_mib = j.memory_gib ? *j.memory_gib * 1024 : (ngpu ? n.memory_gib * 1024 * milli / (ngpu * 1000) : 0);
  if (j.cpu_milli) p.cpu_milli = *j.cpu_milli;
  if (j.memory_mib) p.memory_mib = *j.memory_mib;
  if (j.gpu_milli) {
    p.num_gpu = 1;
    p.gpu_milli = static_cast<int32_t>(*j.gpu_milli);
  } else if (j.gpus_per_worker > 0) {
    p.num_gpu = static_cast<int32_t>(j.gpus_per_worker);
    p.gpu_milli = kGpuMilli;
  }
  return p;
}

// phase 0: the tenant's reserved nodes only; 1: those and unreserved nodes; 2: any node.
bool SchedEngine::Impl::node_ok(const SchedJob& j, int i, int model, int phase) const {
  const EngineNode& n = nodes[i];
  if (n.down || n.cordoned) return false;
  if (!pinned_ok(j, i)) return false;
  const std::string& owner = n.spec.reserved_for;
  if (phase == 0 && owner != j.tenant) return false;
  if (phase == 1 && !owner.empty() && owner != j.tenant) return false;
  if (j.milli_per_worker() == 0) return terms_ok(j, i);  // CPU-only: any node with room
  return node_matches(j, i, model);
}

bool SchedEngine::Impl::pinned_ok(const SchedJob& j, int i) const {
  return j.nodes.empty() || std::find(j.nodes.begin(), j.nodes.end(), nodes[i].spec.id) != j.nodes.end();
}

bool SchedEngine::Impl::node_matches(const SchedJob& j, int i, int model) const {
  return node_matches_hardware(j, i, model) && terms_ok(j, i);
}

bool SchedEngine::Impl::node_matches_hardware(const SchedJob& j, int i, int model) const {
  const EngineNode& n = nodes[i];
  if (cluster.node(i).model_id != model) return false;
  if (!pinned_ok(j, i)) return false;
  if (j.form_factor && n.spec.form_factor != *j.form_factor) return false;
  if (j.min_gpu_memory_gib && n.spec.gpu_memory_gib < *j.min_gpu_memory_gib) return false;
  switch (j.rdma) {
    case RdmaRequirement::kNone:
      break;
    case RdmaRequirement::kAny:
      if (n.spec.rdma == 0) return false;
      break;
    case RdmaRequirement::kInfiniband:
      if (!(n.spec.rdma & kRdmaIb)) return false;
      break;
    case RdmaRequirement::kRoceV2:
      if (!(n.spec.rdma & kRdmaRoce)) return false;
      break;
  }
  return true;
}

int64_t SchedEngine::Impl::workers_by_cpu_memory(const SchedJob& j, int i) const {
  const AllocNode& n = cluster.node(i);
  const AllocPod p = pod_for(j, i);
  // Only what the job states: a share derived from the worker's GPUs (pod_for) fits wherever the
  // GPUs do, and the GPU checks say so better.
  int64_t most = INT64_MAX;
  if ((j.cpu_cores || j.cpu_milli) && p.cpu_milli > 0) most = std::min<int64_t>(most, n.cpu_cap / p.cpu_milli);
  if ((j.memory_gib || j.memory_mib) && p.memory_mib > 0) most = std::min<int64_t>(most, n.mem_cap / p.memory_mib);
  return most;
}

bool SchedEngine::Impl::gpu_ok(int i, int g, const AllocPod& p, int tenant) const {
  if (cluster.node(i).gpu_free[g] < p.gpu_milli) return false;
  if (p.gpu_milli >= kGpuMilli || tenant < 0) return true;
  const EngineNode& en = nodes[i];
  return en.share_count[g] == 0 || en.share_tenant[g] == tenant;
}

bool SchedEngine::Impl::fits(int i, const AllocPod& p, int domain, int tenant) const {
  const AllocNode& n = cluster.node(i);
  if (n.cpu_used + p.cpu_milli > n.cpu_cap || n.mem_used + p.memory_mib > n.mem_cap) return false;
  if (p.gpu_milli <= 0) return true;
  if (domain < 0 && !AllocCluster::gpus_fit(n, p.num_gpu, p.gpu_milli)) return false;
  if (domain < 0 && (p.gpu_milli >= kGpuMilli || tenant < 0)) return true;
  int fit = 0;
  for (int g = 0; g < static_cast<int>(n.gpu_free.size()); ++g)
    if ((domain < 0 || nodes[i].gpu_domain[g] == domain) && gpu_ok(i, g, p, tenant) && ++fit >= p.num_gpu) return true;
  return false;
}

bool SchedEngine::Impl::pod_is_fixed(const SchedJob& j) {
  if (j.milli_per_worker() == 0) return true;
  return (j.cpu_cores || j.cpu_milli) && (j.memory_gib || j.memory_mib);
}

int SchedEngine::Impl::shape_id(const AllocPod& p) {
  const std::tuple<int64_t, int32_t, int32_t> key{p.cpu_milli, p.num_gpu, p.gpu_milli};
  if (auto it = shapes.find(key); it != shapes.end()) return it->second;
  // Shapes are what tenants ask for (CPUs, GPU shares): past a bound the numbering starts again
  // and the per-node score rows (sized by the largest id) are dropped, so submitting every shape
  // there is cannot grow them without end. Ids live only within one placement's scoring.
  if (shapes.size() >= kMaxShapes) {
    shapes.clear();
    for (auto& row : score_cache) {
      row.clear();
      row.shrink_to_fit();
    }
    state_scores.clear();  // keyed by shape id too: the old ids' scores would answer for new shapes
  }
  return shapes.emplace(key, static_cast<int>(shapes.size())).first->second;
}

int SchedEngine::Impl::score_shape(int node, int shape, const AllocPod& p) {
  auto& row = score_cache[node];
  if (static_cast<int>(row.size()) <= shape) row.resize(shape + 1, {UINT32_MAX, 0});
  auto& cell = row[shape];
  if (cell.first != node_version[node]) {
    // Nodes in the same state score alike (score_policy.h): FGD's score is worth remembering.
    const AllocNode& n = cluster.node(node);
    state_key.assign(reinterpret_cast<const char*>(&shape), sizeof shape);
    append_score_state(state_key, n);
    if (state_scores.size() > (size_t{1} << 20)) state_scores.clear();
    bool added = false;
    int16_t& score = state_scores.find_or_add(state_key, added);
    if (added) score = static_cast<int16_t>(std::clamp(policy->score(cluster, node, p), 0, policy->max_score()));
    cell = {node_version[node], score};
  }
  return cell.second;
}

std::vector<int> SchedEngine::Impl::choose_gpus(int i, const AllocPod& p, int domain, int tenant) {
  const AllocNode& n = cluster.node(i);
  const auto& dom = nodes[i].gpu_domain;
  if (p.gpu_milli <= 0) return {};
  std::vector<int> out;
  // Less than a whole GPU where another tenant has shares: only the GPUs no other tenant shares,
  // tightest first for a share, else lowest indices (what the policy picks, when it picks those).
  if (domain < 0 && p.gpu_milli < kGpuMilli && tenant >= 0) {
    std::vector<int> picked = choose_gpus(i, p, -1, -1);
    if (std::all_of(picked.begin(), picked.end(), [&](int g) { return gpu_ok(i, g, p, tenant); }) &&
        static_cast<int>(picked.size()) == p.num_gpu)
      return picked;
    domain = -2;  // below: every domain, the tenant's GPUs only
  }
  if (domain >= 0 || domain == -2) {  // one NVLink domain (or any, -2): tightest GPU for a share, else lowest indices
    for (int g = 0; g < static_cast<int>(n.gpu_free.size()); ++g) {
      if ((domain >= 0 && dom[g] != domain) || !gpu_ok(i, g, p, tenant)) continue;
      if (p.is_share()) {
        if (out.empty() || n.gpu_free[g] < n.gpu_free[out[0]]) out.assign(1, g);
      } else if (static_cast<int>(out.size()) < p.num_gpu) {
        out.push_back(g);
      }
    }
    return out;
  }
  if (p.num_gpu > 1) {  // keep a multi-GPU worker inside one NVLink domain when one has room
    std::map<int, std::vector<int>> by_domain;
    for (int g = 0; g < static_cast<int>(n.gpu_free.size()); ++g)
      if (dom[g] >= 0 && n.gpu_free[g] >= p.gpu_milli) by_domain[dom[g]].push_back(g);
    const std::vector<int>* best = nullptr;
    for (const auto& [d, gs] : by_domain)
      if (static_cast<int>(gs.size()) >= p.num_gpu && (!best || gs.size() < best->size())) best = &gs;
    if (best) return {best->begin(), best->begin() + p.num_gpu};
  }
  return policy->choose_gpus(cluster, i, p, rng);
}

void SchedEngine::Impl::bind(Bound& b) {
  cluster.bind(b.node, b.pod, b.gpus);
  if (b.pod.gpu_milli < kGpuMilli)
    for (int g : b.gpus) {
      int& owner = nodes[b.node].share_tenant[g];
      owner = nodes[b.node].share_count[g]++ == 0 ? b.tenant : owner == b.tenant ? owner : kMixedTenants;
    }
  ++node_version[b.node];
  note_change(b.node);
  if (const int m = cluster.node(b.node).model_id; m >= 0)
    free_by_model[m] -= int64_t{b.pod.gpu_milli} * static_cast<int64_t>(b.gpus.size());
}

void SchedEngine::Impl::unbind(const Bound& b) {
  cluster.unbind(b.node, b.pod, b.gpus);
  if (b.pod.gpu_milli < kGpuMilli)
    for (int g : b.gpus)
      if (--nodes[b.node].share_count[g] == 0) nodes[b.node].share_tenant[g] = -1;
  ++node_version[b.node];
  note_change(b.node, true);
  if (const int m = cluster.node(b.node).model_id; m >= 0)
    free_by_model[m] += int64_t{b.pod.gpu_milli} * static_cast<int64_t>(b.gpus.size());
}

void SchedEngine::Impl::release(const Gang& u) {
  for (auto it = u.workers.rbegin(); it != u.workers.rend(); ++it) unbind(*it);
}

namespace {

// Binds workers one at a time; each takes the best-scoring node `allowed` admits.
// The first worker fixes what `lock` leaves open (the gang's offer and site).
template <typename Allowed>
bool place_workers(SchedEngine::Impl& e, const SchedJob& j, int64_t count, int domain, Allowed allowed, GangLock lock,
                   std::vector<Bound>& out) {
  const int tenant = e.tenant_slot(j.tenant);
  for (int64_t w = 0; w < count; ++w) {
    e.feasible.clear();
    for (int i = 0; i < static_cast<int>(e.nodes.size()); ++i)
      if (allowed(i) && e.lock_ok(j, lock, i) && e.fits(i, e.pod_for(j, i), domain, tenant)) e.feasible.push_back(i);
    if (e.feasible.empty()) return false;
    std::optional<int> chosen;
    if (e.feasible.size() > 1) chosen = e.policy->pick_node(e.feasible, e.rng);
    if (!chosen) {
      int best = -1;
      for (int i : e.feasible) {
        const int s = e.score(i, e.pod_for(j, i));
        if (s > best) best = s, chosen = i;
      }
    }
    Bound b{*chosen, e.pod_for(j, *chosen), {}, tenant};
    b.gpus = e.choose_gpus(b.node, b.pod, domain, tenant);
    e.bind(b);
    e.lock_to(j, lock, b.node);
    out.push_back(std::move(b));
  }
  return true;
}

// place_workers for the filter of an index (model, phase, contract pass): the same choices, read
// from the index instead of a scan.
bool place_workers_indexed(SchedEngine::Impl& e, const SchedJob& j, const std::string& job_key, int model, int phase,
                           bool contract_pass, GangLock lock, std::vector<Bound>& out) {
  const int tenant = e.tenant_slot(j.tenant);
  for (int64_t w = 0; w < j.workers; ++w) {
    const int chosen = e.best_indexed(j, job_key, model, phase, contract_pass, lock);
    if (chosen < 0) return false;
    Bound b{chosen, e.pod_for(j, chosen), {}, tenant};
    b.gpus = e.choose_gpus(b.node, b.pod, -1, tenant);
    e.bind(b);
    e.lock_to(j, lock, b.node);
    out.push_back(std::move(b));
  }
  return true;
}

// Where a gang may be bound beyond `ok`: the (site, offer) pairs of the nodes `ok` admits, best
// node score first, when there is more than one (else none: the plain greedy placement holds).
template <typename Ok>
std::vector<GangLock> gang_locks(SchedEngine::Impl& e, const SchedJob& j, Ok ok, const GangLock& base) {
  if (j.workers <= 1 || (!e.commercial && e.site_ids.empty())) return {};
  if (base.offer_set && (base.site_set || j.terms.span_sites)) return {};
  std::map<std::pair<int, int>, int> best;  // (site, offer) -> best score of a node
  for (int i = 0; i < static_cast<int>(e.nodes.size()); ++i) {
    if (!ok(i) || !e.lock_ok(j, base, i) || !e.fits(i, e.pod_for(j, i), -1, e.tenant_slot(j.tenant))) continue;
    GangLock l = base;
    e.lock_to(j, l, i);
    const std::pair<int, int> key{l.site_set ? l.site : -1, l.offer};
    const int s = e.score(i, e.pod_for(j, i));
    auto [it, added] = best.try_emplace(key, s);
    if (!added) it->second = std::max(it->second, s);
  }
  if (best.size() <= 1) return {};
  std::vector<std::pair<int, std::pair<int, int>>> order;
  for (const auto& [k, s] : best) order.push_back({-s, k});
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<GangLock> out;
  for (const auto& [s, k] : order) {
    GangLock l = base;
    l.offer_set = true;
    l.offer = k.second;
    if (!j.terms.span_sites) l.site_set = true, l.site = k.first;
    out.push_back(l);
  }
  return out;
}

}  // namespace

std::optional<Gang> SchedEngine::Impl::place_replica(const EngineJob& ej, int64_t replica,
                                                     const std::vector<int>& models, std::optional<int> offer) {
  const SchedJob& j = ej.spec;
  bool any_reserved_other = false, own_reserved = tenant_reserved_nodes.count(j.tenant) > 0;
  for (const auto& [t, count] : tenant_reserved_nodes)
    if (t != j.tenant && count > 0) any_reserved_other = true;
  std::vector<Bound> bound;
  auto rollback = [&] {
    for (auto it = bound.rbegin(); it != bound.rend(); ++it) unbind(*it);
    bound.clear();
  };
  // A job that runs already (an inference replica more) stays under its offer; so does a replica
  // placed with its job's first ones (`offer`, place_replicas).
  const std::optional<int> locked = ej.running && !ej.units.empty() ? std::optional<int>(ej.offer) : offer;
  GangLock base0;
  if (locked) base0.offer_set = true, base0.offer = *locked;
  // Its tenant's contracts first: nodes it may buy under one of them, then the rest.
  const bool contracts_first = !base0.offer_set && contract_tenants.count(j.tenant) > 0;
  // Within each of those, a tenant with a procurement split tries the suppliers it owes first.
  const std::vector<int> steer = splits.empty() ? std::vector<int>() : split_order(j);
  // The indexes serve the plain greedy placement below for jobs not pinned to nodes.
  const bool use_index = indexed && j.nodes.empty();
  const std::string job_key = use_index ? index_key(j) : std::string();
  for (int phase = 0; phase < 3; ++phase) {
    if (phase == 0 && !own_reserved) continue;
    if (phase == 2 && !any_reserved_other) continue;
    for (int mi = 0; mi < static_cast<int>(models.size()) * 2; ++mi) {
      const int m = models[mi / 2];
      const bool contract_pass = mi % 2 == 0;
      if (contract_pass && !contracts_first) continue;
      bool placed = false;
      std::optional<int> gang_offer;  // the offer of the gang lock that placed it, when one did
      for (size_t si = 0; si <= steer.size() && !placed; ++si) {
        const int pref = si < steer.size() ? steer[si] : -1;  // a supplier the split steers to; -1 any
        GangLock base = base0;
        base.supplier = pref;
        auto ok = [&](int i) {
          return node_ok(j, i, m, phase) && (!contract_pass || under_contract(j, i)) &&
                 (pref < 0 || nodes[i].supplier == pref);
        };
        if (j.placement == PlacementRule::kSameNode && j.workers > 1) {
          // Rank nodes by the score of the whole gang as one pod, then try them in order.
          std::vector<std::pair<int, int>> ranked;  // (-score, node)
          for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
            if (!ok(i)) continue;
            AllocPod all = pod_for(j, i);
            all.cpu_milli *= j.workers;
            all.memory_mib *= j.workers;
            if (!all.is_share()) all.num_gpu = static_cast<int32_t>(all.num_gpu * j.workers);
            if (fits(i, all, -1, tenant_slot(j.tenant))) ranked.push_back({-policy->score(cluster, i, all), i});
          }
          std::sort(ranked.begin(), ranked.end());
          for (const auto& entry : ranked) {
            const int i = entry.second;  // a named copy: clang 14 cannot capture a structured binding
            placed = place_workers(
                *this, j, j.workers, -1, [&](int k) { return k == i; }, base, bound);
            if (placed) break;
            rollback();
          }
        } else if (j.placement == PlacementRule::kSameNvlinkDomain && j.milli_per_worker() > 0) {
          // Domains with room for the gang, tightest first.
          const int64_t need = j.gpu_milli ? j.workers : j.workers * j.gpus_per_worker;
          const int32_t g = j.gpu_milli ? static_cast<int32_t>(*j.gpu_milli) : kGpuMilli;
          std::vector<std::pair<int64_t, int>> cands;  // (slack, domain)
          for (int d = 0; d < static_cast<int>(domain_gpus.size()); ++d) {
            int64_t room = 0;
            for (const auto& [i, gpu] : domain_gpus[d])
              if (ok(i) && cluster.node(i).gpu_free[gpu] >= g) ++room;
            if (room >= need) cands.push_back({room - need, d});
          }
          std::sort(cands.begin(), cands.end());
          for (const auto& [slack, d] : cands) {
            placed = place_workers(*this, j, j.workers, d, ok, base, bound);
            if (placed) break;
            rollback();
          }
        } else {
          // One gang, one offer and (unless it spans sites) one site: with several to choose from,
          // each is tried whole, the one holding the best-scoring node first.
          const std::vector<GangLock> locks = gang_locks(*this, j, ok, base);
          auto place = [&](const GangLock& l) {
            return use_index ? place_workers_indexed(*this, j, job_key, m, phase, contract_pass, l, bound)
                             : place_workers(*this, j, j.workers, -1, ok, l, bound);
          };
          if (locks.empty()) {
            placed = place(base);
            if (!placed) rollback();
          }
          for (const GangLock& l : locks) {
            placed = place(l);
            if (placed) {
              // Its workers are on nodes that sell this offer; the first one may sell a better one
              // too, which must not become the gang's (nor what its other workers are billed at).
              gang_offer = l.offer;
              break;
            }
            rollback();
          }
        }
      }
      if (placed) {
        Gang u;
        u.replica = replica;
        u.started_at = now;
        for (const Bound& b : bound) {
          const std::string& owner = nodes[b.node].spec.reserved_for;
          if (!owner.empty() && owner != j.tenant) u.borrowed_from = owner;
        }
        u.offer = locked ? *locked : commercial ? offer_on(j, bound.front().node) : kUnpriced;
        // Under a gang lock: the first node's best offer when every worker's node sells it too,
        // else the lock's (the first node may sell a better offer the others do not).
        if (gang_offer && !locked && commercial && u.offer != *gang_offer)
          for (const Bound& b : bound)
            if (offer_on(j, b.node, u.offer) == kNoOffer) {
              u.offer = *gang_offer;
              break;
            }
        u.workers = std::move(bound);
        return u;
      }
    }
  }
  return std::nullopt;
}

std::optional<std::vector<Gang>> SchedEngine::Impl::place_replicas(const EngineJob& j,
                                                                   const std::vector<int64_t>& replicas,
                                                                   const std::vector<int>& models) {
  auto attempt = [&](std::optional<int> offer) -> std::optional<std::vector<Gang>> {
    std::vector<Gang> units;
    for (int64_t r : replicas) {
      auto u = place_replica(j, r, models, offer);
      if (!u) {
        for (auto it = units.rbegin(); it != units.rend(); ++it) release(*it);
        return std::nullopt;
      }
      units.push_back(std::move(*u));
    }
    return units;
  };
  // Every replica of a job runs under one offer (docs/scheduler.md): placed each on its own, they
  // may land under several; then the job is placed again under each of those offers in turn (the
  // first replica's first), all its replicas under the one that holds them.
  auto units = attempt(std::nullopt);
  if (!units || units->size() < 2) return units;
  std::vector<int> offers;
  for (const Gang& u : *units)
    if (std::find(offers.begin(), offers.end(), u.offer) == offers.end()) offers.push_back(u.offer);
  if (offers.size() == 1) return units;
  for (auto it = units->rbegin(); it != units->rend(); ++it) release(*it);
  for (int o : offers)
    if (auto one = attempt(o)) return one;
  return std::nullopt;
}

void SchedEngine::Impl::maybe_prepare() {
  size_t live = jobs.size();
  if (awaiting_choice || policy_task) return;
  if (prepared && submissions_since_prepare < std::max<size_t>(100, live / 4)) return;
  // The target workload of fragmentation-aware policies: the shapes of the jobs we know.
  std::vector<AllocPod> workload;
  workload.reserve(live);
  for (const auto& [id, j] : jobs) {
    if (nodes.empty()) break;
    AllocPod p = pod_for(j.spec, 0);
    if (j.spec.cpu_cores) p.cpu_milli = *j.spec.cpu_cores * 1000;
    for (int64_t w = 0; w < std::min<int64_t>(j.spec.workers, 8); ++w) workload.push_back(p);
  }
  if (cfg.defer_slow_prepare) {
    policy_task = policy->prepare_deferred(cluster, workload);
    if (policy_task) planned_workload = std::move(workload);
  } else {
    policy->prepare(cluster, workload);
  }
  for (auto& row : score_cache) row.clear();
  state_scores.clear();
  ++layout_version;  // new scores
  prepared = true;
  submissions_since_prepare = 0;
}

}  // namespace gpurent
