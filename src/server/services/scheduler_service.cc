#include "server/services/scheduler_service.h"

#include "server/services/allocation_ledger.h"
#include "server/services/artifact_store.h"
#include "server/services/cost_firewall.h"
#include "server/services/scheduler_internal.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include <functional>
#include <regex>
#include <sstream>

#include "core/ids.h"
#include "model/fault.h"
#include "model/job.h"
#include "model/node.h"
#include "model/project.h"
#include "model/reservation.h"
#include "model/tenant.h"
#include "server/services/market_node_defaults.h"
#include "server/services/record_faults.h"
#include "sched/from_model.h"

namespace gpurent {
namespace sched_detail {

Result<Currency> tenant_currency(StoreTx& tx, const std::string& tenant_id) {
  auto t = tx.get("tenants", tenant_id);
  if (!t) return t.error();
  return decode_record(*t, stored_tenant_currency, "its jobs cannot be priced");
}

Result<Job> load_job(StoreTx& tx, const Record& r) {
  auto cur = tenant_currency(tx, r.tenant_id);
  if (!cur) return cur.error();
  // One decode of the spec and its status (reported, or cleared, once per read).
  auto j = decode_record(
      r,
      [&](const json& b) -> Result<Job> {
        auto job = parse_job(b, *cur);
        if (!job) return job.error();
        auto st = stored_job_status(b);
        if (!st) return st.error();
        job->status = *st;
        return job;
      },
      "the scheduler leaves it out (a waiting job stays waiting) until it is fixed");
  if (!j) return j.error();
  j->tenant_id = r.tenant_id;
  j->project_id = r.project_id;
  return j;
}

// Calls fn(record, job) for every job that holds a placement (admitted, then running).
Status for_each_placed_job(StoreTx& tx, const std::function<Status(const Record&, Job&)>& fn) {
  // Running jobs first: they hold what the executor really runs; an admitted job that no longer
  // fits beside them is the one requeued.
  for (const char* state : {"running", "admitted"}) {
    auto jobs = list_all(tx, "jobs", {{"state", state}});
    if (!jobs) return jobs.error();
    for (const Record& r : *jobs) {
      auto j = load_job(tx, r);
      if (!j) return j.error();
      if (auto s = fn(r, *j); !s) return s;
    }
  }
  return ok_status();
}

std::vector<WorkerPlacement> to_placement(const std::vector<SchedWorker>& ws) {
  std::vector<WorkerPlacement> out;
  for (const auto& w : ws) {
    WorkerPlacement p;
    p.replica = w.replica;
    p.worker = w.worker;
    p.node = w.node;
    p.gpus = w.gpus;
    p.gpu_milli = w.gpu_milli;
    p.offer_id = w.offer;
    // The engine scopes domains as "<node id>/<name>"; the API shows the node's own name.
    const std::string prefix = w.node + "/";
    if (w.nvlink_domain.rfind(prefix, 0) == 0) p.nvlink_domain = w.nvlink_domain.substr(prefix.size());
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<SchedWorker> from_placement(const std::vector<WorkerPlacement>& ps) {
  std::vector<SchedWorker> out;
  for (const auto& p : ps) out.push_back(SchedWorker{p.replica, p.worker, p.node, p.gpus, p.gpu_milli, "", p.offer_id});
  return out;
}

// Writes a job's new status; records a job event when `event` (from -> to with the reason).
Status write_status(StoreTx& tx, Record r, const JobStatus& st, bool event, TimeMs now) {
  auto old = stored_job_status(r.body);
  if (!old) return old.error();
  const std::string from = job_state_name(old->state);
  if (auto s = sync_allocation(tx, r, *old, st, now); !s) return s;
  set_stored_job_status(r.body, st);
  r.state = job_state_name(st.state);
  r.updated_at = now;
  if (auto s = tx.update(r); !s) return s;
  if (event) return tx.append_job_event({r.id, now, from, job_state_name(st.state), st.reason});
  return ok_status();
}

// Moves a stored job through legal states only; `to` may need two steps (running -> preempted -> pending).
Status move_job(StoreTx& tx, const std::string& id, JobState to, const Message& reason,
                std::vector<WorkerPlacement> placement, TimeMs now) {
  auto r = tx.get("jobs", id);
  if (!r) return r.error();
  auto st = stored_job_status(r->body);
  if (!st) return st.error();
  if (auto s = check_transition(st->state, to); !s) return s;
  JobStatus next{to, reason, now, std::move(placement)};
  next.fault_retries_used = st->fault_retries_used;
  return write_status(tx, *r, next, true, now);
}

namespace {

// What a node's state_reason says: an operator's or Slurm's own words, shown as written.
Message node_detail(const std::string& state_reason) {
  return state_reason.empty() ? Message() : verbatim(state_reason);
}

// The part of a pending job's reason that says why it was requeued (kept in front of its next
// reasons): the whole reason when it is a requeue or a preemption, its first part when the
// engine added "; now …", nothing otherwise. Reasons stored before codes are plain text.
Message requeued_part(const Message& m) {
  if (m.code == "sched.requeued_now")
    for (const auto& a : m.args)
      if (a.name == "requeued" && !a.nested.empty()) return a.nested.front();
  const std::string en = render_en(m);
  if (en.rfind("requeued: ", 0) != 0 && en.rfind("preempted", 0) != 0) return {};
  if (m.code == "text")
    if (auto cut = en.find("; now "); cut != std::string::npos) return verbatim(en.substr(0, cut));
  return m;
}

}  // namespace

}  // namespace sched_detail

using namespace sched_detail;

Status check_executor_options(const ServerOptions& o) {
  if (o.containers && o.executor == "sim")
    return Error::invalid("containers", "--containers runs real containers: it needs --executor slurm or local");
  if (o.executor == "sim") return ok_status();
  if (o.executor != "slurm" && o.executor != "local") return Error::invalid("executor", "must be sim, slurm or local");
  static const std::regex ipv4("(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}");
  if (!std::regex_match(o.instance_bind, ipv4))
    return Error::invalid("instance_bind", Message("cli.serve.instance_bind").arg("value", o.instance_bind));
  if (!o.node_volume_root.empty() && o.node_volume_root[0] != '/')
    return Error::invalid("node_volume_root", "--node-volume-root " + o.node_volume_root + " must be an absolute path");
  if (o.volume_copy_command.find("{dir}") == std::string::npos)
    return Error::invalid("volume_copy_command", "--volume-copy-command must name {dir}, the folder it copies into");
  if (const std::string dir = artifact_root(o); o.containers && dir.find_first_of(":,") != std::string::npos)
    return Error::invalid("artifact_dir", "--artifact-dir " + dir + " must not contain ':' or ','");  // a mount option
  return ok_status();
}

Result<std::unique_ptr<Executor>> make_executor(const ServerOptions& o, const GpuCatalog& catalog) {
  if (auto s = check_executor_options(o); !s) return s.error();
  if (o.executor == "sim") return make_sim_executor(o.cold_start_ms);
  const bool local = o.executor == "local";
  SlurmExecutorOptions so{o.slurm_conf,
                          o.slurm_partition,
                          o.slurm_gres_type,
                          local ? o.local_supplier : o.slurm_supplier,
                          local ? o.local_gpu_model : o.slurm_gpu_model,
                          local ? o.local_driver : o.slurm_driver,
                          local ? o.local_cuda : o.slurm_cuda,
                          o.slurm_output_dir};
  so.log_max_bytes = o.job_log_max_mib * (int64_t{1} << 20);
  so.log_cap_interval_ms = std::max<int64_t>(o.sched_interval_ms, 100);
  so.containers = o.containers;
  so.default_image = o.container_default_image;
  so.container.gpu_device = o.container_gpu_device;
  so.container.user = o.container_user;
  so.container.pids_limit = o.container_pids_limit;
  so.container.volume_root = o.volume_root;
  so.instance_bind = o.instance_bind;
  so.artifact_dir = artifact_root(o);
  so.artifact_max_bytes = o.artifact_max_gib * (int64_t{1} << 30);
  so.artifact_tenant_bytes = o.artifact_tenant_gib * (int64_t{1} << 30);
  so.node_volume_root = o.node_volume_root;
  so.volume_copy_command = o.volume_copy_command;
  so.container.podman_args.clear();
  std::istringstream args(o.container_podman_args);
  for (std::string w; args >> w;) so.container.podman_args.push_back(w);
  if (!local) return make_slurm_executor(std::move(so), catalog);
  LocalExecutorOptions lo;
  // The runs' wrappers work in their own folders: every path they use is absolute.
  std::error_code ec;
  lo.run_dir = std::filesystem::absolute(!o.local_run_dir.empty() ? o.local_run_dir : o.file_prefix() + ".runs", ec)
                   .lexically_normal()
                   .string();
  if (!so.output_dir.empty()) so.output_dir = std::filesystem::absolute(so.output_dir, ec).lexically_normal().string();
  lo.node = o.local_node;
  if (lo.node.empty()) {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) lo.node = host;
    lo.node = lo.node.substr(0, lo.node.find('.'));
  }
  lo.gpus = o.local_gpus;
  return make_local_executor(std::move(so), std::move(lo), catalog);
}

SchedulerService::SchedulerService(ServiceContext& app, SchedConfig config, std::unique_ptr<Executor> executor)
    : app_(app),
      config_(std::move(config)),
      executor_(executor ? std::move(executor) : make_sim_executor(app.opts.cold_start_ms)) {}

SchedulerService::~SchedulerService() { stop(); }

std::vector<WorkerPlacement> SchedulerService::placement(const std::string& job) const {
  return to_placement(engine_->placement(job));
}
bool SchedulerService::holds_allocation(const std::string& job) const { return engine_->is_running(job); }
Status SchedulerService::adopt_node_gpus(StoreTx& tx, const std::string& node_id,
                                         const std::map<std::string, std::vector<int64_t>>& jobs, TimeMs now) {
  std::vector<std::string> moved;
  if (auto s = engine_->adopt_node_gpus(node_id, jobs, &moved); !s) {
    spdlog::warn("{}", json({{"event", "slurm_gpu_mismatch"}, {"node", node_id}, {"why", s.error().message}}).dump());
    return ok_status();
  }
  // The store keeps what the engine holds: a restarted server restores each job on the GPUs the
  // executor really gave it, and two jobs never claim the same GPU. The status time stays (it is
  // when the job reached its state); a running job's run is closed and reopened on the new GPUs.
  for (const std::string& id : moved) {
    auto r = tx.get("jobs", id);
    if (!r) return r.error();
    auto st = stored_job_status(r->body);
    if (!st) return st.error();
    if (st->state != JobState::kAdmitted && st->state != JobState::kRunning) continue;
    JobStatus next = *st;
    next.placement = to_placement(engine_->placement(id));
    if (next.placement == st->placement) continue;
    if (st->state == JobState::kRunning)
      if (auto s = correct_open_run_gpus(tx, *r, next.placement); !s) return s;
    Record u = *r;
    set_stored_job_status(u.body, next);
    u.updated_at = now;
    if (auto s = tx.update(u); !s) return s;
  }
  return ok_status();
}
void SchedulerService::forget(const std::string& job) {
  engine_->remove(job);
  known_jobs_.erase(job);
}

Status SchedulerService::run_once() {
  executor_->observe();  // outside the transaction: Slurm's tools may take a while
  Status st = app_.loop.run([this](StoreTx& tx) { return tick(tx, app_.clock.now()); });
  if (!st) {
    // The transaction rolled back (or never ran) while the engine may have moved on: rebuild it
    // from the store next tick, so the two never disagree.
    if (st.error().code != Code::kUnavailable || app_.loop.running())
      spdlog::error("{}", json({{"event", "scheduler_tick_failed"}, {"error", st.error().message}}).dump());
    engine_.reset();
    executor_->rolled_back();
  }
  return st;
}

void SchedulerService::start() {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      lock.unlock();
      (void)run_once();
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(app_.opts.sched_interval_ms), [this] { return stopping_; });
    }
  });
}

