// Balances: what a tenant may still spend in one currency, how fast it is spending, and the two
// rules the firewall applies to it (docs/billing.md#balances). Pure and deterministic: the server
// gathers the figures (services/balances.h); the same figures give the same alerts and keys.
//
//   prepaid   available = top-ups − settled invoices − accruing drafts
//   postpaid  available = credit limit − unpaid invoices − accruing drafts   (no limit: not watched)
// where an invoice counts its total less the credit notes against it (void invoices count
// nothing); "settled" is every issued invoice that is not void (a prepaid tenant's invoices are
// paid from its balance); "unpaid" are those still issued (a paid one is settled outside gpurent);
// "accruing" are the drafts of the months not issued yet (the month to date, and the previous
// month until its close). `burn_per_hour` is what one more hour of the tenant's work as it runs
// now adds to the draft (its open runs, commitments and their fees, rated by the engine).
//
//   balance_low        runway < runway_alert_minutes                                (warning)
//   balance_exhausted  available <= 0, or runway < stop_minutes                     (critical;
//                      stops the tenant's running work: requeued and held, new work held)
// runway = available × 60 / burn_per_hour minutes, rounded down; none (unlimited) while nothing
// burns and money is left. Keys: "<kind>:<CUR>:<YYYY-MM-DD>" — once per day and currency; the
// server resolves the tenant's balance alerts that no longer fire (a top-up, a payment, work
// stopped), which lifts the stop.
// Value types and free functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/money.h"
#include "model/alert.h"
#include "model/tenant.h"

namespace gpurent {

struct BalanceFigures {
  Currency currency = Currency::kUSD;
  int64_t top_ups = 0;        // micro-units, every top-up in the currency (prepaid)
  int64_t invoiced = 0;       // prepaid: settled invoices; postpaid: unpaid invoices (net of credit notes)
  int64_t accruing = 0;       // drafts not issued yet (charges and credits)
  int64_t burn_per_hour = 0;  // >= 0
  std::optional<int64_t> credit_limit;  // postpaid
};

struct Balance {
  BalanceFigures figures;
  Payment payment = Payment::kPostpaid;
  std::optional<int64_t> available;       // none: postpaid without a limit
  std::optional<int64_t> runway_minutes;  // none: nothing burns (or no limit)
};

Balance balance_of(const BillingSettings& s, const BalanceFigures& f);

// The rules above for one currency of tenant `tenant` at `now`; nothing when not enforced.
std::vector<Alert> evaluate_balance(const BillingSettings& s, const Balance& b, const std::string& tenant, TimeMs now);

}  // namespace gpurent
