// Preemption: which allocations a job may take, the victim set (fewest, lowest priority, most
// recently started), spot notices, and eviction.
#include <algorithm>

#include "sched/engine_impl.h"

namespace gpurent {

std::vector<SchedWorker> describe_unit(const SchedEngine::Impl& e, const Gang& u);

namespace {

bool is_extra(const EngineJob& v, const Gang& u) {
  return v.spec.kind == JobKind::kInference && u.replica >= v.spec.replicas_min;
}

// The class a unit ranks as when victims are chosen.
int victim_rank(const SchedConfig& cfg, const EngineJob& v, const Gang& u) {
  const int r = priority_rank(v.spec.priority);
  return is_extra(v, u) ? std::max(r, priority_rank(cfg.inference_extra_rank)) : r;
}

bool may_preempt(const SchedConfig& cfg, const EngineJob& j, const EngineJob& v, const Gang& u) {
  if (&j == &v || u.reclaim_at) return false;
  // Borrowed capacity goes back to its owner whatever the victim is: an inference service's
  // protected minimum covers only capacity of its own.
  if (!u.borrowed_from.empty() && u.borrowed_from == j.spec.tenant) return true;
  if (u.quota_lent && v.spec.tenant == j.spec.tenant && v.spec.project != j.spec.project) return true;
  if (v.spec.kind == JobKind::kInference && !is_extra(v, u) && cfg.protect_inference_min) return false;
  const int vr = victim_rank(cfg, v, u), jr = priority_rank(j.spec.priority);
  if (jr < vr) return true;
  return v.spec.spot && !j.spec.spot && jr <= vr;
}

Message preempt_reason(const SchedConfig& cfg, const EngineJob& j, const EngineJob& v, const Gang& u) {
  Message why;
  if (!u.borrowed_from.empty() && u.borrowed_from == j.spec.tenant)
    why = Message("sched.preempt.reserved");
  else if (u.quota_lent && v.spec.tenant == j.spec.tenant && v.spec.project != j.spec.project)
    why = Message("sched.preempt.quota_back");
  else if (v.spec.spot && !j.spec.spot && priority_rank(j.spec.priority) >= victim_rank(cfg, v, u))
    why = Message("sched.preempt.spot");
  else
    why = Message("sched.preempt.priority")
              .arg("priority", enum_name(kPriorityClassNames, j.spec.priority))
              .arg("victim", enum_name(kPriorityClassNames, static_cast<PriorityClass>(victim_rank(cfg, v, u))));
  return Message("sched.preempted_by").arg("job", j.spec.id).arg("why", std::move(why));
}

}  // namespace

void SchedEngine::Impl::evict(EngineJob& v, size_t idx, const Message& reason, std::vector<SchedEvent>& out) {
  ++epoch;
  SchedEvent e;
  e.job = v.spec.id;
  e.reason = reason;
  e.at = now;
  if (is_extra(v, v.units[idx])) {
    Gang u = std::move(v.units[idx]);
    v.units.erase(v.units.begin() + static_cast<std::ptrdiff_t>(idx));
    if (u.reclaim_at) free_claimant(u);
    release(u);
    account(v, u, -1);
    e.kind = SchedEventKind::kReplicaRemoved;
    e.replica = u.replica;
    out.push_back(std::move(e));
    return;
  }
  for (auto it = v.units.rbegin(); it != v.units.rend(); ++it) {
    if (it->reclaim_at) free_claimant(*it);
    release(*it);
    account(v, *it, -1);
  }
  v.units.clear();
  v.running = false;
  set_pending(v, true);
  running.erase(&v);
  v.reason = reason;
  v.requeued_why = reason;
  v.reason_src = 0;
  fresh.push_back(v.spec.id);  // the next pass looks at it again
  --project_usage[v.spec.project].jobs;
  ++project_usage[v.spec.project].version;
  --tenant_usage[v.spec.tenant].jobs;
  e.kind = SchedEventKind::kPreempted;
  out.push_back(std::move(e));
}

void SchedEngine::Impl::free_claimant(const Gang& u) {
  if (u.reclaim_for.empty()) return;
  if (auto it = jobs.find(u.reclaim_for); it != jobs.end()) {
    it->second.waiting_reclaim_until = 0;
    fresh.push_back(u.reclaim_for);
  }
}

void SchedEngine::Impl::reclaim_due(std::vector<SchedEvent>& out) {
  // Due notices, by the job that asked for them.
  std::map<std::string, std::vector<std::pair<EngineJob*, int64_t>>> due;
  if (!notices) return;
  bool any = false;
  for (auto& [id, v] : jobs)
    for (const Gang& u : v.units) {
      any = any || u.reclaim_at;
      if (u.reclaim_at && *u.reclaim_at <= now) due[u.reclaim_for].push_back({&v, u.replica});
    }
  notices = any;  // set again when the next notice starts
  auto unit = [](EngineJob* v, int64_t replica) -> Gang* {
    for (Gang& u : v->units)
      if (u.replica == replica) return &u;
    return nullptr;
  };
  for (auto& [claimant, victims] : due) {
    auto cit = jobs.find(claimant);
    bool still_fits = false;
    if (cit != jobs.end() && !cit->second.running) {
      // Other jobs may have taken free GPUs meanwhile: preempt only if the claimant still fits.
      const Admission adm = admit(cit->second, cit->second.spec.replicas_min);
      if (!adm.models.empty()) {
        // A victim's unit may be gone already: an earlier claimant's eviction in this pass took the
        // whole job (an inference job dropping below its minimum replicas).
        for (auto& [v, r] : victims)
          if (Gang* g = unit(v, r)) release(*g);
        std::vector<int64_t> reps;
        for (int64_t r = 0; r < cit->second.spec.replicas_min; ++r) reps.push_back(r);
        if (auto test = place_replicas(cit->second, reps, adm.models)) {
          still_fits = true;
          for (auto it = test->rbegin(); it != test->rend(); ++it) release(*it);
        }
        for (auto& [v, r] : victims)
          if (Gang* g = unit(v, r))
            for (Bound& b : g->workers) bind(b);
      }
    }
    for (auto& [v, r] : victims) {
      Gang* u = unit(v, r);
      if (!u) continue;  // went with an earlier whole-job eviction
      if (!still_fits) {
        u->reclaim_at.reset();
        u->reclaim_for.clear();
        continue;
      }
      for (size_t i = 0; i < v->units.size(); ++i)
        if (v->units[i].replica == r) {
          // A victim chosen beside spot work ran on through the notice: its reason is its own.
          const Message why = v->spec.spot ? Message("sched.spot.preempted").arg("job", claimant)
                                           : preempt_reason(cfg, cit->second, *v, v->units[i]);
          evict(*v, i, why, out);
          break;
        }
    }
    if (cit != jobs.end()) {
      cit->second.waiting_reclaim_until = 0;
      if (still_fits) claimants.push_back(claimant);
      else fresh.push_back(claimant);
    }
  }
}

namespace {

// A unit `j` may preempt, with what victims are ordered by.
struct Cand {
  EngineJob* job;
  int64_t replica;
  int rank;
  TimeMs started;
};

Gang& unit_of(const Cand& c) {
  for (Gang& u : c.job->units)
    if (u.replica == c.replica) return u;
  return c.job->units.front();  // unreachable: candidates come from units
}

// The running units near the nodes `j` could use that it may preempt, in victim order.
std::vector<Cand> preemption_candidates(SchedEngine::Impl& e, const EngineJob& j, const std::vector<int>& models) {
  std::vector<char> relevant(e.nodes.size(), 0);
  for (int i = 0; i < static_cast<int>(e.nodes.size()); ++i)
    for (int m : models) relevant[i] = relevant[i] || e.node_ok(j.spec, i, m, 2);
  std::vector<Cand> cands;
  for (EngineJob* vp : e.running) {  // sorted below by a total order: the scan's order does not matter
    EngineJob& v = *vp;
    for (const Gang& u : v.units) {
      bool near = false;
      for (const Bound& b : u.workers) near = near || relevant[b.node];
      // A tenant's jobs on its own reserved nodes are never preempted by another tenant's.
      bool owner_on_reservation = false;
      if (v.spec.tenant != j.spec.tenant)
        for (const Bound& b : u.workers)
          owner_on_reservation = owner_on_reservation || e.nodes[b.node].spec.reserved_for == v.spec.tenant;
      if (near && !owner_on_reservation && may_preempt(e.cfg, j, v, u))
        cands.push_back({&v, u.replica, victim_rank(e.cfg, v, u), u.started_at});
    }
  }
  std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) {
    if (a.rank != b.rank) return a.rank > b.rank;                  // lowest priority first
    if (a.started != b.started) return a.started > b.started;      // most recently started first
    if (a.job->seq != b.job->seq) return a.job->seq > b.job->seq;
    return a.replica > b.replica;
  });
  return cands;
}

