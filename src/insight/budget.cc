#include "insight/budget.h"

#include <algorithm>

#include "billing/firewall.h"
#include "core/money.h"
#include "insight/day_range.h"
#include "insight/decimal.h"

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
  return fixed_decimal(tenths, 1);
}

using json = nlohmann::json;

json money_list(const std::vector<int64_t>& v, Currency c) {
  json out = json::array();
  for (int64_t m : v) out.push_back(Money(m, c).amount_string());
  return out;
}

json to_json(const BudgetBurn& b) {
  json burn = json::array();
  for (const auto& d : b.burn)
    burn.push_back({{"date", utc_date(d.date)}, {"spent", d.spent.amount_string()}, {"remaining", d.remaining.amount_string()}});
  return {{"monthly", b.monthly.amount_string()},
          {"month", utc_month(b.month)},
          {"spent", b.spent.amount_string()},
          {"remaining", b.remaining.amount_string()},
          {"burn", std::move(burn)},
          {"projected_month_end", b.projected_month_end.amount_string()},
          {"projected_over", b.projected_over}};
}

void add_project_line(ProjectCosts& p, const ChargeLine& l, size_t day) {
  const int64_t m = l.amount.micros();
  p.daily[day] += m;
  p.total += m;
  if (l.kind != LineKind::kCredit) p.charges += m;
  p.covered += l.covered_value.round_to_cents().micros();
  if (l.rule == "storage_io") p.storage_io_daily[day] += m, p.storage_io += m;
  if (l.rule == "egress") p.egress_daily[day] += m;
}

json project_costs_json(const ProjectCosts& p, Currency c, int64_t io_share_pct) {
  // Saturated: money sums this large do not occur, but the addition must not overflow.
  const __int128 base = static_cast<__int128>(p.charges) + p.covered;
  const int64_t base64 = base > INT64_MAX ? INT64_MAX : static_cast<int64_t>(base);
  return {{"project_id", p.project_id},
          {"project", p.project},
          {"daily", money_list(p.daily, c)},
          {"storage_io_daily", money_list(p.storage_io_daily, c)},
          {"egress_daily", money_list(p.egress_daily, c)},
          {"total", Money(p.total, c).amount_string()},
          {"reserved_covered_value", Money(p.covered, c).amount_string()},
          {"storage_io_share_pct", share_pct_text(p.storage_io, base64)},
          // exact on these amounts (the share above is rounded); the firewall compares the
          // micro-exact month to date
          {"storage_io_over_threshold", static_cast<__int128>(p.storage_io) * 100 > static_cast<__int128>(io_share_pct) * base},
          {"budget", p.budget ? to_json(*p.budget) : json(nullptr)}};
}

}  // namespace gpurent
