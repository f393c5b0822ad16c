// Idle auto-stop rules of instances (docs/resources/instances.md#idle-auto-stop): an instance's own
// (Instance::idle_stop) or its tenant's default (Tenant::instance_idle_stop), and the pure rule
// that says, from metered utilization, when an instance became idle. Value types and pure
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/fields.h"
#include "core/clock.h"

namespace gpurent {

// Idle auto-stop: a running instance with GPUs stops when their metered utilization has stayed
// below `below_percent` for `minutes` (instance_idle_since). minutes 0: never (an instance's own
// rule with 0 turns its tenant's default off).
struct IdleStop {
  int64_t below_percent = 5;  // 1..100
  int64_t minutes = 30;       // 0..1440
  bool operator==(const IdleStop&) const = default;
};
inline constexpr int64_t kMaxIdleStopMinutes = 1440;

// Reads `key` as an IdleStop {below_percent, minutes} (both required) into f's errors.
std::optional<IdleStop> read_idle_stop(Fields& f, const char* key);
json idle_stop_json(const IdleStop& r);

// One utilization reading of an instance's GPUs: the highest of its cards' latest readings at `at`.
struct UtilPoint {
  TimeMs at = 0;
  int64_t pct = 0;
};
// When `rule` made the instance idle: the time at which its trailing run of readings below the
// threshold had lasted `minutes`, measured between readings (the first and the latest of that run
// at least that far apart); nothing when the latest reading is at or above it, there is none, or
// minutes is 0. `points` sorted by time.
std::optional<TimeMs> instance_idle_since(const std::vector<UtilPoint>& points, const IdleStop& rule);

}  // namespace gpurent