void SchedulerService::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status SchedulerService::rebuild(StoreTx& tx, TimeMs now) {
  SchedConfig cfg = config_;
  cfg.defer_slow_prepare = true;  // the control loop never waits on a rehearsal
  // A time limit runs from the job's start, after its cold start (Slurm counts whole minutes).
  cfg.limit_slack_ms = app_.opts.cold_start_ms + 60'000;
  ++engine_generation_;
  for (const auto& m : app_.catalog.models()) cfg.model_names[m.id] = m.name;
  // Weights may name tenants; the engine knows them by id.
  cfg.tenant_weights.clear();
  if (!config_.tenant_weights.empty()) {
    auto tenants = list_all(tx, "tenants");
    if (!tenants) return tenants.error();
    for (const Record& t : *tenants)
      for (const auto& [key, w] : config_.tenant_weights)
        if (key == t.name || key == t.id) cfg.tenant_weights[t.id] = w;
  }
  auto made = SchedEngine::make(cfg);
  if (!made) return made.error();
  engine_ = std::move(*made);
  node_state_.clear();
  reserved_for_.clear();
  known_jobs_.clear();
  std::vector<SchedEvent> ignored;
  if (auto s = sync_terms(tx, now); !s) return s;
  if (auto s = sync_nodes(tx, now, ignored); !s) return s;
  if (auto s = sync_projects(tx, now); !s) return s;
  if (auto s = sync_reservations(tx, now); !s) return s;
  // Jobs that hold a placement keep it; one that no longer fits (a node vanished) is requeued.
  return for_each_placed_job(tx, [&](const Record& r, Job& j) -> Status {
    SchedJob sj = to_sched_job(j, r.id, r.created_at);
    apply_tenant_terms(terms_, sj);
    auto restored = engine_->restore(sj, from_placement(j.status.placement), j.status.updated_at);
    if (restored) {
      known_jobs_.insert(r.id);
      return ok_status();
    }
    spdlog::warn("{}", json({{"event", "job_not_restored"}, {"job", r.id}, {"why", restored.error().message}}).dump());
    // A node that failed (or was deleted) while the engine was down: a fault, as if seen live.
    Message why("sched.requeued.placement_invalid");
    for (const auto& w : j.status.placement) {
      auto st = node_state_.find(w.node);
      if (st != node_state_.end() && st->second != "unavailable") continue;
      auto n = tx.get("nodes", w.node);
      std::string reason;
      if (n) {
        // A node left out because it no longer decodes may still run this job: requeuing it
        // (and recording a fault) would stop real work, so the scheduler stops instead.
        auto node = decode_record(
            *n, [&](const json& b) { return decode_node(b, app_.catalog); },
            "the scheduler cannot restore the jobs placed on it");
        if (!node) return node.error();
        reason = node->state_reason.value_or("");
      }
      const Message detail = !n ? Message("sched.node_removed") : node_detail(reason);
      const std::string& shown = n ? n->name : w.node;  // its name, as the live path says it
      why = detail.empty() ? Message("sched.node_failed").arg("node", shown)
                           : Message("sched.node_failed_detail").arg("node", shown).arg("detail", detail);
      if (auto s = record_fault(tx, r, w.node, why, now); !s) return s;
      why = Message("sched.requeued").arg("why", std::move(why));
      break;
    }
    if (j.status.state == JobState::kRunning) {
      if (auto s = move_job(tx, r.id, JobState::kPreempted, why, {}, now); !s) return s;
    }
    if (auto s = move_job(tx, r.id, JobState::kPending, why, {}, now); !s) return s;
    return ok_status();
  });
}