// Trial placements of the preemptor's first replicas_min replicas, around released candidates.
struct Trial {
  SchedEngine::Impl& e;
  EngineJob& j;
  const std::vector<int64_t>& reps;
  const std::vector<int>& models;

  void release(const Cand& c) const { e.release(unit_of(c)); }
  void rebind(const Cand& c) const {
    for (Bound& b : unit_of(c).workers) e.bind(b);
  }
  // Whether the job fits in the room there is now; nothing stays placed.
  bool fits_now() const {
    auto units = e.place_replicas(j, reps, models);
    if (!units) return false;
    for (auto it = units->rbegin(); it != units->rend(); ++it) e.release(*it);
    return true;
  }
};

// The candidates the job needs (`victims`), or false when even all of them would not make room.
// The cluster ends as it was.
bool choose_victims(const Trial& t, const std::vector<Cand>& cands, std::vector<Cand>& victims) {
  // Nothing is preempted for a job that would still not fit.
  for (const Cand& c : cands) t.release(c);
  const bool possible = t.fits_now();
  for (auto it = cands.rbegin(); it != cands.rend(); ++it) t.rebind(*it);
  if (!possible) return false;
  // Greedy in victim order, then drop the victims that turned out not to be needed.
  std::vector<size_t> chosen;
  for (size_t i = 0; i < cands.size(); ++i) {
    t.release(cands[i]);
    chosen.push_back(i);
    if (t.fits_now()) break;
  }
  std::vector<char> keep(chosen.size(), 0);
  for (size_t k = chosen.size(); k-- > 1;) {  // the last one added was needed
    t.rebind(cands[chosen[k - 1]]);
    if (t.fits_now()) {
      keep[k - 1] = 1;
    } else {
      t.release(cands[chosen[k - 1]]);
    }
  }
  for (size_t k = 0; k < chosen.size(); ++k)
    if (!keep[k]) victims.push_back(cands[chosen[k]]);
  for (const Cand& c : victims) t.rebind(c);  // back to the real state before acting
  return true;
}

