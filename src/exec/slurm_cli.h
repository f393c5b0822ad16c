// Talks to a Slurm cluster through its command-line tools (sbatch, squeue --json, sinfo --json,
// scancel, scontrol), the way an operator would, pointed at its slurm.conf through SLURM_CONF.
// The JSON parsers are separate pure functions, reading the output of Slurm 22.05 through 24.11
// (data_parser v0.0.38 to v0.0.42: docs/slurm.md, "Slurm versions"; tested on real output of both ends).
// Thread-safe: each call runs its own processes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace gpurent {

struct SlurmSettings {
  std::string conf;             // path of slurm.conf; empty: the tools' default
  std::string partition;        // empty: the cluster's default partition
  std::string gres_type;        // "h100" -> --gres=gpu:h100:N; empty: --gres=gpu:N
  int timeout_ms = 20'000;      // per command
};

struct SlurmSubmit {
  std::string name;                        // job name shown by squeue
  std::string comment;                     // gpurent's job id: how a Slurm job is found again
  std::vector<std::string> nodes;          // exact nodes (--nodelist), one per gang node
  int64_t gpus_per_node = 0;
  // What the job's workers on one node ask for together (the most of any node): --cpus-per-task
  // (one task per node) and --mem; 0: Slurm's defaults.
  int64_t cpus_per_node = 0;
  int64_t mem_mib_per_node = 0;
  // Ask Slurm for CPUs bound to the job's GPUs (--gres-flags=enforce-binding): only when the CPUs
  // asked for fit in the GPUs' share of the node's cores, else Slurm could never start the job.
  bool bind_cpus = true;
  std::vector<std::string> command;        // argv; run by the batch script
  std::string workdir;                     // empty: Slurm's default
  std::map<std::string, std::string> env;  // exported to the job
  std::optional<int64_t> time_limit_s;     // --time, rounded up to whole minutes
  std::string output;                      // stdout/stderr file; empty: /dev/null
  bool requeue = false;                    // may Slurm requeue it (scontrol requeue, node failure)?
  std::string script;                      // non-empty: the batch script's body instead of exec'ing
                                           // command (containers: exec/container.h)
  // The GPU indices gpurent placed the job on, per node. Slurm picks its own (gres) and ignores
  // these; the local runner (exec/local_runner.h) runs on exactly them.
  std::map<std::string, std::vector<int64_t>> gpu_indices;
};

struct SlurmJob {
  int64_t id = 0;
  std::string name, comment;
  std::string user, partition;  // the submitting user's name, the partition ("" when not reported)
  std::string state;   // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED, OUT_OF_MEMORY, ...
  std::string reason;  // squeue's state_reason
  std::vector<std::string> nodes;
  std::optional<TimeMs> submit_time, start, end;  // absent when Slurm says 0
  int exit_code = 0;                 // the job script's exit status (Slurm reports a wait status)
  int exit_signal = 0;
  int64_t restarts = 0;
  std::vector<int64_t> gpu_indices;  // from gres_detail "gpu:h100:2(IDX:0-1)", first node
  // Every node's GPU indices: gres_detail[i] belongs to job_resources.allocated_nodes[i].
  std::map<std::string, std::vector<int64_t>> gpus_by_node;
};

struct SlurmNode {
  std::string name;
  std::string state;  // idle, mixed, allocated, down, ...
  bool drain = false;
  std::string reason;
  int64_t gpus = 0;
  std::string gpu_type;
  int64_t cpus = 0;
  int64_t memory_mb = 0;
  int64_t sockets = 0;                // 0: not reported
  int64_t cores_per_socket = 0;
  std::vector<std::string> features;  // active features ("ib", "roce", ...)
  std::vector<int64_t> gpu_cores;     // per GPU index: the first core gres.conf binds it to, -1 none
  bool usable() const { return !drain && state != "down" && state != "unknown" && state != "future"; }
};

// A job (one run of it: a job Slurm requeued has a record per run) as Slurm's accounting
// recorded it: sacct (slurmdbd) or the jobcomp/filetxt file.
struct SlurmAccounting {
  int64_t id = 0;
  std::string state;                 // first word: "CANCELLED by 0" -> CANCELLED
  std::optional<TimeMs> start, end;  // end absent while running
  std::optional<int64_t> elapsed_s;  // sacct's ElapsedRaw; jobcomp: end - start
  int64_t gpus = 0;                  // AllocTRES (jobcomp: Tres) gres/gpu, summed over the job's nodes
  std::vector<std::string> nodes;
  int exit_code = 0;                 // ExitCode "3:0" -> 3
  std::string name;                  // the job's name (sacct JobName, jobcomp Name)
  std::string user, partition;       // who submitted it (sacct User, jobcomp UserId) and where
};

