#include "advisor/advisor_util.h"

#include <limits>
#include <string>

namespace gpurent {

__int128 div_half_even(__int128 a, __int128 b) {
  __int128 q = a / b, r = a % b;
  if (r != 0) {
    const __int128 twice = (r < 0 ? -r : r) * 2;
    if (twice > b || (twice == b && q % 2 != 0)) q += a < 0 ? -1 : 1;
  }
  return q;
}

int64_t div_half_even_sat(__int128 a, __int128 b) {
  const __int128 q = div_half_even(a, b);
  if (q > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (q < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(q);
}

std::optional<Money> read_capped_money(Fields& f, const char* key, Currency c, int64_t max_units, bool required,
                                       bool positive) {
  if (!f.has(key)) {
    if (required) f.error(key, "is required");
    f.raw(key);
    return std::nullopt;
  }
  auto m = f.opt_money(key, c);
  if (!m) return std::nullopt;
  if (positive && m->micros() == 0) {
    f.error(key, "must be greater than 0");
    return std::nullopt;
  }
  if (m->micros() > max_units * Money::kMicrosPerUnit) {
    f.error(key, "must be at most " + std::to_string(max_units) + " " + currency_code(c));
    return std::nullopt;
  }
  return m;
}

}  // namespace gpurent
