// Offer: a supplier's price sheet for a pool of its nodes of one GPU model in one region — prices
// per GPU-hour for each billing mode, per-token/per-QPS prices for served models, the fee rules
// stated explicitly (when billing starts, idle GPUs, storage I/O, egress, image storage) and the contract
// template a tenant signs (model lock, performance floors, compensation, exit, penalties).
// Money is exact (core/money.h), all in the offer's currency. Schema: docs/resources/offers.md.
// Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/money.h"
#include "model/enums_supply.h"
#include "model/resource.h"

namespace gpurent {

class GpuCatalog;
struct GpuModel;

// Which of the supplier's nodes (of the offer's region and GPU model) the offer sells; empty = all.
struct NodeSelector {
  std::optional<std::string> site;
  std::vector<std::string> node_names;  // when non-empty, only these nodes

  bool operator==(const NodeSelector&) const = default;
};

// Per GPU-hour. Reserved (a commitment of 1, 12 or 36 months) and spot are each at most on_demand.
struct OfferPrices {
  Money on_demand;  // > 0
  std::optional<Money> reserved_1m;
  std::optional<Money> reserved_12m;
  std::optional<Money> reserved_36m;
  std::optional<Money> spot;
  // CPU-only work (jobs without GPUs): per CPU core-hour and per GiB-hour of memory, as requested.
  // Absent: the offer does not sell CPU-only work (such runs are reported unpriced).
  std::optional<Money> cpu_core_hour;
  std::optional<Money> memory_gib_hour;

  // The reserved price for a commitment of `term_months` (1, 12 or 36); none for another term.
  std::optional<Money> reserved_for(int64_t term_months) const {
    if (term_months == 1) return reserved_1m;
    if (term_months == 12) return reserved_12m;
    if (term_months == 36) return reserved_36m;
    return std::nullopt;
  }
  bool operator==(const OfferPrices&) const = default;
};

// A model the supplier serves as an endpoint; at least one price is stated.
struct ServedModel {
  std::string model;  // "qwen2.5-72b-instruct", "meta-llama/Llama-3.1-70B-Instruct"
  std::optional<Money> per_million_input_tokens;
  std::optional<Money> per_million_output_tokens;
  std::optional<Money> per_qps_month;  // one query per second of provisioned capacity for a month
  std::optional<Money> per_million_requests;  // requests served (by an endpoint billed per token or per request)

  bool operator==(const ServedModel&) const = default;
};

// A GPU counts as idle when its utilization stays below utilization_below_pct for window_minutes.
struct IdleRule {
  int64_t utilization_below_pct = 5;
  int64_t window_minutes = 10;
  IdleAction action = IdleAction::kCharge;
  std::optional<int64_t> discount_pct;  // present iff action == discount

  bool operator==(const IdleRule&) const = default;
};

// A per-GB fee after a free allowance (per month, per tenant).
struct VolumeFee {
  Money per_gb;
  int64_t free_gb = 0;

  bool operator==(const VolumeFee&) const = default;
};

// A per-GB-month fee for what stays stored (a tenant's own images on the offer's nodes), after a
// free allowance (GB stored free at any moment, per tenant).
struct StorageFee {
  Money per_gb_month;
  int64_t free_gb = 0;

  bool operator==(const StorageFee&) const = default;
};

struct OfferFees {
  BillingStart billing_starts = BillingStart::kReady;
  std::optional<IdleRule> idle;         // absent: idle GPUs are charged like busy ones
  std::optional<VolumeFee> storage_io;  // absent: storage I/O is not charged
  std::optional<VolumeFee> egress;      // absent: egress is not charged
  std::optional<StorageFee> image_storage;  // absent: images are stored free
  std::optional<StorageFee> artifact_storage;  // absent: artifacts are stored free
  std::optional<StorageFee> volume_storage;    // absent: volumes are stored free

  bool operator==(const OfferFees&) const = default;
};

// What a penalty's percentage is taken of: the month's fee of the cards measured short (default:
// one slow card on a 100-card invoice is penalised on its own fee), or the whole month's fee.
enum class PenaltyBase { kShortCards, kMonthFee };
inline constexpr EnumEntry<PenaltyBase> kPenaltyBaseNames[] = {{PenaltyBase::kShortCards, "short_cards"},
                                                              {PenaltyBase::kMonthFee, "month_fee"}};

// "fee_pct_per_step % of the fee (`base`) per step_pct_below_promise % below the promise".
struct Penalty {
  int64_t fee_pct_per_step = 5;
  int64_t step_pct_below_promise = 10;
  PenaltyBase base = PenaltyBase::kShortCards;

