// Incidents and outage of one supplier's nodes per UTC day over a period, and the node time and
// down time behind its availability (the supplier-health view, GET /api/v1/dashboard/suppliers).
// Exact integers; pure; not thread-safe (one per supplier and request).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/clock.h"

namespace gpurent {

// The UTC midnight at or before t.
inline TimeMs floor_utc_day(TimeMs t) { return t - (((t % kMsPerDay) + kMsPerDay) % kMsPerDay); }

class OutageTally {
 public:
  // Events count inside [from, end) (end: the period's end, or now if earlier); the days run from
  // floor_utc_day(from) through the day holding days_to − 1 ms (the whole period asked for).
  OutageTally(TimeMs from, TimeMs end, TimeMs days_to);

  void count_incident(TimeMs at);
  void add_down(TimeMs a, TimeMs b);   // [a, b) inside [from, to): split across UTC days
  void add_node_time(TimeMs ms) { node_ms_ += ms; }

  TimeMs from() const { return from_; }
  TimeMs end() const { return end_; }
  TimeMs first_day() const { return first_day_; }
  size_t days() const { return incidents_.size(); }
  int64_t incidents(size_t day) const { return incidents_[day]; }
  int64_t outage_ms(size_t day) const { return outage_ms_[day]; }
  int64_t total_incidents() const { return total_incidents_; }
  __int128 node_ms() const { return node_ms_; }
  __int128 down_ms() const { return down_ms_; }

 private:
  TimeMs first_day_, from_, end_;
  std::vector<int64_t> incidents_, outage_ms_;  // per day
  int64_t total_incidents_ = 0;
  __int128 node_ms_ = 0, down_ms_ = 0;
};

}  // namespace gpurent