Status SchedulerService::sync_nodes(StoreTx& tx, TimeMs now, std::vector<SchedEvent>& events) {
  auto nodes = list_all(tx, "nodes");
  if (!nodes) return nodes.error();
  std::set<std::string> seen;
  for (const Record& r : *nodes) {
    seen.insert(r.id);
    auto it = node_state_.find(r.id);
    if (it == node_state_.end()) {
      auto n = decode_record(
          r, [&](const json& b) { return decode_node(b, app_.catalog); },
          "the scheduler places nothing on it until it is fixed");
      if (!n) continue;  // reported; nothing is placed on a node the engine does not know
      n->supplier_id = r.supplier_id;
      SchedNode sn = to_sched_node(*n, r.id, app_.catalog);
      if (auto c = terms_.node_country.find(r.id); c != terms_.node_country.end()) sn.country = c->second;
      if (auto o = terms_.node_offers.find(r.id); o != terms_.node_offers.end()) sn.offers = o->second;
      if (auto s = engine_->add_node(sn); !s) return s;
      it = node_state_.emplace(r.id, "available").first;
      // Back while the server was down: a market default still open for it ends now.
      if (r.state == "available")
        if (auto s = market_node_up(tx, r.id, now); !s) return s;
    } else if (auto o = terms_.node_offers.find(r.id); o != terms_.node_offers.end()) {
      if (auto s = engine_->set_node_offers(r.id, o->second); !s) return s;  // unchanged: nothing happens
    }
    if (it->second == r.state) continue;
    auto stored = decode_record(
        r, [&](const json& b) { return decode_node(b, app_.catalog); },
        "the scheduler follows its state without its reason");
    const std::string reason = stored ? stored->state_reason.value_or("") : "";
    if (r.state == "unavailable") {
      auto ev = engine_->node_failed(r.id, now, reason.empty() ? Message("sched.node_marked_unavailable") : node_detail(reason));
      events.insert(events.end(), ev.begin(), ev.end());
    } else {
      if (it->second == "unavailable") (void)engine_->node_restored(r.id);
      (void)engine_->set_node_cordoned(r.id, r.state == "drained");
    }
    // Out of service (unavailable or drained) or back: the market trades holding it default or resume.
    if (it->second == "available" && r.state != "available") {
      if (auto s = market_node_down(tx, r.id, reason.empty() ? r.state : r.state + ", " + reason, now); !s) return s;
    } else if (it->second != "available" && r.state == "available") {
      if (auto s = market_node_up(tx, r.id, now); !s) return s;
    }
    it->second = r.state;
  }
  for (auto it = node_state_.begin(); it != node_state_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    auto ev = engine_->node_failed(it->first, now, Message("sched.node_removed"));  // stays down in the engine
    events.insert(events.end(), ev.begin(), ev.end());
    it = node_state_.erase(it);
  }
  return ok_status();
}

