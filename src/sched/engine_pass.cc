// One scheduling pass (SchedEngine::schedule): the fair-share order over pending jobs, admission,
// placement or preemption per job, quota lending and its return, and inference scale-up.
#include <algorithm>
#include <queue>
#include <set>

#include "sched/engine_impl.h"

namespace gpurent {

std::vector<SchedWorker> describe_unit(const SchedEngine::Impl& e, const Gang& u);

namespace {

struct Shares {
  const SchedEngine::Impl& e;
  double of(const Usage& u, int64_t weight) const {
    const double total_gpu = static_cast<double>(std::max<int64_t>(1, e.cluster.total_gpu_milli()));
    const double total_cpu = static_cast<double>(std::max<int64_t>(1, e.total_cpu_milli));
    return std::max(static_cast<double>(u.gpu_milli) / total_gpu, static_cast<double>(u.cpu_milli) / total_cpu) /
           static_cast<double>(weight);
  }
};

bool queued_before(const EngineJob* a, const EngineJob* b) {
  if (a->rank != b->rank) return a->rank < b->rank;
  if (a->spec.submitted_at != b->spec.submitted_at) return a->spec.submitted_at < b->spec.submitted_at;
  return a->seq < b->seq;
}

}  // namespace

void SchedEngine::Impl::set_pending(EngineJob& j, bool is_pending) {
  std::deque<EngineJob*>& q = j.project_usage->queue;
  const auto at = std::lower_bound(q.begin(), q.end(), &j, queued_before);
  const bool there = at != q.end() && *at == &j;
  if (is_pending) {
    pending.insert(&j);
    if (!there) q.insert(at, &j);
    queued.insert(j.project_usage);
  } else {
    pending.erase(&j);
    if (there) q.erase(at);
    if (q.empty()) queued.erase(j.project_usage);
  }
}

bool SchedEngine::Impl::ordered_before(const EngineJob& a, const EngineJob& b) const {
  Shares shares{*this};
  auto key = [&](const EngineJob& j) {
    return std::make_tuple(j.rank, shares.of(*j.tenant_usage, j.weight), shares.of(*j.project_usage, 1),
                           j.spec.submitted_at, j.seq);
  };
  return key(a) < key(b);
}

void SchedEngine::Impl::run_queue(std::vector<SchedEvent>& out, const std::vector<std::string>* only) {
  // Per project, its pending jobs by (priority, submission, sequence); the order is total, so how
  // they are gathered does not matter.
  struct Queue {
    std::vector<EngineJob*> jobs;
    Usage* project = nullptr;
    Usage* tenant_usage = nullptr;  // of its first job, with its weight
    int64_t weight = 1;
  };
  std::unordered_map<Usage*, Queue> queues;  // by the project's usage: one per project
  if (only) {
    for (const auto& id : *only)
      if (auto it = jobs.find(id); it != jobs.end() && !it->second.running)
        queues[it->second.project_usage].jobs.push_back(&it->second);
    for (auto& [p, q] : queues) std::sort(q.jobs.begin(), q.jobs.end(), queued_before);
  } else {
    // A copy: starting and preempting jobs change the queues while the pass walks them.
    for (Usage* p : queued) queues[p].jobs.assign(p->queue.begin(), p->queue.end());
  }
  for (auto& [p, q] : queues) {
    q.project = p;
    q.tenant_usage = q.jobs.front()->tenant_usage;
    q.weight = q.jobs.front()->weight;
  }
  using Key = std::tuple<int, double, double, TimeMs, uint64_t>;
  struct Entry {
    Key key;
    const Queue* queue;
    size_t pos;
    bool operator>(const Entry& o) const { return key > o.key; }
  };
  Shares shares{*this};
  auto key_of = [&](const Queue& q, const EngineJob& j) {
    const bool same = j.tenant_usage == q.tenant_usage;
    return Key{j.rank, shares.of(*j.tenant_usage, same ? q.weight : j.weight), shares.of(*q.project, 1),
               j.spec.submitted_at, j.seq};
  };
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (const auto& [p, q] : queues) heap.push({key_of(q, *q.jobs.front()), &q, 0});
  // Jobs whose spot notice ended go first: the capacity was freed for them.
  for (const std::string& id : claimants)
    if (auto it = jobs.find(id); it != jobs.end() && !it->second.running) handle(it->second, out);
  claimants.clear();
  while (!heap.empty()) {
    Entry top = heap.top();
    heap.pop();
    for (;;) {
      const Queue& q = *top.queue;
      EngineJob& j = *q.jobs[top.pos];
      const Key fresh = key_of(q, j);
      if (fresh != top.key && !heap.empty() && heap.top().key < fresh) {  // shares moved since it was queued
        heap.push({fresh, top.queue, top.pos});
        break;
      }
      // The queue's next job, keyed before this one is handled (as if queued now); when that key
      // comes before every other queue's, it is the entry the heap would give next (keys are
      // unique: they end in the sequence), so it goes on without the heap.
      const bool more = top.pos + 1 < q.jobs.size();
      Entry next{};
      if (more) next = {key_of(q, *q.jobs[top.pos + 1]), top.queue, top.pos + 1};
      if (!j.running) handle(j, out);
      if (!more) break;
      if (!heap.empty() && !(next.key < heap.top().key)) {
        heap.push(next);
        break;
      }
      top = next;
    }
  }
}

void SchedEngine::Impl::handle(EngineJob& j, std::vector<SchedEvent>& out) {
  if (j.waiting_reclaim_until > now) return;
  // Behind the blocked head a job cannot become the head: a hopeless one only restates its reason.
  const bool behind = (blocked && blocked->job != j.spec.id) || !cfg.backfill;
  if (behind && still_frozen(j)) return;
  j.frozen.reset();
  const Admission adm = admit(j, j.spec.replicas_min);
  if (adm.models.empty()) {
    if (!adm.borrow.empty() && borrow_quota(j, adm, out)) return;
    set_reason(j, adm.reason, out);
    return;
  }
  const SchedJob& s = j.spec;
  // Cheap refusal: not even the free GPUs of every allowed model together would hold it.
  bool hopeless = false;
  if (s.milli_per_replica() > 0) {
    int64_t room = 0;
    for (int m : adm.models) room += free_by_model[m];
    hopeless = room < s.milli_per_replica() * s.replicas_min && !could_preempt(j);
  }
  if (!hopeless) {
    if (place_or_preempt(j, adm, out)) {
      if (j.running && cfg.quota_lending && cfg.preemption) return_lent_quota(j, out);
      return;
    }
  }
  if (j.capacity_reason.empty() || j.capacity_reason_nodes != nodes.size() ||
      j.capacity_reason_terms != terms_version) {
    // Jobs alike share it: building one reads every node.
    if (reason_layout != layout_version || reason_terms != terms_version) {
      reason_cache.clear();
      reason_layout = layout_version;
      reason_terms = terms_version;
    }
    auto [it, added] = reason_cache.try_emplace(reason_key(j.spec));
    if (added) it->second = capacity_reason(j);
    j.capacity_reason = it->second;
    j.capacity_reason_id = next_reason_id++;
    j.capacity_reason_nodes = nodes.size();
    j.capacity_reason_terms = terms_version;
  }
  if (!blocked && cfg.backfill) {
    blocked = shadow_for(j, adm.models);
    if (blocked && blocked->shadow > now) {
      set_reason(j,
                 Message("sched.capacity.expected_start")
                     .arg("reason", j.capacity_reason)
                     .arg("at", format_rfc3339(blocked->shadow)),
                 out);
      return;
    }
  }
  set_reason_from(j, j.capacity_reason, j.capacity_reason_id, out);
  if (hopeless && behind) {
    j.frozen = EngineJob::Frozen{j.project_usage->version, projects_version, layout_version, terms_version,
                                 admission_reads_usage(j), adm.models};
  }
}

void SchedEngine::Impl::set_reason_from(EngineJob& j, const Message& why, uint64_t id, std::vector<SchedEvent>& out) {
  if (j.reason_src == id) return;
  set_reason(j, why, out);
  j.reason_src = id;
}

// What handle() would do to a frozen job is nothing while nothing it read has changed: its project's
// usage (so its admission), the projects, the nodes and terms (its capacity reason), its reason, and
// the free GPUs of the models it was admitted to (still fewer than it needs, and nothing to preempt).
bool SchedEngine::Impl::still_frozen(const EngineJob& j) const {
  if (!j.frozen) return false;
  const EngineJob::Frozen& f = *j.frozen;
  if (f.projects != projects_version || f.layout != layout_version || f.terms != terms_version) return false;
  if (j.reason_src != j.capacity_reason_id || j.capacity_reason_nodes != nodes.size()) return false;
  if (f.usage_matters && j.project_usage->version != f.usage) return false;
  int64_t room = 0;
  for (int m : f.models) room += free_by_model[m];
  return room < j.spec.milli_per_replica() * j.spec.replicas_min && !could_preempt(j);
}

// Places the job on its tenant's idle quota, in free capacity only (a borrower preempts nothing);
// its gangs are marked lent, so a lending project takes them back when it needs its quota.
void SchedEngine::Impl::return_lent_quota(const EngineJob& owner, std::vector<SchedEvent>& out) {
  const std::string& tenant = owner.spec.tenant;
  auto tit = tenant_usage.find(tenant);
  if (tit == tenant_usage.end()) return;
  std::map<int, int64_t> over;  // model -> milli the tenant holds beyond the sum of its quotas
  for (const auto& [m, held] : tit->second.milli_by_model) {
    const int64_t limits = tenant_limit_milli(tenant, tit->second, m);
    if (held > limits) over[m] = held - limits;
  }
  if (over.empty()) return;
  // Most recently started lent gangs go first.
  struct Lent {
    EngineJob* job;
    int64_t replica;
    TimeMs started;
  };
  std::vector<Lent> lent;
  for (auto& [id, v] : jobs)
    if (v.running && v.spec.tenant == tenant)
      for (const Gang& u : v.units)
        if (u.quota_lent) lent.push_back({&v, u.replica, u.started_at});
  std::sort(lent.begin(), lent.end(), [](const Lent& a, const Lent& b) {
    return a.started != b.started ? a.started > b.started : a.job->seq > b.job->seq;
  });
  for (const Lent& l : lent) {
    if (over.empty()) break;
    for (size_t i = 0; i < l.job->units.size(); ++i) {
      if (l.job->units[i].replica != l.replica) continue;
      bool hits = false;
      for (const Bound& b : l.job->units[i].workers) hits = hits || over.count(cluster.node(b.node).model_id);
      if (!hits) break;
      // Losing a replica up to min takes the whole job (evict()), so count what it all frees.
      const bool extra = l.job->spec.kind == JobKind::kInference && l.replica >= l.job->spec.replicas_min;
      for (size_t k = 0; k < l.job->units.size(); ++k) {
        if (extra && k != i) continue;
        for (const Bound& b : l.job->units[k].workers) {
          const int m = cluster.node(b.node).model_id;
          if (auto o = over.find(m);
              o != over.end() && (o->second -= int64_t{b.pod.gpu_milli} * static_cast<int64_t>(b.gpus.size())) <= 0)
            over.erase(o);
        }
      }
      evict(*l.job, i, Message("sched.preempted_by").arg("job", owner.spec.id).arg("why", Message("sched.preempt.quota_back")),
            out);
      break;
    }
  }
}

bool SchedEngine::Impl::borrow_quota(EngineJob& j, const Admission& adm, std::vector<SchedEvent>& out) {
  std::vector<int64_t> reps;
  for (int64_t r = 0; r < j.spec.replicas_min; ++r) reps.push_back(r);
  auto units = place_replicas(j, reps, adm.borrow);
  if (!units) return false;
  if (!backfill_ok(j, *units)) {
    for (auto it = units->rbegin(); it != units->rend(); ++it) release(*it);
    return false;
  }
  for (Gang& u : *units) u.quota_lent = true;
  start_job(j, std::move(*units), out);
  return true;
}

// Places the job, or preempts for it; false when neither works (the caller records why).
bool SchedEngine::Impl::place_or_preempt(EngineJob& j, const Admission& adm, std::vector<SchedEvent>& out) {
  const SchedJob& s = j.spec;
  if (j.fail_key.empty()) j.fail_key = failure_key(s);
  if (j.key_with_models.empty() || j.key_models != adm.models) {
    j.key_models = adm.models;
    j.key_with_models = j.fail_key;
    for (int m : adm.models) j.key_with_models += std::to_string(m) + ',';
    j.key_gen = 0;
  }
  if (j.key_gen != key_generation) {
    if (key_ids.size() >= (size_t{1} << 20)) {  // caches only: dropping them costs work, not outcomes
      key_ids.clear();
      failed.clear();
      backfill_refused.clear();
      ++key_generation;
    }
    j.key_id = key_ids.try_emplace(j.key_with_models, key_ids.size() + 1).first->second;
    j.key_gen = key_generation;
  }
  const uint64_t key = j.key_id;
  // A job of a shape that failed may still pass where the failure was backfill's (its placement,
  // on free GPUs or by preempting, would delay the blocked job): when its time limit ends it before
  // that job's start (the failure key holds no time limit).
  if (failed.count(key) && !ends_before_shadow(s)) return false;
  auto refuse_for_backfill = [&] {
    if (blocked->delay_reason.empty()) {
      // The same words as the last delay reason built (same job, same start or none) keep its
      // identity, so jobs that already show it are recognised without comparing messages.
      const bool until = blocked->shadow > now;
      if (last_delay.id != 0 && last_delay.job == blocked->job && last_delay.until == until &&
          (!until || last_delay.shadow == blocked->shadow)) {
        blocked->delay_reason = last_delay.reason;
        blocked->delay_reason_id = last_delay.id;
      } else {
        blocked->delay_reason_id = next_reason_id++;
        blocked->delay_reason = until ? Message("sched.backfill.would_delay_until")
                                            .arg("job", blocked->job)
                                            .arg("at", format_rfc3339(blocked->shadow))
                                      : Message("sched.backfill.would_delay").arg("job", blocked->job);
        last_delay = {blocked->job, blocked->shadow, until, blocked->delay_reason, blocked->delay_reason_id};
      }
    }
    set_reason_from(j, blocked->delay_reason, blocked->delay_reason_id, out);
  };
  // A job like one backfill just refused, with nothing bound or released since, would be placed
  // where that one was (placement is deterministic when the policy scores) and refused the same
  // way unless it ends before the blocked job's start.
  if (auto r = backfill_refused.find(key); indexed && blocked && r != backfill_refused.end() && r->second == changes()) {
    if (!ends_before_shadow(s)) {
      refuse_for_backfill();
      return true;
    }
  }
  std::vector<int64_t> reps;
  for (int64_t r = 0; r < s.replicas_min; ++r) reps.push_back(r);
  if (auto units = place_replicas(j, reps, adm.models)) {
    if (!backfill_ok(j, *units)) {
      for (auto it = units->rbegin(); it != units->rend(); ++it) release(*it);
      backfill_refused[key] = changes();
      refuse_for_backfill();
      return true;
    }
    start_job(j, std::move(*units), out);
    return true;
  }
  const size_t before = out.size();
  if (try_preempt(j, adm.models, out)) {
    if (out.size() != before) failed.clear();
    return true;
  }
  failed.insert(key);
  return false;
}

std::string SchedEngine::Impl::failure_key(const SchedJob& s) const {
  // The tenant, then fixed-width numbers (so no separator is needed between them), then the
  // project, pinned nodes and terms, each closed by a separator names cannot hold.
  std::string key;
  key.reserve(s.tenant.size() + s.project.size() + 16 * sizeof(int64_t));
  key += s.tenant;
  key += '\x1f';
  auto num = [&key](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  for (const int64_t v : {s.workers, s.gpus_per_worker, s.gpu_milli.value_or(0), s.cpu_cores.value_or(-1),
                          s.memory_gib.value_or(-1), s.replicas_min, int64_t{static_cast<int>(s.placement)},
                          int64_t{static_cast<int>(s.rdma)}, int64_t{s.form_factor ? static_cast<int>(*s.form_factor) : -1},
                          s.min_gpu_memory_gib.value_or(0), int64_t{priority_rank(s.priority)}, s.cpu_milli.value_or(-1),
                          s.memory_mib.value_or(-1), int64_t{s.spot ? 1 : 0}})
    num(v);
  key += s.project;
  key += '\x1f';
  for (const std::string& n : s.nodes) key += n + ',';
  key += '\x1f';
  if (s.terms.any() || s.reserved || s.terms.span_sites) key += terms_key(s) + '\x1f';
  return key;
}

void SchedEngine::Impl::scale_up(std::vector<SchedEvent>& out) {
  if (inference_jobs == 0) return;
  for (auto& [id, j] : jobs) {
    if (!j.running || j.spec.kind != JobKind::kInference) continue;
    while (static_cast<int64_t>(j.units.size()) < j.spec.replicas_max) {
      const Admission adm = admit(j, 1);
      if (adm.models.empty()) break;
      std::set<int64_t> taken;
      for (const Gang& u : j.units) taken.insert(u.replica);
      int64_t r = j.spec.replicas_min;
      while (taken.count(r)) ++r;
      auto u = place_replica(j, r, adm.models);
      if (!u) break;
      if (!backfill_ok(j, {*u})) {  // extra replicas must not take the room held for the head job
        release(*u);
        break;
      }
      account(j, *u, +1);
      SchedEvent e;
      e.kind = SchedEventKind::kReplicaAdded;
      e.job = id;
      e.at = now;
      e.replica = r;
      e.placement = describe_unit(*this, *u);
      auto pos = std::lower_bound(j.units.begin(), j.units.end(), r,
                                  [](const Gang& a, int64_t rep) { return a.replica < rep; });
      j.units.insert(pos, std::move(*u));
      out.push_back(std::move(e));
      // A replica counts against the tenant's quotas as a start does: lent quota comes back.
      if (cfg.quota_lending && cfg.preemption) return_lent_quota(j, out);
      if (!j.running) break;  // its own lent gangs were taken back (the whole job)
    }
  }
}

void SchedEngine::Impl::note_victim(const EngineJob& j, const Gang& u) {
  const bool extra = j.spec.kind == JobKind::kInference && u.replica >= j.spec.replicas_min;
  victims.max_rank = std::max(victims.max_rank, priority_rank(j.spec.priority));
  victims.spot = victims.spot || j.spec.spot;
  victims.borrowed = victims.borrowed || !u.borrowed_from.empty() || u.quota_lent;
  victims.extra = victims.extra || extra;
}

bool SchedEngine::Impl::could_preempt(const EngineJob& j) const {
  if (!cfg.preemption) return false;
  const int r = priority_rank(j.spec.priority);
  return victims.max_rank > r || (victims.spot && !j.spec.spot) || victims.borrowed ||
         (victims.extra && r < priority_rank(cfg.inference_extra_rank));
}

}  // namespace gpurent
