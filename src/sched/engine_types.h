// Inputs and outputs of the live scheduling engine (engine.h): the node and job shapes it
// schedules, the project quotas and tenant weights it enforces, the policy knobs it reads, and the
// events it returns. The engine keeps no strings of its own beyond these; the server and the
// simulator translate stored documents and trace rows into them. Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/message.h"
#include "model/enums_supply.h"
#include "model/job.h"
#include "model/project.h"

namespace gpurent {

// RDMA fabrics a node offers (bit set).
inline constexpr uint8_t kRdmaIb = 1;
inline constexpr uint8_t kRdmaRoce = 2;

// An offer that sells nodes, as placement weighs it (docs/scheduler.md#terms): who may buy under it
// and at what price per GPU-hour now. Prices are micro-units of `currency`.
struct SchedOffer {
  std::string id;
  std::string name;                       // what reasons call it
  std::string currency;                   // ISO 4217
  int64_t on_demand = 0;                  // per GPU-hour
  std::optional<int64_t> spot;            // the spot price in force now; absent: on_demand
  bool contract_only = false;             // sold only to tenants with a contract naming it
  std::vector<std::string> contract_tenants;  // tenants whose contract in force names it
  // Reserved commitments on it in force now: tenant -> committed GPU milli; and the tenants whose
  // contract says reserved work beyond them waits (else it overflows, billed at on-demand).
  std::map<std::string, int64_t> committed_milli;
  std::vector<std::string> overflow_waits;

  bool operator==(const SchedOffer&) const = default;
};

struct SchedNode {
  std::string id;
  std::string name;                       // what reasons call it ("node h100-01 failed"); "" for the id
  std::string gpu_model;                  // catalog id; "" for a CPU-only node
  FormFactor form_factor = FormFactor::kPcie;
  int64_t gpu_memory_gib = 0;             // per GPU
  uint8_t rdma = 0;                       // kRdmaIb | kRdmaRoce
  int64_t cpu_cores = 0;
  int64_t memory_gib = 0;
  std::vector<std::string> gpu_domains;   // per GPU (index order): NVLink domain, "" for PCIe only
  std::string reserved_for;               // tenant id holding this node as reserved capacity; "" none
  // Where it is and who sells it (terms of placement): "" when unknown (traces, the simulator).
  std::string supplier;                   // supplier id
  std::string site;                       // supplier-scoped: a gang stays on one site by default
  std::string fabric;                     // its RDMA fabric within the site ("" none known): a gang stays on one
  std::string region;
  std::string country;                    // ISO 3166-1 alpha-2 of its site
  std::vector<std::string> offers;        // ids of the offers (set_offer) that sell it
};

// What the tenant signed and asked for, as placement applies it (docs/scheduler.md#terms).
// Every list empty and no cap: any node, any offer in `currency` (or unpriced nodes).
struct SchedTerms {
  std::vector<std::string> regions;    // the job's constraints.regions
  std::vector<std::string> suppliers;  // supplier ids (constraints.suppliers)
  std::vector<std::string> offers;     // offer ids (billing.offer): only these; any currency
  // Data sovereignty: regions or ISO countries the work may run in (its tenant's contracts); empty: anywhere.
  std::vector<std::string> places;
  std::string currency;                // the tenant's: offers in another only when named; "" any
  std::optional<int64_t> max_price;    // micro-units of `currency` per GPU-hour (in the job's mode)
  bool span_sites = false;             // a gang may span sites (constraints.span_sites)

  bool any() const {
    return !regions.empty() || !suppliers.empty() || !offers.empty() || !places.empty() || max_price;
  }
};

// One job as the engine sees it. Inference jobs run `replicas` gangs; every other kind one.
struct SchedJob {
  std::string id;
  std::string tenant;
  std::string project;
  JobKind kind = JobKind::kTraining;
  PriorityClass priority = PriorityClass::kNormal;
  int64_t workers = 1;
  int64_t gpus_per_worker = 0;            // whole GPUs per worker
  std::optional<int64_t> gpu_milli;       // a share of one GPU per worker (1..999)
  std::optional<int64_t> cpu_cores;       // per worker; absent: the node's share for its GPUs
  std::optional<int64_t> memory_gib;      // per worker; absent: likewise
  std::optional<int64_t> cpu_milli;       // finer than cpu_cores (traces); wins when set
  std::optional<int64_t> memory_mib;      // finer than memory_gib (traces); wins when set
  std::vector<std::string> gpu_models;    // allowed catalog ids in preference order; empty: any
  std::optional<FormFactor> form_factor;
  std::optional<int64_t> min_gpu_memory_gib;
  RdmaRequirement rdma = RdmaRequirement::kNone;
  PlacementRule placement = PlacementRule::kAny;
  std::vector<std::string> nodes;         // node ids it may run on; empty: any
  bool spot = false;                      // billed as spot: reclaimable after the notice period
  bool reserved = false;                  // billed as reserved: runs inside its tenant's commitments
  SchedTerms terms;
  int64_t replicas_min = 1;               // inference: min..max replicas; others 1..1
  int64_t replicas_max = 1;
  std::optional<int64_t> expected_duration_ms;  // a hint: estimates when it ends
  // The executor stops it this long after it began running. Only this bound lets backfill start
  // a job ahead of a blocked one (a stated duration is a hint, and a hint can be gamed).
  std::optional<int64_t> time_limit_ms;
  TimeMs submitted_at = 0;

