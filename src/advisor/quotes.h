// True-cost quote comparison: what each offer really costs per USEFUL GPU-hour of one workload.
// A month of the workload (launches × cold start + run profile, GPUs, storage I/O, egress) is
// turned into a synthetic RatingInput and rated by the real billing engine (billing/rating.h) once
// per offer and plan, so cold-start billing, idle rules, minimum increments, per-GB fees beyond
// free allowances and reserved commitments follow exactly the rules invoices use. The engine's
// lines are then grouped into components (list price, cold start, idle, min increment, commitment,
// storage I/O, egress, rounding) that sum exactly to the month's charges, offers are ranked by
// charges per useful GPU-hour, each difference against the cheapest is explained (a message code
// with arguments, core/message.h, worded in the reader's language at the edge), and the
// list-price ranking is shown for contrast. Schema and formulas: docs/advisor/quotes.md.
// Pure and deterministic (no clock, no I/O); value types, thread-compatible.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advisor/advisor_step.h"
#include "core/clock.h"
#include "core/money.h"
#include "core/result.h"
#include "model/offer.h"

namespace gpurent {

using json = nlohmann::json;

class GpuCatalog;

// One launch's start-up: the API call accepted -> container running -> ready (health check).
struct QuoteColdStart {
  int64_t to_running_seconds = 0;
  int64_t to_ready_seconds = 0;

  bool operator==(const QuoteColdStart&) const = default;
};

// A stretch of a launch's run after ready, at one utilization (the maximum over its GPUs).
struct QuoteSegment {
  int64_t duration_ms = 0;
  int64_t utilization_pct = 0;  // 0..100

