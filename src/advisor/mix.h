// The reserved / on-demand / spot mix optimizer: given an hourly GPU demand curve and the ways to
// buy GPUs (capacity options: an offer's on-demand, reserved 1/12/36-month or spot price), choose
// how many GPUs to reserve per option for the whole horizon and how many on-demand and spot GPUs
// to add in each hour, minimising the expected cost under a cap on spot exposure and a budget.
// docs/advisor/mix.md states the model, the JSON schema and a worked example.
//
// The model, precisely:
//  * Every GPU of every option serves the same work (the options are alternatives the tenant
//    accepts). Hour h needs d_h GPUs: reserved + on-demand + spot >= d_h.
//  * Reserved quantities are multiples of reservation_unit_gpus (8 = whole nodes), at most the
//    option's max_gpus, held for the whole horizon and billed every hour whether used or not:
//    horizon cost = price × hours × GPUs. A term (1m = 730 h, 12m = 8760 h, 36m = 26280 h) that
//    outlasts the horizon is still committed: the output names the hours and cost after the
//    horizon; count_whole_terms = true bills every started term in full instead.
//  * On-demand and spot GPUs are bought per hour, at most max_gpus per option per hour.
//  * Spot interruption risk r (per-mille): r/1000 of every spot GPU-hour is lost and re-run at the
//    rework price, the cheapest on-demand price among the options (the spot price itself when there
//    is no on-demand option). Expected cost of a spot GPU-hour = spot + r/1000 × rework price. The
//    rework is priced, not scheduled: it does not count against max_gpus or the hour's demand.
//  * Preemption exposure: in each hour, spot GPUs <= floor(max_spot_share_pct × d_h / 100).
//  * Budget: the cheapest plan must cost at most the budget, else an error says both figures.
// Money is exact (core/money.h): the solvers rank plans in integer nano-units (1e-9 of the
// currency, so r/1000 of a micro-unit price stays exact); the plan's cost is recomputed in integer
// micro-units, the rework of each spot line rounded half to even once. GLPK's doubles only choose
// the plan.
// Free functions; thread-safe: each solve owns its GLPK problem object, and GLPK keeps its
// environment in thread-local storage (Debian's libglpk is built reentrant).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "advisor/advisor_step.h"
#include "advisor/demand.h"
#include "core/money.h"
#include "core/result.h"
#include "model/offer.h"

