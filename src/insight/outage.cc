#include "insight/outage.h"

namespace gpurent {

OutageTally::OutageTally(TimeMs from, TimeMs end, TimeMs days_to) : first_day_(floor_utc_day(from)), from_(from), end_(end) {
  const size_t n = days_to > first_day_ ? static_cast<size_t>((days_to - first_day_ + kMsPerDay - 1) / kMsPerDay) : 0;
  incidents_.assign(n, 0);
  outage_ms_.assign(n, 0);
}

void OutageTally::count_incident(TimeMs at) {
  if (at < from_ || at >= end_) return;
  ++total_incidents_;
  ++incidents_[(floor_utc_day(at) - first_day_) / kMsPerDay];
}

void OutageTally::add_down(TimeMs a, TimeMs b) {
  down_ms_ += b - a;
  for (TimeMs d = floor_utc_day(a); d < b; d += kMsPerDay)
    outage_ms_[(d - first_day_) / kMsPerDay] += std::min(b, d + kMsPerDay) - std::max(a, d);
}

}  // namespace gpurent
