#include "insight/efficiency.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "core/clock.h"
#include "insight/decimal.h"

namespace gpurent {
namespace {


std::string num_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::string gpu_hours_text(__int128 gpu_milli_ms) {
  const int64_t thousandths = div_half_even_sat(gpu_milli_ms, kMsPerHour);  // milli-GPU-hours
  return fixed_decimal(thousandths, 3);
}

std::optional<Money> cost_per_unit_gain(const Money& cost, double gain) {
  if (!(gain > 0) || !std::isfinite(gain)) return std::nullopt;
  const double v = std::nearbyint(static_cast<double>(cost.micros()) / gain);  // half to even (default mode)
  if (!std::isfinite(v) || std::fabs(v) >= 9.0e18) return std::nullopt;
  return Money(static_cast<int64_t>(v), cost.currency());
}

std::map<std::string, std::optional<double>> rank_jobs(std::vector<JobEfficiency>& jobs) {
  std::map<std::string, std::vector<double>> per_metric;
  for (JobEfficiency& j : jobs) {
    j.flags.clear();
    j.gain_per_gpu_hour.reset();
    const double v = j.gpu_milli_ms > 0 ? j.gain / (static_cast<double>(j.gpu_milli_ms) / static_cast<double>(kMilliMsPerGpuHour)) : NAN;
    if (std::isfinite(v)) {
      j.gain_per_gpu_hour = v;
      per_metric[j.metric].push_back(v);
    } else {
      per_metric[j.metric];  // the metric has a (null) median
    }
  }
  std::map<std::string, std::optional<double>> medians;
  for (const auto& [metric, values] : per_metric) medians[metric] = median(values);

  std::stable_sort(jobs.begin(), jobs.end(), [](const JobEfficiency& a, const JobEfficiency& b) {
    if (a.metric != b.metric) return a.metric < b.metric;
    if (a.gain_per_gpu_hour.has_value() != b.gain_per_gpu_hour.has_value()) return a.gain_per_gpu_hour.has_value();
    if (a.gain_per_gpu_hour && *a.gain_per_gpu_hour != *b.gain_per_gpu_hour)
      return *a.gain_per_gpu_hour > *b.gain_per_gpu_hour;
    return std::tie(a.job, a.job_id) < std::tie(b.job, b.job_id);
  });
  int64_t rank = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    JobEfficiency& j = jobs[i];
    rank = (i == 0 || jobs[i - 1].metric != j.metric) ? 1 : rank + 1;
    j.rank = rank;
    const auto& med = medians[j.metric];
    if (j.gain > 0 && j.gain_per_gpu_hour && med && *med > 0 && per_metric[j.metric].size() >= kLowGainMinJobs &&
        *j.gain_per_gpu_hour < *med / 4)
      j.flags.push_back({"low_gain", Message("dashboard.flag.low_gain")
                                         .arg("gain", num_text(*j.gain_per_gpu_hour))
                                         .arg("median", num_text(*med))
                                         .arg("metric", j.metric)});
    if (j.gain <= 0)
      j.flags.push_back({"no_gain", Message("dashboard.flag.no_gain")
                                        .arg("metric", j.metric)
                                        .arg("first", num_text(j.first))
                                        .arg("last", num_text(j.last))});
    if (j.mean_util_pct && *j.mean_util_pct < kLowUtilizationPct)
      j.flags.push_back({"low_utilization", Message("dashboard.flag.low_utilization")
                                                .arg("mean", std::to_string(*j.mean_util_pct))
                                                .arg("limit", std::to_string(kLowUtilizationPct))});
  }
  return medians;
}

}  // namespace gpurent
