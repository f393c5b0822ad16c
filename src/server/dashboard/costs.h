// The costs dashboard (GET /api/v1/dashboard/costs, docs/api.md#dashboard): per tenant and
// currency, what each UTC day cost — the day's invoice total, per project (with its storage I/O
// and egress fees), per card (card_day_costs of the day's GPU-time lines, billing/firewall.h) —
// each project's budget burn-down for the month holding the range's last day, and the period's
// cost-firewall alerts. Every figure comes from the day invoices (server/dashboard/days.h), so a
// day's total is the invoice of that day, to the cent. Money is int64 micro-units throughout.
// Free functions over the store (reads only); thread-safe as the Store is.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "billing/firewall.h"
#include "insight/budget.h"
#include "server/dashboard/days.h"

namespace gpurent {

struct CardCosts {
  std::string node_id, node, supplier;  // node name, unique only within its supplier
  int64_t gpu = 0;
  std::vector<int64_t> daily;
  int64_t total = 0, max_daily = 0;
  int64_t over_threshold_days = 0;  // days costing more than the firewall's card threshold
};

struct DashboardAlert {
  std::string id, kind, project, state, message_en, message_zh;
  nlohmann::json text_message;  // the message's code and arguments (null for an alert stored before codes)
  bool frozen = false;  // an egress freeze still in force (not lifted)
};

// One tenant in one currency.
struct TenantCosts {
  std::string tenant_id, tenant;
  Currency currency = Currency::kUSD;
  FirewallPolicy policy;
  std::vector<int64_t> daily_total;  // the day invoices' totals in this currency
  std::vector<ProjectCosts> projects;  // by name
  std::vector<CardCosts> cards;        // the 50 costliest, costliest first
  int64_t cards_over_threshold = 0;    // cards over the threshold on some day (all, not just the 50)
  std::vector<DashboardAlert> alerts;  // alerts whose measured period meets the range
};

struct CostsDashboard {
  DayRange range;
  std::vector<TenantCosts> tenants;  // by tenant name; the tenant's own currency first
};

inline constexpr size_t kDashboardTopCards = 50;

Result<CostsDashboard> build_costs_dashboard(StoreReader& store, const GpuCatalog& catalog,
                                             const std::vector<Record>& tenants, const DayRange& range, TimeMs now);

// The burn-down of each budget (by project name) for the month starting at `month`, as of `asof`
// (clamped into the month), from the tenant's day invoices: what the costs dashboard draws and
// GET /api/v1/projects/{id}/quota answers. Spending is a project's lines other than credits in the
// budget's currency, micro-exact (the charges the firewall's budget rule counts).
Result<std::map<std::string, BudgetBurn>> budget_burns(DayInvoices& invoices,
                                                       const std::map<std::string, Money>& budgets, TimeMs month,
                                                       TimeMs asof);

// The response document (docs/api.md#dashboard).
nlohmann::json to_json(const CostsDashboard& d);

}  // namespace gpurent
