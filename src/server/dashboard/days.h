// What the cost dashboards (GET /api/v1/dashboard/costs and /cost-performance) share: the range
// of whole UTC days they cover, the tenants a caller may see, and each tenant's invoices per UTC
// day — equal to build_invoice over [d, d + 1 day) (server/invoices.h), the very invoice
// GET /api/v1/invoices?from=d&to=d+1 returns, so a dashboard day equals that invoice to the cent;
// read through a DayInvoiceSource, which loads the store once per month.
// DayRange and dashboard_tenants are stateless; a DayInvoices belongs to one request (not
// thread-safe) and reads the store only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "insight/day_range.h"
#include "server/api/app.h"
#include "server/services/invoices.h"

namespace gpurent {

// The tenants a cost dashboard covers for p: operators every tenant, or the one `tenant` names
// (id or name); tenant users their own (naming another tenant is 404, as invoices); supplier
// users none (403). Ordered by name.
Result<std::vector<Record>> dashboard_tenants(App& app, const Principal& p, const std::optional<std::string>& tenant);



// One tenant's invoices per UTC day, each built on first use.
class DayInvoices {
 public:
  DayInvoices(StoreReader& store, const GpuCatalog& catalog, std::string tenant_id, TimeMs now);
  // The invoice of [day, day + 1 day); `day` is a UTC midnight. The pointer stays valid for the
  // object's life.
  Result<const Invoice*> day(TimeMs day);

 private:
  DayInvoiceSource source_;
  std::map<TimeMs, Invoice> cache_;
};

}  // namespace gpurent
