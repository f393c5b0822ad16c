// Invoices: a tenant's allocations (the ledger), commitments and usage over a period, rated by the
// billing engine per contract (offers not under a contract at their list prices, without SLA
// clauses), one section per contract. Reads the store only (any thread).
#pragma once

#include <map>
#include <memory>
#include <set>
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
  // before an earlier run of its job's points end. Points are read over [this, end): an ended run's
  // end rounded up to the minute (not past the period or the job's next run), else the window's.
  std::map<std::string, TimeMs> usage_from;
  std::map<std::string, TimeMs> usage_to;  // per allocation: that end
  // Runs that ended before the month and are loaded only for the outage credit of a node failure
  // whose interruption lasted into it (their job ran again after the month began).
  std::set<std::string> credit_only;
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
// build_invoice reads only the runs that can count in the period (those open, those whose record
// was written since a day before the period's month began, and the run before each that began in
// it: docs/billing.md); this one reads every run the tenant ever had. The same invoice, slower:
// the reference the tests hold build_invoice to.
Result<Invoice> build_invoice_from_every_run(StoreReader& store, const GpuCatalog& catalog,
                                             const std::string& tenant_id, TimeMs from, TimeMs to, TimeMs now,
                                             bool lines_per_day = false);

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

// A tenant's invoices over periods that begin at a month's start, rated at instants up to
// `until`: each equal to build_invoice(store, catalog, tenant_id, from, to, now, lines_per_day),
// but each month is read from the store once (from its start to `until` or its end) and narrowed
// to each period. The cost firewall's pass rates the month to date (lines per day) and the
// balance's draft and its burn an hour ahead from one read per tenant (and the previous month
// from one more while it is not closed). Any other period (not from a month's start, or rated past
// `until` or past its month: the burn in a month's last hour) is built as build_invoice builds it.
// One caller's object: not thread-safe.
class MonthInvoiceSource {
 public:
  MonthInvoiceSource(StoreReader& store, const GpuCatalog& catalog, std::string tenant_id, TimeMs until);
  ~MonthInvoiceSource();
  MonthInvoiceSource(const MonthInvoiceSource&) = delete;
  MonthInvoiceSource& operator=(const MonthInvoiceSource&) = delete;
  Result<Invoice> invoice(TimeMs from, TimeMs to, TimeMs now, bool lines_per_day = false);
  int months_read() const { return reads_; }  // store reads so far (tests)

 private:
  struct Month;
  StoreReader& store_;
  const GpuCatalog& catalog_;
  std::string tenant_id_;
  TimeMs until_;
  int reads_ = 0;
  std::map<TimeMs, std::unique_ptr<Month>> months_;  // by month start
};

// {"tenant_id","tenant","period","sections":[{contract..., lines, totals}],"totals":{"USD":{...}},"unpriced"}
nlohmann::json to_json(const Invoice& inv);
// All sections' lines as one CSV (plain or FOCUS); each row carries its currency.
std::string invoice_csv(const Invoice& inv, bool focus);

}  // namespace gpurent
