// Admission (project quotas), the reasons pending jobs show, usage accounting, and EASY backfill.
#include <algorithm>
#include <climits>
#include <unordered_map>

#include "sched/engine_impl.h"

namespace gpurent {

int priority_rank(PriorityClass p) { return static_cast<int>(p); }

std::string format_gpus(int64_t milli) {
  std::string s = std::to_string(milli / 1000);
  if (int64_t frac = milli % 1000) {
    std::string f = std::to_string(1000 + frac).substr(1);
    while (f.back() == '0') f.pop_back();
    s += "." + f;
  }
  return s;
}

std::string SchedEngine::Impl::display(int model) const {
  if (model < 0) return "CPU";
  const std::string& id = model_names[model];
  auto it = cfg.model_names.find(id);
  return it != cfg.model_names.end() ? it->second : id;
}

namespace {

// The project's per-job GPU and concurrent-job limits: false, with `a.reason` set, when one refuses
// the job.
bool within_job_limits(const SchedProject& p, const EngineJob& ej, const Usage& used, Admission& a) {
  const SchedJob& j = ej.spec;
  const int64_t job_gpus = (j.milli_per_replica() * j.replicas_max + 999) / 1000;
  if (p.quota.max_gpus_per_job && job_gpus > *p.quota.max_gpus_per_job) {
    a.reason = Message("sched.quota.gpus_per_job")
                   .arg("gpus", std::to_string(job_gpus))
                   .arg("project", p.name)
                   .arg("limit", std::to_string(*p.quota.max_gpus_per_job));
    return false;
  }
  if (!ej.running && p.quota.max_concurrent_jobs && used.jobs >= *p.quota.max_concurrent_jobs) {
    a.reason = Message("sched.quota.concurrent_jobs")
                   .arg("project", p.name)
                   .arg("running", std::to_string(used.jobs))
                   .arg("limit", std::to_string(*p.quota.max_concurrent_jobs));
    return false;
  }
  return true;
}

// The model ids the job may use, in its preference order: every known model when it names none
// (kept by the engine), else those it names, listed in `scratch`.
const std::vector<int>& candidate_models(const SchedEngine::Impl& e, const SchedJob& j, std::vector<int>& scratch) {
  if (j.gpu_models.empty()) return e.all_models;
  scratch.clear();
  for (const auto& name : j.gpu_models)
    if (auto it = e.model_ids.find(name); it != e.model_ids.end()) scratch.push_back(it->second);
  return scratch;
}

// Sets `a.reason` for a job whose quota has no room on any of `cands`, and, with quota lending,
// `a.borrow`: the models on which the tenant's idle quota could cover `need`.
void refuse_over_quota(const SchedEngine::Impl& e, const SchedProject& p, const SchedJob& j, const Usage& used,
                       Usage* tenant, const std::vector<int>& cands, int64_t need, Admission& a) {
  const int m = cands.front();
  auto it = used.milli_by_model.find(m);
  const int64_t have = it == used.milli_by_model.end() ? 0 : it->second;
  const int64_t limit = p.quota.gpu_limit(e.model_names[m]);
  a.reason = limit == 0 ? Message("sched.quota.no_model_quota").arg("project", p.name).arg("model", e.display(m))
                        : Message("sched.quota.model_full")
                              .arg("project", p.name)
                              .arg("used", format_gpus(have))
                              .arg("limit", std::to_string(limit))
                              .arg("model", e.display(m))
                              .arg("need", format_gpus(need))
                              .arg("short", format_gpus(have + need - limit * 1000));
  if (cands.size() > 1) a.reason = Message("sched.quota.no_other_models").arg("reason", std::move(a.reason));
  if (e.cfg.quota_lending && e.cfg.preemption) {  // what is lent is taken back by preempting
    // The tenant's idle quota: the sum of its projects' limits minus what they all hold.
    // Only on a model the project may use at all: a model its quota leaves out (limit 0) stays out.
    // The tenant's limits per model are cached on its usage (tenant_limit_milli), not summed over
    // every project of the engine for each refused job of each pass.
    if (!tenant) return;
    for (int mm : cands) {
      if (p.quota.gpu_limit(e.model_names[mm]) == 0) continue;
      const int64_t limits = e.tenant_limit_milli(j.tenant, *tenant, mm);
      int64_t held = 0;
      if (auto u = tenant->milli_by_model.find(mm); u != tenant->milli_by_model.end()) held = u->second;
      if (limits - held >= need) a.borrow.push_back(mm);
    }
  }
}

}  // namespace

bool SchedEngine::Impl::admission_reads_usage(const EngineJob& ej) const {
  auto pit = projects.find(ej.spec.project);
  if (pit == projects.end()) return true;
  const Quota& q = pit->second.quota;
  if (q.max_concurrent_jobs) return true;
  const int64_t need = ej.spec.milli_per_replica() * ej.spec.replicas_min;
  std::vector<int> scratch;
  for (int m : candidate_models(*this, ej.spec, scratch)) {
    const int64_t all = m < static_cast<int>(milli_by_model.size()) ? milli_by_model[m] : 0;
    if (q.gpu_limit(model_names[m]) * 1000 < all + need) return true;
  }
  return false;
}

int64_t SchedEngine::Impl::limit_milli(const SchedProject& p, Usage* u, int m) const {
  if (!u) return p.quota.gpu_limit(model_names[m]) * 1000;
  if (u->limits_version != projects_version || u->limit_milli.size() != model_names.size()) {
    u->limit_milli.resize(model_names.size());
    for (size_t i = 0; i < model_names.size(); ++i) u->limit_milli[i] = p.quota.gpu_limit(model_names[i]) * 1000;
    u->limits_version = projects_version;
  }
  return u->limit_milli[static_cast<size_t>(m)];
}

int64_t SchedEngine::Impl::tenant_limit_milli(const std::string& t, Usage& u, int m) const {
  if (u.limits_version != projects_version || u.limit_milli.size() != model_names.size()) {
    u.limit_milli.assign(model_names.size(), 0);
    for (const auto& [id, q] : projects)
      if (q.tenant == t)
        for (size_t i = 0; i < model_names.size(); ++i) u.limit_milli[i] += q.quota.gpu_limit(model_names[i]) * 1000;
    u.limits_version = projects_version;
  }
  return u.limit_milli[static_cast<size_t>(m)];
}

Admission SchedEngine::Impl::admit(const EngineJob& ej, int64_t replicas) const {
  const SchedJob& j = ej.spec;
  Admission a;
  if (!ej.project) {  // projects are never removed, and their map's entries do not move
    auto pit = projects.find(j.project);
    if (pit == projects.end()) {
      a.reason = Message("sched.quota.unknown_project").arg("project", j.project);
      return a;
    }
    ej.project = &pit->second;
  }
  const SchedProject& p = *ej.project;
  if (!p.hold.empty()) {
    a.reason = p.hold;
    return a;
  }
  static const Usage kNone;
  const Usage& used = ej.project_usage ? *ej.project_usage : kNone;  // p.id == j.project
  const int64_t need = j.milli_per_replica() * replicas;
  if (!within_job_limits(p, ej, used, a)) return a;
  if (need == 0) {
    a.models = {-1};
    return a;
  }
  std::vector<int> scratch;
  const std::vector<int>& cands = candidate_models(*this, j, scratch);
  if (cands.empty()) {
    std::string want;
    for (const auto& name : j.gpu_models) want += (want.empty() ? "" : ", ") + name;
    a.reason = Message("sched.capacity.no_model").arg("models", want);
    return a;
  }
  for (int m : cands) {
    auto it = used.milli_by_model.find(m);
    const int64_t have = it == used.milli_by_model.end() ? 0 : it->second;
    if (have + need <= limit_milli(p, ej.project_usage, m)) a.models.push_back(m);
  }
  if (a.models.empty()) refuse_over_quota(*this, p, j, used, ej.tenant_usage, cands, need, a);
  return a;
}

namespace {

// What the job's matching nodes could hold if nothing ran on them (down, drained and reserved nodes
// included: they may come back): the most GPUs one node has (one NVLink domain, for same_nvlink)
// and the GPUs of all of them together.
struct Reach {
  bool any = false;
  int64_t largest = 0;
  int64_t total = 0;
};

Reach reach_of(const SchedEngine::Impl& e, const SchedJob& j) {
  Reach r;
  std::vector<int> scratch;
  const std::vector<int>& cands = candidate_models(e, j, scratch);
  std::vector<bool> matching(e.nodes.size(), false);
  for (int i = 0; i < static_cast<int>(e.nodes.size()); ++i) {
    const int m = e.cluster.node(i).model_id;
    if (std::find(cands.begin(), cands.end(), m) == cands.end() || !e.node_matches(j, i, m)) continue;
    if (e.workers_by_cpu_memory(j, i) == 0) continue;  // its CPUs or memory could never hold a worker
    matching[i] = true;
    const int64_t gpus = static_cast<int64_t>(e.nodes[i].gpu_domain.size());
    r.any = true;
    r.total += gpus;
    if (j.placement != PlacementRule::kSameNvlinkDomain) r.largest = std::max(r.largest, gpus);
  }
  if (j.placement == PlacementRule::kSameNvlinkDomain)
    for (const auto& gpus : e.domain_gpus) {
      int64_t n = 0;
      for (const auto& [node, gpu] : gpus) n += matching[node] ? 1 : 0;
      r.largest = std::max(r.largest, n);
    }
  return r;
}

Message shape(int64_t workers, int64_t gpus) {
  return Message("sched.what.gpus").arg("workers", std::to_string(workers)).arg("gpus", std::to_string(gpus));
}

// Why a whole-GPU job can never be placed on the nodes there are, with the largest shape that
// would fit; empty when it could fit once enough GPUs are free.
Message never_fits(const SchedEngine::Impl& e, const SchedJob& j) {
  if (j.gpu_milli || j.gpus_per_worker <= 0) {
    if (j.milli_per_worker() > 0 && !reach_of(e, j).any) return Message("sched.never.no_node");
    return {};
  }
  const Reach r = reach_of(e, j);
  if (!r.any) return Message("sched.never.no_node");
  const int64_t gang = j.workers * j.gpus_per_worker;
  const bool one_place = j.placement == PlacementRule::kSameNvlinkDomain ||
                         (j.placement == PlacementRule::kSameNode && j.workers > 1);
  if (one_place && gang > r.largest)
    return Message(j.placement == PlacementRule::kSameNode ? "sched.never.node_too_small"
                                                           : "sched.never.domain_too_small")
        .arg("need", std::to_string(gang))
        .arg("max", std::to_string(r.largest))
        .arg("shape", shape(1, r.largest));
  if (j.gpus_per_worker > r.largest) {
    // The same GPUs in more, smaller workers: the largest divisor of the gang that one node holds.
    int64_t per = r.largest;
    while (per > 1 && gang % per != 0) --per;
    const int64_t workers = gang / per;
    return Message("sched.never.worker_too_big")
        .arg("need", std::to_string(j.gpus_per_worker))
        .arg("max", std::to_string(r.largest))
        .arg("shape", workers * per <= r.total ? shape(workers, per) : shape(r.total / r.largest, r.largest));
  }
  const int64_t need = gang * std::max<int64_t>(j.replicas_min, 1);
  if (need > r.total)
    return Message("sched.never.too_few")
        .arg("need", std::to_string(need))
        .arg("total", std::to_string(r.total))
        .arg("shape", shape(r.total / j.gpus_per_worker, j.gpus_per_worker));
  return {};
}

}  // namespace

Message SchedEngine::Impl::capacity_reason(const EngineJob& ej) const {
  const SchedJob& j = ej.spec;
  const std::string workers = std::to_string(j.workers);
  Message what;
  if (j.gpu_milli)
    what = Message("sched.what.gpus").arg("workers", workers).arg("gpus", format_gpus(*j.gpu_milli));
  else if (j.gpus_per_worker > 0)
    what = Message("sched.what.gpus").arg("workers", workers).arg("gpus", std::to_string(j.gpus_per_worker));
  else
    what = (j.workers > 1 ? Message("sched.what.cpu_workers") : Message("sched.what.cpu_worker")).arg("workers", workers);
  if (!j.gpu_models.empty()) {
    Message models;
    for (auto m = j.gpu_models.rbegin(); m != j.gpu_models.rend(); ++m) {
      auto it = model_ids.find(*m);
      Message one = verbatim(it == model_ids.end() ? *m : display(it->second));
      models = models.empty() ? std::move(one) : Message("list.or").arg("a", std::move(one)).arg("b", std::move(models));
    }
    what = Message("sched.what.models").arg("what", std::move(what)).arg("models", std::move(models));
  }
  if (j.replicas_min > 1)
    what = Message("sched.what.replicas").arg("what", std::move(what)).arg("replicas", std::to_string(j.replicas_min));
  if (j.placement == PlacementRule::kSameNode && j.workers > 1)
    what = Message("sched.what.same_node").arg("what", std::move(what));
  else if (j.placement == PlacementRule::kAny && j.workers > 1 && !j.terms.span_sites && site_ids.size() > 1)
    what = Message(fabrics ? "sched.what.one_fabric" : "sched.what.one_site").arg("what", std::move(what));
  if (j.placement == PlacementRule::kSameNvlinkDomain)
    what = Message("sched.what.same_nvlink").arg("what", std::move(what));
  if (!j.nodes.empty()) {
    std::string names;
    for (const std::string& id : j.nodes) {
      auto it = node_index.find(id);
      const std::string& name = it == node_index.end() || nodes[it->second].spec.name.empty() ? id : nodes[it->second].spec.name;
      names += (names.empty() ? "" : ", ") + name;
    }
    what = Message("sched.what.on_nodes").arg("what", std::move(what)).arg("nodes", names);
  }
  std::vector<int> scratch;
  if (Message why = terms_block(j, candidate_models(*this, j, scratch)); !why.empty())
    return Message("sched.terms.blocked").arg("what", what).arg("why", std::move(why));
  if (Message why = never_fits(*this, j); !why.empty())
    return Message("sched.capacity.never_fits").arg("what", std::move(what)).arg("why", std::move(why));
  return Message("sched.capacity.no_room").arg("what", std::move(what));
}

void SchedEngine::Impl::account(const EngineJob& j, const Gang& u, int sign) {
  Usage& p = project_usage[j.spec.project];
  Usage& t = tenant_usage[j.spec.tenant];
  ++p.version;
  for (const Bound& b : u.workers) {
    const int64_t g = int64_t{b.pod.gpu_milli} * static_cast<int64_t>(b.gpus.size());
    const int m = cluster.node(b.node).model_id;
    if (g > 0) p.milli_by_model[m] += sign * g, t.milli_by_model[m] += sign * g;
    p.gpu_milli += sign * g;
    t.gpu_milli += sign * g;
    p.cpu_milli += sign * b.pod.cpu_milli;
    t.cpu_milli += sign * b.pod.cpu_milli;
    if (g > 0 && nodes[b.node].supplier >= 0) t.milli_by_supplier[nodes[b.node].supplier] += sign * g;
    if (j.spec.reserved && u.offer >= 0 && g > 0) {
      reserved_used[{j.spec.tenant, u.offer}] += sign * g;
      ++terms_version;  // the room left in its commitment changed
    }
  }
}

void SchedEngine::Impl::set_reason(EngineJob& j, const Message& why, std::vector<SchedEvent>& out) {
  // A requeued job keeps saying why it was requeued ("requeued: node … failed: …; now capacity: …").
  // Most calls repeat the reason a job has: compared before anything is copied.
  j.reason_src = 0;
  const bool plain = j.requeued_why.empty() || why == j.requeued_why;
  if (plain && j.reason == why) return;
  Message reason = plain ? why : Message("sched.requeued_now").arg("requeued", j.requeued_why).arg("reason", why);
  if (j.reason == reason) return;
  j.reason = reason;
  SchedEvent e;
  e.kind = SchedEventKind::kPending;
  e.job = j.spec.id;
  e.reason = std::move(reason);
  e.at = now;
  out.push_back(std::move(e));
}

namespace {

std::vector<SchedWorker> describe(const SchedEngine::Impl& e, const Gang& u) {
  std::vector<SchedWorker> out;
  int64_t rank = 0;
  for (const Bound& b : u.workers) {
    SchedWorker w;
    w.replica = u.replica;
    w.worker = rank++;
    w.node = e.nodes[b.node].spec.id;
    for (int g : b.gpus) w.gpus.push_back(g);
    std::sort(w.gpus.begin(), w.gpus.end());
    w.gpu_milli = b.pod.is_share() ? b.pod.gpu_milli : 0;
    int dom = -2;
    for (int g : b.gpus) {
      const int d = e.nodes[b.node].gpu_domain[g];
      dom = (dom == -2 || dom == d) ? d : -1;
    }
    if (dom >= 0) w.nvlink_domain = e.domains[dom];
    if (u.offer >= 0) w.offer = e.offers[u.offer].spec.id;
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace

std::vector<SchedWorker> describe_unit(const SchedEngine::Impl& e, const Gang& u) { return describe(e, u); }

void SchedEngine::Impl::start_job(EngineJob& j, std::vector<Gang> units, std::vector<SchedEvent>& out) {
  SchedEvent e;
  e.kind = SchedEventKind::kAdmitted;
  e.job = j.spec.id;
  e.at = now;
  if (!units.empty() && j.units.empty()) j.offer = units.front().offer;
  for (Gang& u : units) {
    account(j, u, +1);
    for (auto& w : describe(*this, u)) e.placement.push_back(std::move(w));
    if (!u.borrowed_from.empty()) e.reason = Message("sched.placed.reserved").arg("tenant", u.borrowed_from);
    if (u.quota_lent) e.reason = Message("sched.placed.lent_quota");
    note_victim(j, u);
    j.units.push_back(std::move(u));
  }
  j.running = true;
  set_pending(j, false);
  running.insert(&j);
  j.reason.clear();
  j.reason_src = 0;
  j.requeued_why.clear();
  j.waiting_reclaim_until = 0;
  ++project_usage[j.spec.project].jobs;
  ++project_usage[j.spec.project].version;
  ++tenant_usage[j.spec.tenant].jobs;
  out.push_back(std::move(e));
}

int64_t Blocked::slots_on(int node) const {
  const std::vector<int32_t>& gpus = free[node];
  int64_t n = 0;
  if (share) {
    for (size_t x = 0; x < gpus.size(); ++x)
      if (others[node].empty() || others[node][x] == 0) n += gpus[x] / share;
    return n;
  }
  for (int32_t f : gpus) n += f == kGpuMilli;
  return n / per_worker;
}

std::optional<Blocked> SchedEngine::Impl::shadow_for(const EngineJob& ej, const std::vector<int>& models) const {
  const SchedJob& j = ej.spec;
  const int64_t need = j.milli_per_replica() * j.replicas_min;
  if (need == 0) return std::nullopt;
  // A job no set of nodes could ever hold (a same_node gang larger than every node…) reserves
  // nothing: it must not stall the queue behind it.
  if (!never_fits(*this, j).empty()) return std::nullopt;
  Blocked b;
  b.job = j.id;
  b.share = j.gpu_milli ? static_cast<int32_t>(*j.gpu_milli) : 0;
  b.per_worker = j.gpu_milli ? 1 : std::max<int64_t>(1, j.gpus_per_worker);
  b.workers = j.workers * j.replicas_min;
  b.eligible.assign(nodes.size(), 0);
  b.free.resize(nodes.size());
  b.others.resize(nodes.size());
  const auto own = tenant_ids.find(j.tenant);
  const int own_tenant = own == tenant_ids.end() ? -3 : own->second;
  int64_t capacity = 0;  // the slots of its nodes were they empty
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    for (int m : models)
      if (node_ok(j, i, m, 2)) b.eligible[i] = 1;
    if (!b.eligible[i]) continue;
    // A node whose CPUs or memory could never hold a worker is no room for it. (Slots are counted
    // in GPUs only: CPUs and memory that running jobs hold are not estimated as they end.)
    if (workers_by_cpu_memory(j, i) == 0) {
      b.eligible[i] = 0;
      continue;
    }
    const auto& gf = cluster.node(i).gpu_free;
    b.free[i] = gf;
    if (b.share) {
      b.others[i].assign(gf.size(), 0);
      for (size_t x = 0; x < gf.size(); ++x)
        if (nodes[i].share_count[x] > 0 && nodes[i].share_tenant[x] != own_tenant)
          b.others[i][x] = nodes[i].share_count[x];
      capacity += static_cast<int64_t>(gf.size()) * (kGpuMilli / b.share);
    } else {
      capacity += static_cast<int64_t>(gf.size()) / b.per_worker;
    }
    b.slots += b.slots_on(i);
  }
  // A job the eligible nodes could never hold, even empty, reserves nothing either.
  if (capacity < b.workers) return std::nullopt;
  b.shadow = b.estimated_at = now;
  struct Release {
    TimeMs end;
    int node;
    int gpu;
    int32_t milli;
    bool other_share;  // another tenant's share: one fewer of them on the GPU once it ends
  };
  std::vector<Release> ends;
  // The running jobs in any order: releases at the same time are applied together below.
  for (const EngineJob* other : running) {
    const auto& d = other->spec.expected_duration_ms;
    const auto& limit = other->spec.time_limit_ms;
    if (!d && !limit) continue;  // unknown: holds its GPUs
    for (const Gang& u : other->units) {
      // The estimate where it is still ahead, else the limit the executor enforces; a job past
      // its estimate with no limit counts as ending now.
      const TimeMs bound = limit ? u.started_at + *limit + cfg.limit_slack_ms : 0;
      TimeMs end = d ? u.started_at + *d : bound;
      if (limit) end = std::min(end, bound);
      if (end < now && limit) end = bound;
      end = std::max(now, end);
      for (const Bound& w : u.workers)
        if (b.eligible[w.node])
          for (int gpu : w.gpus)
            ends.push_back(
                {end, w.node, gpu, w.pod.gpu_milli, w.pod.gpu_milli < kGpuMilli && other->spec.tenant != j.tenant});
    }
  }
  std::sort(ends.begin(), ends.end(), [](const Release& a, const Release& c) { return a.end < c.end; });
  for (size_t i = 0; i < ends.size() && b.slots < b.workers;) {
    const TimeMs t = ends[i].end;
    for (; i < ends.size() && ends[i].end == t; ++i) {
      const int node = ends[i].node;
      b.slots -= b.slots_on(node);
      b.free[node][ends[i].gpu] += ends[i].milli;
      if (ends[i].other_share && !b.others[node].empty() && b.others[node][ends[i].gpu] > 0)
        --b.others[node][ends[i].gpu];
      b.slots += b.slots_on(node);
    }
    b.shadow = t;
  }
  if (b.slots < b.workers) {
    // Jobs without an expected duration hold the rest: nothing may take its nodes.
    b.shadow = now;
    b.held = true;
  } else {
    b.extra = (b.slots - b.workers) * b.per_worker * (b.share ? b.share : kGpuMilli);
  }
  return b;
}

bool SchedEngine::Impl::ends_before_shadow(const SchedJob& s) const {
  return blocked && s.time_limit_ms && now + *s.time_limit_ms + cfg.limit_slack_ms <= blocked->shadow;
}

bool SchedEngine::Impl::backfill_ok(const EngineJob& ej, const std::vector<Gang>& units) {
  if (!blocked) return true;
  auto bit = jobs.find(blocked->job);
  if (bit == jobs.end() || bit->second.running) return true;
  Blocked& b = *blocked;
  auto its = [&](int node) { return node >= 0 && node < static_cast<int>(b.eligible.size()) && b.eligible[node]; };
  std::vector<int> touched;  // its nodes these units take GPUs of, each once (CPU-only workers take none)
  for (const Gang& u : units)
    for (const Bound& w : u.workers)
      if (its(w.node) && !w.gpus.empty() && w.pod.gpu_milli > 0 &&
          std::find(touched.begin(), touched.end(), w.node) == touched.end())
        touched.push_back(w.node);
  if (touched.empty()) return true;
  if (ends_before_shadow(ej.spec)) return true;
  if (b.held) return false;
  // Still running at the shadow time, the units hold there what they take now: that comes out of
  // the head's room, node by node, and must leave it its worker slots.
  struct Before {
    int node;
    std::vector<int32_t> free, others;
  };
  int64_t taken = 0;  // GPU milli on its nodes
  for (const Gang& u : units)
    for (const Bound& w : u.workers)
      if (its(w.node)) taken += int64_t{w.pod.gpu_milli} * static_cast<int64_t>(w.gpus.size());
  if (taken > b.extra) return false;
  std::vector<Before> before;
  int64_t slots = b.slots;
  for (int node : touched) {
    before.push_back({node, b.free[node], b.others[node]});
    slots -= b.slots_on(node);
  }
  const bool other_tenant = ej.spec.tenant != bit->second.spec.tenant;
  for (const Gang& u : units)
    for (const Bound& w : u.workers)
      if (its(w.node) && w.pod.gpu_milli > 0)
        for (int gpu : w.gpus) {
          int32_t& f = b.free[w.node][gpu];
          f = std::max<int32_t>(0, f - w.pod.gpu_milli);
          if (b.share && other_tenant && w.pod.gpu_milli < kGpuMilli && !b.others[w.node].empty())
            ++b.others[w.node][gpu];
        }
  for (int node : touched) slots += b.slots_on(node);
  if (slots >= b.workers) {
    b.slots = slots;
    b.extra -= taken;
    return true;
  }
  for (Before& x : before) b.free[x.node] = std::move(x.free), b.others[x.node] = std::move(x.others);
  return false;
}

}  // namespace gpurent
