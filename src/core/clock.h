// Time: instants are integer milliseconds since the Unix epoch (UTC); durations are integer
// milliseconds. Engines never read the system clock: they are handed a Clock&.
// SystemClock is thread-safe; FakeClock is for tests and the simulator (not thread-safe).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gpurent {

using TimeMs = int64_t;      // instant, ms since epoch UTC
using DurationMs = int64_t;  // duration, ms

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimeMs now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimeMs now() const override;
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(TimeMs start = 0) : now_(start) {}
  TimeMs now() const override { return now_; }
  void set(TimeMs t) { now_ = t; }
  void advance(DurationMs d) { now_ += d; }

 private:
  TimeMs now_;
};

// RFC 3339 in UTC with milliseconds: "2026-11-29T15:41:30.000Z".
std::string format_rfc3339(TimeMs t);
// Accepts "YYYY-MM-DD", "YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)". Errors name `field`.
Result<TimeMs> parse_rfc3339(std::string_view s, const std::string& field);
// Days since 1970-01-01 for a civil date (proleptic Gregorian).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d);

}  // namespace gpurent
