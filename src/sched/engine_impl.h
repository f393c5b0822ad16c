// Private state of SchedEngine (engine.h), shared by engine*.cc. Not a public header.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sched/engine.h"
#include "sched/max_tree.h"
#include "sched/state_memo.h"

namespace gpurent {

struct EngineNode {
  SchedNode spec;
  std::vector<int> gpu_domain;  // per GPU: domain id or -1
  // Per GPU, its shares (pods of less than a whole GPU): whose they are — a tenant id
  // (Impl::tenant_slot), -1 none, kMixedTenants when restored runs of several share it — and how
  // many. A GPU's shares are one tenant's: its containers see the whole device.
  std::vector<int> share_tenant;
  std::vector<int> share_count;
  bool down = false;
  bool cordoned = false;
  int site = -1;                // place id (supplier/site, and RDMA fabric when known); a gang stays on one by default
  int supplier = -1;            // supplier id (supplier_ids); -1 when the node names none
  std::vector<int> offers;      // offer slots that sell it
};

// An offer slot: set_offer fills it; a node may name an offer before it is known (unusable until then).
struct EngineOffer {
  SchedOffer spec;
  bool known = false;
};

inline constexpr int kUnpriced = -1;  // offer_on: a node no offer sells, usable without commercial terms
inline constexpr int kNoOffer = -2;   // offer_on: the job may use no offer of the node

// What binds the workers of one gang together beyond its placement rule: one offer (the job's,
// once it runs) and, unless the job spans sites, one site. Unset fields are fixed by the first worker.
struct GangLock {
  bool offer_set = false;
  int offer = kUnpriced;
  bool site_set = false;
  int site = -1;
  int supplier = -1;  // >= 0: only nodes of this supplier (a procurement split's steering)
};

// EngineNode::share_tenant of a GPU whose restored shares are several tenants' (none joins them).
inline constexpr int kMixedTenants = -2;

// One worker bound on one node.
struct Bound {
  int node = 0;
  AllocPod pod;
  std::vector<int> gpus;
  int tenant = -1;  // the job's tenant (Impl::tenant_slot): a GPU's shares are one tenant's
};

// One replica (gang) of a job, bound.
struct Gang {
  int64_t replica = 0;
  std::vector<Bound> workers;
  TimeMs started_at = 0;
  std::string borrowed_from;            // tenant whose reserved node it uses; "" none
  std::optional<TimeMs> reclaim_at;     // spot notice running: preempted at this time
  std::string reclaim_for;              // the job that reclaims it
  bool quota_lent = false;              // runs on quota lent by sibling projects (reclaimable)
  int offer = kUnpriced;                // the offer it runs under
};

// Admission result: the models a job may use now (quota allows), in preference order.
struct Admission {
  std::vector<int> models;  // model ids; {-1} for a CPU-only job
  Message reason;           // set when models is empty
  std::vector<int> borrow;  // models on which the tenant's idle quota could cover it (lending)
};

struct Usage;

struct EngineJob {
  SchedJob spec;
  uint64_t seq = 0;
  // Looked up once at submission (the pass reads them for every pending job): its project's and
  // its tenant's usage (entries are never erased), its priority's rank and its tenant's weight.
  Usage* project_usage = nullptr;
  Usage* tenant_usage = nullptr;
  mutable const SchedProject* project = nullptr;  // its project, once known (admit)
  int rank = 0;
  int64_t weight = 1;
  bool running = false;
  std::vector<Gang> units;              // sorted by replica
  int offer = kUnpriced;                // the offer its units run under (while running)
  Message reason;
  TimeMs waiting_reclaim_until = 0;     // a spot notice it asked for is running
  Message capacity_reason;              // built on its first failure to fit, again when nodes are added
  uint64_t capacity_reason_nodes = 0;   // the node count capacity_reason was built against
  uint64_t capacity_reason_terms = 0;   // the terms version it was built against
  Message requeued_why;                 // why it lost its placement; prefixes its reasons until it runs
  std::string fail_key;                 // place_or_preempt's failure-cache key without the models (built once)
  std::vector<int> key_models;          // the models key_with_models was built for
  std::string key_with_models;          // fail_key and those models
  uint64_t key_id = 0;                  // key_with_models interned (Impl::key_ids) in generation key_gen
  uint64_t key_gen = 0;
  uint64_t capacity_reason_id = 0;      // unique per value of capacity_reason
  // handle() found it hopeless (fewer GPUs free than it needs) behind a blocked head and left its
  // capacity reason; with its project's usage, the projects and the nodes unchanged it would again.
  struct Frozen {
    uint64_t usage = 0, projects = 0, layout = 0, terms = 0;
    bool usage_matters = true;          // its admission could change with its project's usage
    std::vector<int> models;            // its candidate models then
  };
  std::optional<Frozen> frozen;
  uint64_t reason_src = 0;              // the id of the cached Message its reason was set from (0: none)
};

struct Usage {
  std::map<int, int64_t> milli_by_model;  // project: GPU milli held per model id
  int64_t gpu_milli = 0;
  int64_t cpu_milli = 0;
  int64_t jobs = 0;                       // running jobs
  uint64_t version = 0;                   // projects: bumped on every change (handle()'s fast path)
  std::unordered_map<int, int64_t> milli_by_supplier;  // tenants: GPU milli held per supplier id
  // Projects: its pending jobs in queue order (priority rank, submission, sequence), kept as they
  // come and go so a full pass need not gather and sort them (set_pending). A sorted deque: a
  // pass copies it in a few blocks, jobs mostly arrive at its end and start near its front.
  std::deque<EngineJob*> queue;
  // The quota's GPU limit in milli per model id (Quota::gpu_limit looks up model names), as of
  // limits_version (projects_version) and the model count: a project's own (Impl::limit_milli), a
  // tenant's the sum of its projects' (Impl::tenant_limit_milli).
  std::vector<int64_t> limit_milli;
  uint64_t limits_version = 0;
};

// The first job of a pass that could not start, and what it will take (EASY backfill). Its room is
// counted in worker slots per node, as the cluster will be at its shadow time: a worker of k whole
// GPUs takes k fully free GPUs of one node; a share of g milli takes g of one GPU that no other
// tenant's shares are on. Backfill may take from its nodes no more GPUs than the slots it has to
// spare hold (`extra`), and only where that leaves it its slots node by node.
struct Blocked {
  std::string job;
  TimeMs shadow = 0;      // when enough GPUs are expected to be free for it
  TimeMs estimated_at = 0;  // when the shadow was estimated
  Message delay_reason;   // what a job backfill keeps off its nodes says (built once)
  uint64_t delay_reason_id = 0;
  int32_t share = 0;                         // milli per worker of a share; 0: whole GPUs
  int64_t per_worker = 1;                    // whole GPUs per worker
  int64_t workers = 0;                       // the slots it needs
  int64_t slots = 0;                         // the slots its nodes have at the shadow time
  bool held = false;                         // running jobs with no end hold the rest: nothing may take its nodes
  int64_t extra = 0;                         // GPU milli on its nodes that backfill may still take
  std::vector<char> eligible;                // per node: one of its nodes (models, constraints, CPUs and memory)
  std::vector<std::vector<int32_t>> free;    // per eligible node: free milli per GPU at the shadow time
  std::vector<std::vector<int32_t>> others;  // a share's: other tenants' shares per GPU then

