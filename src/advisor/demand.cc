#include "advisor/demand.h"

#include <algorithm>
#include <charconv>

namespace gpurent {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_cells(std::string_view line) {
  std::vector<std::string_view> out;
  size_t from = 0;
  for (;;) {
    const size_t comma = line.find(',', from);
    out.push_back(trim(line.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from)));
    if (comma == std::string_view::npos) return out;
    from = comma + 1;
  }
}

// A whole number written in plain digits (no sign, no decimals).
std::optional<int64_t> parse_count(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

TimeMs floor_to_hour(TimeMs t) {
  TimeMs q = t / kMsPerHour;
  if (t % kMsPerHour != 0 && t < 0) --q;
  return q * kMsPerHour;
}

}  // namespace

Status validate_demand(const DemandCurve& d, const std::string& field) {
  if (d.gpus.empty()) return Error::invalid(field, Message("advisor.demand.empty"));
  if (static_cast<int64_t>(d.gpus.size()) > kMaxDemandHours)
    return Error::invalid(field, Message("advisor.demand.too_many_hours")
                                     .arg("hours", std::to_string(d.gpus.size()))
                                     .arg("max", std::to_string(kMaxDemandHours)));
  for (size_t i = 0; i < d.gpus.size(); ++i)
    if (d.gpus[i] < 0 || d.gpus[i] > kMaxGpusPerHour)
      return Error::invalid(field + "[" + std::to_string(i) + "]",
                            Message("advisor.demand.gpus_range")
                                .arg("max", std::to_string(kMaxGpusPerHour))
                                .arg("got", std::to_string(d.gpus[i])));
  if (d.start && floor_to_hour(*d.start) != *d.start)
    return Error::invalid(field, Message("advisor.demand.start_not_hour").arg("start", format_rfc3339(*d.start)));
  return ok_status();
}

Result<DemandCurve> make_demand_curve(std::vector<int64_t> gpus, std::optional<TimeMs> start) {
  DemandCurve d{std::move(gpus), start};
  if (auto s = validate_demand(d, "demand"); !s) return s.error();
  return d;
}

Result<DemandCurve> parse_demand_csv(std::string_view text, const std::string& source) {
  DemandCurve d;
  enum class Shape { kUnknown, kHourGpus, kGpus } shape = Shape::kUnknown;
  enum class HourKind { kUnknown, kIndex, kTime } hour_kind = HourKind::kUnknown;
  TimeMs prev_time = 0;
  int64_t line_no = 0;
  // The problem on this line; `column` is the CSV's own column name ("" for the whole line).
  auto bad = [&](const char* column, Message why) {
    Message at = *column ? Message("advisor.demand.csv.line_column").arg("column", column)
                         : Message("advisor.demand.csv.line");
    return Error::invalid(source, std::move(at).arg("line", std::to_string(line_no)).arg("reason", std::move(why)));
  };
  auto gpus_cell = [&](std::string_view cell) -> Result<int64_t> {
    auto v = parse_count(cell);
    if (!v || *v > kMaxGpusPerHour)
      return bad("gpus", Message("advisor.demand.csv.gpus")
                             .arg("max", std::to_string(kMaxGpusPerHour))
                             .arg("got", std::string(cell)));
    return *v;
  };
  size_t from = 0;
  while (from <= text.size()) {
    size_t nl = text.find('\n', from);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = trim(text.substr(from, nl - from));
    from = nl + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    const auto cells = split_cells(line);
    if (shape == Shape::kUnknown) {
      if (cells.size() == 2 && cells[0] == "hour" && cells[1] == "gpus") {
        shape = Shape::kHourGpus;
        continue;
      }
      if (cells.size() == 1 && cells[0] == "gpus") {
        shape = Shape::kGpus;
        continue;
      }
      if (cells.size() != 1 || !parse_count(cells[0]))
        return bad("", Message("advisor.demand.csv.header").arg("got", std::string(line)));
      shape = Shape::kGpus;  // headerless single column: this line is the first hour
    }
    if (static_cast<int64_t>(d.gpus.size()) >= kMaxDemandHours)
      return bad("", Message("advisor.demand.csv.too_many_hours").arg("max", std::to_string(kMaxDemandHours)));
    const size_t want = shape == Shape::kHourGpus ? 2 : 1;
    if (cells.size() != want)
      return bad("",
                 (want == 2 ? Message("advisor.demand.csv.cells_hour_gpus") : Message("advisor.demand.csv.cell_gpus"))
                     .arg("got", std::to_string(cells.size())));
    if (shape == Shape::kHourGpus) {
      const std::string_view h = cells[0];
      const int64_t index = static_cast<int64_t>(d.gpus.size());
      if (hour_kind == HourKind::kUnknown) hour_kind = parse_count(h) ? HourKind::kIndex : HourKind::kTime;
      if (hour_kind == HourKind::kIndex) {
        auto v = parse_count(h);
        if (!v || *v != index)
          return bad("hour", Message("advisor.demand.csv.hour_index")
                                 .arg("hour", std::to_string(index))
                                 .arg("got", std::string(h)));
      } else {
        auto t = parse_rfc3339(h, "hour");
        if (!t || floor_to_hour(*t) != *t)
          return bad("hour", Message("advisor.demand.csv.hour_time").arg("got", std::string(h)));
        if (index == 0) {
          d.start = *t;
        } else if (*t != prev_time + kMsPerHour) {
          return bad("hour", Message("advisor.demand.csv.hour_next")
                                 .arg("want", format_rfc3339(prev_time + kMsPerHour))
                                 .arg("got", std::string(h)));
        }
        prev_time = *t;
      }
    }
    auto g = gpus_cell(cells.back());
    if (!g) return g.error();
    d.gpus.push_back(*g);
  }
  if (d.gpus.empty()) return Error::invalid(source, Message("advisor.demand.csv.empty"));
  return d;
}

