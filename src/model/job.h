// Job: work a tenant submits to a project — a gang of `workers` that start together, each with
// whole GPUs (gpus_per_worker) or, for inference and debug, a milli-GPU share of one GPU;
// hardware constraints (GPU models, form factor, memory, RDMA, placement); a priority class; how
// it is billed; what to run (image, command, env); and, for inference, a replica range.
// Users know the shape from SkyPilot task files and Kubernetes manifests. The "status" object of
// a job document is the server's (job_state.h). Schema: docs/resources/jobs.md.
// Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_model.h"
#include "core/money.h"
#include "model/job_state.h"
#include "model/resource.h"
#include "model/tenant.h"

namespace gpurent {

enum class JobKind { kTraining, kInference, kDebug, kBatch };
inline constexpr EnumEntry<JobKind> kJobKindNames[] = {{JobKind::kTraining, "training"},
                                                       {JobKind::kInference, "inference"},
                                                       {JobKind::kDebug, "debug"},
                                                       {JobKind::kBatch, "batch"}};

// Declaration order is rank: a class may preempt the classes after it (the scheduler's policy).
enum class PriorityClass { kCritical, kHigh, kNormal, kLow, kBestEffort };
inline constexpr EnumEntry<PriorityClass> kPriorityClassNames[] = {{PriorityClass::kCritical, "critical"},
                                                                   {PriorityClass::kHigh, "high"},
                                                                   {PriorityClass::kNormal, "normal"},
                                                                   {PriorityClass::kLow, "low"},
                                                                   {PriorityClass::kBestEffort, "best_effort"}};
// inference: high; training: normal; debug, batch: low.
PriorityClass default_priority(JobKind kind);

// What the job needs from the network between its nodes.
enum class RdmaRequirement {
  kNone,        // no requirement: nodes with or without RDMA qualify
  kAny,         // some RDMA fabric (InfiniBand or RoCE v2)
  kInfiniband,  // InfiniBand only
  kRoceV2,      // RoCE v2 only
};
inline constexpr EnumEntry<RdmaRequirement> kRdmaRequirementNames[] = {{RdmaRequirement::kNone, "none"},
                                                                       {RdmaRequirement::kAny, "any"},
                                                                       {RdmaRequirement::kInfiniband, "infiniband"},
                                                                       {RdmaRequirement::kRoceV2, "roce_v2"}};

// How close together the gang's GPUs must be.
enum class PlacementRule {
  kAny,               // anywhere the other constraints allow
  kSameNode,          // all workers on one node
  kSameNvlinkDomain,  // all GPUs in one NVLink/NVSwitch domain of one node (domains are per node;
                      // racks such as NVL72 spanning nodes are not modelled yet)
};
inline constexpr EnumEntry<PlacementRule> kPlacementRuleNames[] = {{PlacementRule::kAny, "any"},
                                                                   {PlacementRule::kSameNode, "same_node"},
                                                                   {PlacementRule::kSameNvlinkDomain,
                                                                    "same_nvlink_domain"}};

enum class BillingMode {
  kReserved,  // runs inside the tenant's reservation (already paid for)
  kOnDemand,  // per second at the offer's on-demand price
  kSpot,      // cheaper, interruptible with notice (the job is preempted and requeued)
};
inline constexpr EnumEntry<BillingMode> kBillingModeNames[] = {
    {BillingMode::kReserved, "reserved"}, {BillingMode::kOnDemand, "on_demand"}, {BillingMode::kSpot, "spot"}};

inline constexpr int64_t kMaxWorkers = 1024;
inline constexpr int64_t kMaxJobContainers = 4096;    // workers × replicas.max
inline constexpr int64_t kMaxGpusPerWorker = 16;      // the largest node
inline constexpr int64_t kMaxJobDurationSeconds = 31 * kSecondsPerDay;
inline constexpr size_t kMaxEnvVars = 128;
inline constexpr size_t kMaxEnvBytes = 64 * 1024;     // names + values
inline constexpr size_t kMaxCommandArgs = 256;
inline constexpr size_t kMaxCommandBytes = 64 * 1024;
inline constexpr size_t kMaxGpuModelChoices = 16;
inline constexpr size_t kMaxNodeChoices = 16;
inline constexpr size_t kMaxPlaceChoices = 16;  // constraints.regions, constraints.suppliers
inline constexpr size_t kMaxVolumes = 16;
inline constexpr size_t kMaxJobSecrets = 32;
inline constexpr size_t kMaxJobArtifacts = 32;
inline constexpr int64_t kMaxFaultRetries = 10;

// Per worker. Absent: a share of the node proportional to the worker's GPUs.
struct WorkerResources {
  std::optional<int64_t> cpu_cores;   // 1..1024
  std::optional<int64_t> memory_gib;  // 1..16384
  std::optional<int64_t> shm_gib;     // 1..1024, /dev/shm of the worker's container; absent: docs/containers.md

