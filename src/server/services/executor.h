// Executor: what runs the jobs the scheduler places. The scheduler service (scheduler_service.h)
// decides where a job goes; the executor makes it run there and reports how it ends. Chosen once
// at start (`gpurent serve --executor sim|slurm|local`) by make_executor(); the scheduler service
// knows none of an executor's details. With --containers, the Slurm executor runs every worker in
// a Podman container (exec/container.h, docs/containers.md); the local executor always does.
//
// Every scheduler tick calls, in order:
//   observe()                outside the control loop's transaction (it may take seconds: Slurm's
//                            tools); the executor keeps what it saw for the two calls below
//   sync_inventory(tx, now)  nodes the executor discovers or sees fail (Slurm's sinfo), before
//                            the scheduler reconciles nodes
//   advance(tx, now, host)   placed jobs move on: admitted -> running -> succeeded / failed, or
//                            back to pending with a fault record when their node died
// All three run on the scheduler's thread; advance and sync_inventory inside the tick's
// transaction, so what they write commits with the tick or not at all. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "exec/container.h"
#include "model/alert.h"
#include "model/job.h"
#include "store/store.h"

namespace gpurent {

// What an executor may ask of the scheduler it runs for (the scheduling engine's view).
class ExecutorHost {
 public:
  virtual ~ExecutorHost() = default;
  virtual std::vector<WorkerPlacement> placement(const std::string& job) const = 0;
  virtual bool holds_allocation(const std::string& job) const = 0;
  // The executor picked the device indices itself (Slurm's gres): node id -> job -> GPU indices.
  // The engine takes them, and every job whose GPUs moved has its stored placement rewritten in
  // `tx`, so a restarted server restores what the executor really runs. GPUs the engine cannot
  // take (held by a job the executor does not name) are logged (slurm_gpu_mismatch) and change
  // nothing; the error returned is the store's.
  virtual Status adopt_node_gpus(StoreTx& tx, const std::string& node_id,
                                 const std::map<std::string, std::vector<int64_t>>& jobs, TimeMs now) = 0;
  // The job ended or left its placement outside the engine's own events: the engine forgets it.
  virtual void forget(const std::string& job) = 0;
  // A fault record (GET /api/v1/faults) for a run that died with its node.
  virtual Status record_fault(StoreTx& tx, const Record& job, const std::string& node_id, const Message& reason,
                              TimeMs at) = 0;
  // A security alert about the job (GET /api/v1/alerts), delivered to the webhooks once the tick
  // has committed: an artifact whose content changed after upload.
  virtual Status raise_alert(StoreTx& tx, const Record& job, const Alert& alert, TimeMs at) = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string_view name() const = 0;  // "sim", "slurm", "local"
  virtual void observe() {}
  virtual Status sync_inventory(StoreTx&, TimeMs) { return ok_status(); }
  virtual Status advance(StoreTx& tx, TimeMs now, ExecutorHost& host) = 0;
  // The tick's transaction rolled back: forget what advance learnt in it (which runs were marked
  // ready), so that the next tick does it again rather than trusting a write that never happened.
  virtual void rolled_back() {}
};

// The simulated executor: an admitted job starts `cold_start_ms` after admission; a job with
// `readiness` passes its health check `cold_start_ms` after it started running; a running job
// with an expected duration succeeds when it has passed (inference never does); a time limit
// shorter than that fails it, as Slurm would.
std::unique_ptr<Executor> make_sim_executor(int64_t cold_start_ms);

// Slurm (docs/slurm.md): gpurent places, Slurm runs. Slurm's nodes become the supplier's nodes.
struct SlurmExecutorOptions {
  std::string conf, partition, gres_type;  // slurm.conf; empty: the tools' defaults
  std::string supplier;                    // id or name the Slurm nodes belong to
  std::string gpu_model;                   // catalog id of their GPUs
  std::string driver, cuda;                // their NVIDIA software (Slurm does not know it)
  std::string output_dir;                  // jobs' output files; empty: discarded
  int64_t log_max_bytes = 0;               // each run's log keeps its last this many bytes (exec/log_cap.h); 0: all
  int64_t log_cap_interval_ms = 1000;      // how often the log capper looks (services/log_capper.h)
  int64_t command_timeout_ms = 20'000;
  bool containers = false;                 // every worker in a container (docs/containers.md)
  ContainerSettings container;
  std::string default_image;               // for jobs that name none; empty: such jobs fail
  std::string artifact_dir;                // the artifact store (services/artifact_store.h), shared with the nodes
  int64_t artifact_max_bytes = 0, artifact_tenant_bytes = 0;  // an instance saved as an image: its limits
  std::string node_volume_root;            // node volumes (services/node_volumes.h); "" none
  std::string volume_copy_command;
  std::string instance_bind = "0.0.0.0";   // the node address instances' ports are published on
};
// Checks the options and that Slurm answers (sinfo).
Result<std::unique_ptr<Executor>> make_slurm_executor(SlurmExecutorOptions options, const GpuCatalog& catalog);

// The local executor (docs/containers.md): this machine is one node of `options.supplier`, and
// every worker runs in a Podman container here (the local runner, exec/local_runner.h), with no
// Slurm. Of the options, conf, partition and gres_type are not used; containers must be on.
struct LocalExecutorOptions {
  std::string run_dir;  // the runs' folders (exec/local_runner.h)
  std::string node;     // this machine's node name
  int64_t gpus = -1;    // -1: count the GPU device files (container.gpu_device, from 0 up)
};
Result<std::unique_ptr<Executor>> make_local_executor(SlurmExecutorOptions options, LocalExecutorOptions local,
                                                      const GpuCatalog& catalog);

}  // namespace gpurent
