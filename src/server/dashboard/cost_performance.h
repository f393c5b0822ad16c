// The cost-performance dashboard (GET /api/v1/dashboard/cost-performance, docs/api.md#dashboard):
// for each job that reported at least two points of a quality metric in the range (Store::
// job_metrics), the metric's gain from its first to its last point, the GPU time the allocation
// ledger gave the job over that same span (exact milli-GPU × ms), its cost (the day invoices'
// lines of its runs over the range, exact money), its cards' mean utilization over the span, and
// the rank of gain per GPU-hour among the jobs of that metric, with flags for inefficient jobs.
// Metrics are doubles (they are not money); money and GPU time stay integers.
// Free functions; build_* reads the store only; thread-safe as the Store is.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/dashboard/days.h"

namespace gpurent {

inline constexpr int64_t kLowUtilizationPct = 40;  // low_utilization below this mean
inline constexpr size_t kLowGainMinJobs = 3;       // low_gain needs this many jobs with the metric

struct EfficiencyFlag {
  std::string key;  // low_gain | no_gain | low_utilization
  std::string en, zh;
};

struct JobEfficiency {
  std::string job_id, job, project, kind, metric;
  bool higher_is_better = true;
  double first = 0, last = 0;
  double gain = 0;             // last − first, negated when lower is better
  __int128 gpu_milli_ms = 0;   // milli-GPU × ms over [first point, last point]
  Money cost;                  // the job's lines over the range, in `cost.currency()`
  std::vector<Money> other_costs;  // the same job's lines in other currencies (rare; usually empty)
  std::optional<int64_t> mean_util_pct;
  // Set by rank_jobs.
  std::optional<double> gain_per_gpu_hour;  // absent without GPU time
  int64_t rank = 0;                          // 1 = best within the metric
  std::vector<EfficiencyFlag> flags;
};

// Fills gain_per_gpu_hour, rank (within each metric: best first, jobs without GPU time last, ties
// by job name then id), flags, and orders jobs by metric then rank. Returns the median gain per
// GPU-hour of each metric (over its jobs with GPU time; absent when none).
std::map<std::string, std::optional<double>> rank_jobs(std::vector<JobEfficiency>& jobs);

// "123.456": GPU-hours to three decimals, rounded half to even.
std::string gpu_hours_text(__int128 gpu_milli_ms);

// cost ÷ gain to the micro-unit when gain > 0 (and the quotient fits), else absent.
std::optional<Money> cost_per_unit_gain(const Money& cost, double gain);

struct CostPerformance {
  DayRange range;
  std::vector<JobEfficiency> jobs;
  std::map<std::string, std::optional<double>> medians;
};

// The jobs of `tenants` (and of project_id only, when set) over the range.
Result<CostPerformance> build_cost_performance(StoreReader& store, const GpuCatalog& catalog,
                                               const std::vector<Record>& tenants, const std::string& project_id,
                                               const DayRange& range, TimeMs now);

nlohmann::json to_json(const CostPerformance& c);

}  // namespace gpurent