  int64_t slots_on(int node) const;  // the worker slots of an eligible node then
};

struct SchedEngine::Impl {
  SchedConfig cfg;
  std::unique_ptr<ScorePolicy> policy;
  SimRng rng;
  AllocCluster cluster;
  std::vector<EngineNode> nodes;
  std::unordered_map<std::string, int> node_index;
  std::vector<std::string> model_names;          // model id -> catalog id
  std::unordered_map<std::string, int> model_ids;
  std::vector<std::string> domains;              // domain id -> name
  std::unordered_map<std::string, int> domain_ids;
  std::vector<std::vector<std::pair<int, int>>> domain_gpus;  // domain id -> (node, gpu)
  std::map<std::string, EngineJob> jobs;
  std::unordered_set<EngineJob*> pending;   // the jobs not running
  std::unordered_set<EngineJob*> running;   // the others (the victim scans)
  std::unordered_set<Usage*> queued;        // projects whose queue holds some pending job
  // Moves a job into or out of the pending set, its project's queue and the running set.
  void set_pending(EngineJob& j, bool is_pending);
  int64_t inference_jobs = 0;               // scale_up looks only when there are some
  bool notices = false;                     // some gang may be under a spot notice
  uint64_t next_seq = 1;
  std::unordered_map<std::string, SchedProject> projects;  // never erased: EngineJob::project points in
  std::vector<int> all_models;  // 0 .. model_names.size() - 1
  std::unordered_map<std::string, Usage> project_usage;
  std::unordered_map<std::string, Usage> tenant_usage;
  std::unordered_map<std::string, int> tenant_reserved_nodes;  // tenant -> reserved node count
  int64_t total_cpu_milli = 0;