const char* hourly_measure_name(HourlyMeasure m) { return m == HourlyMeasure::kPeak ? "peak" : "average_ceil"; }

namespace {

// Each hour's peak level of the intervals, into `gpus` (one entry per hour from t0).
void peak_per_hour(const std::vector<GpuInterval>& intervals, TimeMs t0, std::vector<int64_t>& gpus) {
  const size_t hours = gpus.size();
  // Sweep the starts and ends in time order. An hour's peak is the level at its first instant
  // and after every group of events at one instant inside it ([start, end) is half-open, so a
  // job ending when another starts does not overlap it).
  std::vector<std::pair<TimeMs, int64_t>> events;
  events.reserve(intervals.size() * 2);
  for (const GpuInterval& iv : intervals) {
    if (iv.end <= iv.start || iv.gpus == 0) continue;
    events.emplace_back(iv.start, iv.gpus);
    events.emplace_back(iv.end, -iv.gpus);
  }
  std::sort(events.begin(), events.end());
  int64_t level = 0;
  size_t e = 0;
  for (size_t h = 0; h < hours; ++h) {
    const TimeMs h0 = t0 + static_cast<TimeMs>(h) * kMsPerHour, h1 = h0 + kMsPerHour;
    while (e < events.size() && events[e].first <= h0) level += events[e++].second;
    int64_t peak = level;
    while (e < events.size() && events[e].first < h1) {
      const TimeMs at = events[e].first;
      while (e < events.size() && events[e].first == at) level += events[e++].second;
      peak = std::max(peak, level);
    }
    gpus[h] = peak;
  }
}

// Each hour's average GPUs of the intervals, rounded up (capped at kMaxGpusPerHour + 1), into
// `gpus` (one entry per hour from t0).
void average_ceil_per_hour(const std::vector<GpuInterval>& intervals, TimeMs t0, std::vector<int64_t>& gpus) {
  const size_t hours = gpus.size();
  // GPU-milliseconds per hour: the partial first and last hours directly, the full hours in
  // between through a difference array of GPUs.
  std::vector<__int128> gpu_ms(hours, 0);
  std::vector<int64_t> full(hours + 1, 0);
  for (const GpuInterval& iv : intervals) {
    if (iv.end <= iv.start || iv.gpus == 0) continue;
    const auto hs = static_cast<size_t>((iv.start - t0) / kMsPerHour);
    const auto he = static_cast<size_t>((iv.end - 1 - t0) / kMsPerHour);
    if (hs == he) {
      gpu_ms[hs] += static_cast<__int128>(iv.gpus) * (iv.end - iv.start);
      continue;
    }
    gpu_ms[hs] += static_cast<__int128>(iv.gpus) * (t0 + static_cast<TimeMs>(hs + 1) * kMsPerHour - iv.start);
    gpu_ms[he] += static_cast<__int128>(iv.gpus) * (iv.end - (t0 + static_cast<TimeMs>(he) * kMsPerHour));
    full[hs + 1] += iv.gpus;
    full[he] -= iv.gpus;
  }
  __int128 running = 0;
  for (size_t h = 0; h < hours; ++h) {
    running += full[h];
    const __int128 total = gpu_ms[h] + running * kMsPerHour;
    const __int128 ceil_gpus = (total + kMsPerHour - 1) / kMsPerHour;
    gpus[h] = ceil_gpus > kMaxGpusPerHour + 1 ? kMaxGpusPerHour + 1 : static_cast<int64_t>(ceil_gpus);
  }
}

}  // namespace