// "gpn[1-3],gpx7" -> {gpn1, gpn2, gpn3, gpx7}
std::vector<std::string> expand_hostlist(const std::string& list);
Result<std::vector<SlurmJob>> parse_squeue_json(const std::string& text);
Result<std::vector<SlurmNode>> parse_sinfo_json(const std::string& text);
// jobcomp/filetxt lines ("JobId=7 ... JobState=COMPLETED ... StartTime=2026-11-29T22:04:39
// EndTime=... NodeList=gpn[1-2] ..."). Slurm writes local time without a zone: read as UTC (run
// slurmctld with TZ=UTC, as gpurent's servers do).
Result<std::vector<SlurmAccounting>> parse_jobcomp(const std::string& text);
// `sacct -a -X -D -P -n -o JobID,State,Start,End,ElapsedRaw,AllocTRES,NodeList,ExitCode,User,Partition,JobName` run with
// SLURM_TIME_FORMAT=%s (times as epoch seconds, so no time zone is guessed).
Result<std::vector<SlurmAccounting>> parse_sacct(const std::string& text);
// Slurm's KillWait from `scontrol show config` ("KillWait                = 30 sec"): the seconds
// between a cancel's SIGTERM and the SIGKILL of whatever of the job is left. kInvalid when the
// text has no such line or its value is not a number of seconds.
Result<int64_t> parse_kill_wait(const std::string& show_config);
// How long a container may take to stop (`podman stop -t`) on a cluster whose KillWait is
// `kill_wait_s`: `configured`, or half of KillWait when that is less (the other half is Podman's
// own time and the batch script's clean-up, before Slurm kills the script), and at least 1.
int64_t fitted_stop_timeout(int64_t configured, int64_t kill_wait_s);
// An RDMA NIC a node's features name: "ib" or "infiniband", "roce" (RoCE v2), each optionally followed
// by its line rate in Gb/s ("ib400", "roce200"; 100 when absent); a feature "fabric-<slug>" puts
// them on that RDMA fabric. Other features are not NICs.
struct SlurmNic {
  std::string name;  // the feature
  bool roce = false;
  int64_t gbps = 100;
  std::string fabric;
};
std::vector<SlurmNic> nics_from_features(const std::vector<std::string>& features);

// 23.02+: sinfo --json groups nodes (features of one node may be shown for all of its group):
// sockets, cores per socket and features per node from `scontrol show nodes --json`, by name.
// What it cannot read it leaves as it was.
void add_node_topology(std::vector<SlurmNode>& nodes, const std::string& scontrol_json);
// slurm.conf's `Key=Value` lines, keys lowercased (Slurm reads them case-insensitively), a `#` and
// what follows it dropped, values trimmed; a line of several pairs (NodeName=…) keeps the rest in
// its first key's value.
std::map<std::string, std::string> parse_slurm_conf_values(const std::string& text);
// The GPUs gres.conf declares, per node, in index order (the order of their File= devices): the
// first core each is bound to (Cores=), -1 where it names none. Lines without NodeName apply to
// every node in `nodes`; AutoDetect lines and other gres are ignored. Never fails: what it cannot
// read it leaves out.
std::map<std::string, std::vector<int64_t>> parse_gres_conf_cores(const std::string& text,
                                                                  const std::vector<std::string>& nodes);
// "billing=1,cpu=1,gres/gpu=2,mem=1000M,node=1" -> 2 (also "gres/gpu:h100=2"); 0 when absent.
int64_t tres_gpus(const std::string& tres);

// The sbatch batch script for a submission (bash): exports the job's variables and execs the
// command (or runs `script`), every value and argument shell-quoted. Variable names are the
// caller's to check.
std::string batch_script(const SlurmSubmit& s);

// What runs batch scripts on nodes and reports their jobs the way squeue and sinfo do: Slurm
// (SlurmCli) or this machine alone (LocalRunner, exec/local_runner.h). The executor
// (server/services/executor_slurm.cc) drives either the same way.
class BatchSystem {
 public:
  virtual ~BatchSystem() = default;
  virtual Result<int64_t> submit(const SlurmSubmit& job) = 0;  // the job's id there
  virtual Status cancel(int64_t id) = 0;
  virtual Result<std::vector<SlurmJob>> jobs() = 0;  // every job it still knows (finished ones for a while)
  virtual Result<std::vector<SlurmNode>> nodes() = 0;
  // What its accounting recorded of jobs submitted after `since` (it still lists those jobs() no
  // longer does): empty when it keeps no accounting.
  virtual Result<std::vector<SlurmAccounting>> accounted_since(TimeMs since) {
    (void)since;
    return std::vector<SlurmAccounting>();
  }
  // Job `id` in that accounting: nullopt when it has no record of it or keeps no accounting.
  Result<std::optional<SlurmAccounting>> accounted(int64_t id, TimeMs since);
};

class SlurmCli final : public BatchSystem {
 public:
  explicit SlurmCli(SlurmSettings s) : s_(std::move(s)) {}
  Result<int64_t> submit(const SlurmSubmit& job) override;  // the Slurm job id
  Status cancel(int64_t id) override;
  Status requeue(int64_t id);                        // back to pending (preemption by requeue)
  Result<std::vector<SlurmJob>> jobs() override;     // every job slurmctld still knows
  Result<std::vector<SlurmNode>> nodes() override;
  Result<int64_t> kill_wait_s();  // KillWait (scontrol show config)
  // Jobs Slurm's accounting recorded since `since`: sacct when slurm.conf names slurmdbd
  // (AccountingStorageType=accounting_storage/slurmdbd), else the jobcomp/filetxt file
  // (JobCompLoc). `source` says which ("sacct" or "jobcomp").
  // `until` (0: none) bounds what sacct reads to jobs that started by then (a day's margin).
  Result<std::vector<SlurmAccounting>> accounting(TimeMs since, std::string* source = nullptr, TimeMs until = 0);
  // That accounting, empty when the cluster keeps none.
  Result<std::vector<SlurmAccounting>> accounted_since(TimeMs since) override;
  const SlurmSettings& settings() const { return s_; }

 private:
  Result<std::string> run(std::vector<std::string> argv, const std::string& stdin_text = "",
                          std::map<std::string, std::string> env = {});
  std::map<std::string, std::string> conf_values();  // parse_slurm_conf_values of slurm.conf
  SlurmSettings s_;
};

}  // namespace gpurent