  // Terms of placement (engine_terms.cc).
  std::vector<EngineOffer> offers;
  std::unordered_map<std::string, int> offer_ids;
  std::unordered_map<std::string, int> site_ids;
  bool fabrics = false;           // some node names its RDMA fabric (a gang stays on one)
  bool commercial = false;        // some offer is known: nodes without offers are unpriced
  uint64_t terms_version = 1;     // bumped when offers, their prices or commitments' use change
  std::map<std::pair<std::string, int>, int64_t> reserved_used;  // (tenant, offer) -> reserved-mode GPU milli
  std::unordered_set<std::string> contract_tenants;  // tenants named by some offer's contract_tenants
  std::unordered_map<std::string, int> supplier_ids;  // supplier name -> id
  std::vector<std::string> supplier_names;            // id -> name
  int supplier_slot(const std::string& name);
  std::unordered_map<std::string, int> tenant_ids;  // tenant -> small id, for EngineNode::share_tenant
  int tenant_slot(const std::string& tenant);
  // Procurement splits: tenant -> (supplier id, target per mille), by supplier name.
  std::unordered_map<std::string, std::vector<std::pair<int, int64_t>>> splits;
  // The suppliers a job of a tenant with a split tries first: those owed something (their target
  // share of what the tenant will hold with the job, less what it holds there now), most first.
  std::vector<int> split_order(const SchedJob& j) const;
  int offer_slot(const std::string& id);
  // Whether the offer the job would run under on the node is one of its tenant's contracts.
  bool under_contract(const SchedJob& j, int node) const;
  // Location terms (suppliers, regions, sovereignty) on a node.
  bool location_ok(const SchedJob& j, int node) const;
  // Whether the job may run under the offer (contract-only, named offers, currency, reserved
  // commitments, price cap), with `need` GPU milli more of it.
  bool offer_ok(const SchedJob& j, int offer, int64_t need) const;
  int64_t price_of(const SchedJob& j, int offer) const;  // per GPU-hour in the job's mode
  // The offer a job runs under on the node: `fixed` when set (kNoOffer unless usable there),
  // else the best it may use (its tenant's contracts first, then the cheapest); kUnpriced on a
  // node no offer sells when the job states no commercial terms; kNoOffer when it may use none.
  int offer_on(const SchedJob& j, int node, std::optional<int> fixed = std::nullopt) const;
  // Location and some offer (or unpriced). Inline, with the trace's case first: it runs for every
  // node a placement scans.
  bool terms_ok(const SchedJob& j, int node) const {
    if (!commercial && !j.reserved && !j.terms.any()) return true;  // traces, the simulator
    return terms_ok_slow(j, node);
  }
  bool terms_ok_slow(const SchedJob& j, int node) const;
  bool lock_ok(const SchedJob& j, const GangLock& lock, int node) const {
    if (lock.site_set && nodes[node].site != lock.site) return false;
    if (lock.supplier >= 0 && nodes[node].supplier != lock.supplier) return false;
    return !lock.offer_set || !commercial || offer_on(j, node, lock.offer) != kNoOffer;
  }
  void lock_to(const SchedJob& j, GangLock& lock, int node) const;
  // Why no node matching the job's hardware constraints passes its terms; empty when one does.
  Message terms_block(const SchedJob& j, const std::vector<int>& models) const;
  std::string terms_key(const SchedJob& j) const;  // for the failed-shape cache

