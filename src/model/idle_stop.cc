#include "model/idle_stop.h"

namespace gpurent {

std::optional<IdleStop> read_idle_stop(Fields& f, const char* key) {
  std::optional<IdleStop> out;
  f.object(key, false, [&](Fields& r) {
    IdleStop rule;
    rule.below_percent = r.integer("below_percent", 1, 100);
    rule.minutes = r.integer("minutes", 0, kMaxIdleStopMinutes);
    r.finish();
    out = rule;
  });
  return out;
}

json idle_stop_json(const IdleStop& r) { return {{"below_percent", r.below_percent}, {"minutes", r.minutes}}; }

std::optional<TimeMs> instance_idle_since(const std::vector<UtilPoint>& points, const IdleStop& rule) {
  if (rule.minutes <= 0 || points.empty() || points.back().pct >= rule.below_percent) return std::nullopt;
  size_t first = points.size() - 1;
  while (first > 0 && points[first - 1].pct < rule.below_percent) --first;
  const TimeMs idle_at = points[first].at + rule.minutes * 60'000;
  if (points.back().at < idle_at) return std::nullopt;
  return idle_at;
}

}  // namespace gpurent
