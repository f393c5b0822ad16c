// Invoices: a tenant's allocations (the ledger), commitments and usage over a period, rated by the
// billing engine per contract (offers not under a contract at their list prices, without SLA
// clauses), one section per contract. Reads the store only (any thread).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "billing/rating.h"
#include "catalog/gpu_catalog.h"
#include "model/job_run.h"
#include "store/store.h"

namespace gpurent {

struct InvoiceSection {
  std::string contract_id;    // empty: list prices
  std::string contract_name;  // "list prices" when no contract
  std::string supplier_id;
  RatingResult rated;
  RatingInput input;  // what was rated (the firewall maps lines back to cards through it)
};

// One contract's (or one supplier's list prices') rating input, as loaded from the store.
struct InvoiceInput {
  std::string contract_id;  // empty: list prices
  std::string supplier_id;
  RatingInput in;
  // Per allocation: where its usage points (storage I/O, egress, tokens) were read from — its
  // window's start rounded down to the minute (a rolled-up minute is stamped at its start), not
  // before an earlier run of its job ended. Points are read over [this, window end).
  std::map<std::string, TimeMs> usage_from;
};

struct Invoice {
  std::string tenant_id;
  std::string tenant_name;
  TimeMs from = 0;
  TimeMs to = 0;
  TimeMs rated_until = 0;  // min(to, now): a month in progress is rated to date
  std::vector<InvoiceSection> sections;
  std::vector<std::string> unpriced;  // allocations no offer sells (reported, not billed)
};

// A run's utilization as the billing engine reads it (the idle rules): at each reading's time in
// [from, to), the highest of its cards' latest readings (raw samples, or a rolled-up minute's
// maximum). Instances' idle auto-stop reads it too.
Result<std::vector<UtilSample>> run_utilization(StoreReader& store, const std::vector<RunCards>& placement, TimeMs from,
                                                TimeMs to);

// Runs still open are billed up to `now`; a period that has not begun yet has no sections.
// `lines_per_day`: storage I/O, egress and GPU-time lines per UTC day (RatingInput), for daily rules.
Result<Invoice> build_invoice(StoreReader& store, const GpuCatalog& catalog, const std::string& tenant_id, TimeMs from,
                              TimeMs to, TimeMs now, bool lines_per_day = false);

// A tenant's invoices of single UTC days, each equal to build_invoice(day, day + 1 day, now) but
// read from the store once per calendar month (the month to date) and narrowed to the day: the
// dashboards rate a month of days this way (`unpriced` is left empty). One request's object:
// not thread-safe.
class DayInvoiceSource {
 public:
  DayInvoiceSource(StoreReader& store, const GpuCatalog& catalog, std::string tenant_id, TimeMs now);
  Result<Invoice> day(TimeMs day);  // `day`: a UTC midnight

 private:
  StoreReader& store_;
  const GpuCatalog& catalog_;
  std::string tenant_id_;
  std::string tenant_name_;
  TimeMs now_;
  std::map<TimeMs, std::map<std::string, InvoiceInput>> months_;  // by month start, by group key
};
// {"tenant_id","tenant","period","sections":[{contract..., lines, totals}],"totals":{"USD":{...}},"unpriced"}
nlohmann::json to_json(const Invoice& inv);
// All sections' lines as one CSV (plain or FOCUS); each row carries its currency.
std::string invoice_csv(const Invoice& inv, bool focus);

}  // namespace gpurent