  // Score cache: per node, per pod shape, the score at a node version.
  static constexpr size_t kMaxShapes = size_t{1} << 13;  // shape_id starts again past it
  std::map<std::tuple<int64_t, int32_t, int32_t>, int> shapes;
  std::vector<std::vector<std::pair<uint32_t, int16_t>>> score_cache;
  std::vector<uint32_t> node_version;
  StateMemo state_scores;  // by pod shape and node state (score())
  std::string state_key;
  std::vector<int> feasible;
  std::vector<int64_t> free_by_model;  // free GPU milli per model id, on every node (an upper bound)
  std::vector<int64_t> milli_by_model;  // GPU milli per model id on every node, up or down
  // Whether the job's admission reads its project's usage: a concurrent-job limit, or a GPU quota
  // for one of its models that the project could reach (below all of that model's GPUs plus the job).
  bool admission_reads_usage(const EngineJob& j) const;
  // What running allocations could be preempted at all (scanned at the start of a pass, updated on
  // admissions), so a job that cannot preempt anything skips the victim search.
  struct VictimSummary {
    int max_rank = -1;
    bool spot = false, borrowed = false, extra = false;
  } victims;
  void note_victim(const EngineJob& j, const Gang& u);
  bool could_preempt(const EngineJob& j) const;
  size_t submissions_since_prepare = 0;
  bool prepared = false;
  // cfg.defer_slow_prepare: the policy's slow work not yet taken, and the workload it prepares.
  std::function<int()> policy_task;
  std::vector<AllocPod> planned_workload;
  bool awaiting_choice = false;  // a task was handed out and its choice not adopted yet

  // Capacity epoch: bumped whenever something may let a waiting job start (resources freed, a node
  // back, a quota or reservation changed). A pass with an unchanged epoch looks only at jobs
  // submitted since the last pass: every older pending job failed against at least this much room.
  uint64_t epoch = 1;
  uint64_t passed_epoch = 0;
  std::vector<std::string> fresh;  // submitted since the last pass
  std::optional<Blocked> blocked;  // from the last full pass, kept by incremental ones
  struct LastDelay {               // the last backfill delay reason built, and its identity
    std::string job;
    TimeMs shadow = 0;
    bool until = false;
    Message reason;
    uint64_t id = 0;
  } last_delay;
  // Failure keys (EngineJob::key_with_models) as small numbers, so the caches below compare numbers;
  // dropped with both caches when large (generation key_generation).
  std::unordered_map<std::string, uint64_t> key_ids;
  uint64_t key_generation = 1;
  std::unordered_set<uint64_t> failed;  // shapes of jobs that found no room (since the last full pass)
  // Failure keys of jobs backfill refused after placing them, with changes() at the refusal (this pass).
  std::unordered_map<uint64_t, uint64_t> backfill_refused;
  uint64_t changes() const { return change_base[0] + change_log[0].size(); }  // binds and releases so far
  std::vector<std::string> claimants;  // jobs whose spot notice ended this pass
  TimeMs now = 0;                  // of the current call

