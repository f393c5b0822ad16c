// The costs dashboard's arithmetic: a project's budget burn-down for a month, the storage I/O
// share of its charges, and its costs per day from rated lines — exact money (int64 micro-units),
// rounding written down per function. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "billing/rating.h"
#include "core/clock.h"
#include "core/money.h"

namespace gpurent {

// A project's budget for one calendar month, spent day by day. Spending is what the cost
// firewall's budget rule counts: the project's charges before credits, micro-exact.
struct BudgetBurn {
  Money monthly;
  TimeMs month = 0;  // UTC start of the month
  Money spent;       // month to date
  Money remaining;   // monthly − spent (negative once over)
  struct Day {
    TimeMs date = 0;
    Money spent;      // cumulative from the 1st through this day
    Money remaining;  // monthly − spent
  };
  std::vector<Day> burn;      // the 1st up to the day holding `asof`
  Money projected_month_end;  // spent at the mean rate so far (per ms elapsed) over the whole month
  bool projected_over = false;  // projected_month_end reaches the budget (the rule: reached = breached)
};

// The burn-down of `monthly` for the month starting at `month` as of `asof` (clamped into the
// month): daily_spent[i] is the spending on the month's i-th day; it has one entry per day begun
// before asof. The projection is spent × month length ÷ time elapsed, rounded half to even at the
// micro-unit; nothing elapsed projects 0. Errors: a currency other than the budget's, a size that
// does not match, overflow.
Result<BudgetBurn> burn_down(const Money& monthly, TimeMs month, TimeMs asof, const std::vector<Money>& daily_spent);

// storage_io × 100 ÷ charges with one decimal, rounded half to even ("12.5"); "0.0" when there
// are no charges.
std::string share_pct_text(int64_t storage_io_micros, int64_t charges_micros);

struct ProjectCosts {
  std::string project_id;  // empty when no project of the tenant has the lines' name any more
  std::string project;
  std::vector<int64_t> daily, storage_io_daily, egress_daily;  // micro-units, one per day of the range
  int64_t total = 0;    // every line of the project over the range (credits included)
  int64_t charges = 0;  // its non-credit lines
  int64_t covered = 0;  // its GPU time covered by reserved commitments, at their price (to cents, per line)
  int64_t storage_io = 0;  // share = storage_io / (charges + covered), as the firewall's
  std::optional<BudgetBurn> budget;
};

// Adds one rated line of the project (amounts to the cent) to day `day` of `p`.
void add_project_line(ProjectCosts& p, const ChargeLine& l, size_t day);
// The project's JSON (docs/openapi.json DashboardProjectCosts): its storage I/O share of charges +
// reserved-covered value, and whether it is above `io_share_pct` (exactly, on these amounts).
nlohmann::json project_costs_json(const ProjectCosts& p, Currency c, int64_t io_share_pct);

// Amounts in micro-units as decimal strings of currency c.
nlohmann::json money_list(const std::vector<int64_t>& v, Currency c);
nlohmann::json to_json(const BudgetBurn& b);

}  // namespace gpurent