Status SchedulerService::sync_reservations(StoreTx& tx, TimeMs now) {
  auto rs = list_all(tx, "reservations");
  if (!rs) return rs.error();
  std::map<std::string, std::string> holder;  // node -> tenant, for reservations active now
  for (const Record& r : *rs) {
    // One that no longer decodes is reported (log, /readyz, metric) and holds no node: one broken
    // record must not stop the scheduler for everyone.
    auto res = decode_record(r, decode_reservation, "its nodes are not held for the tenant until it is fixed");
    if (!res || !res->active_at(now)) continue;
    for (const auto& id : res->node_ids) holder[id] = r.tenant_id;
  }
  for (const auto& [node, state] : node_state_) {
    auto it = holder.find(node);
    const std::string want = it == holder.end() ? "" : it->second;
    std::string& have = reserved_for_[node];
    if (have == want) continue;
    if (auto s = engine_->set_node_reservation(node, want); !s) return s;
    have = want;
  }
  return ok_status();
}

Status SchedulerService::sync_projects(StoreTx& tx, TimeMs now) {
  auto projects = list_all(tx, "projects");
  if (!projects) return projects.error();
  auto holds = budget_holds(tx);  // the cost firewall's budget holds
  if (!holds) return holds.error();
  auto stops = balance_stops(tx);  // tenants whose balance is exhausted
  if (!stops) return stops.error();
  for (const Record& r : *projects) {
    // One that no longer decodes (or whose tenant does not) is reported and held: its quota
    // cannot be read, so nothing more starts under it (its running jobs run on).
    auto cur = tenant_currency(tx, r.tenant_id);
    if (!cur && !is_undecodable(cur.error())) return cur.error();
    Result<Project> p = !cur ? Result<Project>(cur.error())
                             : decode_record(
                                   r, [&](const json& b) { return parse_project(b, *cur); },
                                   "the scheduler holds its jobs until it is fixed");
    if (!p && !is_undecodable(p.error())) return p.error();
    if (!p) {
      SchedProject held;
      held.id = r.id;
      held.name = r.name;
      held.tenant = r.tenant_id;
      held.hold = Message("sched.hold.project_undecodable");
      engine_->set_project(held);
      continue;
    }
    p->tenant_id = r.tenant_id;
    SchedProject sp = to_sched_project(*p, r.id);
    if (auto h = holds->find(r.id); h != holds->end()) sp.hold = h->second;
    if (auto b = stops->find(r.tenant_id); b != stops->end()) sp.hold = b->second;
    engine_->set_project(sp);
  }
  for (const auto& [tenant_id, why] : *stops) {
    for (const char* state : {"running", "admitted"}) {
      auto jobs = list_all(tx, "jobs", {{"tenant_id", tenant_id}, {"state", state}});
      if (!jobs) return jobs.error();
      for (const Record& r : *jobs) {
        const Message reason = Message("sched.requeued").arg("why", why);
        engine_->remove(r.id);
        known_jobs_.erase(r.id);  // submitted again, pending and held, by the next tick
        if (std::string(state) == "running")
          if (auto s = move_job(tx, r.id, JobState::kPreempted, reason, {}, now); !s) return s;
        if (auto s = move_job(tx, r.id, JobState::kPending, reason, {}, now); !s) return s;
      }
    }
  }
  return ok_status();
}

