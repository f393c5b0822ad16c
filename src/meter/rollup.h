// Per-minute aggregation of usage samples: what raw samples become after the retention window,
// and what billing and the dashboard read for long ranges. A GPU minute keeps, per metric, the
// count of samples that carried it, their sum and their maximum, so minutes merge exactly (late
// samples, a window cut mid-minute) and averages are derived, never stored. A job minute keeps
// the sums of its deltas. The SQLite store computes the same aggregates in SQL; the integration
// tests hold the two to each other. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "meter/usage.h"

namespace gpurent {

inline constexpr DurationMs kMinuteMs = 60'000;

// Start of the minute holding t (floor, also before 1970).
TimeMs minute_of(TimeMs t);

struct MetricStat {
  int64_t n = 0;  // samples that carried the metric
  int64_t sum = 0;
  int64_t max = 0;  // 0 when n == 0

  void add(int64_t v);
  void add(const std::optional<int64_t>& v) {
    if (v) add(*v);
  }
  void merge(const MetricStat& o);
  // sum / n rounded half up; nullopt when n == 0.
  std::optional<int64_t> avg() const;
  bool operator==(const MetricStat&) const = default;
};

struct GpuMinute {
  TimeMs minute = 0;
  int64_t samples = 0;
  MetricStat utilization_pct, memory_used_mib, power_mw, sm_clock_mhz, gr_engine_active_pct;

  void add(const GpuMetrics& m);
  void merge(const GpuMinute& o);  // same minute
  bool operator==(const GpuMinute&) const = default;
};

struct JobMinute {
  TimeMs minute = 0;
  int64_t samples = 0;
  JobCounters sum;

  bool operator==(const JobMinute&) const = default;
};

// Samples of ONE GPU (their node/gpu/uuid fields are not looked at), any order -> minutes in
// time order.
std::vector<GpuMinute> roll_up_gpu(std::span<const GpuSample> samples);
// Samples of ONE job, any order -> minutes in time order.
std::vector<JobMinute> roll_up_job(std::span<const JobSample> samples);
// Sum of the deltas.
JobCounters job_totals(std::span<const JobSample> samples);

}  // namespace gpurent