  bool operator==(const WorkerResources&) const = default;
};

// A persistent volume of the job's tenant, mounted into every worker's container (the executor
// keeps it under its volume root, one folder per tenant; created empty on first use).
struct VolumeMount {
  std::string name;   // slug: the tenant's volume
  std::string mount;  // absolute path inside the container, not /, /proc, /sys or /dev
  bool read_only = false;

  bool operator==(const VolumeMount&) const = default;
};

// A secret of the job's project (model/secret.h) its containers receive: as the environment
// variable `env` or as the read-only file `file` (exactly one of the two).
struct JobSecret {
  std::string name;
  std::string env;   // a variable name, not reserved, not also in the job's env
  std::string file;  // a plain absolute path in the container, not under /proc, /sys or /dev

  bool operator==(const JobSecret&) const = default;
};

// An artifact of the job's project (model/artifact.h) mounted read-only as the file `mount` in
// every worker's container, after the node has checked that its SHA-256 is `sha256`.
struct JobArtifact {
  std::string name;
  std::string sha256;  // 64 lowercase hex (given in either case)
  std::string mount;   // a plain absolute path in the container, not under /proc, /sys or /dev

  bool operator==(const JobArtifact&) const = default;
};

struct JobConstraints {
  std::vector<std::string> gpu_models;  // catalog ids or aliases, any of them; empty: any model
  std::optional<FormFactor> form_factor;
  std::optional<int64_t> min_gpu_memory_gib;  // 1..1024 per GPU
  RdmaRequirement rdma = RdmaRequirement::kNone;
  PlacementRule placement = PlacementRule::kAny;
  // Nodes the job may run on (ids or names; the API stores ids), any of them; empty: any node.
  // An instance's start pins its job to its last host this way (docs/resources/instances.md).
  std::vector<std::string> nodes;
  // Where it may run and who may sell it (docs/scheduler.md#terms): regions (kRegionPattern) and
  // suppliers (ids or names; the API stores ids), any of them; empty: any.
  std::vector<std::string> regions;
  std::vector<std::string> suppliers;
  bool span_sites = false;  // a gang may span sites (else all its workers run on one site)

  bool operator==(const JobConstraints&) const = default;
};

// An inference job that is a model endpoint billed by its use instead of its GPU time: per token
// served (the job's usage reports of input and output tokens) or per provisioned query per second,
// at the prices of `model` among its offer's served_models. An offer that does not price the model
// so bills the job's GPU time as usual (docs/billing.md).
enum class EndpointBilling { kToken, kQps, kRequest };
inline constexpr EnumEntry<EndpointBilling> kEndpointBillingNames[] = {
    {EndpointBilling::kToken, "token"}, {EndpointBilling::kQps, "qps"}, {EndpointBilling::kRequest, "request"}};
struct JobEndpoint {
  std::string model;                          // 1-128 of [A-Za-z0-9._/:-]
  EndpointBilling per = EndpointBilling::kToken;
  std::optional<int64_t> qps;                 // per qps: provisioned queries per second, 1..100000

  bool operator==(const JobEndpoint&) const = default;
};

struct JobBilling {
  BillingMode mode = BillingMode::kOnDemand;
  std::optional<Money> max_price_per_gpu_hour;  // tenant's currency; not for reserved
  // The offer it runs under (id, or name when unique; the API stores the id); absent: the
  // scheduler chooses. Naming one in another currency is how a tenant is billed in it.
  std::optional<std::string> offer;
  std::optional<JobEndpoint> endpoint;          // inference jobs, on-demand mode only

