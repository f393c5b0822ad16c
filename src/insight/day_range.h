// The range of whole UTC days a cost dashboard covers (GET /api/v1/dashboard/costs and
// /cost-performance): [from, to) widened to midnights, at most 31 days. Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace gpurent {

inline constexpr int64_t kDashboardMaxDays = 31;
inline constexpr int64_t kDashboardDefaultDays = 7;

// [from, to) widened to whole UTC days: from down to its midnight, to up to the next one.
struct DayRange {
  TimeMs from = 0;
  TimeMs to = 0;
  std::vector<TimeMs> days;  // the midnight of each day, in order

  // The day's index in `days`, or -1 when t lies outside the range.
  int64_t index_of(TimeMs t) const;
};

// The `from` and `to` query values (RFC 3339 or a date; absent: to = the end of today (UTC),
// from = to − 7 days). Errors name the field: "from"/"to" (not a time), "to" (not after from),
// "range" (more than 31 days once widened).
Result<DayRange> parse_day_range(const std::optional<std::string>& from, const std::optional<std::string>& to,
                                 TimeMs now);

// "YYYY-MM" for a time in that UTC month.
std::string utc_month(TimeMs t);

}  // namespace gpurent
