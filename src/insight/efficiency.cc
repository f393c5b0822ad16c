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
  // The double is exactly mant × 2^shift: divide the micro-units by that, in integers.
  int exp = 0;
  const double frac = std::frexp(gain, &exp);  // gain = frac × 2^exp, frac in [0.5, 1)
  int64_t mant = static_cast<int64_t>(std::ldexp(frac, 53));
  int shift = exp - 53;
  while (shift < 0 && mant % 2 == 0) mant /= 2, ++shift;
  const __int128 c = cost.micros();
  __int128 v = 0;
  if (shift >= 0) {
    // mant × 2^shift past 2^126 is more than twice any cost: the quotient rounds to 0.
    v = shift > 73 ? 0 : div_half_even_wide(c, static_cast<__int128>(mant) << shift);
  } else if (-shift <= 63) {
    v = div_half_even_wide(c * (static_cast<__int128>(1) << -shift), mant);
  } else {  // cost × 2^s / mant = q × 2^k + rem × 2^k / mant, with cost × 2^63 = q × mant + rem
    const int k = -shift - 63;
    if (k >= 63) return c == 0 ? std::optional<Money>(Money(0, cost.currency())) : std::nullopt;
    const __int128 num = c * (static_cast<__int128>(1) << 63);
    const __int128 q = num / mant, rem = num % mant;
    const __int128 limit = static_cast<__int128>(1) << (63 - k);
    if (q >= limit || q <= -limit) return std::nullopt;
    v = q * (static_cast<__int128>(1) << k) + div_half_even_wide(rem * (static_cast<__int128>(1) << k), mant);
  }
  if (v >= static_cast<__int128>(9'000'000'000'000'000'000) || v <= -static_cast<__int128>(9'000'000'000'000'000'000))
    return std::nullopt;
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