// Whether the job, were it started in the victims' room, would keep clear of the room backfill
// holds for the blocked head job (backfill_ok): asked before a spot notice, which starts nothing
// yet. The cluster ends as it was.
bool respects_backfill(const Trial& t, const std::vector<Cand>& victims) {
  if (!t.e.blocked || t.e.blocked->job == t.j.spec.id) return true;
  for (const Cand& c : victims) t.release(c);
  auto units = t.e.place_replicas(t.j, t.reps, t.models);
  const bool ok = units && t.e.backfill_ok(t.j, *units);
  if (units)
    for (auto it = units->rbegin(); it != units->rend(); ++it) t.e.release(*it);
  for (auto it = victims.rbegin(); it != victims.rend(); ++it) t.rebind(*it);
  return ok;
}

// Puts the victims under spot notice for `j`, which waits for them.
void give_notice(SchedEngine::Impl& e, EngineJob& j, const std::vector<Cand>& victims, std::vector<SchedEvent>& out) {
  const TimeMs at = e.now + e.cfg.spot_notice_ms;
  for (const Cand& c : victims) {
    Gang& u = unit_of(c);
    u.reclaim_at = at;
    e.notices = true;
    u.reclaim_for = j.spec.id;
    SchedEvent ev;
    ev.kind = SchedEventKind::kNotice;
    ev.job = c.job->spec.id;
    ev.replica = c.replica;
    ev.at = at;
    ev.reason = Message("sched.spot.notice").arg("job", j.spec.id).arg("at", format_rfc3339(at));
    out.push_back(std::move(ev));
  }
  j.waiting_reclaim_until = at;
  e.set_reason(j,
               Message("sched.spot.waiting").arg("count", std::to_string(victims.size())).arg("at", format_rfc3339(at)),
               out);
}

// Evicts the victims and starts the job in their room.
bool evict_and_start(const Trial& t, const std::vector<Cand>& victims, std::vector<SchedEvent>& out) {
  // Place the job in the victims' room first (so the placement is one that was just found to fit,
  // whatever the policy's randomness), then evict them: bind and unbind only add and subtract, so
  // the victims' GPUs are briefly counted twice and end exactly free of them.
  for (const Cand& c : victims) t.release(c);
  auto units = t.e.place_replicas(t.j, t.reps, t.models);
  for (const Cand& c : victims) t.rebind(c);
  if (!units) return false;  // the victims' room was checked above, but not one offer for every replica
  // Preempting is no way round backfill: the placement started must keep clear of the room held
  // for the blocked head job, as one on free GPUs must (checked on these very units).
  if (t.e.blocked && t.e.blocked->job != t.j.spec.id && !t.e.backfill_ok(t.j, *units)) {
    for (auto it = units->rbegin(); it != units->rend(); ++it) t.e.release(*it);
    return false;
  }
  for (const Cand& c : victims) {
    EngineJob& v = *c.job;
    for (size_t i = 0; i < v.units.size(); ++i) {
      if (v.units[i].replica != c.replica) continue;
      const Message why = preempt_reason(t.e.cfg, t.j, v, v.units[i]);
      t.e.evict(v, i, why, out);
      break;
    }
  }
  t.e.start_job(t.j, std::move(*units), out);
  return true;
}

}  // namespace

bool SchedEngine::Impl::try_preempt(EngineJob& j, const std::vector<int>& models, std::vector<SchedEvent>& out) {
  if (!cfg.preemption) return false;
  const std::vector<Cand> cands = preemption_candidates(*this, j, models);
  if (cands.empty()) return false;
  std::vector<int64_t> reps;
  for (int64_t r = 0; r < j.spec.replicas_min; ++r) reps.push_back(r);
  const Trial t{*this, j, reps, models};
  std::vector<Cand> victims;
  if (!choose_victims(t, cands, victims)) return false;
  bool notice = false;
  for (const Cand& c : victims) notice = notice || (c.job->spec.spot && cfg.spot_notice_ms > 0);
  if (notice) {
    if (!respects_backfill(t, victims)) return false;  // a notice is no way round backfill either
    give_notice(*this, j, victims, out);
    return true;
  }
  return evict_and_start(t, victims, out);
}

}  // namespace gpurent
