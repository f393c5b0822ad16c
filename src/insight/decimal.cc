#include "insight/decimal.h"

namespace gpurent {

std::string fixed_decimal(int64_t v, int decimals) {
  int64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const int64_t a = v < 0 ? -v : v;
  if (decimals <= 0) return (v < 0 ? "-" : "") + std::to_string(a);
  std::string frac = std::to_string(a % scale);
  frac.insert(0, decimals - frac.size(), '0');
  return (v < 0 ? "-" : "") + std::to_string(a / scale) + "." + frac;
}

}  // namespace gpurent