Status SchedulerService::sync_jobs(StoreTx& tx, TimeMs now) {
  (void)now;
  // Which jobs are where, by id alone: the tick runs inside the single writer's transaction, so
  // its cost must not grow with the bodies of thousands of waiting jobs (reading each known job
  // and every pending body every tick held every write up to 190 ms at 5,000 pending jobs).
  std::set<std::string> live;  // not ended: pending, admitted, running, preempted
  std::vector<std::string> pending;
  for (JobState state : {JobState::kPending, JobState::kAdmitted, JobState::kRunning, JobState::kPreempted}) {
    auto ids = tx.list_ids("jobs", {{"state", job_state_name(state)}});
    if (!ids) return ids.error();
    live.insert(ids->begin(), ids->end());
    if (state == JobState::kPending) pending = std::move(*ids);
  }
  // Jobs that ended, were cancelled through the API or deleted leave the engine.
  for (auto it = known_jobs_.begin(); it != known_jobs_.end();) {
    if (!live.count(*it)) {
      engine_->remove(*it);
      it = known_jobs_.erase(it);
    } else {
      ++it;
    }
  }
  for (const std::string& id : pending) {
    if (known_jobs_.count(id)) continue;
    auto r = tx.get("jobs", id);
    if (!r) return r.error();
    auto j = load_job(tx, *r);
    // One that no longer decodes is reported and holds nothing: it must not stop the scheduler
    // for everyone (one that holds a placement does: see for_each_placed_job).
    if (!j && is_undecodable(j.error())) continue;
    if (!j) return j.error();
    // A job requeued before (a failure, a preemption, a restart) keeps saying why.
    SchedJob sj = to_sched_job(*j, r->id, r->created_at);
    apply_tenant_terms(terms_, sj);
    if (auto s = engine_->submit(sj, requeued_part(j->status.reason)); !s) return s;
    known_jobs_.insert(r->id);
  }
  return ok_status();
}

