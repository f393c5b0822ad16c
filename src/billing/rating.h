// The rating engine: RatingInput (one contract's offers, commitments, allocations, usage and
// measurements over a period) -> charge and credit lines with totals. Pure and deterministic: the
// same input always gives the same lines in the same order; nothing is read from a clock or a file.
//
// Rounding (docs/billing.md): quantities are exact integers (milli-GPU × ms, bytes, tokens); each
// line's amount is computed once from its exact quantity and unit price in 128-bit integers,
// rounded half to even to the micro-unit (`amount_exact`), then rounded half to even to cents
// (`amount`). The totals are sums of the lines' `amount`: an invoice always equals the sum of its
// lines, to the cent. Not thread-safe per call; separate calls are independent.
#pragma once

#include <string>
#include <vector>

#include "billing/rating_input.h"
#include "core/result.h"

namespace gpurent {

enum class LineKind { kUsage, kCommitment, kFee, kCredit };
inline constexpr EnumEntry<LineKind> kLineKindNames[] = {
    {LineKind::kUsage, "usage"}, {LineKind::kCommitment, "commitment"}, {LineKind::kFee, "fee"}, {LineKind::kCredit, "credit"}};

struct ChargeLine {
  LineKind kind = LineKind::kUsage;
  std::string rule;          // the rule that produced it: "on_demand", "cold_start", "idle_discount", "sla_outage", ...
  std::string project;       // empty for contract-wide lines (commitments, exit refund, credit cap)
  std::string job;
  std::string allocation;
  std::string offer;
  std::string billing_mode;  // on_demand | reserved | spot | per_token | per_qps | "" (fees, credits)
  std::string quantity;      // exact decimal
  std::string unit;          // "GPU-second", "GB", "token", "QPS-second", "USD" (credits: the fee they refund)
  std::string unit_price;    // exact decimal in the contract currency (credits: the rate applied, 6 decimals)
  std::string price_unit;    // what unit_price is per: "GPU-hour", "GB", "1M tokens", "QPS-month", "USD of fee"
  TimeMs from = 0;           // the time the line covers
  TimeMs to = 0;
  Money amount_exact;        // micro-unit exact (negative for credits)
  Money amount;              // amount_exact rounded half to even to cents
  std::string description;   // one sentence a finance reader understands, in English
  Message description_message;  // the same sentence as a code with arguments (any language)
  // reserved_covered lines only: the covered GPU time at its commitment's price, micro-exact (the
  // line's amount is 0: the commitment line bills it, to no project). The cost firewall's storage
  // I/O share counts it in the project's cost. Zero on other lines; not part of an invoice.
  Money covered_value;
  // Credit lines: the measurements and incidents the credit rests on (ids, sorted); empty otherwise.
  std::vector<std::string> measurements;
  // Commitment lines and reserved_covered lines: the commitment's id (covered lines: the one that
  // covered them); empty otherwise.
  std::string commitment;
  // GPU-time lines billed below the offer's on-demand price (spot, idle discount, reserved covered
  // or overflow...): that on-demand price, in force when the time was used, and the line's quantity
  // at it (rounded half to even to cents). Empty / zero when the line is billed at it.
  std::string list_unit_price;
  Money list_amount;
};

// A commitment's share of the rated period: its GPUs × the part of its term inside the period
// (cut at an effective exit) at its price, micro-exact. FOCUS amortization spreads it over the
// GPU time it covered, the rest being unused (rating_output.cc).
struct CommitmentShare {
  std::string id;
  std::string offer;
  std::string description;
  TimeMs from = 0;
  TimeMs to = 0;
  int64_t gpus = 0;
  int64_t price = 0;         // micros per GPU-hour
  bool prepaid = false;
  Money amortized;
};

struct RatingResult {
  Currency currency = Currency::kUSD;
  TimeMs from = 0;
  TimeMs to = 0;
  std::vector<ChargeLine> lines;
  std::vector<CommitmentShare> commitments;  // those in force during the period, by id
  Money charges;  // sum of non-credit lines' amount
  Money credits;  // sum of credit lines' amount (≤ 0)
  Money total;    // charges + credits == sum of every line's amount
  // The period's fee as paid in effect: charges with each prepaid commitment at its share of the
  // period (`commitments[].amortized`, rounded half to even to the cent) instead of its whole term,
  // which is billed on its first month. What SLA credits are capped by (credit_cap) and a
  // month_fee penalty is a share of.
  Money delivered;
};

// Validates cross-references (offers, allocations, prices for the modes used, currencies) and rates.
// Errors name the offending item ("allocations[2].offer: unknown offer 'h100-x'").
Result<RatingResult> rate(const RatingInput& in);

// When an offer starts billing, as a message: the API's key in English ("api_call"), its name in
// other languages.
Message billing_start_message(BillingStart b);

// Quantity helpers shared by the engine's parts and tests.
// "123.456789": v / 10^scale, trailing zeros trimmed (no decimal point for whole numbers).
std::string format_scaled(__int128 v, int scale);

}  // namespace gpurent
