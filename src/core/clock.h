// Time: instants are integer milliseconds since the Unix epoch (UTC); durations are integer
// milliseconds. Engines never read the system clock: they are handed a Clock&.
// SystemClock and FastForwardClock are thread-safe; FakeClock is for tests and the simulator (not thread-safe).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace gpurent {

using TimeMs = int64_t;      // instant, ms since epoch UTC
using DurationMs = int64_t;  // duration, ms

// The one spelling of each time unit (in milliseconds unless the name says seconds or hours).
inline constexpr DurationMs kMsPerSecond = 1'000;
inline constexpr DurationMs kMsPerMinute = 60 * kMsPerSecond;
inline constexpr DurationMs kMsPerHour = 60 * kMsPerMinute;
inline constexpr DurationMs kMsPerDay = 24 * kMsPerHour;
inline constexpr int64_t kSecondsPerHour = 3'600;
inline constexpr int64_t kSecondsPerDay = 24 * kSecondsPerHour;
// The billing month: a year's 8,760 hours / 12 = 730 hours (docs/money.md). Monthly prices
// (per QPS-month, reserved 1-month terms, TCO months) all use it.
inline constexpr int64_t kHoursPerBillingMonth = 730;
inline constexpr int64_t kHoursPerYear = 12 * kHoursPerBillingMonth;
inline constexpr DurationMs kMsPerBillingMonth = kHoursPerBillingMonth * kMsPerHour;
// Milli-GPU × milliseconds in one GPU-hour: metered GPU time is summed in these units.
inline constexpr int64_t kMilliMsPerGpuHour = 1000 * kMsPerHour;

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

// The system clock, or a virtual time while one is set: the demo replays its past week through
// the live services (scheduler, executor, metering, cost firewall) by setting the virtual time
// step by step, then releases it. Thread-safe.
class FastForwardClock final : public Clock {
 public:
  TimeMs now() const override {
    const TimeMs v = virtual_.load(std::memory_order_acquire);
    return v != 0 ? v : system_.now();
  }
  void set(TimeMs t) { virtual_.store(t, std::memory_order_release); }  // t != 0
  void release() { virtual_.store(0, std::memory_order_release); }
  bool fast_forwarding() const { return virtual_.load(std::memory_order_acquire) != 0; }

 private:
  std::atomic<TimeMs> virtual_{0};
  SystemClock system_;
};

// RFC 3339 in UTC with milliseconds: "2026-11-29T15:41:30.000Z".
std::string format_rfc3339(TimeMs t);
// Accepts "YYYY-MM-DD", "YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)". Errors name `field`.
Result<TimeMs> parse_rfc3339(std::string_view s, const std::string& field);
// Days since 1970-01-01 for a civil date (proleptic Gregorian).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d);

// A half-open time interval [first, second).
using TimeInterval = std::pair<TimeMs, TimeMs>;

// The intervals sorted, with overlapping or touching ones joined: time covered once each.
std::vector<TimeInterval> merge_intervals(std::vector<TimeInterval> v);

}  // namespace gpurent
