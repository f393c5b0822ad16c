// SchedulerService: runs the scheduling engine (sched/engine.h) inside the server. Every tick it
// runs one command on the control loop (the single writer), so the engine is only ever touched on
// that thread and each tick commits atomically:
//   1. reconcile the engine with the store: nodes (new, unavailable -> failed, drained ->
//      cordoned, deleted), project quotas, newly pending jobs, and jobs that ended or were cancelled;
//   2. the executor (executor.h: simulated or Slurm, chosen at start) moves placed jobs on:
//      admitted -> running -> succeeded / failed, or back to pending when their node died;
//   3. one scheduling pass; its events become job state changes, job events, pending reasons and
//      fault records (GET /api/v1/faults).
// The engine is rebuilt from the store at start (running jobs keep their placement) and after any
// failed tick, so a crash or kill -9 loses nothing that was committed.
// Thread-safe: start() and stop() from the owning thread; the ticker is internal.
#pragma once

#include <atomic>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "sched/engine.h"
#include "server/services/context.h"
#include "server/services/executor.h"
#include "server/services/sched_terms.h"

namespace gpurent {

// What make_executor checks of the options before it asks anything of Slurm or the node: the
// executor's name and its flags' values (kInvalid naming the option). run_server asks it before it
// opens the store.
Status check_executor_options(const ServerOptions& opts);
// The executor --executor names (sim, or slurm with its --slurm-* options, checked and asked).
Result<std::unique_ptr<Executor>> make_executor(const ServerOptions& opts, const GpuCatalog& catalog);

class SchedulerService : private ExecutorHost {
 public:
  // `config`: policy knobs; tenant_weights may name tenants (resolved to ids at each rebuild).
  // `executor`: null = the simulated one with opts.cold_start_ms.
  SchedulerService(ServiceContext& app, SchedConfig config = {}, std::unique_ptr<Executor> executor = nullptr);
  ~SchedulerService() override;
  void start();  // ticks every opts.sched_interval_ms on its own thread until stop()
  void stop();
  // One tick now, through the control loop; for tests and tools that need a deterministic step.
  Status run_once();

 private:
  Status tick(StoreTx& tx, TimeMs now);
  Status rebuild(StoreTx& tx, TimeMs now);
  Status sync_nodes(StoreTx& tx, TimeMs now, std::vector<SchedEvent>& events);
  // Projects' quotas and holds (budgets; a tenant's exhausted balance holds all its projects);
  // the running and admitted jobs of a tenant whose balance is exhausted are stopped: requeued,
  // and held by the same reason.
  Status sync_projects(StoreTx& tx, TimeMs now);
  Status sync_reservations(StoreTx& tx, TimeMs now);
  Status sync_jobs(StoreTx& tx, TimeMs now);
  // Offers, prices, contracts and sovereignty (sched_terms.h): read every tick (a job placed after
  // an offer was written is placed knowing it) and handed to the engine, which ignores what has
  // not changed.
  Status sync_terms(StoreTx& tx, TimeMs now);
  Status apply(StoreTx& tx, const std::vector<SchedEvent>& events, TimeMs now);
  // The policy's slow preparation (fgdauto's rehearsal) runs on its own thread, never on the
  // control loop: started after a pass that handed one out, adopted at the first tick after it
  // finished (by the engine it was planned for; a rebuilt engine plans its own).
  void adopt_finished_policy_work();
  void start_policy_work();
  // ExecutorHost: the engine as the executor sees it.
  std::vector<WorkerPlacement> placement(const std::string& job) const override;
  bool holds_allocation(const std::string& job) const override;
  Status adopt_node_gpus(StoreTx& tx, const std::string& node_id,
                         const std::map<std::string, std::vector<int64_t>>& jobs, TimeMs now) override;
  void forget(const std::string& job) override;
  Status record_fault(StoreTx& tx, const Record& job, const std::string& node, const Message& reason,
                      TimeMs at) override;
  Status raise_alert(StoreTx& tx, const Record& job, const Alert& alert, TimeMs at) override;

  ServiceContext& app_;
  SchedConfig config_;
  std::unique_ptr<SchedEngine> engine_;
  std::unordered_map<std::string, std::string> node_state_;  // node id -> last seen state
  std::unordered_map<std::string, std::string> reserved_for_;  // node id -> tenant holding it now
  PlacementTerms terms_;
  // Pending jobs of `tenant` taken back and submitted again with its terms as they are now.
  Status resubmit_pending(StoreTx& tx, const std::string& tenant);
  std::set<std::string> known_jobs_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  uint64_t fault_seq_ = 0;
  std::unique_ptr<Executor> executor_;
  std::future<int> policy_work_;
  uint64_t engine_generation_ = 0;  // bumped by rebuild()
  uint64_t policy_work_generation_ = 0;
};

}  // namespace gpurent