  // Placement indexes (engine_index.cc; docs/scheduler.md#speed). A decision reads the best node
  // of a filter from a max tree over the nodes that pass it, instead of scanning every node; the
  // trees catch up from the log of nodes whose allocation changed (bind/unbind) since they last
  // looked, and are dropped when anything else a filter reads changes (layout_version: nodes added,
  // down, cordoned, reserved, re-scored; terms_version: offers, prices, commitments' use).
  // A job with the same index_key passes the same filter on every node and has the same pod there.
  // The nodes passing a filter, by the filter's key without the pod's shape: indexes of jobs that
  // differ only in their pods' shape share them.
  struct FilterNodes {
    std::vector<int> members;    // node indices passing the filter, ascending
    std::vector<int> leaf_of;    // per position in the model's node list: leaf or -1
  };
  struct PlaceIndex {
    const FilterNodes* nodes = nullptr;  // in `filters` (dropped together with the indexes)
    MaxTree tree;                // (score, position), kNone where the pod does not fit now
    uint64_t cursor = 0;         // absolute position in its model's change log
  };
  std::unordered_map<std::string, PlaceIndex, ShortKeyHash> indexes;
  std::string index_lookup;                     // best_indexed's key, its buffer kept
  std::unordered_map<std::string, FilterNodes, ShortKeyHash> filters;
  std::string filter_lookup;
  std::vector<std::vector<int>> model_nodes;    // model id + 1 -> node indices (0: every node)
  std::vector<int> model_pos;                   // node -> position in its model's list
  std::vector<std::vector<int>> change_log;     // model id + 1 -> nodes whose allocation changed (~node: freed)
  std::vector<uint64_t> change_base;            // absolute position of change_log[k][0]
  uint64_t layout_version = 1;
  uint64_t indexed_layout = 0, indexed_terms = 0;
  size_t index_cells = 0;                       // leaves held by every index (a memory bound)
  bool indexed = true;                          // the policy scores nodes (Random picks: scan)
  static bool policy_scores(ScorePolicy& policy);
  // Logs a node whose allocation changed; `freed`: room was released there (an unbind), which
  // may make a pod fit that did not (a bind never does).
  void note_change(int node, bool freed = false);
  // The best node (highest score, lowest index) of the filter for the job's next worker; -1 none.
  int best_indexed(const SchedJob& j, const std::string& job_key, int model, int phase, bool contract_pass,
                   const GangLock& lock);
  // The job's part of a filter's key: first the pod's shape (kShapeKeyBytes), then what the
  // filter reads.
  std::string index_key(const SchedJob& j) const;
  static constexpr size_t kShapeKeyBytes = 6 * sizeof(int64_t);
  std::unordered_map<std::string, Message> reason_cache;  // capacity reasons by reason_key
  uint64_t next_reason_id = 1;
  uint64_t projects_version = 1;  // bumped by set_project
  // p's GPU quota on model m in milli, read through `u` (p's usage) when given.
  int64_t limit_milli(const SchedProject& p, Usage* u, int m) const;
  // The sum of tenant t's projects' GPU quotas on model m in milli, read through `u` (t's usage).
  int64_t tenant_limit_milli(const std::string& t, Usage& u, int m) const;
  uint64_t reason_layout = 0, reason_terms = 0;
  std::string reason_key(const SchedJob& j) const;  // what capacity_reason reads of a job