  bool operator==(const Penalty&) const = default;
};

struct ContractTemplate {
  bool model_lock = true;                           // no substitution of the GPU model
  std::optional<int64_t> min_fp16_tflops_x10;       // per card, dense; shortfall refunded in proportion
  std::optional<int64_t> min_nccl_busbw_gbps;       // GB/s; hours below it compensated
  int64_t outage_compensation_pct = 200;            // of the interrupted time
  int64_t exit_notice_days = 30;
  bool exit_refund_prepaid = true;                  // prepaid unused fees refunded on exit
  std::optional<std::string> data_sovereignty;      // region or ISO country code data stays in
  bool audit_rights = false;
  Penalty penalty;

  bool operator==(const ContractTemplate&) const = default;
};

struct Offer {
  std::string name;         // slug, unique within the supplier
  std::string supplier;     // reference as given: supplier id or name
  std::string supplier_id;  // resolved by the server; never read from a body
  std::string region;
  std::string gpu_model;    // canonical catalog id
  NodeSelector node_selector;
  Currency currency = Currency::kUSD;
  OfferPrices prices;
  std::vector<ServedModel> served_models;
  int64_t min_increment_seconds = 1;  // billing granularity
  // An instance stopped this many days after its last run on the offer ended is released
  // (docs/resources/instances.md#release); absent: stopped instances are kept. 1..365.
  std::optional<int64_t> stopped_instance_release_days;
  // Sold only to tenants whose contract (in force) names it; false: a public offer anyone may use.
  bool contract_only = false;
  OfferFees fees;
  ContractTemplate contract_template;

  bool operator==(const Offer&) const = default;
};

// A spot market price of an offer from `from` on (kind "spot-prices", id "spp_…"): operators and
// the offer's supplier append them; none is ever changed or removed, and none is dated before the
// moment it is recorded, so usage already metered keeps its price. Spot time is rated at the price
// in force in each interval; before an offer's first, at its sheet's `spot` price.
struct SpotPriceEntry {
  std::string offer;     // reference as given: offer id or name
  std::string offer_id;  // resolved by the server
  Money price;           // per GPU-hour, in the offer's currency: > 0, at most its on-demand price
  TimeMs from = 0;       // absent from a body: when it is recorded
  bool operator==(const SpotPriceEntry&) const = default;
};
// A POST body {offer, price, from?}; `c` is the offer's currency, `now` the default and the
// earliest `from`.
Result<SpotPriceEntry> parse_spot_price(const json& body, Currency c, TimeMs now);
// The stored body {offer_id, price, currency, from}, strictly by type.
Result<SpotPriceEntry> decode_spot_price(const json& body);
json to_json(const SpotPriceEntry& e, Currency c);

// Reads contract clauses (every absent clause at its default); `model` bounds min_fp16_tflops when known.
ContractTemplate parse_contract_template(Fields& f, const GpuModel* model);
json to_json(const ContractTemplate& t);

// Validates a create/update body; `catalog` resolves gpu_model and bounds min_fp16_tflops.
Result<Offer> parse_offer(const json& body, const GpuCatalog& catalog);

// What a stored offer sells (GPU model, region, node selector), by parse_offer's rules for those
// keys and without the catalog: the one reader for the allocation ledger, which picks the offer
// a run is billed under. A malformed key is an error naming it.
struct OfferReach {
  std::string gpu_model;
  std::string region;
  NodeSelector node_selector;
};
Result<OfferReach> stored_offer_reach(const json& body);
// A stored offer's contract_template.exit_notice_days (30 when absent), by parse_offer's rule and
// without the catalog: for a contract stored without clauses of its own (server/services/
// allocation_ledger.h contract_exit), when its exit takes effect.
Result<int64_t> stored_offer_exit_notice_days(const json& body);
// Includes supplier_id when set.
json to_json(const Offer& o);
IndexCols index_of(const Offer& o);  // name, supplier_id, region, gpu_model

}  // namespace gpurent