  int64_t milli_per_worker() const { return gpu_milli ? *gpu_milli : gpus_per_worker * 1000; }
  int64_t milli_per_replica() const { return workers * milli_per_worker(); }
};

struct SchedProject {
  std::string id;
  std::string name;     // for reasons ("quota: project vision uses ...")
  std::string tenant;
  Quota quota;
  // Non-empty: the project's jobs are not admitted (a budget hold by the cost firewall); the
  // message is their pending reason. Running jobs keep running.
  Message hold;
};

// What the default policy does; every knob is named in docs/scheduler.md.
struct SchedConfig {
  std::string score_policy = "fgd";    // placement scoring (score_policy.h)
  bool preemption = true;
  bool protect_inference_min = true;   // inference replicas up to min are never preempted
  // Inference replicas above min rank as this class when victims are chosen (training outranks them).
  PriorityClass inference_extra_rank = PriorityClass::kLow;
  int64_t spot_notice_ms = 30'000;     // a reclaimed spot allocation keeps running this long
  bool backfill = true;                // EASY backfill behind the first blocked job of a pass
  // A project at its GPU quota may borrow the idle quota of its tenant's other projects; what it
  // borrows is preempted as soon as one of those projects needs its quota back. Only with
  // preemption: without it nothing lent could be taken back, so nothing is lent.
  bool quota_lending = true;
  std::map<std::string, int64_t> tenant_weights;  // fair-share weight per tenant; default 1
  std::map<std::string, std::string> model_names; // catalog id -> display name for reasons
  uint64_t seed = 1;                   // for the random policy
  // A policy's slow preparation (fgdauto's rehearsal) is not run inside schedule(): the engine
  // scores with the policy's interim and hands the work out (SchedEngine::take_policy_task) for
  // the caller to run elsewhere. The server sets it; offline runs keep the synchronous prepare.
  bool defer_slow_prepare = false;
  // How much later than its placement a job's time limit may end it: the executor counts the limit
  // from when the job runs (after a cold start; Slurm in whole minutes). Backfill adds it to a
  // limit before trusting it. The server sets its cold start plus a minute; a replay, whose jobs
  // start when placed and end on time, keeps 0.
  int64_t limit_slack_ms = 0;
};

struct SchedWorker {
  int64_t replica = 0;
  int64_t worker = 0;
  std::string node;
  std::vector<int64_t> gpus;
  int64_t gpu_milli = 0;        // share of gpus[0] for a fractional job; else 0
  std::string nvlink_domain;    // the domain of its GPUs when they share one; else ""
  std::string offer;            // the offer the job runs under (every worker alike); "" unpriced
};

enum class SchedEventKind {
  kAdmitted,        // the job's first (min) replicas are placed: job pending -> admitted
  kReplicaAdded,    // an inference job gained a replica above min
  kReplicaRemoved,  // an inference job lost a replica (preempted or its node failed) but keeps running
  kPreempted,       // the job lost its allocation and is pending again (reason says why)
  kNotice,          // a spot allocation will be reclaimed at `at`
  kPending,         // a pending job's reason changed
  kFault,           // a node failure hit the job (recorded for billing and SLA)
};
const char* sched_event_kind_name(SchedEventKind k);

struct SchedEvent {
  SchedEventKind kind = SchedEventKind::kPending;
  std::string job;
  Message reason;
  TimeMs at = 0;
  std::string node;                   // kFault: the failed node
  std::vector<SchedWorker> placement; // kAdmitted / kReplicaAdded: the workers placed
  int64_t replica = -1;               // kReplicaAdded / kReplicaRemoved
};

}  // namespace gpurent
