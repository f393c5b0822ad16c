// Hourly GPU demand: how many GPUs a tenant needs in each hour of a horizon, the input of the
// mix optimizer (advisor/mix.h). Built from a CSV text, from a list of GPU intervals (jobs or
// metered allocations), from the Philly trace, or from a vector the caller already has (metered
// history). Every builder validates: an empty curve, a negative hour or an absurd size is an
// error naming the field (or the line and column). Value types and free functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "sim/philly.h"

namespace gpurent {

inline constexpr int64_t kMaxDemandHours = 100'000;  // about 11 years of hours
inline constexpr int64_t kMaxGpusPerHour = 1'000'000;

struct DemandCurve {
  std::vector<int64_t> gpus;    // GPUs needed in hour i (>= 0)
  std::optional<TimeMs> start;  // UTC start of hour 0 (on an hour boundary), when known
};

// Checks the curve: 1..kMaxDemandHours hours, each 0..kMaxGpusPerHour, start on an hour
// boundary. Errors name `field` ("demand.gpus_per_hour[3]").
Status validate_demand(const DemandCurve& d, const std::string& field);

// A curve from values the caller already has (metered history: GPUs in use per hour).
Result<DemandCurve> make_demand_curve(std::vector<int64_t> gpus, std::optional<TimeMs> start = std::nullopt);

// CSV text, one row per hour, in one of three shapes:
//   "hour,gpus" header, then rows "<hour>,<gpus>" where every hour is either an index counting
//     from 0 (0, 1, 2, ...) or an RFC 3339 instant on an hour boundary, each one hour after the
//     previous (the first one becomes `start`);
//   "gpus" header, then one number per row;
//   no header: one number per row.
// Blank lines and lines starting with '#' are skipped; CRLF is accepted. Errors carry `source`
// as the field and name the line and column ("line 4, column gpus: ...").
Result<DemandCurve> parse_demand_csv(std::string_view text, const std::string& source);

// GPUs held over [start, end) (a job's run, a metered allocation). end <= start holds nothing.
struct GpuInterval {
  TimeMs start = 0;
  TimeMs end = 0;
  int64_t gpus = 0;
};

// How the GPUs in use during one hour become that hour's demand.
enum class HourlyMeasure {
  // The most GPUs in use at any instant of the hour: the capacity that runs every job when it
  // asks, without queueing. The default: a plan sized on it never delays work.
  kPeak,
  // The GPU-seconds used in the hour / 3600, rounded up: the capacity that suffices if jobs may
  // shift within the hour. Never above kPeak.
  kAverageCeil,
};
const char* hourly_measure_name(HourlyMeasure m);

// Hour 0 starts at the earliest start rounded down to a UTC hour; the curve ends with the hour of
// the latest end. `window` [from, to), when given, widens it to cover at least that: the hours of
// the window with nothing running count as 0 GPUs (a plan sized on a month must not be sized on
// the two days work ran in it). Errors: no interval with positive length, more than
// kMaxDemandHours hours, or an hour above kMaxGpusPerHour.
Result<DemandCurve> demand_from_intervals(const std::vector<GpuInterval>& intervals, HourlyMeasure m,
                                          std::optional<std::pair<TimeMs, TimeMs>> window = std::nullopt);

// Philly jobs as intervals [submit, submit + duration): the trace records what each job asked
// for and how long it ran, so this is the demand (every job running as soon as it is submitted),
// not what the cluster managed to run.
Result<DemandCurve> demand_from_philly(const std::vector<PhillyJob>& jobs, HourlyMeasure m = HourlyMeasure::kPeak);

// The curve as a histogram: distinct GPU counts in ascending order with the number of hours at
// each (zero included). Exact for the mix optimizer, where reservations span the whole horizon and
// the order of the hours does not change any cost.
struct DemandLevel {
  int64_t gpus = 0;
  int64_t hours = 0;
};
std::vector<DemandLevel> demand_levels(const DemandCurve& d);

}  // namespace gpurent
