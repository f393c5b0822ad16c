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

#include "server/api/app.h"
#include "server/services/invoices.h"

namespace gpurent {

inline constexpr int64_t kDashboardMaxDays = 31;
inline constexpr int64_t kDashboardDefaultDays = 7;

// [from, to) widened to whole UTC days: from down to its midnight, to up to the next one.
struct DayRange {
  TimeMs from = 0;
  TimeMs to = 0;
  std::vector<TimeMs> days;  // the midnight of each day, in order

  // The day's index in `days`, or -1 when t lies outside the range.
  int64_t index_of(TimeMs t) const;
};

// The `from` and `to` query values (RFC 3339 or a date; absent: to = the end of today (UTC),
// from = to − 7 days). Errors name the field: "from"/"to" (not a time), "to" (not after from),
// "range" (more than 31 days once widened).
Result<DayRange> parse_day_range(const std::optional<std::string>& from, const std::optional<std::string>& to,
                                 TimeMs now);

// The tenants a cost dashboard covers for p: operators every tenant, or the one `tenant` names
// (id or name); tenant users their own (naming another tenant is 404, as invoices); supplier
// users none (403). Ordered by name.
Result<std::vector<Record>> dashboard_tenants(App& app, const Principal& p, const std::optional<std::string>& tenant);

// "YYYY-MM" for a time in that UTC month.
std::string utc_month(TimeMs t);


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
