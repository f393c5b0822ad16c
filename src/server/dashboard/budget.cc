// Budget burn-down and the storage I/O share text of the costs dashboard (server/dashboard_costs.h).
#include <algorithm>

#include "server/dashboard/costs.h"

namespace gpurent {

Result<BudgetBurn> burn_down(const Money& monthly, TimeMs month, TimeMs asof, const std::vector<Money>& daily_spent) {
  const Currency c = monthly.currency();
  const TimeMs end = add_months(month, 1);
  const TimeMs at = std::clamp(asof, month, end);
  const int64_t days = (at - month + kMsPerDay - 1) / kMsPerDay;
  if (static_cast<int64_t>(daily_spent.size()) != days)
    return Error::make(Code::kInternal, "burn_down: " + std::to_string(daily_spent.size()) + " days of spending for " +
                                            std::to_string(days) + " days begun");
  BudgetBurn b;
  b.monthly = monthly;
  b.month = month;
  Money spent = Money::zero(c);
  for (size_t i = 0; i < daily_spent.size(); ++i) {
    auto sum = spent.plus(daily_spent[i]);
    if (!sum) return sum.error();
    spent = *sum;
    auto rem = monthly.minus(spent);
    if (!rem) return rem.error();
    b.burn.push_back({month + static_cast<int64_t>(i) * kMsPerDay, spent, *rem});
  }
  b.spent = spent;
  auto rem = monthly.minus(spent);
  if (!rem) return rem.error();
  b.remaining = *rem;
  b.projected_month_end = Money::zero(c);
  if (at > month) {
    auto p = spent.mul_ratio(end - month, at - month);
    if (!p) return p.error();
    b.projected_month_end = *p;
  }
  b.projected_over = b.projected_month_end.micros() >= monthly.micros();
  return b;
}

std::string share_pct_text(int64_t storage_io_micros, int64_t charges_micros) {
  int64_t tenths = 0;
  if (charges_micros > 0 && storage_io_micros > 0) {
    bool overflow = false;
    tenths = div_round_half_even(static_cast<__int128>(storage_io_micros) * 1000, charges_micros, &overflow);
    if (overflow) tenths = 0;  // unreachable: a share of int64 money
  }
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
}

}  // namespace gpurent
