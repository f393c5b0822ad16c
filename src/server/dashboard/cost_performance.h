// The cost-performance dashboard (GET /api/v1/dashboard/cost-performance, docs/api.md#dashboard):
// for each job that reported at least two points of a quality metric in the range (Store::
// job_metrics), the metric's gain from its first to its last point, the GPU time the allocation
// ledger gave the job over that same span (exact milli-GPU × ms), its cost (the day invoices'
// lines of its runs over the range, exact money: charges, credits and the GPU time a reserved
// commitment covered kept apart, JobCostParts), its cards' mean utilization over the span, and
// the rank of gain per GPU-hour among the jobs of that metric, with flags for inefficient jobs.
// Metrics are doubles (they are not money); money and GPU time stay integers.
// Free functions; build_* reads the store only; thread-safe as the Store is.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "insight/efficiency.h"
#include "server/dashboard/days.h"

namespace gpurent {

// A job's day-invoice lines over the range in one currency, by what they are. charges + credits is
// what the job was billed (JobEfficiency::cost); reserved_covered is not billed to the job at all.
struct JobCostParts {
  int64_t charges = 0;           // µ: every line but credits (usage, fees), each line's amount to the cent
  int64_t credits = 0;           // µ: the credit lines (SLA refunds), each to the cent; ≤ 0
  int64_t reserved_covered = 0;  // µ: GPU time a reserved commitment covered, at its price (billed
                                 // with the commitment, to no job), micro-exact
};

struct CostPerformance {
  DayRange range;
  std::vector<JobEfficiency> jobs;
  std::map<std::string, std::optional<double>> medians;
  std::map<std::string, std::map<Currency, JobCostParts>> costs;  // by job id, then currency
};

// The jobs of `tenants` (and of project_id only, when set) over the range.
Result<CostPerformance> build_cost_performance(StoreReader& store, const GpuCatalog& catalog,
                                               const std::vector<Record>& tenants, const std::string& project_id,
                                               const DayRange& range, TimeMs now);

nlohmann::json to_json(const CostPerformance& c);

}  // namespace gpurent