  bool operator==(const QuoteSegment&) const = default;
};

struct QuoteWorkload {
  int64_t launches_per_month = 1;     // 1..1000, spread evenly over the rated month
  int64_t gpus = 1;                   // whole GPUs per launch
  std::vector<QuoteSegment> profile;  // the run after ready, in order
  bool profile_given = false;         // the request sent `profile` (errors about the run name it)
  int64_t idle_below_pct = 5;         // a segment below this utilization is idle, not useful
  QuoteColdStart cold_start;          // per launch; offers may override
  int64_t storage_io_gb = 0;          // per month (GB = 10^9 bytes)
  int64_t egress_gb = 0;              // per month
  // The precision the work computes in: "fp16", "bf16" or "fp8" ranks the offers by cost per
  // useful PFLOP-hour at it (a GPU-hour is not the same work on every model); "" by cost per
  // useful GPU-hour.
  std::string precision;
  // A fingerprinted job's unit of work (a training step, or an hour of the job's work as it runs
  // today) and how long it takes on each GPU model (catalog id -> microseconds, for the workload's
  // `gpus` GPUs): with it, offers rank by cost per unit of work = per useful GPU-hour × gpus ×
  // µs ÷ 3,600,000,000, which takes precedence over the precision. Empty unit: none.
  std::string work_unit;  // "step" | "hour_of_current_work"
  std::map<std::string, int64_t> us_per_unit;
  // The output tokens one unit produces (an inference job's, metered): with it each offer's cost
  // per unit also reads per million tokens = per unit × 1,000,000 ÷ tokens per unit.
  std::optional<int64_t> tokens_per_unit;
};

struct QuoteOffer {
  Offer offer;
  std::optional<QuoteColdStart> cold_start;  // this supplier's start-up, when it differs
  // Dense TFLOPS per GPU at the workload's precision, ×10 (871.4 -> 8714): measured (benchmarks
  // on the supplier's cards, given in the request) and the catalog's datasheet figure for the
  // offer's GPU model (filled by parse_quotes_input). The measured one is used when present.
  std::optional<int64_t> measured_tflops_x10, datasheet_tflops_x10;
  int64_t measured_cards = 0;  // the server's benchmarks the measured figure averages (0: given in the request)
};

struct QuotesInput {
  QuoteWorkload workload;
  std::vector<QuoteOffer> offers;                       // 1..20, one currency
  std::vector<int64_t> commit_terms_months{1, 12, 36};  // reserved terms to consider; empty: on-demand only
};

// Body: {"workload": {..., "precision"?}, "offers": [offer object | "supplier/name" | "name", ...],
//        "cold_starts": {"<offer>": {...}}, "measured_tflops": {"<offer>": "871.4"},
//        "commit_terms_months": [1, 12, 36]}.
// Offer objects are read with parse_offer (errors prefixed "offers[i]."); strings name one of
// `known` (the server's offers) by "supplier/name" or by a name that is unique among them.
Result<QuotesInput> parse_quotes_input(const json& body, const GpuCatalog& catalog,
                                       const std::vector<Offer>& known = {});

// "supplier/name" (just the name when the offer has no supplier reference).
std::string quote_offer_label(const Offer& o);

// One share of a plan's monthly charges; a plan's components sum exactly to its total.
// Keys, in order: list_price, cold_start, idle, min_increment, commitment, storage_io, egress, rounding.
struct QuoteComponent {
  std::string key;
  Money amount;          // micro-exact
  std::string quantity;  // GPU-hours (3 decimals, rounded half to even) or GB (exact); "" for rounding
  std::string unit;      // "GPU-hour", "GB" or ""
};

// The rating engine's lines of one plan, summed per rule.
struct QuoteRuleSum {
  std::string rule;
  int64_t lines = 0;
  std::string quantity;  // exact, in unit
  std::string unit;      // the engine's: "GPU-second", "GB"
  Money amount;          // sum of the lines' amounts (cents)
};

struct QuotePlan {
  std::string name;         // on_demand | reserved_1m | reserved_12m | reserved_36m
  int64_t term_months = 0;  // 0 for on-demand
  int64_t committed_gpus = 0;
  Money unit_price;           // per GPU-hour: on-demand, or the term's reserved price
  Money total;                // the engine's charges for the month
  Money per_useful_gpu_hour;  // total / useful GPU-hours, half to even at the micro-unit
  std::vector<QuoteComponent> components;
  std::vector<QuoteRuleSum> rules;
};

struct QuoteDifference {
  std::string component;
  Money diff;    // this offer's component minus the cheapest offer's
  Message text;  // "<component>: <diff> <currency> (<why>)"
};

// One line of the arithmetic shown to the user, with its formula (plain text) and value.
using QuoteStep = AdvisorStep;

struct OfferQuote {
  Offer offer;
  std::string label;
  QuoteColdStart cold_start;
  int64_t billed_cold_seconds = 0;           // per launch, from the offer's billing start to ready
  std::vector<QuotePlan> plans;              // on_demand first, then the cheapest commitment per term
  size_t best = 0;                           // index into plans
  int64_t rank = 0;                          // 1 = lowest charges per useful GPU-hour
  int64_t list_rank = 0;                     // 1 = lowest on-demand list price
  Money sticker;                             // useful GPU-hours × on-demand list price
  std::vector<QuoteDifference> vs_cheapest;  // empty for the cheapest offer
  // With a workload precision: the TFLOPS used, whose ("measured" | "datasheet"), and the best
  // plan's cost per useful PFLOP-hour (per useful GPU-hour × 1000 ÷ TFLOPS, half to even at the
  // micro-unit). An offer with no figure at the precision has none and ranks after the others.
  std::optional<int64_t> tflops_x10;
  std::string tflops_source;
  int64_t measured_cards = 0;  // when measured from the platform's benchmarks: how many cards
  std::optional<Money> per_useful_pflop_hour;
  // With a unit of work: its time on the offer's model and the best plan's cost per unit (half to
  // even at the micro-unit); none when the model's time is unknown (the offer ranks last).
  std::optional<int64_t> us_per_unit;
  std::optional<Money> per_unit_of_work;
  std::optional<Money> per_million_tokens;  // with the workload's tokens per unit
  Message summary;
  std::vector<Message> warnings;
};

struct QuotesResult {
  Currency currency = Currency::kUSD;
  TimeMs from = 0, to = 0;          // the rated month
  int64_t useful_milli_gpu_ms = 0;  // milli-GPU × ms computing in the month
  int64_t busy_ms_per_launch = 0;
  int64_t run_ms_per_launch = 0;
  std::vector<OfferQuote> offers;  // in rank order
  std::string ranked_by = "per_useful_gpu_hour";  // or "per_useful_pflop_hour" (a workload precision),
                                                  // or "per_unit_of_work" (a fingerprinted job's work)
  bool sticker_misleads = false;   // some lower list price comes with a higher true cost
  Message misleads;
  std::vector<QuoteStep> steps;  // JSON: [{"text","text_message","formula","value"}]
};

// Validates cross-offer facts (one currency, unique labels, launches fit the month) and rates.
Result<QuotesResult> compute_quotes(const QuotesInput& in);

// {"currency","period","workload","ranking":[...],"list_price_ranking":[...],"sticker_misleads",
//  "misleads","misleads_message","steps":[{"text","text_message","formula","value"}]}: every text
// is English beside its message ("X" and "X_message", core/message.h put_message / text_json);
// the server words "X" in the reader's language.
json to_json(const QuotesResult& r);

}  // namespace gpurent