Status SchedulerService::sync_terms(StoreTx& tx, TimeMs now) {
  auto t = read_placement_terms(tx, app_.catalog, now);
  if (!t) return t.error();
  // Tenants whose currency or sovereignty changed (a contract signed or ended) since the last tick:
  // their waiting jobs are submitted again under the new terms. Running jobs keep their placement.
  std::set<std::string> changed;
  if (!known_jobs_.empty()) {
    auto differ = [&](const auto& before, const auto& after) {
      for (const auto* side : {&before, &after})
        for (const auto& [tenant, v] : *side) {
          auto b = before.find(tenant);
          auto a = after.find(tenant);
          if (b == before.end() || a == after.end() || b->second != a->second) changed.insert(tenant);
        }
    };
    differ(terms_.tenant_currency, t->tenant_currency);
    differ(terms_.tenant_places, t->tenant_places);
  }
  std::map<std::string, std::map<std::string, int64_t>> old_split = std::move(terms_.tenant_split);
  terms_ = std::move(*t);
  for (const SchedOffer& o : terms_.offers)
    if (auto s = engine_->set_offer(o); !s) return s;
  for (const auto& [tenant, split] : terms_.tenant_split)
    if (auto s = engine_->set_procurement_split(tenant, split); !s) return s;  // unchanged: nothing happens
  for (const auto& [tenant, split] : old_split)
    if (!terms_.tenant_split.count(tenant))
      if (auto s = engine_->set_procurement_split(tenant, {}); !s) return s;
  for (const std::string& tenant : changed)
    if (auto s = resubmit_pending(tx, tenant); !s) return s;
  return ok_status();
}

