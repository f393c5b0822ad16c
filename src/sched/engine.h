// SchedEngine: the live scheduler. It holds the cluster (nodes and what is bound on them), the
// queue of pending jobs, project quotas and tenant weights, and decides — when schedule(now) is
// called — which pending jobs start where, which allocations are preempted for them, and why the
// others wait. It is deterministic: time comes in as arguments, randomness from config.seed, and
// the same calls give the same events. The server's control loop and the simulator (src/sim) both
// drive this class; neither reads anything the other does not.
//
// Rules (docs/scheduler.md has the full text):
//  - Admission: a job's project quota (GPUs per model, GPUs per job, concurrent jobs) must hold
//    after it starts; otherwise it waits with a reason such as
//    "quota: project vision uses 4 of 4 H100 SXM5 80GB GPUs (needs 2 more)".
//  - Order: priority class first, then the tenant's weighted dominant share (DRF), then the
//    project's share inside the tenant, then submission time. A flood from one project cannot
//    starve another.
//  - Placement: all workers of a replica (a gang) start together or none does; hard constraints
//    (allowed models in preference order, form factor, GPU memory, RDMA, same node, same NVLink
//    domain, CPU and memory) filter nodes; the configured ScorePolicy ranks them. All workers of a
//    replica use one GPU model. Fractional jobs take a milli-GPU share of one GPU.
//  - Terms: a job runs only under an offer it may use (contract-only offers need its tenant's
//    contract; offers in another currency than its tenant's only when it names them; reserved mode
//    only inside its tenant's commitments; spot and on-demand at or below its price cap), in the
//    suppliers, regions and sovereignty places it allows. The offer is chosen with the placement
//    (its tenant's contracts first, then the cheapest), one per job; a gang stays on one site
//    unless the job spans sites. The pending reason names the term that blocks a job.
//  - Reservations: nodes reserved for a tenant serve its jobs first; others may borrow them while
//    idle and are preempted when the owner needs them back.
//  - Preemption: a job may preempt allocations of strictly lower priority classes, spot
//    allocations of its own or lower class (after the notice period), and borrowed reservations of
//    its tenant. Inference replicas up to min are protected; replicas above min rank as
//    config.inference_extra_rank. Victims: lowest priority, then most recently started (greedy,
//    then those not needed are spared; not the fewest). Nothing is preempted for a job that would
//    still not fit.
//  - Backfill: behind the first job of a pass that cannot start, later jobs start only if they
//    do not delay it (EASY backfill on GPU counts): on room it will not need, or when their time
//    limit ends them before its estimated start (estimated from expected durations and limits).
//  - Faults: a failed node's jobs are requeued with the reason kept and a kFault event.
// Not thread-safe; owned by one thread (the control loop or a simulation).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/result.h"
#include "sched/alloc_cluster.h"
#include "sched/engine_types.h"
#include "sched/score_policy.h"

namespace gpurent {

class SchedEngine {
 public:
  static Result<std::unique_ptr<SchedEngine>> make(SchedConfig config);
  ~SchedEngine();

  // Cluster. Nodes are added before or between passes; a failed node keeps its index.
  Status add_node(const SchedNode& node);
  // Marks the node down: every job on it loses its placement (requeued, kFault + kPreempted or
  // kReplicaRemoved events). Idempotent.
  // `detail`: what the operator or the executor said about the node (may be empty).
  std::vector<SchedEvent> node_failed(const std::string& node, TimeMs now, const Message& detail);
  Status node_restored(const std::string& node);
  // A cordoned (drained) node keeps what runs on it and takes nothing new.
  Status set_node_cordoned(const std::string& node, bool cordoned);
  // Changes which tenant holds the node as reserved capacity ("" none).
  Status set_node_reservation(const std::string& node, const std::string& tenant);
  // Terms of placement: an offer is created or replaced (a new spot price, a contract, a
  // commitment); which offers sell a node. Jobs already running keep their offer.
  Status set_offer(const SchedOffer& offer);
  Status set_node_offers(const std::string& node, const std::vector<std::string>& offer_ids);

  // A tenant's procurement split (the advisor's, or its own): supplier -> target share of the
  // GPUs it holds, per mille (1..1000 each, at most 1000 in all; empty: none). A soft target: the
  // tenant's jobs try first the suppliers that stay at or below target with them, most room
  // first, then anywhere their other rules allow (docs/scheduler.md#procurement-split).
  Status set_procurement_split(const std::string& tenant, const std::map<std::string, int64_t>& split);
  // GPU milli the tenant's running jobs hold per supplier ("" for nodes that name none).
  std::map<std::string, int64_t> held_by_supplier(const std::string& tenant) const;

  // Projects: created or replaced (a quota change applies from the next pass).
  void set_project(const SchedProject& project);

  // Jobs. submit() queues a pending job (a duplicate id is an error). Jobs that were already
  // running when the server restarted come back with restore().
  // `requeued_why`: why a job that ran before is pending again (kept in front of its reasons).
  Status submit(const SchedJob& job, const Message& requeued_why = {});
  Status restore(const SchedJob& job, const std::vector<SchedWorker>& placement, TimeMs started_at);
  // The executor chose other GPUs of `node` for a running whole-GPU job (Slurm picks device
  // indices itself): the job's workers there move to `gpus` (as many as they hold). Unchanged
  // when they already hold them; kConflict (nothing changed) when one of `gpus` is taken.
  Status adopt_gpus(const std::string& job, const std::string& node, std::vector<int64_t> gpus);
  // The same for several jobs of one node at once (job id -> its GPUs there). A running job not
  // named that holds one of those GPUs moves to the lowest GPUs nobody named (its executor has
  // not placed it yet). All or nothing. `moved`, when given, receives the ids of the jobs whose
  // GPUs changed (named or displaced), for the caller to store their new placements.
  Status adopt_node_gpus(const std::string& node, const std::map<std::string, std::vector<int64_t>>& jobs,
                         std::vector<std::string>* moved = nullptr);
  // The job ended (succeeded, failed or cancelled): its resources are freed and it is forgotten.
  void remove(const std::string& job);

  // One scheduling pass at `now`: due spot reclaims, admissions, preemptions, scale-ups,
  // pending-reason changes. The events are in the order they happened.
  std::vector<SchedEvent> schedule(TimeMs now);

  // cfg.defer_slow_prepare: the policy's slow preparation, once, when there is one (an empty
  // function otherwise). It reads only copies it holds: run it on any thread, then hand its result
  // to adopt_policy_choice() on the engine's thread. The engine scores with the policy's interim
  // (fgdauto: FGD) until then, and prepares no more while a choice is awaited.
  std::function<int()> take_policy_task();
  void adopt_policy_choice(int choice);

  // Queries.
  bool has_job(const std::string& job) const;
  bool is_running(const std::string& job) const;       // holds an allocation
  Message reason_message(const std::string& job) const;  // pending reason, empty when none
  std::string reason(const std::string& job) const;      // the same in English, "" when none
  std::vector<SchedWorker> placement(const std::string& job) const;
  int64_t total_gpu_milli() const;                      // nodes up
  int64_t allocated_gpu_milli() const;
  size_t pending_count() const;
  size_t running_count() const;

  struct Impl;  // engine_impl.h; opaque to callers

 private:
  explicit SchedEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpurent
