// A tenant's balances, live (docs/billing.md#balances): per currency, its top-ups, its issued
// invoices (net of credit notes; prepaid: every one not void, postpaid: the unpaid ones), the
// drafts not issued yet (the month to date, and the previous month until its close issues it) and
// the burn per hour (what one more hour of its open runs and commitments adds to the draft, rated
// by the engine), combined by billing/balance.h. The cost firewall's pass evaluates it for every
// tenant that is watched (prepaid, or postpaid with a credit limit); GET
// /api/v1/tenants/{ref}/balance shows it. Reads the store only (any thread).
#pragma once

#include <string>
#include <vector>

#include "billing/balance.h"
#include "catalog/gpu_catalog.h"
#include "store/store.h"

namespace gpurent {

class MonthInvoiceSource;  // server/services/invoices.h

struct TenantBalances {
  std::string tenant_id;
  std::string tenant;
  Currency currency = Currency::kUSD;  // the tenant's
  BillingSettings settings;
  TimeMs at = 0;
  std::vector<Balance> balances;  // the tenant's currency first, then any other it has figures in
};

// `tenant` is the stored tenant record. `invoices`: the tenant's months as already read (its
// `until` at least now + 1 h, or the burn is built apart); without it the month is read once here.
Result<TenantBalances> tenant_balances(StoreReader& store, const GpuCatalog& catalog, const Record& tenant, TimeMs now,
                                       MonthInvoiceSource* invoices = nullptr);

// {"tenant_id","tenant","at","payment","runway_alert_minutes","stop_minutes","credit_limit"?,
//  "balances":[{"currency","top_ups","invoiced","accruing","burn_per_hour","credit_limit"?,
//  "available"?,"runway_minutes"?}]} — amounts in the currency, to the cent.
nlohmann::json to_json(const TenantBalances& b);

}  // namespace gpurent
