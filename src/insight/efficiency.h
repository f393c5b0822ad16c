// The cost-performance dashboard's arithmetic: each job's gain of a quality metric per GPU-hour,
// its rank among the jobs reporting that metric, the metric's median, and flags for inefficient
// jobs; GPU-hours and cost per unit of gain exactly. Metrics are doubles (they are not money);
// money and GPU time stay integers. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/message.h"
#include "core/money.h"

namespace gpurent {

inline constexpr int64_t kLowUtilizationPct = 40;  // low_utilization below this mean
inline constexpr size_t kLowGainMinJobs = 3;       // low_gain needs this many jobs with the metric

struct EfficiencyFlag {
  std::string key;  // low_gain | no_gain | low_utilization
  Message text;     // why, as a code with its figures
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

// cost ÷ gain to the micro-unit, rounded half to even, when gain > 0 (and the quotient fits below
// 9 × 10^18), else absent. Exact: the double gain is divided as the binary fraction it is.
std::optional<Money> cost_per_unit_gain(const Money& cost, double gain);

}  // namespace gpurent