Status SchedulerService::resubmit_pending(StoreTx& tx, const std::string& tenant) {
  auto pending = list_all(tx, "jobs", {{"state", "pending"}, {"tenant_id", tenant}});
  if (!pending) return pending.error();
  for (const Record& r : *pending) {
    if (!known_jobs_.count(r.id) || engine_->is_running(r.id)) continue;
    auto j = load_job(tx, r);
    if (!j && is_undecodable(j.error())) continue;  // reported; it waits as it was submitted
    if (!j) return j.error();
    SchedJob sj = to_sched_job(*j, r.id, r.created_at);
    apply_tenant_terms(terms_, sj);
    engine_->remove(r.id);
    if (auto s = engine_->submit(sj, requeued_part(j->status.reason)); !s) {
      known_jobs_.erase(r.id);  // sync_jobs tries again next tick
      return s;
    }
  }
  return ok_status();
}

Status SchedulerService::record_fault(StoreTx& tx, const Record& job, const std::string& node_id,
                                      const Message& reason, TimeMs at) {
  auto node = tx.get("nodes", node_id);
  Record f;
  f.kind = "faults";
  f.id = new_id("flt");
  f.name = "fault-" + std::to_string(at) + "-" + std::to_string(++fault_seq_);
  f.tenant_id = job.tenant_id;
  f.project_id = job.project_id;
  f.supplier_id = node ? node->supplier_id : "";
  f.gpu_model = node ? node->gpu_model : "";
  f.region = node ? node->region : "";
  f.state = "open";
  f.created_at = f.updated_at = app_.clock.now();
  f.body = to_json(Fault{f.name, job.id, node_id, f.tenant_id, f.project_id, f.supplier_id, at, reason});
  return tx.insert(f);
}

Status SchedulerService::raise_alert(StoreTx& tx, const Record& job, const Alert& alert, TimeMs at) {
  auto raised = record_security_alert(app_, tx, job.tenant_id, job.project_id, alert, at);
  if (!raised) return raised.error();
  return ok_status();
}

