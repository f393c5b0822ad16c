// The cost firewall: rated cost facts of a month to date -> alerts with effects (freeze egress and
// large uploads; hold new submissions). Pure and deterministic: nothing is read from a clock or a
// store; the same input gives the same alerts, in the same order, with the same keys.
//
// Rules (docs/billing.md#cost-firewall), all comparisons exact in integers (micro-units):
//   card_daily_cost    a card's cost on a UTC day > policy.card_daily_cost          (warning)
//   storage_io_share   a project's month-to-date storage I/O cost × 100 >
//                      storage_io_share_pct × (its month-to-date cost + the value of its GPU time
//                      covered by reserved commitments, ChargeLine::covered_value)   (warning)
//   egress_daily_cost  a project's egress cost on a UTC day > policy.egress_daily_cost (critical;
//                      publishes a freeze of the project's egress and uploads over
//                      large_upload_bytes, for the supplier's gateways to enforce)
//   budget_breach      a project's month-to-date cost >= its monthly budget         (critical;
//                      holds the project's new submissions)
// "Exactly at the threshold" does not alert, except a budget, which is breached when reached.
// Costs are charges before credits (SLA credits are compensation settled on the invoice; a budget
// guards spending). Lines without a project (commitments, contract-wide credits) count toward no
// project.
//
// Filling the input from the server: rate the tenant's contract over [month, now) with rate()
// (billing/rating.h) and pass its `lines` as they are; compute `cards` with card_day_costs() from
// the same lines and the RatingInput's allocations (their placement names the cards). The daily
// rules cover every day from `month` to `day`, so a late crossing of yesterday's threshold still
// alerts; `key` is stable (kind, subject, day or month), so the server records an alert and acts
// on its effects only the first time it sees a key. A freeze stays until an admin lifts it (the
// same key never re-freezes); a hold lasts while the rule still fires (raise the budget or wait
// for the next month). On the first run of a month, evaluate the previous month once more with
// `day` = its last day to catch its final hours (the server keeps its daily rules' alerts:
// services/cost_firewall.h).
//
// Value types and free functions; thread-safe (no shared state).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "billing/rating.h"
#include "core/fields.h"
#include "model/alert.h"
#include "model/tenant.h"

namespace gpurent {


struct FirewallPolicy {
  Money card_daily_cost;           // per card per UTC day; default 100.00
  int64_t storage_io_share_pct = 20;  // 0..100, of a project's month-to-date cost
  Money egress_daily_cost;         // per project per UTC day; default 500.00
  int64_t large_upload_bytes = 10'000'000'000;  // 10 GB (10^9-byte GB, as billing): frozen above
  std::map<std::string, Money> monthly_budgets;  // by project; a project without one has no budget

  // The defaults above in currency `c`, no budgets.
  static FirewallPolicy defaults(Currency c);
};

// The rules for costs billed in currency `c`: a tenant's own thresholds for its currency (each
// one it left unset is the default), the defaults for any other. The server's firewall and the
// costs dashboard both use it, so the lines drawn are the lines that alert.
FirewallPolicy tenant_policy(const CostFirewallSettings& settings, Currency tenant_currency, Currency c);

// One card's cost on one UTC day.
struct CardDayCost {
  std::string node;
  int64_t gpu = 0;                    // index on the node
  TimeMs day = 0;                     // UTC day start
  Money cost;                         // micro-exact
  std::vector<std::string> projects;  // sorted, unique: who ran on it that day
};

struct FirewallInput {
  Currency currency = Currency::kUSD;
  TimeMs month = 0;  // UTC start of the calendar month evaluated
  TimeMs day = 0;    // UTC start of the latest day evaluated, inside the month
  // Rated lines of the month to date. Lines whose `from` lies outside [month, day + 1 day) are
  // ignored, so a whole rated period may be passed. A line counts on the UTC day of its `from`:
  // rate with RatingInput::lines_per_day (as the server does), or an egress line sums a
  // run's month from its first record and a GPU-time line its month's pieces.
  std::vector<ChargeLine> lines;
  std::vector<CardDayCost> cards;  // days outside [month, day] are ignored
};

// Alerts ordered by kind (the enum's order), then key. Errors (all at once, each naming its
// field): `month` not a month start, `day` not a day start inside the month, a currency other
// than `currency` in the policy, a line or a card, negative thresholds or budgets, a percentage
// outside 0..100, large_upload_bytes not positive.
Result<std::vector<Alert>> evaluate_firewall(const FirewallPolicy& policy, const FirewallInput& in);

// Per-card per-day cost of GPU time from rated lines: every non-credit line in GPU-seconds with an
// allocation is shared equally among the allocation's cards (its placement; a milli-GPU share has
// one card) and among UTC days in proportion to its time in each (a zero-length line counts on
// the day of `from`). Each piece is rounded half to even to the micro-unit, so a card-day may
// differ from the exact share by half a micro-unit per line. Ordered by day, node, gpu.
// Errors: a line's allocation absent from `allocations`, or an allocation without cards.
Result<std::vector<CardDayCost>> card_day_costs(const std::vector<ChargeLine>& lines,
                                                const std::vector<Allocation>& allocations);

// "2026-11-29" for a time on that UTC day.
std::string utc_date(TimeMs t);

}  // namespace gpurent