  // engine_place.cc
  AllocPod pod_for(const SchedJob& j, int node) const;
  // Whether pod_for(j, node) is the same on every node (the job states its CPUs and memory, or
  // asks for no GPU).
  static bool pod_is_fixed(const SchedJob& j);
  bool node_ok(const SchedJob& j, int node, int model, int phase) const;
  // The job's hard constraints on a node (model, form factor, GPU memory, RDMA), whatever its state.
  bool node_matches(const SchedJob& j, int node, int model) const;
  // How many of the job's workers the node's CPUs and memory hold when nothing else runs there,
  // counting only what the job states (0: a worker asks for more than the node has, so it can
  // never run there; INT64_MAX: it states neither).
  int64_t workers_by_cpu_memory(const SchedJob& j, int node) const;
  // The same without the terms of placement (suppliers, regions, sovereignty, offers, prices).
  bool node_matches_hardware(const SchedJob& j, int node, int model) const;
  // Whether the job may use the node at all (SchedJob::nodes).
  bool pinned_ok(const SchedJob& j, int node) const;
  // Whether the pod fits on the node now (in NVLink domain `domain` when >= 0); a pod of less than
  // a whole GPU only on GPUs no other tenant than `tenant` has shares on (-1: any).
  bool fits(int node, const AllocPod& pod, int domain, int tenant = -1) const;
  // Whether GPU g of the node may take (part of) the pod for `tenant` (-1: any): room, and for less
  // than a whole GPU no other tenant's shares there.
  bool gpu_ok(int node, int g, const AllocPod& pod, int tenant) const;
  int score(int node, const AllocPod& pod) { return score_shape(node, shape_id(pod), pod); }
  int shape_id(const AllocPod& pod);  // the pod's (cpu_milli, num_gpu, gpu_milli) as a small number
  int score_shape(int node, int shape, const AllocPod& pod);
  std::vector<int> choose_gpus(int node, const AllocPod& pod, int domain, int tenant = -1);
  void bind(Bound& b);
  void unbind(const Bound& b);
  // `offer`: under this offer only (the other replicas' of a job being placed).
  std::optional<Gang> place_replica(const EngineJob& j, int64_t replica, const std::vector<int>& models,
                                    std::optional<int> offer = std::nullopt);
  std::optional<std::vector<Gang>> place_replicas(const EngineJob& j, const std::vector<int64_t>& replicas,
                                                  const std::vector<int>& models);
  void release(const Gang& u);
  void maybe_prepare();

  // engine_admit.cc
  Admission admit(const EngineJob& j, int64_t replicas) const;
  Message capacity_reason(const EngineJob& j) const;
  std::string display(int model) const;
  void account(const EngineJob& j, const Gang& u, int sign);
  void start_job(EngineJob& j, std::vector<Gang> units, std::vector<SchedEvent>& out);
  void set_reason(EngineJob& j, const Message& reason, std::vector<SchedEvent>& out);
  std::optional<Blocked> shadow_for(const EngineJob& j, const std::vector<int>& models) const;
  bool backfill_ok(const EngineJob& j, const std::vector<Gang>& units);
  // Whether a job's time limit ends it before the blocked job's start (a stated duration does not count).
  bool ends_before_shadow(const SchedJob& s) const;

  // engine_preempt.cc
  bool try_preempt(EngineJob& j, const std::vector<int>& models, std::vector<SchedEvent>& out);
  void evict(EngineJob& victim, size_t unit_index, const Message& reason, std::vector<SchedEvent>& out);
  void reclaim_due(std::vector<SchedEvent>& out);
  // A unit under a spot notice went away early: its claimant stops waiting and is looked at again.
  void free_claimant(const Gang& u);

  // engine_pass.cc
  // All pending jobs, or only those listed (an incremental pass).
  void run_queue(std::vector<SchedEvent>& out, const std::vector<std::string>* only);
  // Whether a full pass would handle `a` before `b`: priority class, then the tenant's weighted
  // dominant share, the project's share, submission time and sequence (run_queue's order).
  bool ordered_before(const EngineJob& a, const EngineJob& b) const;
  void handle(EngineJob& j, std::vector<SchedEvent>& out);
  bool still_frozen(const EngineJob& j) const;
  // set_reason from a Message remembered under `id`: nothing to compare when the job says it already.
  void set_reason_from(EngineJob& j, const Message& why, uint64_t id, std::vector<SchedEvent>& out);
  bool place_or_preempt(EngineJob& j, const Admission& adm, std::vector<SchedEvent>& out);
  std::string failure_key(const SchedJob& j) const;  // what decides whether alike jobs fail alike
  bool borrow_quota(EngineJob& j, const Admission& adm, std::vector<SchedEvent>& out);
  // After `owner` started within its own quota: preempts lent gangs of its tenant until the tenant
  // holds no more than the sum of its projects' quotas.
  void return_lent_quota(const EngineJob& owner, std::vector<SchedEvent>& out);
  void scale_up(std::vector<SchedEvent>& out);
};

int priority_rank(PriorityClass p);
std::string format_gpus(int64_t milli);

}  // namespace gpurent
