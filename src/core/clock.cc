#include "core/clock.h"

#include <algorithm>

#include <chrono>
#include <cstdio>

namespace gpurent {

TimeMs SystemClock::now() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

static void civil_from_days(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

std::string format_rfc3339(TimeMs t) {
  int64_t days = t >= 0 ? t / 86'400'000 : -((-t + 86'399'999) / 86'400'000);
  int64_t ms_of_day = t - days * 86'400'000;
  int64_t y;
  unsigned m, d;
  civil_from_days(days, &y, &m, &d);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lld.%03lldZ", static_cast<long long>(y), m, d,
                static_cast<long long>(ms_of_day / 3'600'000), static_cast<long long>(ms_of_day / 60'000 % 60),
                static_cast<long long>(ms_of_day / 1000 % 60), static_cast<long long>(ms_of_day % 1000));
  return buf;
}

Result<TimeMs> parse_rfc3339(std::string_view s, const std::string& field) {
  auto bad = [&]() { return Error::invalid(field, Message("time.not_rfc3339").arg("value", std::string(s))); };
  auto num = [&](size_t pos, size_t len, int* out) {
    if (pos + len > s.size()) return false;
    int v = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
  };
  int Y, M, D, h = 0, mi = 0, sec = 0, ms = 0;
  if (!num(0, 4, &Y) || s.size() < 10 || s[4] != '-' || !num(5, 2, &M) || s[7] != '-' || !num(8, 2, &D)) return bad();
  static const unsigned kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (M < 1 || M > 12 || D < 1 || static_cast<unsigned>(D) > kDays[M - 1]) return bad();
  bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
  if (M == 2 && D == 29 && !leap) return bad();
  int64_t offset_min = 0;
  if (s.size() > 10) {
    if ((s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !num(11, 2, &h) || s.size() < 19 || s[13] != ':' ||
        !num(14, 2, &mi) || s[16] != ':' || !num(17, 2, &sec))
      return bad();
    if (h > 23 || mi > 59 || sec > 59) return bad();
    size_t i = 19;
    if (i < s.size() && s[i] == '.') {
      ++i;
      int digits = 0;
      ms = 0;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        if (digits < 3) ms = ms * 10 + (s[i] - '0');
        ++digits;
        ++i;
      }
      if (digits == 0) return bad();
      for (int k = digits; k < 3; ++k) ms *= 10;
    }
    if (i >= s.size()) return bad();
    if (s[i] == 'Z' || s[i] == 'z') {
      if (i + 1 != s.size()) return bad();
    } else if (s[i] == '+' || s[i] == '-') {
      int oh, om;
      if (s.size() != i + 6 || !num(i + 1, 2, &oh) || s[i + 3] != ':' || !num(i + 4, 2, &om) || oh > 23 || om > 59)
        return bad();
      offset_min = (oh * 60 + om) * (s[i] == '+' ? 1 : -1);
    } else {
      return bad();
    }
  }
  int64_t days = days_from_civil(Y, M, D);
  return ((days * 24 + h) * 60 + mi - offset_min) * 60'000 + sec * 1000LL + ms;
}

std::vector<TimeInterval> merge_intervals(std::vector<TimeInterval> v) {
  std::sort(v.begin(), v.end());
  std::vector<TimeInterval> out;
  for (const TimeInterval& i : v) {
    if (!out.empty() && i.first <= out.back().second)
      out.back().second = std::max(out.back().second, i.second);
    else
      out.push_back(i);
  }
  return out;
}

}  // namespace gpurent