  bool operator==(const JobBilling&) const = default;
};

// How the executor learns that a run is ready to serve (offers that bill from `ready`): a health
// check run in each worker's container every interval until it first exits 0, or the workload's
// own heartbeat (it creates the file named by $GPURENT_READY_FILE). Exactly one of the two. A run
// of a job without readiness is ready when it starts running.
inline constexpr int64_t kMaxReadinessIntervalSeconds = 300;
struct JobReadiness {
  std::vector<std::string> command;  // argv run in the container (podman exec), as the job's user
  bool heartbeat = false;
  int64_t interval_seconds = 5;  // 1..kMaxReadinessIntervalSeconds

  bool operator==(const JobReadiness&) const = default;
};

// Inference only: the serving replica range; each replica is one gang of `workers`.
struct Replicas {
  int64_t min = 1;  // 1..1000
  int64_t max = 1;  // min..1000

  bool operator==(const Replicas&) const = default;
};

struct Job {
  std::string name;     // slug, unique within the project
  std::string project;  // reference as given: project id or name
  JobKind kind = JobKind::kTraining;
  int64_t workers = 1;                // gang size, 1..1024
  int64_t gpus_per_worker = 0;        // whole GPUs, 0..16; 0 when gpu_milli is set or CPU-only
  std::optional<int64_t> gpu_milli;   // 1..999 thousandths of one GPU (inference, debug)
  WorkerResources resources;
  JobConstraints constraints;
  PriorityClass priority_class = PriorityClass::kNormal;
  JobBilling billing;
  std::optional<std::string> image;   // OCI reference; absent: the node's default environment
  std::vector<std::string> command;   // argv; empty: the image's entrypoint
  std::map<std::string, std::string> env;
  std::optional<int64_t> expected_duration_seconds;  // 1..31 days; a hint for backfill and quotes
  std::optional<int64_t> time_limit_seconds;  // 1 s..31 days; the executor stops the job after it
  std::optional<std::string> workdir;         // absolute path on the node; absent: the executor's default
  // How many times a run whose worker was killed from outside (SIGKILL or SIGBUS: an operator, the
  // host's OOM killer, a machine check) is requeued instead of failing the job, 0..kMaxFaultRetries.
  // Runs that fail otherwise (an exit code, a reported OOM kill, a cancel, a time limit) never are.
  int64_t fault_retries = 0;
  std::vector<VolumeMount> volumes;           // at most kMaxVolumes, distinct names and mounts
  std::vector<JobSecret> secrets;             // at most kMaxJobSecrets, distinct env names and files
  std::vector<JobArtifact> artifacts;         // at most kMaxJobArtifacts, distinct mounts
  std::optional<Replicas> replicas;   // present iff kind == inference
  std::optional<JobReadiness> readiness;  // absent: ready when running
  Labels labels;

  // Set by the server (from the resolved project, or the stored record's columns and status);
  // parse ignores these keys.
  std::string tenant_id;
  std::string project_id;
  JobStatus status;

  // GPU demand of one worker in milli-GPUs (gpus_per_worker × 1000, or gpu_milli).
  int64_t gpu_milli_per_worker() const { return gpu_milli ? *gpu_milli : gpus_per_worker * 1000; }
  // A CPU-only job asks for no GPU at all.
  bool cpu_only() const { return !gpu_milli && gpus_per_worker == 0; }

  bool operator==(const Job&) const = default;
};

// `currency` is the owning tenant's (billing.max_price_per_gpu_hour is stated in it). Checks every
// field and the cross-field rules of docs/resources/jobs.md; GPU model names are checked against
// the catalog by the server, not here.
Result<Job> parse_job(const json& body, Currency currency);

// The status of a stored job (the "status" key, job_state.h's codec), for the writers of job
// states, which read and replace only it; absent: a job stored before it ran (pending). An
// unreadable one is an error naming "status…".
Result<JobStatus> stored_job_status(const json& job_body);
void set_stored_job_status(json& job_body, const JobStatus& status);
// The volumes a stored job mounts (the "volumes" key), for checks that need no currency.
Result<std::vector<VolumeMount>> stored_job_volumes(const json& job_body);
json to_json(const Job& j);                 // includes "status" and the server-set ids when set
IndexCols index_of(const Job& j);           // name, tenant_id, project_id, state, gpu_model

}  // namespace gpurent
