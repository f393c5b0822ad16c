#include "meter/rollup.h"

#include <algorithm>
#include <map>

namespace gpurent {

TimeMs minute_of(TimeMs t) {
  TimeMs m = t / kMinuteMs * kMinuteMs;
  return m > t ? m - kMinuteMs : m;
}

void MetricStat::add(int64_t v) {
  max = n == 0 ? v : std::max(max, v);
  ++n;
  sum += v;
}

void MetricStat::merge(const MetricStat& o) {
  if (o.n == 0) return;
  max = n == 0 ? o.max : std::max(max, o.max);
  n += o.n;
  sum += o.sum;
}

std::optional<int64_t> MetricStat::avg() const {
  if (n == 0) return std::nullopt;
  // Metrics are never negative (validation), so this is round-half-up.
  return (2 * sum + n) / (2 * n);
}

void GpuMinute::add(const GpuMetrics& m) {
  ++samples;
  utilization_pct.add(m.utilization_pct);
  memory_used_mib.add(m.memory_used_mib);
  power_mw.add(m.power_mw);
  sm_clock_mhz.add(m.sm_clock_mhz);
  gr_engine_active_pct.add(m.gr_engine_active_pct);
}

void GpuMinute::merge(const GpuMinute& o) {
  samples += o.samples;
  utilization_pct.merge(o.utilization_pct);
  memory_used_mib.merge(o.memory_used_mib);
  power_mw.merge(o.power_mw);
  sm_clock_mhz.merge(o.sm_clock_mhz);
  gr_engine_active_pct.merge(o.gr_engine_active_pct);
}

std::vector<GpuMinute> roll_up_gpu(std::span<const GpuSample> samples) {
  std::map<TimeMs, GpuMinute> by_minute;
  for (const GpuSample& s : samples) {
    GpuMinute& m = by_minute[minute_of(s.at)];
    m.minute = minute_of(s.at);
    m.add(s.metrics);
  }
  std::vector<GpuMinute> out;
  out.reserve(by_minute.size());
  for (auto& [t, m] : by_minute) out.push_back(m);
  return out;
}

std::vector<JobMinute> roll_up_job(std::span<const JobSample> samples) {
  std::map<TimeMs, JobMinute> by_minute;
  for (const JobSample& s : samples) {
    JobMinute& m = by_minute[minute_of(s.at)];
    m.minute = minute_of(s.at);
    ++m.samples;
    m.sum += s.delta;
  }
  std::vector<JobMinute> out;
  out.reserve(by_minute.size());
  for (auto& [t, m] : by_minute) out.push_back(m);
  return out;
}

JobCounters job_totals(std::span<const JobSample> samples) {
  JobCounters t;
  for (const JobSample& s : samples) t += s.delta;
  return t;
}

}  // namespace gpurent