Result<DemandCurve> demand_from_intervals(const std::vector<GpuInterval>& intervals, HourlyMeasure m,
                                          std::optional<std::pair<TimeMs, TimeMs>> window) {
  TimeMs first = 0, last = 0;
  bool any = false;
  for (size_t i = 0; i < intervals.size(); ++i) {
    const GpuInterval& iv = intervals[i];
    if (iv.gpus < 0 || iv.gpus > kMaxGpusPerHour)
      return Error::invalid("intervals[" + std::to_string(i) + "].gpus",
                            Message("advisor.demand.interval_gpus_range")
                                .arg("max", std::to_string(kMaxGpusPerHour))
                                .arg("got", std::to_string(iv.gpus)));
    if (iv.end <= iv.start || iv.gpus == 0) continue;
    first = any ? std::min(first, iv.start) : iv.start;
    last = any ? std::max(last, iv.end) : iv.end;
    any = true;
  }
  if (!any) return Error::invalid("intervals", Message("advisor.demand.intervals_empty"));
  if (window && window->second > window->first) {
    first = std::min(first, window->first);
    last = std::max(last, window->second);
  }
  const TimeMs t0 = floor_to_hour(first);
  const __int128 span = static_cast<__int128>(last) - t0;
  if (span > static_cast<__int128>(kMaxDemandHours) * kMsPerHour)
    return Error::invalid("intervals",
                          Message("advisor.demand.intervals_too_long").arg("max", std::to_string(kMaxDemandHours)));
  const auto hours = static_cast<size_t>((span + kMsPerHour - 1) / kMsPerHour);
  DemandCurve d;
  d.start = t0;
  d.gpus.assign(hours, 0);

  if (m == HourlyMeasure::kPeak)
    peak_per_hour(intervals, t0, d.gpus);
  else
    average_ceil_per_hour(intervals, t0, d.gpus);
  for (size_t h = 0; h < hours; ++h)
    if (d.gpus[h] > kMaxGpusPerHour)
      return Error::invalid("intervals", Message("advisor.demand.hour_too_many_gpus")
                                             .arg("hour", std::to_string(h))
                                             .arg("time", format_rfc3339(t0 + static_cast<TimeMs>(h) * kMsPerHour))
                                             .arg("max", std::to_string(kMaxGpusPerHour)));
  return d;
}

Result<DemandCurve> demand_from_philly(const std::vector<PhillyJob>& jobs, HourlyMeasure m) {
  std::vector<GpuInterval> intervals;
  intervals.reserve(jobs.size());
  for (const PhillyJob& j : jobs) intervals.push_back({j.submit, j.submit + j.duration_ms, j.gpus});
  return demand_from_intervals(intervals, m);
}

std::vector<DemandLevel> demand_levels(const DemandCurve& d) {
  std::vector<int64_t> sorted = d.gpus;
  std::sort(sorted.begin(), sorted.end());
  std::vector<DemandLevel> out;
  for (int64_t g : sorted) {
    if (out.empty() || out.back().gpus != g) out.push_back({g, 0});
    ++out.back().hours;
  }
  return out;
}

}  // namespace gpurent
