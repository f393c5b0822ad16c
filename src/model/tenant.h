// Tenant: a customer organisation that rents GPU compute. It owns projects, users and jobs, fixes
// the currency its budgets, prices and invoices are stated in, and may set its own cost-firewall
// thresholds in that currency.
//
// Also the home of two small helpers every demand-side resource shares: label maps and the email
// pattern. Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/money.h"
#include "model/idle_stop.h"
#include "model/resource.h"

namespace gpurent {

// Kubernetes-style labels: key = optional DNS prefix + '/' + name (name 1-63 of [A-Za-z0-9_.-],
// alphanumeric at both ends); value = 0-63 of the same characters. At most kMaxLabels entries.
using Labels = std::map<std::string, std::string>;
inline constexpr size_t kMaxLabels = 64;

// Reads the optional object `key` of f as labels; errors name "<path>.<key>.<label-key>".
Labels parse_labels(Fields& f, const char* key);
json labels_to_json(const Labels& labels);

// A practical address check (not full RFC 5322): local@domain with a dotted domain, ≤ 254 chars.
inline constexpr const char* kEmailPattern =
    "[A-Za-z0-9_%+'-]+(\\.[A-Za-z0-9_%+'-]+)*@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    "(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+";
inline constexpr const char* kEmailHelp = "pattern.email";
inline constexpr StrRule kEmailRule{.min_len = 3, .max_len = 254, .pattern = kEmailPattern, .pattern_help = kEmailHelp};

// Human-readable names shown in the dashboard.
inline constexpr StrRule kDisplayNameRule{.min_len = 1, .max_len = 128};

// The tenant's cost-firewall thresholds (docs/billing.md#cost-firewall), money in the tenant's
// currency. Each absent value is the firewall's default (100.00 per card per day, 500.00 egress per
// project per day, 20% storage I/O share), which the server applies; costs billed in another
// currency always use the defaults.
struct CostFirewallSettings {
  std::optional<Money> card_daily_cost;          // >= 0
  std::optional<Money> egress_daily_cost;        // >= 0
  std::optional<int64_t> storage_io_share_pct;   // 0..100

  bool empty() const { return !card_daily_cost && !egress_daily_cost && !storage_io_share_pct; }
  bool operator==(const CostFirewallSettings&) const = default;
};

// How the tenant pays, and when its running work stops (docs/billing.md#balances). Prepaid: a
// balance per currency (top-ups less invoices, issued and accruing); postpaid: a credit limit less
// what it owes (unpaid issued invoices and accruing drafts), none by default (nothing stops).
// The firewall alerts when the money left covers less than runway_alert_minutes of the current
// burn, and stops the tenant's running work (requeued and held) when it covers less than
// stop_minutes (or nothing is left).
enum class Payment { kPostpaid, kPrepaid };
inline constexpr EnumEntry<Payment> kPaymentNames[] = {{Payment::kPostpaid, "postpaid"}, {Payment::kPrepaid, "prepaid"}};
inline constexpr int64_t kDefaultRunwayAlertMinutes = 1440;
inline constexpr int64_t kDefaultStopMinutes = 0;

struct BillingSettings {
  Payment payment = Payment::kPostpaid;
  std::optional<Money> credit_limit;  // postpaid only; >= 0; absent: no limit
  int64_t runway_alert_minutes = kDefaultRunwayAlertMinutes;  // 0..525600; 0: no alert
  int64_t stop_minutes = kDefaultStopMinutes;                 // 0..10080

  // Whether the firewall watches the money: prepaid, or postpaid with a credit limit.
  bool enforced() const { return payment == Payment::kPrepaid || credit_limit.has_value(); }
  bool is_default() const { return *this == BillingSettings{}; }
  bool operator==(const BillingSettings&) const = default;
};

// The "billing" object of a tenant (or of PUT /api/v1/tenants/{ref}/billing) in currency c.
void parse_billing_settings(Fields& f, BillingSettings& b, Currency c);
json to_json(const BillingSettings& b);

// One supplier's target share of the GPUs the tenant holds (docs/scheduler.md#procurement-split):
// the advisor's procurement split adopted, or the tenant's own. A soft target the scheduler steers
// by. `supplier` is a supplier id (the API resolves names when it stores the tenant).
struct ProcurementShare {
  std::string supplier;
  int64_t share_permille = 0;  // 1..1000; the shares add up to at most 1000
  bool operator==(const ProcurementShare&) const = default;
};
inline constexpr size_t kMaxProcurementShares = 64;

// Reads the optional list `key` of f: at most 64 entries {supplier, share_permille}, suppliers
// distinct, shares 1..1000 adding up to at most 1000; errors name "<key>[i].<field>" or "<key>".
std::vector<ProcurementShare> parse_procurement_split(Fields& f, const char* key);
json to_json(const std::vector<ProcurementShare>& split);

struct Tenant {
  std::string name;                     // slug, globally unique
  std::string display_name;             // defaults to name
  Currency currency = Currency::kUSD;   // fixed at creation (the server refuses a change)
  std::string contact_email;
  Labels labels;
  CostFirewallSettings cost_firewall;   // JSON "cost_firewall"; omitted when empty
  BillingSettings billing;              // JSON "billing"; omitted when the defaults
  // Idle auto-stop of the tenant's instances that set no rule of their own (model/idle_stop.h).
  std::optional<IdleStop> instance_idle_stop;
  std::vector<ProcurementShare> procurement_split;  // JSON "procurement_split"; omitted when empty

  bool operator==(const Tenant&) const = default;
};

Result<Tenant> parse_tenant(const json& body);
// The currency a stored tenant states, by the same rule as parse_tenant (absent: USD); the one
// reader of it for everyone who needs only the currency. An unknown one is an error on "currency".
Result<Currency> stored_tenant_currency(const json& body);
json to_json(const Tenant& t);
IndexCols index_of(const Tenant& t);

}  // namespace gpurent
