// The Slurm executor (executor.h, docs/slurm.md): gpurent places, Slurm runs.
//  - Inventory: every tick, Slurm's nodes (sinfo --json) become nodes of the configured supplier
//    (created on first sight: GPUs from the gres count, CPUs, memory); a drained or down node
//    becomes "unavailable" (its jobs are requeued with a fault record, billing stops); it comes
//    back when Slurm resumes it. Only states gpurent
//    set itself ("slurm: …" reasons) are lifted, never an operator's.
//  - Jobs: an admitted job is submitted once per admission with sbatch on exactly its nodes with
//    their GPU count as gres (the Slurm job's comment is the gpurent job id, so a restart of
//    either side finds it again by comment and submit time; its name gpurent-<job id>, so one
//    that ended while gpurent was down is found in Slurm's accounting); RUNNING moves it to running;
//    COMPLETED to succeeded; FAILED / OUT_OF_MEMORY / TIMEOUT / CANCELLED (outside gpurent) to
//    failed with the exit code or the time limit as the reason; NODE_FAIL / PREEMPTED requeues it
//    in gpurent with a fault record (as a down node seen by sinfo does). A Slurm job whose gpurent job is
//    no longer placed (cancelled, preempted, requeued) is cancelled in Slurm. Slurm never
//    requeues by itself (--no-requeue): gpurent owns requeue and its fault records.
// squeue/sinfo run before the tick's transaction (observe); submissions and cancels inside it.
//  - Logs: each run writes "<job id>-<Slurm job id>.log" in the output folder; after every look,
//    the logs of the runs squeue (or the local runner) lists go to the log capper
//    (services/log_capper.h), which keeps each within its last log_max_bytes on a thread of its
//    own, so a job printing without end cannot fill the disk the folder is on.
//
// The local executor (`--executor local`) is this same executor driving the local runner
// (exec/local_runner.h) instead of Slurm's tools: this machine is the supplier's one node, and a
// run is a detached process on it rather than a Slurm job. Its messages say "local run N" where
// Slurm's say "Slurm job N" (the catalogues' ".local" codes).
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "core/ids.h"
#include "exec/local_runner.h"
#include "exec/slurm_cli.h"
#include "model/image.h"
#include "model/instance.h"
#include "model/node.h"
#include "model/secret.h"
#include "model/supplier.h"
#include "server/services/allocation_ledger.h"
#include "server/services/cost_firewall.h"
#include "server/services/executor.h"
#include "server/services/image_builder.h"
#include "server/services/image_saves.h"
#include "server/services/instance_entry.h"
#include "server/services/instance_stop.h"
#include "server/services/log_capper.h"
#include "server/services/node_volumes.h"
#include "server/services/record_faults.h"
#include "server/services/scheduler_internal.h"

namespace gpurent {

using namespace sched_detail;

namespace {

// The user this process runs as, by name (what squeue reports as each job's user_name); "" when
// the system cannot say.
std::string process_user_name() {
  const passwd* pw = getpwuid(geteuid());
  return pw && pw->pw_name ? pw->pw_name : "";
}

// A secret the server gives a job's container (written like the job's own: write_secrets).
struct ServerSecret {
  std::string name, value, env, file;
};

// A gpurent job's Slurm jobs are named after it (and their comment is its id): Slurm's
// accounting keeps the name, not the comment.
std::string slurm_job_name(const Record& r) { return "gpurent-" + r.id; }

bool terminal(const std::string& s) {
  return s == "COMPLETED" || s == "FAILED" || s == "CANCELLED" || s == "TIMEOUT" || s == "NODE_FAIL" ||
         s == "OUT_OF_MEMORY" || s == "PREEMPTED" || s == "BOOT_FAIL" || s == "DEADLINE";
}

// For the local runner, a message naming a Slurm job names the local run instead: code
// "<code>.local", argument local_run (nested messages too).
Message as_local_run(Message m) {
  bool names_run = false;
  for (auto& a : m.args) {
    if (a.name == "slurm_job") a.name = "local_run", names_run = true;
    for (auto& n : a.nested) n = as_local_run(std::move(n));
  }
  if (names_run) m.code += ".local";
  return m;
}

class SlurmExecutor final : public Executor {
 public:
  SlurmExecutor(SlurmExecutorOptions o, const GpuCatalog& catalog, std::unique_ptr<BatchSystem> batch, bool local)
      : o_(std::move(o)), catalog_(catalog), batch_(std::move(batch)), local_(local) {
    if (o_.containers && !o_.artifact_dir.empty())
      saves_.emplace(ImageSaveSettings{o_.artifact_dir, o_.artifact_max_bytes, o_.artifact_tenant_bytes});
  }
  std::string_view name() const override { return local_ ? "local" : "slurm"; }
  Status check() {
    auto nodes = batch_->nodes();
    if (!nodes) return Error::make(Code::kUnavailable, "Slurm does not answer: " + nodes.error().message);
    return ok_status();
  }
  void observe() override;
  Status sync_inventory(StoreTx& tx, TimeMs now) override;
  Status advance(StoreTx& tx, TimeMs now, ExecutorHost& host) override;
  // mark_run_ready skips a run already marked; ran_unwatched a job already looked up: neither
  // write survived a tick rolled back.
  void rolled_back() override {
    ready_seen_.clear();
    unwatched_checked_.clear();
  }

 private:
  SlurmExecutorOptions o_;
  const GpuCatalog& catalog_;
  std::unique_ptr<BatchSystem> batch_;  // Slurm's tools, or the local runner
  bool local_ = false;
  // Node reasons gpurent set itself from what the batch system saw (only those are lifted).
  const char* reason_prefix() const { return local_ ? "local: " : "slurm: "; }
  Message labelled(Message m) const { return local_ ? as_local_run(std::move(m)) : m; }
  bool supplier_missing_logged_ = false;
  std::vector<SlurmJob> jobs_;
  // The log cap: the logs of the listed runs, handed to the capper's thread.
  void cap_run_logs();
  std::unique_ptr<LogCapper> log_capper_;
  std::vector<SlurmNode> nodes_;
  bool ok_ = false;  // the last observe() reached Slurm
  const std::string self_user_ = process_user_name();  // who submits: Slurm names each job's user

