// The daily price index (price_index.h).
#include "market/price_index.h"

#include <algorithm>
#include <map>
#include <string>

#include "core/money.h"

namespace gpurent {

Result<std::vector<IndexDay>> daily_index(const std::vector<IndexTrade>& trades, TimeMs from, TimeMs to) {
  constexpr TimeMs kDay = 86'400'000;
  struct Sum {
    __int128 value = 0;  // Σ price × GPU-hours, micro-units
    int64_t gpu_hours = 0, trades = 0, low = 0, high = 0;
  };
  std::map<TimeMs, Sum> days;
  for (size_t i = 0; i < trades.size(); ++i) {
    const IndexTrade& t = trades[i];
    if (t.price_micros <= 0 || t.gpu_hours <= 0)
      return Error::invalid("trades[" + std::to_string(i) + "]", "a trade needs a positive price and volume");
    if (t.at < from || t.at >= to) continue;
    Sum& s = days[t.at - ((t.at % kDay) + kDay) % kDay];
    s.value += static_cast<__int128>(t.price_micros) * t.gpu_hours;
    s.low = s.trades == 0 ? t.price_micros : std::min(s.low, t.price_micros);
    s.high = std::max(s.high, t.price_micros);
    s.gpu_hours += t.gpu_hours;
    ++s.trades;
  }
  std::vector<IndexDay> out;
  for (const auto& [day, s] : days) {
    bool overflow = false;
    const int64_t vwap = div_round_half_even(s.value, s.gpu_hours, &overflow);
    if (overflow) return Error::invalid("trades", "the day's traded value does not fit");
    out.push_back({day, vwap, s.gpu_hours, s.trades, s.low, s.high});
  }
  return out;
}

}  // namespace gpurent