namespace gpurent {

using json = nlohmann::json;

enum class CapacityMode { kOnDemand, kReserved1m, kReserved12m, kReserved36m, kSpot };
const char* capacity_mode_name(CapacityMode m);  // "on_demand", "reserved_1m", ..., "spot"
bool is_reserved(CapacityMode m);
int64_t term_hours(CapacityMode m);  // 730, 8760, 26280 for the reserved modes; 0 otherwise

inline constexpr int64_t kMaxMixOptions = 64;
inline constexpr int64_t kMaxPricePerGpuHourMicros = 1'000'000LL * Money::kMicrosPerUnit;

struct CapacityOption {
  std::string offer;  // offer name or id, as the tenant knows it
  CapacityMode mode = CapacityMode::kOnDemand;
  Money price_per_gpu_hour;         // > 0, in the input's currency
  std::optional<int64_t> max_gpus;  // reserved: total GPUs; on-demand/spot: GPUs in any one hour
};

struct MixInput {
  DemandCurve demand;
  std::vector<CapacityOption> options;
  Currency currency = Currency::kUSD;
  int64_t spot_interruption_permille = 0;  // 0..1000
  int64_t max_spot_share_pct = 100;        // 0..100, of each hour's demand
  std::optional<Money> budget;             // > 0
  int64_t reservation_unit_gpus = 1;       // 1..1024
  bool count_whole_terms = false;
};

// Validates an input built in code (parse_mix_input runs the same checks).
Status validate_mix_input(const MixInput& in);

// Body: {"currency", "demand": {"gpus_per_hour": [...], "start"} | {"csv": "..."}, "options": [...],
// "spot_interruption_permille", "max_spot_share_pct", "budget", "reservation_unit_gpus",
// "count_whole_terms"} (docs/advisor/mix.md).
Result<MixInput> parse_mix_input(const json& body);

// One option per price the offer states (on-demand, reserved 1/12/36 months, spot), named after
// the offer, without a GPU limit; in the offer's currency.
std::vector<CapacityOption> options_from_offer(const Offer& o);

// ---- Result ----

// One line of the arithmetic: what it is (a message code, rendered in the reader's language), its
// formula (plain text, the same in every language) and its value.
using MixStep = AdvisorStep;

struct ReservedLine {
  size_t option = 0;  // index into MixInput::options
  std::string offer;
  CapacityMode mode = CapacityMode::kReserved1m;
  Money price;  // per GPU-hour
  int64_t gpus = 0;
  int64_t billed_hours = 0;         // the horizon, or every started term with count_whole_terms
  Money cost;                       // gpus × billed_hours × price
  int64_t terms = 0;                // terms started to cover the horizon
  int64_t hours_after_horizon = 0;  // committed hours past the horizon (terms × term − horizon)
  Money cost_after_horizon;         // their cost; already in `cost` with count_whole_terms
};

struct HourlyLine {
  size_t option = 0;
  std::string offer;
  CapacityMode mode = CapacityMode::kOnDemand;
  Money price;  // per GPU-hour
  int64_t gpu_hours = 0;
  int64_t peak_gpus = 0;  // most GPUs of this option in any hour
  Money cost;             // gpu_hours × price
  Money rework_cost;      // spot only: gpu_hours × risk/1000 × rework price (half-even)
};

struct SingleLevel {
  std::optional<size_t> option;  // absent: reserving nothing is the best single level
  std::string offer;
  CapacityMode mode = CapacityMode::kReserved1m;
  int64_t gpus = 0;
  Money cost;
};

enum class MixSolver {
  kMilp,   // GLPK branch-and-cut on the aggregated MILP, then an exact integer check (the exact
           // search alone when the MILP would exceed kMaxMilpRows or kMaxMilpWork)
  kExact,  // exact integer search over the total reserved quantity (convex; see mix.cc)
};

struct MixResult {
  Currency currency = Currency::kUSD;
  int64_t hours = 0, gpu_hours = 0, peak_gpus = 0, levels = 0;
  std::vector<ReservedLine> reserved;  // options with gpus > 0
  std::vector<HourlyLine> hourly;      // on-demand and spot options used
  int64_t reserved_gpus = 0;
  int64_t reserved_gpu_hours_used = 0;  // Σ_h min(d_h, reserved GPUs)
  std::optional<Money> rework_price;    // cheapest on-demand price; absent without on-demand
  Money expected_cost;
  std::optional<Money> on_demand_cost;     // absent when on-demand alone cannot serve the curve
  std::optional<SingleLevel> best_single;  // one reserved option at one level + on-demand
  std::optional<Money> saving_vs_on_demand, saving_vs_single;
  std::optional<int64_t> saving_vs_on_demand_bp, saving_vs_single_bp;  // of the baseline's cost
  std::optional<int64_t> reserved_utilization_bp;                      // absent when none reserved
  int64_t spot_share_bp = 0;                                           // of the demand's GPU-hours
  std::string solver;                                                  // "glpk" or "exact"
  bool milp_corrected = false;               // the exact check found a cheaper plan than GLPK's
  std::optional<int64_t> milp_skipped_rows;  // the MILP would have had this many rows (> kMaxMilpRows)
  // ... and this many non-zeros (set when rows × non-zeros > kMaxMilpWork skipped it)
  std::optional<int64_t> milp_skipped_nonzeros;
  std::string milp_failure;  // GLPK did not finish (why, in English); the exact search chose the plan
  // Wall time of compute_mix, measured by the caller (the engine reads no clock; 0 when no one
  // measured): the only field that varies from run to run.
  int64_t solver_time_us = 0;
  std::vector<MixStep> steps;
};

// GLPK's time limit per MILP. Should GLPK not finish (this limit, or any other failure), the
// exact search's plan is the answer and milp_failure says why.
inline constexpr int64_t kMilpTimeLimitMs = 30'000;

// Errors: kInvalid naming the field for an invalid input, for demand no option mix can serve
// ("options: hour 12 needs 40 GPUs ..."), and for a budget below the cheapest plan ("budget: the
// cheapest plan costs X, above the budget Y").
Result<MixResult> compute_mix(const MixInput& in, MixSolver solver = MixSolver::kMilp,
                              int64_t milp_time_limit_ms = kMilpTimeLimitMs);
json to_json(const MixResult& r);

// ---- Solver internals shared by mix.cc and mix_milp.cc (exposed for the tests and the bench) ----

// The input prepared for the solvers: costs in nano-units (1e-9 of the currency).
struct MixModel {
  struct Reserved {
    size_t option = 0;
    __int128 unit_cost = 0;  // one unit (reservation_unit_gpus GPUs) over the billed hours
    int64_t price_micros = 0, billed_hours = 0;
    int64_t max_units = 0;
  };
  struct Hourly {
    size_t option = 0;
    bool spot = false;
    __int128 cost = 0;  // per GPU-hour, spot including the expected rework
    int64_t price_micros = 0, rework_micros = 0;
    int64_t cap = 0;  // per hour; kMaxGpusPerHour when unlimited
  };
  int64_t hours = 0, unit = 1, peak = 0, spot_pct = 100;
  std::vector<DemandLevel> levels;       // ascending, zero included
  std::vector<Reserved> reserved;        // ascending unit cost (ties: option order)
  std::vector<Hourly> hourly;            // ascending cost (ties: option order)
  int64_t min_units = 0, max_units = 0;  // the feasible range of total reserved units
};
Result<MixModel> prepare_mix(const MixInput& in);

// Rows of the aggregated MILP: one cover row per nonzero demand level, plus a spot row per level
// where two or more spot options compete for its spot cap. GLPK's simplex time grows about with
// the square of it (about 2 s at 4000 rows on one laptop core), so compute_mix uses the exact
// search instead above kMaxMilpRows and says so in the result.
inline constexpr int64_t kMaxMilpRows = 4000;
int64_t mix_milp_rows(const MixModel& m);
// Non-zeros of the aggregated MILP's matrix: per row, the reserved options and every hourly option
// that can cover it. GLPK's time grows with rows × non-zeros (this VM, 2026-12-07: about 20 ms per
// 10^6 of it: 4000 rows of 63 hourly options took 20.5 s, 4000 rows of 5 took 1.1 s), so
// compute_mix also uses the exact search above kMaxMilpWork of it (about 2 s).
inline constexpr int64_t kMaxMilpWork = 100'000'000;
int64_t mix_milp_nonzeros(const MixModel& m);

// GLPK: reserved GPUs per MixInput option (0 for non-reserved). aggregate = false builds one
// row per hour instead of one per demand level (the bench's comparison; same optimum).
// kInternal when GLPK does not finish within time_limit_ms or finds no plan.
Result<std::vector<int64_t>> solve_mix_milp(const MixInput& in, const MixModel& m, bool aggregate = true,
                                            int64_t time_limit_ms = kMilpTimeLimitMs);

}  // namespace gpurent