  using Newest = std::map<std::string, const SlurmJob*>;  // gpurent job id -> its newest Slurm job
  // Whether sj is this deployment's: submitted by this server's user, in its partition (a job of
  // another deployment or of someone else on the same cluster is never touched or waited for,
  // whatever its comment says).
  bool our_run(const SlurmJob& sj) const {
    return sj.comment.rfind("job_", 0) == 0 && (sj.user.empty() || self_user_.empty() || sj.user == self_user_) &&
           (o_.partition.empty() || sj.partition.empty() || sj.partition == o_.partition);
  }
  // Whether a run of gpurent job `id` is still alive (running, or completing: being killed).
  bool run_alive(const std::string& id) const {
    for (const SlurmJob& sj : jobs_)
      if (sj.comment == id && !terminal(sj.state) && our_run(sj)) return true;
    return false;
  }
  Status create_node(StoreTx& tx, const SlurmNode& sn, const Record& sup, const Site& site, const std::string& want,
                     const std::string& why, TimeMs now);
  Status update_node_state(StoreTx& tx, const Record& found, bool out, const std::string& want, const std::string& why,
                           TimeMs now);
  Status adopt_slurm_gpus(StoreTx& tx, const Newest& newest, ExecutorHost& host, TimeMs now);
  Status submit(StoreTx& tx, const Record& r, const Job& j, TimeMs now, ExecutorHost& host);
  ContainerRun container_run(const Record& r, const Job& j, int64_t nodes, int64_t workers_per_node) const;
  Result<std::vector<ContainerSecret>> write_secrets(StoreTx& tx, const Record& r, const Job& j,
                                                     const std::vector<ServerSecret>& extra) const;
  std::string secrets_dir() const { return o_.output_dir + "/.secrets"; }
  void sweep_secrets(const std::set<std::string>& placed) const;
  Message ended_why(const Record& r, const SlurmJob& sj, Message why) const;
  std::optional<ContainerStatus> container_status(const Record& r, const SlurmJob& sj) const;
  Status alert_on_artifact(StoreTx& tx, const Record& r, const SlurmJob& sj, TimeMs now, ExecutorHost& host) const;
  Status follow(StoreTx& tx, const Record& r, const Job& j, const SlurmJob& sj, TimeMs now, ExecutorHost& host);
  std::string ready_base(const std::string& job_id) const { return o_.output_dir + "/" + job_id + "-%j.ready"; }
  Status observe_ready(StoreTx& tx, const Record& r, const Job& j, const SlurmJob& sj);
  Status follow_lost(StoreTx& tx, const Record& r, const Job& j, TimeMs now, ExecutorHost& host);
  Result<bool> ran_unwatched(StoreTx& tx, const Record& r, const Job& j, TimeMs now, ExecutorHost& host);
  std::optional<TimeMs> first_tick_;  // this server's first tick: admissions before it were another's
  // Admitted jobs whose accounting was looked up (ran_unwatched): job id -> the admission looked
  // up, or when the lookup first failed (it is tried again until kUnwatchedGiveUpMs).
  std::map<std::string, TimeMs> unwatched_checked_, unwatched_failing_;
  // Slurm's accounting since a time, asked at most once per tick (more only for an older admission).
  std::optional<std::pair<TimeMs, Result<std::vector<SlurmAccounting>>>> tick_accounting_;
  // Running jobs whose Slurm job the batch system no longer lists (it ended while nobody watched
  // and slurmctld forgot it after MinJobAge, or Slurm lost it): since when, and when its
  // accounting is asked again.
  struct Lost {
    TimeMs since = 0, next_ask = 0;
  };
  std::map<std::string, Lost> lost_;
  std::set<std::string> ready_seen_;  // "<job id>/<run id>" already marked ready
  // Starts Slurm (or the local runner) refused: job id -> (refusals in a row, no new try before).
  // The job waits admitted until then, so a refusal that lasts (slurmctld down, a partition
  // limit) is tried again after 1, 2, 4 … s, at most every 5 minutes, not on every tick.
  std::map<std::string, std::pair<int, TimeMs>> refused_;
  // Egress freezes: one empty file per frozen project under the output folder, which every
  // container of the project watches (exec/container.h freeze_file).
  std::string frozen_dir() const { return o_.output_dir + "/.egress-frozen"; }
  void sync_freezes(const std::set<std::string>& frozen) const;
  // Instances saved as images (services/image_saves.h), with containers and an artifact store.
  std::optional<ImageSaves> saves_;
};

// Why a Slurm job that ended ended, and the state its gpurent job takes.
std::pair<JobState, Message> end_of(const SlurmJob& sj, const Job& j) {
  JobState to = JobState::kFailed;
  Message why;
  if (sj.state == "COMPLETED") {
    to = JobState::kSucceeded;
    why = Message("exec.slurm.completed");
  } else if (sj.state == "TIMEOUT" || sj.state == "DEADLINE") {
    why = j.time_limit_seconds ? Message("exec.slurm.time_limit").arg("seconds", std::to_string(*j.time_limit_seconds))
                               : Message("exec.slurm.time_limit_unknown");
  } else if (sj.state == "OUT_OF_MEMORY") {
    why = Message("exec.slurm.oom");
  } else if (sj.state == "CANCELLED") {
    why = Message("exec.slurm.cancelled");
  } else {
    why = sj.exit_signal ? Message("exec.slurm.exit_signal").arg("signal", std::to_string(sj.exit_signal))
                         : Message("exec.slurm.exit");
    why.arg("code", std::to_string(sj.exit_code));
  }
  why.arg("slurm_job", std::to_string(sj.id));
  return {to, why};
}

// The signal a failed run's worker was killed by from outside the job, 0 if it was not: SIGKILL
// or SIGBUS, as Slurm's exit signal (the batch step was killed) or as a shell's exit status 128+N
// (a process it waited for was). gpurent's own stops read as CANCELLED or TIMEOUT instead.
int killed_from_outside(const SlurmJob& sj) {
  if (sj.state != "FAILED") return 0;
  for (int sig : {SIGKILL, SIGBUS})
    if (sj.exit_signal == sig || (sj.exit_signal == 0 && sj.exit_code == 128 + sig)) return sig;
  return 0;
}

// One more of the job's fault retries is used (the status keeps the count through its moves).
Status count_fault_retry(StoreTx& tx, const std::string& job_id) {
  auto r = tx.get("jobs", job_id);
  if (!r) return r.error();
  auto st = stored_job_status(r->body);
  if (!st) return st.error();
  ++st->fault_retries_used;
  set_stored_job_status(r->body, *st);
  return tx.update(*r);
}

}  // namespace

void SlurmExecutor::observe() {
  ok_ = false;
  auto jobs = batch_->jobs();
  auto nodes = batch_->nodes();
  if (!jobs || !nodes) {
    spdlog::error(
        "{}",
        json({{"event", "slurm_unreachable"}, {"error", !jobs ? jobs.error().message : nodes.error().message}}).dump());
    return;
  }
  jobs_ = std::move(*jobs);
  nodes_ = std::move(*nodes);
  ok_ = true;
  if (saves_) saves_->observe();
  if (!o_.output_dir.empty() && o_.log_max_bytes > 0) cap_run_logs();
}

void SlurmExecutor::cap_run_logs() {
  if (!log_capper_) log_capper_ = std::make_unique<LogCapper>(o_.output_dir, o_.log_max_bytes, o_.log_cap_interval_ms);
  std::map<std::string, LogCapper::Log> logs;
  for (const SlurmJob& sj : jobs_) {
    // The comment is the gpurent job id ("job_<hex>"); anything else never goes into a path.
    if (!our_run(sj) || sj.comment.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string::npos)
      continue;
    logs[o_.output_dir + "/" + sj.comment + "-" + std::to_string(sj.id) + ".log"] = {sj.comment, sj.id,
                                                                                     terminal(sj.state)};
  }
  log_capper_->watch(std::move(logs));
}

Status SlurmExecutor::sync_inventory(StoreTx& tx, TimeMs now) {
  if (!ok_) return ok_status();
  // The supplier may be created after the server starts: resolved (by id or name) each tick.
  auto sup = tx.get("suppliers", o_.supplier);
  if (!sup) {
    auto page = tx.list({"suppliers", {{"name", o_.supplier}}, "", 1});
    if (!page) return page.error();
    if (page->items.empty()) {
      if (!supplier_missing_logged_)
        spdlog::warn("{}", json({{"event", std::string(name()) + "_supplier_missing"}, {"supplier", o_.supplier}}).dump());
      supplier_missing_logged_ = true;
      return ok_status();
    }
    sup = page->items.front();
  }
  auto supplier = decode_record(*sup, parse_supplier, "Slurm's nodes cannot be listed under it");
  if (!supplier) return supplier.error();
  if (supplier->sites.empty()) return Error::invalid("slurm_supplier", "supplier " + sup->name + " has no site");
  const Site& site = supplier->sites.front();
  for (const SlurmNode& sn : nodes_) {
    auto found = tx.list({"nodes", {{"supplier_id", sup->id}, {"name", sn.name}}, "", 1});
    if (!found) return found.error();
    // Drained or down in Slurm: the node is out, and its jobs are requeued elsewhere by gpurent
    // (with a fault record; billing stops) rather than left to finish there.
    const bool out = sn.drain || sn.state == "down" || sn.state == "unknown" || sn.state == "future";
    const std::string want = out ? "unavailable" : "available";
    const std::string why =
        reason_prefix() + sn.state + (sn.drain ? " (drain)" : "") + (sn.reason.empty() ? "" : ": " + sn.reason);
    if (found->items.empty()) {
      if (auto s = create_node(tx, sn, *sup, site, want, why, now); !s) return s;
      continue;
    }
    // UNKNOWN is Slurm's "the controller has just started and not yet heard from the node" (as
    // after a slurmctld restart): no news, so a known node keeps its state and its running jobs
    // (requeueing them would run them twice).
    if (sn.state == "unknown" && !sn.drain) continue;
    if (auto s = update_node_state(tx, found->items.front(), out, want, why, now); !s) return s;
  }
  return ok_status();
}

// RDMA NICs named by node features (exec/slurm_cli.h nics_from_features).
static json slurm_nics(const std::vector<std::string>& features) {
  json nics = json::array();
  for (const SlurmNic& n : nics_from_features(features)) {
    json one = {{"name", n.name}, {"rdma", n.roce ? "roce_v2" : "infiniband"}, {"gbps", n.gbps}};
    if (!n.fabric.empty()) one["fabric"] = n.fabric;
    nics.push_back(std::move(one));
  }
  return nics;
}

// First sight: the node with what Slurm knows (GPUs from gres and their cores from gres.conf,
// sockets, CPUs, memory, RDMA NICs from node features).
Status SlurmExecutor::create_node(StoreTx& tx, const SlurmNode& sn, const Record& sup, const Site& site,
                                  const std::string& want, const std::string& why, TimeMs now) {
  const int64_t sockets = std::clamp<int64_t>(sn.sockets, 1, 64);
  json body = {
      {"name", sn.name},
      {"supplier", sup.id},
      {"site", site.name},
      {"region", site.region},
      {"gpu_model", o_.gpu_model},
      {"gpus", json::array()},
      {"cpu", {{"model", local_ ? "unknown (from the local runner)" : "unknown (from Slurm)"}, {"cores", std::max<int64_t>(sn.cpus, 1)}, {"sockets", sockets}}},
      {"memory_gib", std::max<int64_t>(sn.memory_mb / 1024, 1)},
      {"numa_nodes", sockets},
      {"nics", slurm_nics(sn.features)},
      {"state", want}};
  const GpuModel* model = catalog_.find(o_.gpu_model);
  for (int64_t g = 0; g < sn.gpus; ++g) {
    // A GPU's NUMA node: the socket of the first core gres.conf binds it to (Slurm numbers cores
    // socket by socket), else 0.
    int64_t numa = 0;
    if (g < static_cast<int64_t>(sn.gpu_cores.size()) && sn.gpu_cores[g] >= 0 && sn.cores_per_socket > 0)
      numa = std::min(sn.gpu_cores[g] / sn.cores_per_socket, sockets - 1);
    json gpu = {{"index", g}, {"numa_node", numa}, {"pcie_gen", model && model->pcie_gen ? *model->pcie_gen : 4}};
    if (model && model->form_factor == FormFactor::kSxm) gpu["nvlink_domain"] = "nvlink-0";  // one baseboard
    body["gpus"].push_back(std::move(gpu));
  }
  body["software"] = {{"driver", o_.driver}, {"cuda", o_.cuda}};
  if (want != "available") body["state_reason"] = why;
  auto n = parse_node(body, catalog_);
  if (!n) return Error::make(Code::kInvalid, "slurm node " + sn.name + ": " + n.error().message);
  n->supplier_id = sup.id;
  Record r;
  r.kind = "nodes";
  r.id = new_id("nod");
  const IndexCols idx = index_of(*n);
  r.name = idx.name;
  r.supplier_id = sup.id;
  r.region = idx.region;
  r.gpu_model = idx.gpu_model;
  r.state = idx.state;
  r.created_at = r.updated_at = now;
  r.body = to_json(*n);
  if (auto s = tx.insert(r); !s) return s;
  if (auto s = tx.append_audit({now, std::string(name()), "create", "nodes", r.id, r.name}); !s) return s;
  return ok_status();
}

// A known node: takes Slurm's state (want, for the reason why) unless it already has it or an
// operator set its state.
Status SlurmExecutor::update_node_state(StoreTx& tx, const Record& found, bool out, const std::string& want,
                                        const std::string& why, TimeMs now) {
  Record r = found;
  auto node = decode_record(r, [&](const json& b) { return decode_node(b, catalog_); }, "Slurm's view of it is not applied");
  if (!node) return node.error();
  const std::string have = enum_name(kNodeStates, node->state);
  const std::string reason = node->state_reason.value_or("");
  const bool ours = reason.rfind(reason_prefix(), 0) == 0;
  if (have == want && (want == "available" || reason == why)) return ok_status();
  if (have != "available" && !ours) return ok_status();  // an operator's state stays
  node->state = out ? NodeState::kUnavailable : NodeState::kAvailable;
  node->state_reason = out ? std::optional<std::string>(why) : std::nullopt;
  r.body = to_json(*node);
  r.state = want;
  r.updated_at = now;
  if (auto s = tx.update(r); !s) return s;
  return ok_status();
}

// Slurm picks the device indices on each node (gres cannot name them): gpurent's placements take
// Slurm's for every job Slurm runs, node by node and all at once (Slurm's view is consistent), so
// the ledger, the meter and CUDA_VISIBLE_DEVICES agree. A gpurent job Slurm has not started yet
// makes room if it held one of those GPUs.
Status SlurmExecutor::adopt_slurm_gpus(StoreTx& tx, const Newest& newest, ExecutorHost& host, TimeMs now) {
  std::map<std::string, std::map<std::string, std::vector<int64_t>>> slurm_gpus;  // node name -> job -> GPUs
  for (const auto& [job, sj] : newest)
    if (sj->state == "RUNNING" && host.holds_allocation(job))
      for (const auto& [node, gpus] : sj->gpus_by_node)
        if (!gpus.empty()) slurm_gpus[node][job] = gpus;
  for (const auto& [name, jobs] : slurm_gpus) {
    auto found = tx.list({"nodes", {{"name", name}}, "", 2});
    if (!found) return found.error();
    if (found->items.size() != 1) continue;
    if (auto a = host.adopt_node_gpus(tx, found->items[0].id, jobs, now); !a) return a;
  }
  return ok_status();
}

// An admitted job Slurm does not run yet: sbatch it onto its placement's nodes. Slurm refusing
// (a node it does not know, a limit) sends the job back to the queue saying why.
// One container per node holds the job's workers there: its limits are theirs together (the
// most workers on any node: the script is the same on every node).
ContainerRun SlurmExecutor::container_run(const Record& r, const Job& j, int64_t nodes, int64_t workers_per_node) const {
  const auto times = [&](std::optional<int64_t> v) { return v ? std::optional<int64_t>(*v * workers_per_node) : v; };
  ContainerRun run;
  run.job_id = r.id;
  run.tenant_id = r.tenant_id;
  run.image = j.image.value_or(o_.default_image);
  run.command = j.command;
  run.env = j.env;
  run.env["GPURENT_JOB_ID"] = r.id;
  run.workdir = j.workdir.value_or("");
  run.cpus = times(j.resources.cpu_cores);
  run.memory_gib = times(j.resources.memory_gib);
  run.shm_gib = times(j.resources.shm_gib);
  for (const auto& v : j.volumes) run.volumes.push_back({v.name, v.mount, v.read_only});
  for (const auto& a : j.artifacts)  // the content the job expects, checked on the node before start
    run.artifacts.push_back({a.name, o_.artifact_dir + "/sha256/" + a.sha256, a.sha256, a.mount});
  run.nodes = nodes;
  run.status_file = o_.output_dir.empty() ? "" : o_.output_dir + "/" + r.id + "-%j.status";
  if (!o_.output_dir.empty()) run.freeze_file = frozen_dir() + "/" + r.project_id;
  if (saves_ && nodes == 1 && j.labels.count(kInstanceLabel)) {  // an instance's start may be saved as an image
    run.save_request = save_request_for(o_.artifact_dir, r.id);
    run.save_dir = image_saves_dir(o_.artifact_dir);
  }
  if (j.readiness && !o_.output_dir.empty()) {
    run.ready_file = ready_base(r.id);
    run.ready_command = j.readiness->command;
    run.ready_heartbeat = j.readiness->heartbeat;
    run.ready_interval_s = j.readiness->interval_seconds;
  }
  return run;
}

// A running job that reports readiness: when every node of its run has written its ready file,
// the run is ready at the latest of their times (never before it started running). Each run is
// marked once; a server restarted in between marks it again, which changes nothing.
Status SlurmExecutor::observe_ready(StoreTx& tx, const Record& r, const Job& j, const SlurmJob& sj) {
  if (!j.readiness || o_.output_dir.empty() || !o_.containers) return ok_status();
  const std::string key = r.id + "/" + std::to_string(sj.id);
  if (ready_seen_.count(key)) return ok_status();
  std::optional<int64_t> at;
  for (const std::string& node : sj.nodes) {
    auto t = read_ready_file(ready_file_for(ready_base(r.id), std::to_string(sj.id), node));
    if (!t) return ok_status();
    at = std::max(at.value_or(*t), *t);
  }
  if (!at) return ok_status();
  ready_seen_.insert(key);
  return mark_run_ready(tx, r, *at);
}

// The job's secrets, and `extra` ones the server gives it (an instance's notebook token), as files
// under the output folder (shared with the nodes): <output dir>/.secrets/<job id>/<name>, the folder
// 0700, each file 0400. Removed when the job no longer runs (sweep_secrets). On the node the
// script hands each to Podman's secret store for the container (exec/container.h); the values are
// in no script, command line or log.
Result<std::vector<ContainerSecret>> SlurmExecutor::write_secrets(StoreTx& tx, const Record& r, const Job& j,
                                                                  const std::vector<ServerSecret>& extra) const {
  std::vector<ContainerSecret> out;
  if (j.secrets.empty() && extra.empty()) return out;
  if (o_.output_dir.empty()) return Error::invalid("secrets", Message("api.jobs.secrets_need_output_dir"));
  std::vector<ServerSecret> all = extra;
  for (const JobSecret& js : j.secrets) {
    auto found = tx.list({"secrets", {{"project_id", r.project_id}, {"name", r.project_id + "/" + js.name}}, "", 1});
    if (!found) return found.error();
    if (found->items.empty()) return Error::invalid("secrets", Message("exec.container.secret_missing").arg("name", js.name));
    auto sec = decode_record(found->items.front(), decode_secret, "the job cannot be given it");
    if (!sec) return sec.error();
    all.push_back({js.name, sec->value, js.env, js.file});
  }
  namespace fs = std::filesystem;
  const std::string dir = secrets_dir() + "/" + r.id;
  std::error_code ec;
  fs::create_directories(dir, ec);
  ::chmod(secrets_dir().c_str(), 0700);
  ::chmod(dir.c_str(), 0700);
  for (const ServerSecret& sec : all) {
    const std::string file = dir + "/" + sec.name;
    ::unlink(file.c_str());
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
    if (fd < 0) return Error::make(Code::kUnavailable, "cannot write a secret file under " + dir);
    const bool wrote = ::write(fd, sec.value.data(), sec.value.size()) == static_cast<ssize_t>(sec.value.size());
    ::close(fd);
    if (!wrote) return Error::make(Code::kUnavailable, "cannot write a secret file under " + dir);
    out.push_back({file, sec.env, sec.file});
  }
  return out;
}

// Secret files of jobs that no longer run (ended, cancelled, requeued) are removed.
void SlurmExecutor::sweep_secrets(const std::set<std::string>& placed) const {
  if (o_.output_dir.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it(secrets_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string job = it->path().filename().string();
    if (!placed.count(job)) fs::remove_all(it->path(), ec);
  }
}

// The freeze files are exactly the frozen projects: created for a new freeze, removed once lifted.
// A file that cannot be written is logged and tried again on the next tick.
void SlurmExecutor::sync_freezes(const std::set<std::string>& frozen) const {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::set<std::string> there;
  for (fs::directory_iterator it(frozen_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string project = it->path().filename().string();
    if (frozen.count(project)) {
      there.insert(project);
    } else {
      std::error_code rm;
      fs::remove(it->path(), rm);
      spdlog::info("{}", json({{"event", "egress_freeze_lifted"}, {"project", project}}).dump());
    }
  }
  for (const std::string& project : frozen) {
    if (there.count(project)) continue;
    fs::create_directories(frozen_dir(), ec);
    const std::string path = frozen_dir() + "/" + project;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) ::close(fd);
    spdlog::log(fd >= 0 ? spdlog::level::info : spdlog::level::err, "{}",
                json({{"event", fd >= 0 ? "egress_freeze_applied" : "egress_freeze_file_failed"}, {"project", project},
                      {"path", path}})
                    .dump());
  }
}

// What the container script recorded for a run that failed, if anything.
std::optional<ContainerStatus> SlurmExecutor::container_status(const Record& r, const SlurmJob& sj) const {
  if (!o_.containers || o_.output_dir.empty() || sj.state == "COMPLETED" || sj.state == "CANCELLED") return std::nullopt;
  return read_container_status(o_.output_dir + "/" + r.id + "-" + std::to_string(sj.id) + ".status");
}

// A run stopped because an artifact's or an image's content in the store was not what the job
// expects: a security alert (the store's file was changed after its upload, or the node reads
// another file).
Status SlurmExecutor::alert_on_artifact(StoreTx& tx, const Record& r, const SlurmJob& sj, TimeMs now,
                                        ExecutorHost& host) const {
  auto st = container_status(r, sj);
  const bool image = st && st->reason == "image_corrupt" && !st->expected.empty();  // an image's file
  if (!st || (st->reason != "artifact_mismatch" && !image)) return ok_status();
  auto project = tx.get("projects", r.project_id);
  const std::string pname = project ? project->name : r.project_id;
  Alert a;
  a.key = "artifact_digest_mismatch:" + r.id + ":" + (image ? "image" : st->detail);
  a.kind = AlertKind::kArtifactDigestMismatch;
  a.severity = AlertSeverity::kCritical;
  a.project = pname;
  a.subject = image ? "image " + st->detail : pname + "/" + st->detail;
  a.from = a.to = now;
  a.measured = st->actual;
  a.threshold = st->expected;
  a.unit = "sha256";
  a.message = Message(image ? "alert.image_digest_mismatch" : "alert.artifact_digest_mismatch")
                  .arg("job", verbatim(r.name))
                  .arg("project", verbatim(pname))
                  .arg("artifact", verbatim(st->detail))
                  .arg("node", verbatim(st->node))
                  .arg("actual", verbatim(st->actual))
                  .arg("expected", verbatim(st->expected));
  spdlog::warn("{}", json({{"event", "artifact_digest_mismatch"}, {"job", r.id}, {"artifact", st->detail},
                           {"node", st->node}, {"expected", st->expected}, {"actual", st->actual}})
                         .dump(-1, ' ', false, json::error_handler_t::replace));
  return host.raise_alert(tx, r, a, now);
}

// A failed run says more than its exit code where it can: what the container script recorded
// (image missing, artifact missing or changed, runtime error, out of memory), else the last lines
// of its log.
Message SlurmExecutor::ended_why(const Record& r, const SlurmJob& sj, Message why) const {
  if (o_.output_dir.empty() || sj.state == "COMPLETED" || sj.state == "CANCELLED") return why;
  const std::string base = o_.output_dir + "/" + r.id + "-" + std::to_string(sj.id);
  if (o_.containers)
    if (auto st = container_status(r, sj)) {
      const std::string slurm_job = std::to_string(sj.id);
      if (st->reason == "artifact_mismatch")
        return Message("exec.container.artifact_mismatch")
            .arg("name", verbatim(st->detail)).arg("node", verbatim(st->node)).arg("actual", verbatim(st->actual))
            .arg("expected", verbatim(st->expected)).arg("slurm_job", slurm_job);
      if (st->reason == "artifact_missing")
        return Message("exec.container.artifact_missing").arg("name", verbatim(st->detail)).arg("node", verbatim(st->node)).arg("slurm_job", slurm_job);
      if (st->reason == "image_corrupt" && !st->expected.empty())
        return Message("exec.container.image_corrupt").arg("image", verbatim(st->detail)).arg("node", verbatim(st->node))
            .arg("actual", verbatim(st->actual)).arg("expected", verbatim(st->expected)).arg("slurm_job", slurm_job);
      if (st->reason == "image_not_yours")
        return Message("exec.container.image_not_yours").arg("image", verbatim(st->detail)).arg("node", verbatim(st->node)).arg("slurm_job", slurm_job);
      if (st->reason == "image_unreadable")
        return Message("exec.container.image_unreadable").arg("image", verbatim(st->detail)).arg("node", verbatim(st->node)).arg("slurm_job", slurm_job);
      if (st->reason == "image_corrupt")
        return Message("exec.container.image_unloadable").arg("detail", verbatim(st->detail)).arg("node", verbatim(st->node)).arg("slurm_job", slurm_job);
      if (st->reason == "volume_copy_failed")
        return Message("exec.container.volume_copy_failed").arg("detail", verbatim(st->detail)).arg("node", verbatim(st->node)).arg("slurm_job", slurm_job);
      if (st->reason == "image_missing")
        return Message("exec.container.image_missing").arg("image", verbatim(st->detail)).arg("node", verbatim(st->node)).arg("slurm_job", slurm_job);
      if (st->reason == "oom" && st->memory_gib)
        return Message(st->oom_reported.value_or(false) ? "exec.container.oom" : "exec.container.oom_inferred")
            .arg("limit", std::to_string(*st->memory_gib)).arg("node", verbatim(st->node)).arg("slurm_job", slurm_job);
      if (st->reason == "runtime_error")
        why = Message("exec.container.runtime_error").arg("detail", verbatim(st->detail)).arg("node", verbatim(st->node)).arg("slurm_job", slurm_job);
    }
  const std::string last = log_excerpt(base + ".log", 5, 600);
  if (last.empty()) return why;
  return Message("exec.run.last_lines").arg("why", why).arg("lines", verbatim(last));
}

Status SlurmExecutor::submit(StoreTx& tx, const Record& r, const Job& j, TimeMs now, ExecutorHost& host) {
  const JobStatus& js = j.status;
  if (j.readiness && (!o_.containers || o_.output_dir.empty())) {  // nothing could report it
    host.forget(r.id);
    return move_job(tx, r.id, JobState::kFailed, Message("exec.readiness.unsupported"), {}, now);
  }
  // An instance's start waits for its previous run to go (its ports, its volumes): a later tick.
  auto waits = waits_for_earlier_run(tx, r, j, [&](const std::string& id) { return run_alive(id); });
  if (!waits) return waits.error();
  if (*waits) return ok_status();
  // So does any job admitted again (requeued, preempted) while its earlier run is still being
  // stopped (this tick's end cancels it; Slurm's KillWait): two runs of one job never overlap.
  if (run_alive(r.id)) return ok_status();
  if (auto it = refused_.find(r.id); it != refused_.end() && now < it->second.second) return ok_status();
  SlurmSubmit s;
  s.name = slurm_job_name(r);
  s.comment = r.id;
  std::map<std::string, int64_t> gpus, workers;  // node id -> GPUs, workers of this job there
  std::vector<std::string> order;
  int64_t most_workers = 1;
  std::map<std::string, std::vector<int64_t>> indices;  // node id -> GPU indices gpurent placed
  for (const auto& w : js.placement) {
    for (int64_t g : w.gpus) indices[w.node].push_back(g);
    if (!gpus.count(w.node)) order.push_back(w.node);
    gpus[w.node] += w.gpu_milli > 0 ? 1 : static_cast<int64_t>(w.gpus.size());
    most_workers = std::max(most_workers, ++workers[w.node]);
  }
  // CPUs and memory per node: what the job's workers there state, else their GPUs' share of the
  // node (the scheduler's rule); GPU-less jobs state both (parse_job).
  std::map<std::string, int64_t> cpus, mem_mib, share_cpus;  // node id -> sums
  for (const auto& w : js.placement) {
    auto n = tx.get("nodes", w.node);
    if (!n) return n.error();
    auto node = decode_node(n->body, catalog_);
    const int64_t node_gpus = node ? static_cast<int64_t>(node->gpus.size()) : 0;
    const int64_t worker_gpus = w.gpu_milli > 0 ? 1 : static_cast<int64_t>(w.gpus.size());
    auto share = [&](int64_t total) {
      return node_gpus > 0 && worker_gpus > 0 ? std::max<int64_t>(1, total * worker_gpus / node_gpus) : 0;
    };
    const int64_t cores = node ? node->cpu.cores : 0, mem = node ? node->memory_gib * 1024 : 0;
    cpus[w.node] += j.resources.cpu_cores.value_or(share(cores));
    mem_mib[w.node] += j.resources.memory_gib ? *j.resources.memory_gib * 1024 : share(mem);
    share_cpus[w.node] += share(cores);
  }
  for (const auto& id : order) {
    auto n = tx.get("nodes", id);
    if (!n) return n.error();
    s.nodes.push_back(n->name);
    s.gpus_per_node = std::max(s.gpus_per_node, gpus[id]);
    s.gpu_indices[n->name] = indices[id];
    s.cpus_per_node = std::max(s.cpus_per_node, cpus[id]);
    s.mem_mib_per_node = std::max(s.mem_mib_per_node, mem_mib[id]);
    if (cpus[id] > share_cpus[id]) s.bind_cpus = false;
  }
  s.time_limit_s = j.time_limit_seconds;
  s.output = o_.output_dir.empty() ? "" : o_.output_dir + "/" + r.id + "-%j.log";
  if (o_.containers) {
    // Everything the job states goes into the container; the batch script only starts it.
    ContainerRun run = container_run(r, j, static_cast<int64_t>(s.nodes.size()), most_workers);
    for (const auto& id : order) {  // each node's GPU -> NUMA node, from gpurent's topology
      auto n = tx.get("nodes", id);
      if (!n) return n.error();
      auto node = decode_node(n->body, catalog_);
      if (!node) continue;  // no binding; the undecodable node is reported where it is read for placement
      std::vector<int64_t>& numa = run.gpu_numa[n->name];
      for (const NodeGpu& g : node->gpus) {
        if (g.index < 0 || g.index >= kMaxGpusPerNode) continue;
        if (numa.size() <= static_cast<size_t>(g.index)) numa.resize(g.index + 1, -1);  // -1: not known
        numa[g.index] = g.numa_node;
      }
    }
    if (saves_) {  // node volumes: their folder on this node, copied here first when they live elsewhere
      std::vector<std::pair<std::string, std::string>> where;
      for (size_t k = 0; k < order.size(); ++k) where.push_back({order[k], s.nodes[k]});
      auto refused = place_node_volumes(tx, {o_.node_volume_root, o_.volume_copy_command, o_.artifact_dir}, r.tenant_id, r.id,
                                        where, run.volumes, now);
      if (!refused) return refused.error();
      if (*refused) {
        host.forget(r.id);
        return move_job(tx, r.id, JobState::kFailed, **refused, {}, now);
      }
    }
    if (names_platform_image(run.image)) {  // a gpurent image: its reference and content in the store
      auto img = find_image(tx, r.tenant_id, run.image);
      auto image = img ? decode_record(*img, decode_image, "jobs cannot run in it") : Result<Image>(img.error());
      if (!image || image->state != ImageState::kReady) {
        host.forget(r.id);
        return move_job(tx, r.id, JobState::kFailed, Message("exec.container.image_gone").arg("image", run.image), {}, now);
      }
      run.image = image_reference(*image);
      run.image_file = o_.artifact_dir + "/sha256/" + image->sha256;
      run.image_sha256 = image->sha256;
      run.image_format = enum_name(kImageFormatNames, image->format);
    }
    // An instance's start: its sshd and notebook (services/instance_entry.h).
    auto entry = instance_entry(tx, r, j, o_.instance_bind);
    if (!entry) return entry.error();
    std::vector<ServerSecret> extra;
    if (*entry) {
      apply_instance_entry(run, **entry);
      if (!(*entry)->notebook_token.empty())
        extra.push_back({".notebook-token", (*entry)->notebook_token, (*entry)->token_env, ""});
    }
    auto secrets = write_secrets(tx, r, j, extra);
    if (!secrets) {
      host.forget(r.id);
      return move_job(tx, r.id, JobState::kFailed,
                      Message("exec.container.cannot_run").arg("why", secrets.error().message), {}, now);
    }
    run.secrets = std::move(*secrets);
    if (auto c = check_container_run(o_.container, run); !c) {
      host.forget(r.id);
      return move_job(tx, r.id, JobState::kFailed,
                      Message("exec.container.cannot_run").arg("why", c.error().message), {}, now);
    }
    s.script = container_script(o_.container, run);
    s.workdir = "/tmp";  // the batch script's own folder on the node (the job's workdir is inside the container)
  } else {
    s.command = j.command.empty() ? std::vector<std::string>{"true"} : j.command;
    s.env = j.env;
    s.env["GPURENT_JOB_ID"] = r.id;
    if (j.workdir) s.workdir = *j.workdir;
  }
  auto id = batch_->submit(s);
  if (!id) {
    // Back in the queue: the engine lets go of its GPUs and places it again on a later tick; the
    // next try waits out a backoff (refused_).
    auto& [times, next] = refused_[r.id];
    times = std::min(times + 1, 20);
    next = now + std::min<TimeMs>(TimeMs{1000} << std::min(times - 1, 9), 300'000);
    host.forget(r.id);
    return move_job(tx, r.id, JobState::kPending,
                    Message(local_ ? "exec.local.refused" : "exec.slurm.refused").arg("error", verbatim(id.error().message)),
                    {}, now);
  }
  refused_.erase(r.id);
  spdlog::info("{}", json({{"event", std::string(name()) + "_submitted"}, {"job", r.id}, {"run", *id}}).dump());
  return ok_status();
}

// A running job the batch system no longer lists. After kLostGraceMs (one listing that missed it
// is not enough) its run's Slurm job is looked up in Slurm's accounting (sacct, or the jobcomp
// file), at most every kLostAskMs: when it ended there, the job follows that end (its state, and
// the run billed to Slurm's end time) as it would have had it been watched. When the accounting
// knows nothing of it for kLostGiveUpMs, the job fails saying so, its run ended when it was first
// missed: better than a job running (and billed) forever on nothing.
Status SlurmExecutor::follow_lost(StoreTx& tx, const Record& r, const Job& j, TimeMs now, ExecutorHost& host) {
  constexpr TimeMs kLostGraceMs = 10'000, kLostAskMs = 30'000, kLostGiveUpMs = 600'000;
  Lost& lost = lost_.try_emplace(r.id, Lost{now, now + kLostGraceMs}).first->second;
  if (now < lost.next_ask) return ok_status();
  lost.next_ask = now + kLostAskMs;
  auto run = open_run_of(tx, r);
  if (!run) return run.error();
  if (!*run || !(*run)->slurm_job_id) return ok_status();  // never seen running in Slurm: nothing to look up
  const int64_t id = *(*run)->slurm_job_id;
  auto acct = batch_->accounted(id, (*run)->running_at.value_or(lost.since));
  if (!acct) {
    spdlog::warn("{}", json({{"event", std::string(name()) + "_accounting_failed"}, {"job", r.id}, {"run", id},
                             {"error", acct.error().message}})
                           .dump());
  } else if (*acct && (*acct)->end) {
    const SlurmAccounting& a = **acct;
    const SlurmJob sj{.id = a.id, .comment = r.id, .state = a.state, .nodes = a.nodes, .start = a.start, .end = a.end,
                      .exit_code = a.exit_code};
    if (terminal(sj.state)) {
      spdlog::warn("{}", json({{"event", std::string(name()) + "_ended_unwatched"}, {"job", r.id}, {"run", id},
                               {"state", sj.state}})
                             .dump());
      lost_.erase(r.id);
      return follow(tx, r, j, sj, now, host);
    }
  }
  if (now < lost.since + kLostGiveUpMs) return ok_status();
  const TimeMs since = lost.since;
  lost_.erase(r.id);
  host.forget(r.id);
  spdlog::warn("{}", json({{"event", std::string(name()) + "_job_lost"}, {"job", r.id}, {"run", id}}).dump());
  return move_job(tx, r.id, JobState::kFailed, labelled(Message("exec.slurm.lost").arg("slurm_job", std::to_string(id))),
                  {}, since);  // its run closes then
}

// An admitted job that this server has not submitted since it started, and that Slurm no longer
// lists: the server before it may have submitted it (sbatch answered, then a crash lost the tick
// that would have stored that), and the job may have ended while nobody watched and been
// forgotten by slurmctld (MinJobAge). Slurm's accounting (sacct, or the jobcomp file) is asked
// once for a job of its Slurm name started after the admission that no run of it records: found,
// the job follows that end as if it had been watched (true), and is not run a second time.
// Nothing found, or no accounting kept: false (submit it). The accounting failing: the job waits,
// asked again each tick, for kUnwatchedGiveUpMs, then is submitted (a double run is better than
// none).
Result<bool> SlurmExecutor::ran_unwatched(StoreTx& tx, const Record& r, const Job& j, TimeMs now, ExecutorHost& host) {
  constexpr TimeMs kUnwatchedGiveUpMs = 600'000;
  const TimeMs admitted = j.status.updated_at;
  if (local_ || !first_tick_ || admitted >= *first_tick_) return false;
  if (auto it = unwatched_checked_.find(r.id); it != unwatched_checked_.end() && it->second == admitted) return false;
  if (!tick_accounting_ || tick_accounting_->first > admitted)
    tick_accounting_.emplace(admitted, batch_->accounted_since(admitted));
  const Result<std::vector<SlurmAccounting>>& acct = tick_accounting_->second;
  if (!acct) {
    const TimeMs since = unwatched_failing_.try_emplace(r.id, now).first->second;
    spdlog::warn("{}", json({{"event", std::string(name()) + "_accounting_failed"}, {"job", r.id},
                             {"error", acct.error().message}})
                           .dump());
    if (now < since + kUnwatchedGiveUpMs) return true;  // wait: asked again next tick
  }
  unwatched_failing_.erase(r.id);
  unwatched_checked_[r.id] = admitted;
  if (!acct) return false;
  const SlurmAccounting* found = nullptr;
  for (const SlurmAccounting& a : *acct) {
    if (a.name != slurm_job_name(r) || !a.start || !a.end || *a.start + 1000 < admitted || !terminal(a.state)) continue;
    // Ours only: submitted by this server's user, in its partition (a name anyone can give).
    if (!a.user.empty() && !self_user_.empty() && a.user != self_user_) continue;
    if (!o_.partition.empty() && !a.partition.empty() && a.partition != o_.partition) continue;
    if (found && found->id > a.id) continue;
    auto was = closed_run_was(tx, r.id, r.project_id, a.id);  // an earlier admission's run
    if (!was) return was.error();
    if (!*was) found = &a;
  }
  if (!found) return false;
  const SlurmJob sj{.id = found->id, .comment = r.id, .state = found->state, .nodes = found->nodes,
                    .start = found->start, .end = found->end, .exit_code = found->exit_code};
  spdlog::warn("{}", json({{"event", std::string(name()) + "_ran_unwatched"}, {"job", r.id}, {"run", sj.id},
                           {"state", sj.state}})
                         .dump());
  if (auto s = follow(tx, r, j, sj, now, host); !s) return s.error();
  return true;
}

// A job Slurm runs or ran: its state follows Slurm's, and the run's times are Slurm's (billing and
// reconciliation follow the executor's clock).
Status SlurmExecutor::follow(StoreTx& tx, const Record& r, const Job& j, const SlurmJob& sj, TimeMs now,
                             ExecutorHost& host) {
  const JobStatus& js = j.status;
  const std::string slurm_job = std::to_string(sj.id);
  auto stamp = [&](bool ended) -> Status {
    return annotate_latest_run(
        tx, r.id, r.project_id,
        [&](JobRun& run) {
          run.slurm_job_id = sj.id;
          if (sj.start) {
            run.running_at = *sj.start;
            // A job that reports readiness is ready when it says so (observe_ready), never before it ran.
            if (!j.readiness)
              run.ready_at = *sj.start;
            else if (run.ready_at && *run.ready_at < *sj.start)
              run.ready_at = *sj.start;
          }
          if (ended && sj.end) run.ended_at = *sj.end;
        },
        now);
  };
  if (sj.state == "RUNNING" && js.state == JobState::kAdmitted) {
    auto placed = host.placement(r.id);
    if (auto s = move_job(tx, r.id, JobState::kRunning, labelled(Message("exec.slurm.running").arg("slurm_job", slurm_job)), placed, now); !s) return s;
    if (auto s = stamp(false); !s) return s;
    return observe_ready(tx, r, j, sj);
  }
  if (!terminal(sj.state)) return js.state == JobState::kRunning ? observe_ready(tx, r, j, sj) : ok_status();
  if (sj.state == "NODE_FAIL" || sj.state == "PREEMPTED" || sj.state == "BOOT_FAIL") {
    // The run died with its node (or Slurm preempted it): gpurent requeues the job, keeping why,
    // and records a fault on the first node (billing stops at the end of the run).
    if (js.placement.empty()) return ok_status();
    auto n = tx.get("nodes", js.placement.front().node);
    const std::string node = n ? n->name : js.placement.front().node;
    const Message failed =
        labelled(Message("exec.slurm.node_failed").arg("node", node).arg("state", sj.state).arg("slurm_job", slurm_job));
    const Message why = Message("sched.requeued").arg("why", failed);
    host.forget(r.id);
    if (js.state == JobState::kRunning)
      if (auto s = move_job(tx, r.id, JobState::kPreempted, why, {}, now); !s) return s;
    if (auto s = move_job(tx, r.id, JobState::kPending, why, {}, now); !s) return s;
    auto rec = tx.get("jobs", r.id);
    if (!rec) return rec.error();
    return host.record_fault(tx, *rec, js.placement.front().node, failed, now);
  }
  const int killed = killed_from_outside(sj);
  const bool oom_reported = killed && o_.containers && [&] {
    auto st = container_status(r, sj);
    return st && st->reason == "oom" && st->oom_reported.value_or(false);
  }();
  if (killed && !oom_reported && !js.placement.empty() && js.fault_retries_used < j.fault_retries) {
    // A worker killed from outside (job.h fault_retries): the run ends, the job requeues and the
    // node gets a fault record, like a failed node's job; the retry is counted on the status.
    auto n = tx.get("nodes", js.placement.front().node);
    const Message killed_why = labelled(Message("exec.worker_killed")
                                            .arg("signal", killed == SIGKILL ? "KILL" : "BUS")
                                            .arg("node", n ? n->name : js.placement.front().node)
                                            .arg("slurm_job", slurm_job));
    const Message why = Message("sched.requeued_retry")
                            .arg("why", killed_why)
                            .arg("retry", std::to_string(js.fault_retries_used + 1))
                            .arg("retries", std::to_string(j.fault_retries));
    if (auto s = count_fault_retry(tx, r.id); !s) return s;
    host.forget(r.id);
    if (js.state == JobState::kRunning)
      if (auto s = move_job(tx, r.id, JobState::kPreempted, why, {}, now); !s) return s;
    if (auto s = move_job(tx, r.id, JobState::kPending, why, {}, now); !s) return s;
    if (auto s = stamp(true); !s) return s;
    auto rec = tx.get("jobs", r.id);
    if (!rec) return rec.error();
    return host.record_fault(tx, *rec, js.placement.front().node, killed_why, now);
  }
  if (js.state == JobState::kAdmitted)
    if (auto s = move_job(tx, r.id, JobState::kRunning, labelled(Message("exec.slurm.ran").arg("slurm_job", slurm_job)),
                          host.placement(r.id), now);
        !s)
      return s;
  if (auto s = observe_ready(tx, r, j, sj); !s) return s;  // a report written just before the end
  const auto [to, why] = end_of(sj, j);
  Message ended = to == JobState::kSucceeded ? why : ended_why(r, sj, why);
  if (killed && !oom_reported && j.fault_retries > 0)  // killed again with every retry used
    ended = Message("exec.fault_retries_exhausted").arg("why", ended).arg("retries", std::to_string(j.fault_retries));
  if (auto s = move_job(tx, r.id, to, labelled(std::move(ended)), {}, now); !s) return s;
  if (to != JobState::kSucceeded)
    if (auto s = alert_on_artifact(tx, r, sj, now, host); !s) return s;
  if (auto s = stamp(true); !s) return s;
  host.forget(r.id);
  return ok_status();
}

Status SlurmExecutor::advance(StoreTx& tx, TimeMs now, ExecutorHost& host) {
  if (!ok_) return ok_status();
  if (saves_)  // first: a start submitted below sees where node volumes are now
    if (auto s = sync_volume_reports(tx, o_.artifact_dir, now); !s) return s;
  Newest newest;
  for (const SlurmJob& sj : jobs_) {
    auto& n = newest[sj.comment];
    if (!n || sj.id > n->id) n = &sj;
  }
  if (auto s = adopt_slurm_gpus(tx, newest, host, now); !s) return s;
  if (!first_tick_) first_tick_ = now;
  tick_accounting_.reset();
  // Instances stopping a run Slurm no longer runs (it left COMPLETING: its processes are gone) are
  // stopped; first, so that a start waiting for that run is submitted in this same tick.
  std::set<std::string> alive;
  for (const SlurmJob& sj : jobs_)
    if (!terminal(sj.state)) alive.insert(sj.comment);
  if (auto ended = end_instance_stops(tx, alive, now); !ended) return ended.error();
  std::set<int64_t> placed_runs;  // Slurm jobs that belong to a placed gpurent job
  std::set<std::string> placed;
  Status st = for_each_placed_job(tx, [&](const Record& r, Job& j) -> Status {
    const JobStatus& js = j.status;
    placed.insert(r.id);
    auto it = newest.find(r.id);
    const SlurmJob* sj = it == newest.end() ? nullptr : it->second;
    // A Slurm job from an earlier admission (before a preemption or requeue) is not this run's.
    if (sj && js.state == JobState::kAdmitted && sj->submit_time && *sj->submit_time + 1000 < js.updated_at)
      sj = nullptr;
    // Nor is one whose end requeued the job (a killed worker's), however soon it was admitted again.
    if (sj && js.state == JobState::kAdmitted && terminal(sj->state)) {
      auto was = closed_run_was(tx, r.id, r.project_id, sj->id);
      if (!was) return was.error();
      if (*was) sj = nullptr;
    }
    if (!sj) {
      if (js.state == JobState::kAdmitted) {
        auto handled = ran_unwatched(tx, r, j, now, host);
        if (!handled) return handled.error();
        return *handled ? ok_status() : submit(tx, r, j, now, host);
      }
      return js.state == JobState::kRunning ? follow_lost(tx, r, j, now, host) : ok_status();
    }
    lost_.erase(r.id);
    placed_runs.insert(sj->id);
    return follow(tx, r, j, *sj, now, host);
  });
  if (!st) return st;
  if (o_.containers) sweep_secrets(placed);
  if (saves_)
    if (auto s = saves_->sync(tx, now); !s) return s;
  if (o_.containers && !o_.output_dir.empty()) {  // egress freezes reach the projects' containers
    auto frozen = egress_frozen_projects(tx);
    if (!frozen) return frozen.error();
    sync_freezes(*frozen);
  }
  for (auto it = ready_seen_.begin(); it != ready_seen_.end();)  // runs of jobs no longer placed
    it = placed.count(it->substr(0, it->find('/'))) ? std::next(it) : ready_seen_.erase(it);
  for (auto* m : {&unwatched_checked_, &unwatched_failing_})  // jobs no longer placed
    for (auto it = m->begin(); it != m->end();) it = placed.count(it->first) ? std::next(it) : m->erase(it);
  for (auto it = lost_.begin(); it != lost_.end();)  // jobs no longer placed
    it = placed.count(it->first) ? std::next(it) : lost_.erase(it);
  for (auto it = refused_.begin(); it != refused_.end();)  // backoffs long over (a job gone, or started elsewhere)
    it = now >= it->second.second + 600'000 ? refused_.erase(it) : std::next(it);
  // Slurm jobs gpurent no longer runs (cancelled, preempted, requeued): cancel them in Slurm —
  // only its own (our_run).
  for (const SlurmJob& sj : jobs_) {
    if (terminal(sj.state) || placed_runs.count(sj.id) || !our_run(sj)) continue;
    if (!placed.count(sj.comment))  // its job no longer placed: a stopped instance's waits for it
      if (auto s = note_lingering_run(tx, sj.comment, now); !s) return s;
    if (auto s = batch_->cancel(sj.id); !s)
      spdlog::error("{}", json({{"event", std::string(name()) + "_cancel_failed"}, {"run", sj.id},
                                {"error", s.error().message}})
                              .dump());
  }
  return ok_status();
}

// A cancel's SIGTERM reaches the batch script, whose trap stops the container (`podman stop -t N`,
// which sends SIGKILL after N s). Slurm kills what is left of the job KillWait seconds after the
// SIGTERM, that podman stop among it, and the container is no child of slurmstepd: one whose
// command ignored SIGTERM would then run on, outside its job, on GPUs given to the next. So the
// container gets at most half of KillWait to stop (the other half is Podman's own time and the
// script's clean-up); the fitted value, or why it could not be fitted, goes to the log.
static void fit_stop_timeout(ContainerSettings& c, SlurmCli& cli) {
  auto kw = cli.kill_wait_s();
  if (!kw) {
    spdlog::warn("{}", json({{"event", "slurm_kill_wait_unknown"},
                             {"error", kw.error().message},
                             {"stop_timeout_s", c.stop_timeout_s}})
                           .dump());
    return;
  }
  const int64_t fit = fitted_stop_timeout(c.stop_timeout_s, *kw);
  if (fit == c.stop_timeout_s && *kw >= 2) return;
  c.stop_timeout_s = fit;
  // Below 2 s of KillWait the container gets 1 s, which may not be over before Slurm's SIGKILL.
  spdlog::warn("{}", json({{"event", *kw >= 2 ? "slurm_stop_timeout_fitted" : "slurm_kill_wait_too_short"},
                           {"kill_wait_s", *kw},
                           {"stop_timeout_s", c.stop_timeout_s}})
                         .dump());
}

Result<std::unique_ptr<Executor>> make_slurm_executor(SlurmExecutorOptions o, const GpuCatalog& catalog) {
  if (o.supplier.empty()) return Error::invalid("slurm_supplier", "is required with --executor slurm");
  if (!catalog.find(o.gpu_model))
    return Error::invalid("slurm_gpu_model", "'" + o.gpu_model + "' is not a GPU catalog id");
  if (o.containers)
    if (auto s = check_container_settings(o.container); !s) return s.error();
  if (o.driver.empty() || o.cuda.empty())
    return Error::invalid("slurm_driver", "--slurm-driver and --slurm-cuda are required with --executor slurm "
                                          "(Slurm does not report the nodes' NVIDIA software)");
  SlurmSettings settings{o.conf, o.partition, o.gres_type, static_cast<int>(o.command_timeout_ms)};
  auto cli = std::make_unique<SlurmCli>(std::move(settings));
  if (o.containers) fit_stop_timeout(o.container, *cli);
  auto e = std::make_unique<SlurmExecutor>(std::move(o), catalog, std::move(cli), false);
  if (auto s = e->check(); !s) return s.error();
  return std::unique_ptr<Executor>(std::move(e));
}

Result<std::unique_ptr<Executor>> make_local_executor(SlurmExecutorOptions o, LocalExecutorOptions local,
                                                      const GpuCatalog& catalog) {
  if (o.supplier.empty()) return Error::invalid("local_supplier", "is required with --executor local");
  if (!catalog.find(o.gpu_model))
    return Error::invalid("local_gpu_model", "'" + o.gpu_model + "' is not a GPU catalog id");
  if (!o.containers)
    return Error::invalid("containers", "the local executor runs every job in a container: add --containers");
  if (auto s = check_container_settings(o.container); !s) return s.error();
  if (o.driver.empty() || o.cuda.empty())
    return Error::invalid("local_driver", "--local-driver and --local-cuda are required with --executor local "
                                          "(gpurent does not read this machine's NVIDIA software yet)");
  if (o.output_dir.empty())
    return Error::invalid("job_output_dir", "is required with --executor local (the jobs' logs and run status go there)");
  if (local.gpus < 0) {  // the GPU device files there are, from 0 up
    local.gpus = 0;
    if (o.container.gpu_device != "cdi")
      for (int64_t g = 0; g < 4096; ++g) {
        std::string path = o.container.gpu_device;
        path.replace(path.find("%d"), 2, std::to_string(g));
        if (!std::filesystem::exists(path)) break;
        local.gpus = g + 1;
      }
  }
  auto runner = LocalRunner::open({local.run_dir, local.node, local.gpus, 0, 0});
  if (!runner) return runner.error();
  return std::unique_ptr<Executor>(std::make_unique<SlurmExecutor>(std::move(o), catalog, std::move(*runner), true));
}

}  // namespace gpurent
