// Rent vs build: the total cost of owning a GPU cluster over its commercial window (hardware
// depreciation against physical life, financing, power at the facility's PUE, space, staff and the
// seven hidden costs of building), as a cost per owned GPU-hour and per USEFUL GPU-hour (at the
// utilization a demand curve or a percentage gives), compared with every rental offer (on-demand
// and reserved) with the break-even utilization of each. docs/advisor/tco.md has the schema, the
// formulas and a worked example.
//
// Money is exact: every line is computed in micro-units from integers with 128-bit intermediates
// and rounded half to even ONCE, to the micro-unit; totals are sums of rounded lines; ratios
// (per GPU-hour, break-even utilization) divide the exact total once more, half to even.
// Pure functions and value types; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "advisor/advisor_step.h"
#include "catalog/gpu_catalog.h"
#include "core/fields.h"
#include "core/money.h"
#include "core/result.h"

namespace gpurent {

using json = nlohmann::json;

// How the hardware's value at the end of the commercial window is treated. The window is charged
// capex - residual:
//   straight_line  residual = capex x (physical life - window) / physical life (book value: the
//                  owner keeps hardware it can still use or sell);
//   resale         residual = capex x resale_bp / 10000 (a market resale price);
//   none           residual = 0 (the whole capex is charged to the window).
enum class ResidualMethod { kStraightLine, kResale, kNone };
inline constexpr EnumEntry<ResidualMethod> kResidualMethodNames[] = {{ResidualMethod::kStraightLine, "straight_line"},
                                                                     {ResidualMethod::kResale, "resale"},
                                                                     {ResidualMethod::kNone, "none"}};

// The seven costs of building that a price list of GPUs and servers leaves out.
enum class HiddenCost { kNetworking, kStorage, kSoftware, kSpares, kFacility, kSecurity, kDelay };
inline constexpr size_t kHiddenCostCount = 7;

struct HiddenCostInfo {
  HiddenCost kind;
  const char* key;     // JSON key under hidden_costs
  int64_t default_bp;  // share of the hardware capex, basis points
  const char* code;     // message code of its name (src/messages/<lang>.json)
};
// In enum order; the defaults add up to 3200 bp (32 % of the hardware).
const std::array<HiddenCostInfo, kHiddenCostCount>& hidden_cost_table();

// One hidden cost: a share of the capex (bp) or a fixed amount for the window.
struct HiddenCostSpec {
  int64_t bp = 0;
  std::optional<Money> amount;  // when present, replaces bp
};

struct TcoOffer {
  std::string name;
  Money on_demand_per_gpu_hour;
  std::optional<Money> reserved_per_gpu_hour;
};

inline constexpr int64_t kHoursPerMonth = kHoursPerBillingMonth;  // 8760 / 12
inline constexpr int64_t kMaxTcoOffers = 64;

struct TcoInput {
  Currency currency = Currency::kUSD;
  std::string gpu_model;  // catalog id
  int64_t gpu_count = 1;
  int64_t gpus_per_server = 8;
  Money price_per_gpu;
  Money server_overhead;  // per server: chassis, CPUs, memory, NICs, local disks, NVSwitch board
  int64_t window_months = 18;
  int64_t physical_life_months = 60;
  ResidualMethod residual_method = ResidualMethod::kStraightLine;
  int64_t resale_bp = 0;
  int64_t gpu_watts = 0;  // parse fills the catalog TDP when not given
  int64_t server_overhead_watts = 3000;
  int64_t power_draw_pct = 100;  // average draw as a share of nameplate
  int64_t pue_x100 = 130;
  Money electricity_per_kwh;
  std::optional<Money> space_per_rack_unit_month;  // exactly one of the two space prices
  int64_t rack_units_per_server = 8;
  std::optional<Money> space_per_kw_month;  // per kW of nameplate IT power
  Money staff_fte_cost_per_month;
  int64_t gpus_per_fte = 256;
  std::array<HiddenCostSpec, kHiddenCostCount> hidden{};
  int64_t interest_bp = 0;            // annual, on the capex
  std::vector<int64_t> demand_curve;  // GPUs demanded in each hour of a typical period
  std::optional<int64_t> utilization_pct;
  std::vector<TcoOffer> offers;
};

// Validates a TCO request (schema: docs/advisor/tco.md); the GPU model is resolved against
// `catalog` and gives the default watts per GPU (its TDP). Errors name the full field path.
Result<TcoInput> parse_tco_input(const json& body, const GpuCatalog& catalog);

// A cost line over the window.
struct TcoLine {
  std::string key;  // "depreciation", "financing", "hidden.networking", "power", "space", "staff"
  Message text;
  std::string formula;
  Money amount;
};

using TcoStep = AdvisorStep;

struct TcoOfferComparison {
  std::string name;
  Money on_demand_per_gpu_hour;
  std::optional<Money> reserved_per_gpu_hour;
  Money on_demand_cost;                // on-demand price x useful GPU-hours of the window
  std::optional<Money> reserved_cost;  // reserved price x owned GPU-hours (the same capacity)
  std::optional<Money> reserved_per_useful_gpu_hour;
  std::string cheapest;  // "build", "on_demand" or "reserved" at this utilization
  // Utilization above which building costs less than renting on demand (> 10000: never).
  int64_t build_break_even_utilization_bp = 0;
  // Utilization above which reserving costs less than on demand.
  std::optional<int64_t> reserved_break_even_utilization_bp;
  // reserved price - build cost per owned GPU-hour (> 0: building beats reserving at any utilization).
  std::optional<Money> build_vs_reserved_per_gpu_hour;
};

struct TcoResult {
  TcoInput input;
  int64_t servers = 0;
  int64_t window_hours = 0;
  int64_t owned_gpu_hours = 0;
  int64_t utilized_num = 0, utilized_den = 1;  // utilization as an exact fraction
  int64_t utilization_bp = 0;
  int64_t unmet_demand_bp = 0;         // demand above the owned GPUs, of all demand (curve only)
  int64_t useful_gpu_hours_micro = 0;  // useful GPU-hours x 1e6, half to even (display only)
  Money capex, residual;
  int64_t it_watts = 0;  // nameplate IT power
  std::vector<TcoLine> lines;
  Money total, per_month, cost_per_owned_gpu_hour, cost_per_useful_gpu_hour;
  std::vector<TcoOfferComparison> comparisons;
  Message summary;
  std::vector<TcoStep> steps;
};

// Deterministic. Errors: an input out of range (as parse checks it) or money overflow.
Result<TcoResult> compute_tco(const TcoInput& in);

json to_json(const TcoResult& r);

}  // namespace gpurent
