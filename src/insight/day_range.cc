#include "insight/day_range.h"

#include "billing/firewall.h"
#include "core/fields.h"

namespace gpurent {

int64_t DayRange::index_of(TimeMs t) const {
  if (t < from || t >= to) return -1;
  return (day_start(t) - from) / kMsPerDay;
}

Result<DayRange> parse_day_range(const std::optional<std::string>& from, const std::optional<std::string>& to,
                                 TimeMs now) {
  FieldErrors errs;
  auto time_of = [&](const std::optional<std::string>& v, const char* field) -> std::optional<TimeMs> {
    if (!v) return std::nullopt;
    auto t = parse_rfc3339(*v, field);
    if (!t) {
      const auto& fe = t.error().fields;
      if (!fe.empty() && !fe[0].coded.empty())
        errs.add(field, fe[0].coded);
      else
        errs.add(field, fe.empty() ? t.error().message : fe[0].reason);
      return std::nullopt;
    }
    return *t;
  };
  const auto f = time_of(from, "from");
  const auto t = time_of(to, "to");
  if (!errs.empty()) return errs.to_error();
  DayRange r;
  const TimeMs end = t ? *t : day_start(now) + kMsPerDay;
  const TimeMs start = f ? *f : end - kDashboardDefaultDays * kMsPerDay;
  if (end <= start) return Error::invalid("to", Message("time.after_from"));
  r.from = day_start(start);
  r.to = day_start(end) == end ? end : day_start(end) + kMsPerDay;
  const int64_t n = (r.to - r.from) / kMsPerDay;
  if (n > kDashboardMaxDays)
    return Error::invalid("range", Message("insight.range.too_long")
                                       .arg("max", std::to_string(kDashboardMaxDays))
                                       .arg("from", utc_date(r.from))
                                       .arg("to", utc_date(r.to))
                                       .arg("days", std::to_string(n)));
  for (int64_t i = 0; i < n; ++i) r.days.push_back(r.from + i * kMsPerDay);
  return r;
}

std::string utc_month(TimeMs t) { return utc_date(t).substr(0, 7); }

}  // namespace gpurent
