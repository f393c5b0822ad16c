// What the rating engine rates: one contract's world over a period — the offers it binds, the
// tenant's reserved commitments, allocations (who held how many GPUs of which offer, when), usage
// (utilization samples, storage I/O, egress, tokens, provisioned QPS, images kept), spot market prices, and the
// measurements SLA clauses turn into credits (card benchmarks, NCCL bandwidth, incidents, exit).
// Built by the scenario reader (billing/scenario.h) and by the server from its store; the engine
// (billing/rating.h) never does I/O. Times are ms since the epoch (UTC); money is exact.
// Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/money.h"
#include "model/contract.h"
#include "model/job.h"
#include "model/offer.h"

namespace gpurent {

// A share of the allocation's GPUs on one node (for SLA credits: benchmarks are per card, NCCL
// bandwidth and outages per node).
struct PlacementPart {
  std::string node;
  std::vector<int64_t> gpus;  // GPU indices on the node (one entry for a milli-GPU share)
};

// One maximum-over-the-allocation's-GPUs utilization reading; it holds until the next sample or
// the allocation's end.
struct UtilSample {
  TimeMs at = 0;
  int64_t utilization_pct = 0;  // 0..100
};

// One run of a job on GPUs of one offer (a requeued job has several).
struct Allocation {
  std::string id;
  std::string project;
  std::string job;
  std::string offer;  // offer name within the contract
  BillingMode mode = BillingMode::kOnDemand;
  int64_t gpu_milli = 1000;  // GPUs × 1000, or a milli-GPU share; 0: CPU-only (cpu_cores, memory_gib)
  int64_t cpu_cores = 0;     // CPU-only: billed per core-hour at the offer's cpu_core_hour
  int64_t memory_gib = 0;    // CPU-only: billed per GiB-hour at its memory_gib_hour
  bool by_use = false;       // a model endpoint billed per token or QPS (tokens, qps): no GPU time
  std::vector<PlacementPart> placement;
  TimeMs requested_at = 0;            // capacity committed to the run: a job's placement (billing_starts: api_call)
  std::optional<TimeMs> running_at;   // the container started (billing_starts: running)
  std::optional<TimeMs> ready_at;     // passed its health check (billing_starts: ready)
  std::optional<TimeMs> ended_at;     // absent: still running at the end of the period
  std::vector<UtilSample> utilization;  // sorted by time; empty: never idle
};

// Reserved capacity the tenant committed to, billed whether used or not.
struct Commitment {
  std::string id;
  std::string offer;
  int64_t gpus = 1;
  int64_t term_months = 1;  // 1, 12 or 36: the offer's reserved_<term>m price
  TimeMs start = 0;
  TimeMs end = 0;           // start + term_months calendar months (computed)
  bool prepaid = false;     // the whole term is charged up front on the invoice holding `start`
  // A market commitment (a settled trade): the trade price instead of the offer's reserved price
  // (term_months 0, `end` the delivery window's end), and the capacity its supplier did not deliver.
  std::optional<int64_t> price;  // micro-units per GPU-hour
  std::string trade;
  std::vector<CommitmentDefault> defaults;
  std::vector<CommitmentResale> resales;
};

// Storage I/O and egress of an allocation over the interval ending at `at` (deltas).
struct VolumeUsage {
  TimeMs at = 0;
  std::string allocation;
  int64_t storage_io_bytes = 0;
  int64_t egress_bytes = 0;
};

// Storage I/O and egress of the same tenant on offer `offer` that another rating input bills (the
// tenant's runs on that offer under a contract and at list prices are rated apart): they use the
// offer's monthly free allowance in time order with this input's own records — first come, first
// served, across both — and are billed there, not here.
struct VolumeElsewhere {
  TimeMs at = 0;
  std::string allocation;  // its id in the other input (orders records at the same instant)
  std::string offer;
  int64_t storage_io_bytes = 0;
  int64_t egress_bytes = 0;
};

// Tokens served by one of the offer's served models (per-token billing).
struct TokenUsage {
  TimeMs at = 0;
  std::string project;
  std::string offer;
  std::string model;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  int64_t requests = 0;  // at the model's per_million_requests
};

// Provisioned queries per second of a served model over [from, to) (per-QPS-month billing).
struct QpsProvision {
  std::string project;
  std::string offer;
  std::string model;
  int64_t qps = 1;
  TimeMs from = 0;
  TimeMs to = 0;
};

// A tenant's own image kept on the offer's nodes over [from, to) (to absent: still kept at the
// period's end): billed per GB-month under the offer's image_storage fee.
struct StoredImage {
  std::string id;     // the image's id: one line per image, offer and calendar month
  std::string image;  // its name, for the line's description
  std::string offer;
  int64_t bytes = 0;
  TimeMs from = 0;
  std::optional<TimeMs> to;
  // Kept under another section of the tenant's invoice (another contract, or list prices) on the
  // same offer: it takes its share of the offer's free_gb here, which is the tenant's, but is
  // billed there (services/invoices.cc share_kept_allowances).
  bool elsewhere = false;
};

// The spot market price of an offer from `from` until the next entry.
struct SpotPrice {
  TimeMs from = 0;
  Money price;
};

// A benchmark of one card: dense FP16 TFLOPS × 10; holds from `at` until the card's next one.
struct TflopsMeasurement {
  TimeMs at = 0;
  std::string node;
  int64_t gpu = 0;
  int64_t fp16_tflops_x10 = 0;
  std::string id;  // the measurement's id, named by the credit lines it leads to ("" in a scenario without one)
};

// NCCL all-reduce bus bandwidth measured on a node over [from, to).
struct NcclMeasurement {
  std::string node;
  TimeMs from = 0;
  TimeMs to = 0;
  int64_t busbw_gbps = 0;
  std::string id;  // as TflopsMeasurement::id
};

// An outage or fault: a node (every allocation on it) or one allocation interrupted over [from, to).
struct Incident {
  std::string id;
  TimeMs from = 0;
  TimeMs to = 0;
  std::string node;        // one of node / allocation is set
  std::string allocation;
  std::string reason;
};

struct ContractTerms {
  std::string name;
  std::string tenant;
  std::string supplier;
  Currency currency = Currency::kUSD;
  ContractTemplate clauses;  // from the offer template, overridden per contract
  int64_t nccl_compensation_pct = 200;  // hours below the NCCL floor are credited at this % of their fee
  PerformanceRemedy performance_remedy = PerformanceRemedy::kProportional;
  bool cap_credits = true;  // SLA credits never exceed the period's charges
  std::optional<TimeMs> exit_notice_at;  // the tenant gave notice...
  std::optional<TimeMs> exit_at;         // ...to leave at this time (effective no earlier than notice + notice days)
};

// An earlier version of an offer's price sheet and fee rules, in force until `until` (from the
// previous version's `until`, or from the beginning of time for the first).
struct OfferVersion {
  TimeMs until = 0;
  Offer offer;
};

struct RatingInput {
  TimeMs from = 0;  // period [from, to)
  TimeMs to = 0;
  ContractTerms contract;
  std::map<std::string, Offer> offers;  // by name: the version in force now (after every history entry)
  // Price history by offer name, sorted by `until`: usage is priced by the version in force when it
  // happened (GPU time per interval, volume and tokens at their time, commitments at their start);
  // a run's billing start, idle rule and minimum increment are those in force when it was placed.
  std::map<std::string, std::vector<OfferVersion>> offer_history;
  std::vector<Commitment> commitments;
  std::vector<Allocation> allocations;
  std::vector<VolumeUsage> volume;
  std::vector<VolumeElsewhere> volume_elsewhere;  // counted toward the free allowances only
  std::vector<TokenUsage> tokens;
  std::vector<QpsProvision> qps;
  std::vector<StoredImage> images;
  std::vector<StoredImage> artifacts;  // a project's artifacts kept for the offer's nodes (fees.artifact_storage)
  std::vector<StoredImage> volumes;    // the tenant's volumes at their provisioned size (fees.volume_storage)
  std::map<std::string, std::vector<SpotPrice>> spot_prices;  // by offer, sorted by time
  std::vector<TflopsMeasurement> tflops;
  std::vector<NcclMeasurement> nccl;
  std::vector<Incident> incidents;
  // Storage I/O, egress and GPU-time lines per (UTC day, allocation) instead of per (month,
  // allocation), the free allowance still counted from the month's start: what daily rules (the
  // cost firewall's egress and card cost per day) need. Invoices keep one line per month.
  bool lines_per_day = false;
};

// The version of offer `name` (a key of in.offers) in force at t.
const Offer& offer_in_force(const RatingInput& in, const std::string& name, TimeMs t);
// [t0, t1) cut where offer `name`'s versions change (one piece without history).
std::vector<std::pair<TimeMs, TimeMs>> version_cuts(const RatingInput& in, const std::string& name, TimeMs t0, TimeMs t1);

// The effective exit time (max of exit_at and notice + exit_notice_days), if an exit was given.
std::optional<TimeMs> effective_exit(const ContractTerms& c);
// `t` plus `months` calendar months (the day of month clamped to the target month's length).
TimeMs add_months(TimeMs t, int64_t months);
// Start of the calendar month (UTC) containing t.
TimeMs month_start(TimeMs t);
// Start of the UTC day containing t.
TimeMs day_start(TimeMs t);

}  // namespace gpurent
