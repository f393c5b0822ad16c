// Contract: what a tenant signed with a supplier — the offers it buys under (their prices and fee
// rules), the clauses (model lock, FP16 and NCCL floors, outage compensation, exit notice, penalty
// schedule; by default the first offer's contract template), the reserved commitments (GPUs × term
// from a start, prepaid or billed monthly) and an exit when notice is given. The billing engine
// rates the tenant's allocations on these offers under these terms (docs/billing.md). Operators
// write contracts; the tenant's users read their own. Schema: docs/resources/contracts.md.
// Value types and pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "model/offer.h"
#include "model/resource.h"

namespace gpurent {

// How TFLOPS shortfalls turn into credits.
enum class PerformanceRemedy {
  kProportional,  // refund the fee of each short card in proportion to its shortfall
  kSchedule,      // the contract's penalty: fee_pct_per_step % of the month's fee per step below the promise
};
inline constexpr EnumEntry<PerformanceRemedy> kPerformanceRemedyNames[] = {
    {PerformanceRemedy::kProportional, "proportional"}, {PerformanceRemedy::kSchedule, "schedule"}};

// What reserved-mode work beyond the contract's commitments does (docs/scheduler.md#terms).
enum class ReservedOverflow {
  kOnDemand,  // runs, its time beyond the commitment billed at the on-demand price (reserved_overflow)
  kWait,      // waits in the queue until the commitment has room
};
inline constexpr EnumEntry<ReservedOverflow> kReservedOverflowNames[] = {{ReservedOverflow::kOnDemand, "on_demand"},
                                                                        {ReservedOverflow::kWait, "wait"}};

// The most defaults one commitment may hold, and commitments one contract may hold (a contract
// with more does not decode).
inline constexpr size_t kMaxCommitmentDefaults = 1000;
inline constexpr size_t kMaxCommitmentResales = 1000;
inline constexpr size_t kMaxContractCommitments = 1000;

// Capacity of a market commitment the supplier did not deliver: `gpus` of it over [from, to).
struct CommitmentDefault {
  int64_t gpus = 1;
  TimeMs from = 0;
  TimeMs to = 0;
  std::string reason;
  std::string node;  // the failed node it was recorded for (market_node_defaults.h), else ""
  // A resold node's default (docs/market.md#resold-nodes): the outage compensation is figured as
  // the supplier owed it to the node's first buyer — at the price it sold the node at and at the
  // first buyer's contract's outage_compensation_pct — not at this commitment's (resale) price.
  std::optional<Money> compensation_price_per_gpu_hour;
  std::optional<int64_t> compensation_pct;

  bool operator==(const CommitmentDefault&) const = default;
};

// GPUs of a resale its buyer did not get: a resold node out of service (the buyer's default). No
// proceeds are credited for them, and the reseller's own price of them is refunded.
struct ResaleUndelivered {
  int64_t gpus = 1;
  TimeMs from = 0;
  TimeMs to = 0;
  std::string node;

  bool operator==(const ResaleUndelivered&) const = default;
};

// GPUs of a market commitment its holder resold in the market (docs/market.md#resale): they no
// longer cover its runs over [from, to), and their proceeds at the resale price are credited.
struct CommitmentResale {
  int64_t gpus = 1;
  TimeMs from = 0;
  TimeMs to = 0;
  Money price_per_gpu_hour;
  std::string trade;                           // the resale trade
  std::vector<ResaleUndelivered> undelivered;  // at most kMaxCommitmentDefaults

  bool operator==(const CommitmentResale&) const = default;
};

struct ContractCommitment {
  std::string name;          // slug, unique within the contract
  std::string offer;         // one of the contract's offers (reference as given)
  int64_t gpus = 1;
  int64_t term_months = 1;   // 1, 12 or 36; 0 for a market commitment
  TimeMs starts_at = 0;
  bool prepaid = false;
  // A market commitment (a settled trade, docs/market.md#settlement) has a window and the trade
  // price instead of a term and the offer's reserved price: both set, or neither.
  std::optional<TimeMs> ends_at;
  std::optional<Money> price_per_gpu_hour;
  std::string trade;                        // the market trade it settles ("" for none)
  std::vector<CommitmentDefault> defaults;  // what the supplier did not deliver (market commitments)
  std::vector<CommitmentResale> resales;    // what its holder resold (market commitments)

  bool market() const { return ends_at.has_value(); }
  bool operator==(const ContractCommitment&) const = default;
};

struct Contract {
  std::string name;                  // slug, unique within the tenant
  std::string tenant;                // references as given
  std::string supplier;
  std::vector<std::string> offers;   // at least one; all the supplier's, all in the contract currency
  Currency currency = Currency::kUSD;
  // Absent in a request: a create copies in the first offer's template as it is then, an update
  // keeps the stored ones. Stored contracts have them (schema migration: SQLite 9, PostgreSQL 8).
  std::optional<ContractTemplate> clauses;
  int64_t nccl_compensation_pct = 200;
  PerformanceRemedy performance_remedy = PerformanceRemedy::kProportional;
  bool cap_credits = true;
  ReservedOverflow reserved_overflow = ReservedOverflow::kOnDemand;
  std::vector<ContractCommitment> commitments;
  TimeMs starts_at = 0;
  std::optional<TimeMs> exit_notice_at;
  std::optional<TimeMs> exit_at;

  // Set by the server from the resolved references; parse ignores these keys.
  std::string tenant_id;
  std::string supplier_id;
  std::vector<std::string> offer_ids;  // same order as offers

  bool operator==(const Contract&) const = default;
};

// The most GPUs these defaults withhold at any one time (they may overlap; never more than the
// commitment's GPUs).
int64_t most_defaulted(const std::vector<CommitmentDefault>& defaults);
// The most GPUs of a market commitment not at its holder's use at any one time from `from` on:
// its defaults and its resales together.
int64_t most_withheld_from(const ContractCommitment& m, TimeMs from);

// Reads a market commitment's `defaults` (each inside [start, end), at most `gpus`); errors name
// the field under f's path.
std::vector<CommitmentDefault> read_commitment_defaults(Fields& f, int64_t gpus, TimeMs start, TimeMs end,
                                                        Currency currency);

// Reads a market commitment's `resales` (each at most `gpus`, priced in `currency`).
std::vector<CommitmentResale> read_commitment_resales(Fields& f, int64_t gpus, Currency currency);

Result<Contract> parse_contract(const json& body);
Result<Contract> decode_contract(const json& body);  // a stored one: parse_contract + the *_id fields
json to_json(const Contract& c);           // includes the *_id fields when set
IndexCols index_of(const Contract& c);     // name, tenant_id, supplier_id

}  // namespace gpurent