Status SchedulerService::apply(StoreTx& tx, const std::vector<SchedEvent>& events, TimeMs now) {
  for (const SchedEvent& e : events) {
    auto r = tx.get("jobs", e.job);
    if (!r) return r.error();
    auto st = stored_job_status(r->body);
    if (!st) return st.error();
    if (is_terminal(st->state)) {  // ended in the store meanwhile: the engine forgets it
      engine_->remove(e.job);
      known_jobs_.erase(e.job);
      continue;
    }
    switch (e.kind) {
      case SchedEventKind::kAdmitted: {
        const Message why = e.reason.empty() ? Message("sched.placed")
                                             : Message("sched.placed_because").arg("reason", e.reason);
        if (auto s = move_job(tx, e.job, JobState::kAdmitted, why, to_placement(e.placement), now); !s)
          return s;
        break;
      }
      case SchedEventKind::kPreempted: {
        if (st->state == JobState::kRunning)
          if (auto s = move_job(tx, e.job, JobState::kPreempted, e.reason, {}, now); !s) return s;
        if (auto s = move_job(tx, e.job, JobState::kPending, e.reason, {}, now); !s) return s;
        break;
      }
      case SchedEventKind::kReplicaAdded:
      case SchedEventKind::kReplicaRemoved:
      case SchedEventKind::kNotice: {
        JobStatus next = *st;
        next.placement = to_placement(engine_->placement(e.job));
        const Message why =
            e.kind == SchedEventKind::kReplicaAdded
                ? Message("sched.replica_added").arg("replica", std::to_string(e.replica))
                : e.kind == SchedEventKind::kReplicaRemoved
                      ? Message("sched.replica_removed").arg("replica", std::to_string(e.replica)).arg("why", e.reason)
                      : e.reason;
        next.reason = why;
        if (auto s = write_status(tx, *r, next, false, now); !s) return s;
        const std::string at = job_state_name(st->state);
        if (auto s = tx.append_job_event({e.job, now, at, at, why}); !s) return s;
        break;
      }
      case SchedEventKind::kPending: {
        if (st->state != JobState::kPending || st->reason == e.reason) break;
        JobStatus next = *st;
        next.reason = e.reason;
        if (auto s = write_status(tx, *r, next, false, st->updated_at); !s) return s;
        break;
      }
      case SchedEventKind::kFault: {
        if (auto s = record_fault(tx, *r, e.node, e.reason, e.at); !s) return s;
        break;
      }
    }
  }
  return ok_status();
}

void SchedulerService::adopt_finished_policy_work() {
  if (!policy_work_.valid() || policy_work_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  int choice = 0;  // a rehearsal that failed (out of memory): the policy's default variant
  try {
    choice = policy_work_.get();
  } catch (const std::exception& e) {
    spdlog::error("{}", json({{"event", "policy_preparation_failed"}, {"error", e.what()}}).dump());
  }
  if (engine_ && policy_work_generation_ == engine_generation_) engine_->adopt_policy_choice(choice);
}

void SchedulerService::start_policy_work() {
  if (policy_work_.valid() || !engine_) return;
  if (auto task = engine_->take_policy_task()) {
    policy_work_ = std::async(std::launch::async, std::move(task));
    policy_work_generation_ = engine_generation_;
  }
}

Status SchedulerService::tick(StoreTx& tx, TimeMs now) {
  if (!engine_)
    if (auto s = rebuild(tx, now); !s) return s;
  adopt_finished_policy_work();
  std::vector<SchedEvent> events;
  if (auto s = executor_->sync_inventory(tx, now); !s) return s;
  if (auto s = sync_terms(tx, now); !s) return s;
  // Jobs first: one cancelled since the last tick must not be requeued by a node failure.
  if (auto s = sync_jobs(tx, now); !s) return s;
  if (auto s = sync_nodes(tx, now, events); !s) return s;
  if (auto s = sync_projects(tx, now); !s) return s;
  if (auto s = sync_reservations(tx, now); !s) return s;
  if (auto s = apply(tx, events, now); !s) return s;
  if (auto s = executor_->advance(tx, now, *this); !s) return s;
  auto st = apply(tx, engine_->schedule(now), now);
  start_policy_work();
  return st;
}

}  // namespace gpurent
