#include "sched/engine.h"

#include <algorithm>
#include <set>
#include <utility>

#include "sched/engine_impl.h"

namespace gpurent {

std::vector<SchedWorker> describe_unit(const SchedEngine::Impl& e, const Gang& u);

const char* sched_event_kind_name(SchedEventKind k) {
  switch (k) {
    case SchedEventKind::kAdmitted:
      return "admitted";
    case SchedEventKind::kReplicaAdded:
      return "replica_added";
    case SchedEventKind::kReplicaRemoved:
      return "replica_removed";
    case SchedEventKind::kPreempted:
      return "preempted";
    case SchedEventKind::kNotice:
      return "notice";
    case SchedEventKind::kPending:
      return "pending";
    case SchedEventKind::kFault:
      return "fault";
  }
  return "?";
}

SchedEngine::SchedEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SchedEngine::~SchedEngine() = default;

Result<std::unique_ptr<SchedEngine>> SchedEngine::make(SchedConfig config) {
  auto policy = make_score_policy(config.score_policy);
  if (!policy) return policy.error();
  if (config.spot_notice_ms < 0) return Error::invalid("spot_notice_ms", Message("sched.not_negative"));
  for (const auto& [t, w] : config.tenant_weights)
    if (w < 1 || w > 1000) return Error::invalid("tenant_weights." + t, Message("sched.weight_range"));
  auto impl = std::make_unique<Impl>();
  impl->rng.seed(config.seed);
  impl->cfg = std::move(config);
  impl->policy = std::move(*policy);
  impl->indexed = SchedEngine::Impl::policy_scores(*impl->policy);
  impl->model_nodes.resize(1);
  impl->change_log.resize(1);
  impl->change_base.resize(1, 0);
  return std::unique_ptr<SchedEngine>(new SchedEngine(std::move(impl)));
}

Status SchedEngine::add_node(const SchedNode& n) {
  Impl& e = *impl_;
  if (e.node_index.count(n.id)) return Error::make(Code::kConflict, Message("sched.node_exists").arg("node", n.id));
  if (n.cpu_cores < 0 || n.memory_gib < 0) return Error::invalid("node." + n.id, Message("sched.negative_capacity"));
  const int gpus = static_cast<int>(n.gpu_domains.size());
  if (auto s = e.cluster.add_node(n.id, n.cpu_cores * 1000, n.memory_gib * 1024, gpus, gpus ? n.gpu_model : ""); !s)
    return s;
  const int idx = static_cast<int>(e.nodes.size());
  e.node_index[n.id] = idx;
  EngineNode en;
  en.spec = n;
  // A gang stays in one place: a site of a supplier and, where the site has several, one RDMA fabric.
  if (!n.site.empty() || !n.fabric.empty())
    en.site = e.site_ids
                  .try_emplace(n.supplier + "/" + n.site + (n.fabric.empty() ? "" : "/" + n.fabric),
                               static_cast<int>(e.site_ids.size()))
                  .first->second;
  if (!n.fabric.empty()) e.fabrics = true;
  if (!n.supplier.empty()) en.supplier = e.supplier_slot(n.supplier);
  for (const auto& o : n.offers) en.offers.push_back(e.offer_slot(o));
  for (int g = 0; g < gpus; ++g) {
    const std::string& d = n.gpu_domains[g];
    int id = -1;
    if (!d.empty()) {
      auto [it, added] = e.domain_ids.try_emplace(d, static_cast<int>(e.domains.size()));
      if (added) {
        e.domains.push_back(d);
        e.domain_gpus.emplace_back();
      }
      id = it->second;
      e.domain_gpus[id].push_back({idx, g});
    }
    en.gpu_domain.push_back(id);
  }
  en.share_tenant.assign(gpus, -1);
  en.share_count.assign(gpus, 0);
  const int model = e.cluster.node(idx).model_id;
  if (model >= 0 && model >= static_cast<int>(e.model_names.size())) {
    e.model_names.resize(model + 1);
    e.model_names[model] = n.gpu_model;
    e.model_ids[n.gpu_model] = model;
    while (e.all_models.size() < e.model_names.size()) e.all_models.push_back(static_cast<int>(e.all_models.size()));
    e.free_by_model.resize(model + 1, 0);
  }
  if (model >= 0) e.free_by_model[model] += int64_t{gpus} * kGpuMilli;
  if (model >= 0) {
    if (model >= static_cast<int>(e.milli_by_model.size())) e.milli_by_model.resize(model + 1, 0);
    e.milli_by_model[model] += int64_t{gpus} * kGpuMilli;
  }
  if (model + 2 > static_cast<int>(e.model_nodes.size())) {
    e.model_nodes.resize(model + 2);
    e.change_log.resize(model + 2);
    e.change_base.resize(model + 2, 0);
  }
  e.model_nodes[0].push_back(idx);
  e.model_pos.push_back(model >= 0 ? static_cast<int>(e.model_nodes[model + 1].size()) : -1);
  if (model >= 0) e.model_nodes[model + 1].push_back(idx);
  ++e.layout_version;
  if (!n.reserved_for.empty()) ++e.tenant_reserved_nodes[n.reserved_for];
  e.total_cpu_milli += n.cpu_cores * 1000;
  e.nodes.push_back(std::move(en));
  e.score_cache.emplace_back();
  e.node_version.push_back(0);
  e.prepared = false;
  ++e.epoch;
  return ok_status();
}

std::vector<SchedEvent> SchedEngine::node_failed(const std::string& node, TimeMs now, const Message& detail) {
  Impl& e = *impl_;
  std::vector<SchedEvent> out;
  auto it = e.node_index.find(node);
  if (it == e.node_index.end() || e.nodes[it->second].down) return out;
  const int idx = it->second;
  e.now = now;
  e.nodes[idx].down = true;
  ++e.layout_version;
  const std::string& shown = e.nodes[idx].spec.name.empty() ? node : e.nodes[idx].spec.name;
  const Message why = detail.empty() ? Message("sched.node_failed").arg("node", shown)
                                     : Message("sched.node_failed_detail").arg("node", shown).arg("detail", detail);
  for (auto& [id, j] : e.jobs) {
    if (!j.running) continue;
    std::vector<int64_t> hit;
    bool all_extra = j.spec.kind == JobKind::kInference;
    for (const Gang& u : j.units)
      for (const Bound& b : u.workers)
        if (b.node == idx) {
          if (hit.empty() || hit.back() != u.replica) hit.push_back(u.replica);
          all_extra = all_extra && u.replica >= j.spec.replicas_min;
        }
    if (hit.empty()) continue;
    SchedEvent f;
    f.kind = SchedEventKind::kFault;
    f.job = id;
    f.node = node;
    f.at = now;
    f.reason = why;
    out.push_back(std::move(f));
    if (all_extra) {
      for (int64_t r : hit)
        for (size_t i = 0; i < j.units.size(); ++i)
          if (j.units[i].replica == r) {
            e.evict(j, i, Message("sched.replica_lost").arg("why", why), out);
            break;
          }
    } else {
      e.evict(j, 0, Message("sched.requeued").arg("why", why), out);
    }
  }
  return out;
}

Status SchedEngine::node_restored(const std::string& node) {
  auto it = impl_->node_index.find(node);
  if (it == impl_->node_index.end())
    return Error::make(Code::kNotFound, Message("sched.node_not_in_scheduler").arg("node", node));
  impl_->nodes[it->second].down = false;
  ++impl_->layout_version;
  ++impl_->epoch;
  return ok_status();
}

Status SchedEngine::set_node_cordoned(const std::string& node, bool cordoned) {
  auto it = impl_->node_index.find(node);
  if (it == impl_->node_index.end())
    return Error::make(Code::kNotFound, Message("sched.node_not_in_scheduler").arg("node", node));
  impl_->nodes[it->second].cordoned = cordoned;
  ++impl_->layout_version;
  ++impl_->epoch;
  return ok_status();
}

namespace {

// The tenant whose reserved node `u` runs on, for a job of `tenant`: "" when none of its nodes is
// reserved for another tenant now. Kept current as reservations open and close, and after a
// restore, so the owner takes its node back whatever the borrower is, and only while it owns it.
void mark_borrowed(const SchedEngine::Impl& e, const std::string& tenant, Gang& u) {
  u.borrowed_from.clear();
  for (const Bound& b : u.workers) {
    const std::string& owner = e.nodes[b.node].spec.reserved_for;
    if (!owner.empty() && owner != tenant) u.borrowed_from = owner;
  }
}

}  // namespace

Status SchedEngine::set_node_reservation(const std::string& node, const std::string& tenant) {
  Impl& e = *impl_;
  auto it = e.node_index.find(node);
  if (it == e.node_index.end())
    return Error::make(Code::kNotFound, Message("sched.node_not_in_scheduler").arg("node", node));
  std::string& owner = e.nodes[it->second].spec.reserved_for;
  if (!owner.empty() && --e.tenant_reserved_nodes[owner] == 0) e.tenant_reserved_nodes.erase(owner);
  owner = tenant;
  if (!owner.empty()) ++e.tenant_reserved_nodes[owner];
  for (EngineJob* j : e.running)
    for (Gang& u : j->units)
      if (std::any_of(u.workers.begin(), u.workers.end(), [&](const Bound& b) { return b.node == it->second; }))
        mark_borrowed(e, j->spec.tenant, u);
  ++e.epoch;
  ++e.layout_version;
  return ok_status();
}

void SchedEngine::set_project(const SchedProject& p) {
  auto it = impl_->projects.find(p.id);
  if (it != impl_->projects.end() && it->second.quota == p.quota && it->second.name == p.name &&
      it->second.tenant == p.tenant && it->second.hold == p.hold)
    return;
  impl_->projects[p.id] = p;
  ++impl_->projects_version;
  ++impl_->epoch;
}

namespace {

Status check_job(const SchedJob& j) {
  if (j.id.empty()) return Error::invalid("id", Message("sched.job.required"));
  if (j.workers < 1) return Error::invalid("workers", Message("sched.job.at_least_one"));
  if (j.gpus_per_worker < 0 || (j.gpu_milli && (*j.gpu_milli < 1 || *j.gpu_milli > 999)))
    return Error::invalid("gpus", Message("sched.job.out_of_range"));
  if (j.replicas_min < 1 || j.replicas_max < j.replicas_min)
    return Error::invalid("replicas", Message("sched.job.replicas_range"));
  return ok_status();
}

}  // namespace

Status SchedEngine::submit(const SchedJob& job, const Message& requeued_why) {
  Impl& e = *impl_;
  if (auto s = check_job(job); !s) return s;
  if (e.jobs.count(job.id)) return Error::make(Code::kConflict, Message("sched.job_exists").arg("job", job.id));
  EngineJob j;
  j.spec = job;
  j.seq = e.next_seq++;
  j.requeued_why = requeued_why;
  j.project_usage = &e.project_usage[job.project];
  j.tenant_usage = &e.tenant_usage[job.tenant];
  j.rank = priority_rank(job.priority);
  if (auto w = e.cfg.tenant_weights.find(job.tenant); w != e.cfg.tenant_weights.end()) j.weight = w->second;
  e.set_pending(e.jobs.emplace(job.id, std::move(j)).first->second, true);
  if (job.kind == JobKind::kInference) ++e.inference_jobs;
  e.fresh.push_back(job.id);
  ++e.submissions_since_prepare;
  return ok_status();
}

namespace {

// The whole-GPU workers of `j` on node `ni` (appended to `out`), and the GPUs they hold, sorted.
std::vector<int64_t> workers_on(EngineJob& j, int ni, std::vector<Bound*>& out) {
  std::vector<int64_t> held;
  for (Gang& u : j.units)
    for (Bound& b : u.workers)
      if (b.node == ni && b.pod.gpu_milli == 1000) {
        out.push_back(&b);
        held.insert(held.end(), b.gpus.begin(), b.gpus.end());
      }
  std::sort(held.begin(), held.end());
  return held;
}

// One job's workers on the node, and the GPUs they move from and to.
struct Move {
  std::vector<Bound*> bounds;
  std::vector<int64_t> from, to;  // to empty: displaced, goes to any free GPUs
};

// The moves of the named jobs not already on their GPUs, and every GPU they name (`wanted`).
Status named_moves(SchedEngine::Impl& e, int ni, const std::string& node,
                   const std::map<std::string, std::vector<int64_t>>& jobs, std::map<std::string, Move>& moves,
                   std::set<int64_t>& wanted) {
  for (const auto& [id, g] : jobs) {
    auto jt = e.jobs.find(id);
    if (jt == e.jobs.end() || !jt->second.running)
      return Error::make(Code::kNotFound, Message("sched.job_not_running").arg("job", id));
    Move m;
    m.from = workers_on(jt->second, ni, m.bounds);
    m.to = g;
    std::sort(m.to.begin(), m.to.end());
    if (m.bounds.empty() || m.from.size() != m.to.size() || std::adjacent_find(m.to.begin(), m.to.end()) != m.to.end())
      return Error::make(Code::kInvalid, Message("sched.adopt.count_mismatch")
                                             .arg("job", id)
                                             .arg("held", std::to_string(m.from.size()))
                                             .arg("node", node)
                                             .arg("given", std::to_string(m.to.size())));
    for (int64_t x : m.to)
      if (!wanted.insert(x).second)
        return Error::make(Code::kInvalid,
                           Message("sched.adopt.gpu_twice").arg("gpu", std::to_string(x)).arg("node", node));
    if (m.from != m.to) moves[id] = std::move(m);
  }
  return ok_status();
}

// Jobs not in `jobs` that hold a wanted GPU make room: they move to GPUs nobody wants.
void displaced_moves(SchedEngine::Impl& e, int ni, const std::map<std::string, std::vector<int64_t>>& jobs,
                     const std::set<int64_t>& wanted, std::map<std::string, Move>& moves) {
  for (auto& [id, j] : e.jobs) {
    if (!j.running || jobs.count(id)) continue;
    Move m;
    m.from = workers_on(j, ni, m.bounds);
    for (int64_t x : m.from)
      if (wanted.count(x)) {
        moves[id] = std::move(m);
        break;
      }
  }
}

// Undoes the moves: every moved worker is bound again on the GPUs it held.
void rollback(SchedEngine::Impl& e, const std::map<std::string, Move>& moves, const std::vector<Bound*>& bound_now) {
  for (Bound* b : bound_now) e.unbind(*b);
  for (auto& [id, m] : moves) {
    size_t k = 0;
    for (Bound* b : m.bounds) {
      for (int& g : b->gpus) g = static_cast<int>(m.from[k++]);
      e.bind(*b);
    }
  }
}

// Binds the named jobs' workers on their GPUs; kConflict, rolled back, when one is not free.
Status bind_named(SchedEngine::Impl& e, const std::vector<int32_t>& free, const std::string& node,
                  const std::map<std::string, Move>& moves, std::vector<Bound*>& bound_now) {
  for (auto& [id, m] : moves) {  // named targets first
    if (m.to.empty()) continue;
    for (int64_t x : m.to)
      if (x < 0 || x >= static_cast<int64_t>(free.size()) || free[x] < 1000) {
        rollback(e, moves, bound_now);
        return Error::make(Code::kConflict,
                           Message("sched.adopt.gpu_held").arg("gpu", std::to_string(x)).arg("node", node));
      }
    size_t k = 0;
    for (Bound* b : m.bounds) {
      for (int& g : b->gpus) g = static_cast<int>(m.to[k++]);
      e.bind(*b);
      bound_now.push_back(b);
    }
  }
  return ok_status();
}

// Binds the displaced jobs' workers; kConflict, rolled back, when the node has no room for them.
Status bind_displaced(SchedEngine::Impl& e, const std::vector<int32_t>& free, const std::string& node,
                      const std::map<std::string, Move>& moves, std::set<int64_t>& wanted,
                      std::vector<Bound*>& bound_now) {
  for (auto& [id, m] : moves) {  // then the displaced, on the lowest free GPUs nobody wants
    if (!m.to.empty()) continue;
    for (Bound* b : m.bounds) {
      for (int& g : b->gpus) {
        int pick = -1;
        for (int x = 0; x < static_cast<int>(free.size()) && pick < 0; ++x)
          if (free[x] >= 1000 && !wanted.count(x)) pick = x;
        if (pick < 0) {
          rollback(e, moves, bound_now);
          return Error::make(Code::kConflict, Message("sched.adopt.no_room").arg("node", node).arg("job", id));
        }
        g = pick;
        wanted.insert(pick);  // taken for this pass
      }
      e.bind(*b);
      bound_now.push_back(b);
    }
  }
  return ok_status();
}

}  // namespace

Status SchedEngine::adopt_gpus(const std::string& job, const std::string& node, std::vector<int64_t> gpus) {
  return adopt_node_gpus(node, {{job, std::move(gpus)}});
}

Status SchedEngine::adopt_node_gpus(const std::string& node, const std::map<std::string, std::vector<int64_t>>& jobs,
                                    std::vector<std::string>* moved) {
  Impl& e = *impl_;
  auto nt = e.node_index.find(node);
  if (nt == e.node_index.end()) return Error::make(Code::kNotFound, Message("sched.node_unknown").arg("node", node));
  const int ni = nt->second;
  std::map<std::string, Move> moves;
  std::set<int64_t> wanted;
  if (auto s = named_moves(e, ni, node, jobs, moves, wanted); !s) return s;
  if (moves.empty()) return ok_status();
  displaced_moves(e, ni, jobs, wanted, moves);
  for (auto& [id, m] : moves)
    for (Bound* b : m.bounds) e.unbind(*b);
  const auto& free = e.cluster.node(ni).gpu_free;
  std::vector<Bound*> bound_now;
  if (auto s = bind_named(e, free, node, moves, bound_now); !s) return s;
  if (auto s = bind_displaced(e, free, node, moves, wanted, bound_now); !s) return s;
  if (moved)
    for (const auto& [id, m] : moves) moved->push_back(id);
  return ok_status();
}

Status SchedEngine::restore(const SchedJob& job, const std::vector<SchedWorker>& placement, TimeMs started_at) {
  Impl& e = *impl_;
  if (auto s = submit(job); !s) return s;
  EngineJob& j = e.jobs.at(job.id);
  std::map<int64_t, Gang> units;
  auto undo = [&](Error err) {
    for (auto& [r, u] : units) e.release(u);
    e.set_pending(e.jobs.at(job.id), false);
    e.running.erase(&e.jobs.at(job.id));
    if (job.kind == JobKind::kInference) --e.inference_jobs;
    e.jobs.erase(job.id);
    return err;
  };
  for (const SchedWorker& w : placement) {
    auto it = e.node_index.find(w.node);
    if (it == e.node_index.end() || e.nodes[it->second].down)
      return undo(Error::make(Code::kConflict,
                              Message("sched.restore.node_unavailable").arg("job", job.id).arg("node", w.node)));
    Bound b{it->second, e.pod_for(job, it->second), {}, e.tenant_slot(job.tenant)};
    for (int64_t g : w.gpus) {
      if (g < 0 || g >= static_cast<int64_t>(e.cluster.node(b.node).gpu_free.size()) ||
          e.cluster.node(b.node).gpu_free[g] < b.pod.gpu_milli)
        return undo(Error::make(Code::kConflict, Message("sched.restore.gpu_not_free")
                                                     .arg("job", job.id)
                                                     .arg("gpu", std::to_string(g))
                                                     .arg("node", w.node)));
      b.gpus.push_back(static_cast<int>(g));
    }
    if (static_cast<int>(b.gpus.size()) != b.pod.num_gpu)
      return undo(Error::make(Code::kConflict, Message("sched.restore.gpus_mismatch").arg("job", job.id)));
    const AllocNode& n = e.cluster.node(b.node);
    if (n.cpu_used + b.pod.cpu_milli > n.cpu_cap || n.mem_used + b.pod.memory_mib > n.mem_cap)
      return undo(
          Error::make(Code::kConflict, Message("sched.restore.no_cpu_memory").arg("job", job.id).arg("node", w.node)));
    Gang& u = units[w.replica];
    u.replica = w.replica;
    u.started_at = started_at;
    if (!w.offer.empty()) u.offer = e.offer_slot(w.offer);
    e.bind(b);
    u.workers.push_back(std::move(b));
  }
  std::vector<SchedEvent> ignored;
  std::vector<Gang> list;
  for (auto& [r, u] : units) list.push_back(std::move(u));
  e.now = started_at;
  e.start_job(j, std::move(list), ignored);
  for (Gang& u : j.units) mark_borrowed(e, j.spec.tenant, u);  // not stored either: the nodes say
  // Lending is not stored: where lending is on, a restored job that holds more than its project's
  // quota must have borrowed it, and stays reclaimable (where it is off, it cannot have borrowed:
  // its quota was lowered since, which preempts nothing).
  if (auto pit = e.projects.find(job.project); e.cfg.quota_lending && pit != e.projects.end())
    for (Gang& u : j.units)
      for (const Bound& b : u.workers) {
        const int m = e.cluster.node(b.node).model_id;
        if (m >= 0 &&
            e.project_usage[job.project].milli_by_model[m] > pit->second.quota.gpu_limit(e.model_names[m]) * 1000)
          u.quota_lent = true;
      }
  return ok_status();
}

void SchedEngine::remove(const std::string& id) {
  Impl& e = *impl_;
  auto it = e.jobs.find(id);
  if (it == e.jobs.end()) return;
  EngineJob& j = it->second;
  if (j.running) {
    for (auto u = j.units.rbegin(); u != j.units.rend(); ++u) {
      e.release(*u);
      e.account(j, *u, -1);
    }
    --e.project_usage[j.spec.project].jobs;
    ++e.project_usage[j.spec.project].version;
    --e.tenant_usage[j.spec.tenant].jobs;
  }
  if (e.notices)
    for (auto& [other_id, other] : e.jobs)  // its spot notices are void
      for (Gang& u : other.units)
        if (u.reclaim_for == id) u.reclaim_at.reset(), u.reclaim_for.clear();
  if (j.spec.kind == JobKind::kInference) --e.inference_jobs;
  for (const Gang& u : j.units)  // notices it was under: their claimant stops waiting
    if (u.reclaim_at) e.free_claimant(u);
  if (j.running) ++e.epoch;
  if (e.blocked && e.blocked->job == id) {  // the backfill head left: nothing is held for it now
    e.blocked.reset();
    ++e.epoch;
  }
  e.set_pending(it->second, false);
  e.running.erase(&it->second);
  e.jobs.erase(it);
}

std::vector<SchedEvent> SchedEngine::schedule(TimeMs now) {
  Impl& e = *impl_;
  std::vector<SchedEvent> out;
  e.now = now;
  if (e.blocked) e.blocked->delay_reason.clear();  // it names a time relative to now
  e.backfill_refused.clear();
  e.reclaim_due(out);
  e.maybe_prepare();
  e.victims = {};
  for (const EngineJob* j : e.running)  // a max over them: order does not matter
    for (const Gang& u : j->units) e.note_victim(*j, u);
  // Jobs requeued during this pass land in e.fresh for the next one.
  std::vector<std::string> fresh;
  fresh.swap(e.fresh);
  // A new job that a full pass would handle before the backfill head (a higher priority class, or a
  // tenant or project with a smaller share) is not held behind it (an incremental pass would
  // refuse it as delaying the head): the pass is full.
  if (e.blocked && e.epoch == e.passed_epoch) {
    auto head = e.jobs.find(e.blocked->job);
    for (const std::string& id : fresh)
      if (auto it = e.jobs.find(id); head != e.jobs.end() && it != e.jobs.end() && !it->second.running &&
                                     e.ordered_before(it->second, head->second)) {
        ++e.epoch;
        break;
      }
  }
  // A head start estimated for a time now past (a running job outlived its estimate) is estimated
  // again, and what waits behind it is judged against the new one: a full pass.
  if (e.blocked && e.blocked->shadow > e.blocked->estimated_at && e.blocked->shadow <= now) ++e.epoch;
  // Room freed during this pass (a preemption that left GPUs idle) makes the next pass full.
  const uint64_t pass_epoch = e.epoch;
  if (e.epoch != e.passed_epoch) {  // a full pass
    e.blocked.reset();
    e.failed.clear();
    e.run_queue(out, nullptr);
  } else {
    e.run_queue(out, &fresh);
  }
  e.scale_up(out);
  e.passed_epoch = pass_epoch;
  return out;
}

bool SchedEngine::has_job(const std::string& job) const { return impl_->jobs.count(job) > 0; }

bool SchedEngine::is_running(const std::string& job) const {
  auto it = impl_->jobs.find(job);
  return it != impl_->jobs.end() && it->second.running;
}

std::function<int()> SchedEngine::take_policy_task() {
  if (!impl_->policy_task) return {};
  impl_->awaiting_choice = true;
  return std::exchange(impl_->policy_task, {});
}

void SchedEngine::adopt_policy_choice(int choice) {
  Impl& e = *impl_;
  e.policy->adopt(choice, e.cluster, e.planned_workload);
  for (auto& row : e.score_cache) row.clear();
  e.state_scores.clear();
  ++e.layout_version;  // new scores
  e.planned_workload.clear();
  e.awaiting_choice = false;
}

Message SchedEngine::reason_message(const std::string& job) const {
  auto it = impl_->jobs.find(job);
  return it == impl_->jobs.end() || it->second.running ? Message() : it->second.reason;
}

std::string SchedEngine::reason(const std::string& job) const { return render_en(reason_message(job)); }

std::vector<SchedWorker> SchedEngine::placement(const std::string& job) const {
  std::vector<SchedWorker> out;
  auto it = impl_->jobs.find(job);
  if (it == impl_->jobs.end()) return out;
  for (const Gang& u : it->second.units)
    for (auto& w : describe_unit(*impl_, u)) out.push_back(std::move(w));
  return out;
}

int64_t SchedEngine::total_gpu_milli() const {
  int64_t t = 0;
  for (int i = 0; i < static_cast<int>(impl_->nodes.size()); ++i)
    if (!impl_->nodes[i].down) t += static_cast<int64_t>(impl_->cluster.node(i).gpu_free.size()) * kGpuMilli;
  return t;
}

int64_t SchedEngine::allocated_gpu_milli() const { return impl_->cluster.allocated_gpu_milli(); }

size_t SchedEngine::pending_count() const {
  size_t n = 0;
  for (const auto& [id, j] : impl_->jobs) n += j.running ? 0 : 1;
  return n;
}

size_t SchedEngine::running_count() const { return impl_->jobs.size() - pending_count(); }

}  // namespace gpurent
