#include "billing/balance.h"

#include <algorithm>
#include <limits>

#include "billing/rating_input.h"

namespace gpurent {

Balance balance_of(const BillingSettings& s, const BalanceFigures& f) {
  Balance b;
  b.figures = f;
  b.payment = s.payment;
  // In 128 bits, held to int64's range: far past any real balance, with its sign kept.
  auto left = [](int64_t from, int64_t a, int64_t b) {
    const __int128 v = static_cast<__int128>(from) - a - b;
    return static_cast<int64_t>(std::clamp<__int128>(v, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
  };
  if (s.payment == Payment::kPrepaid)
    b.available = left(f.top_ups, f.invoiced, f.accruing);
  else if (f.credit_limit)
    b.available = left(*f.credit_limit, f.invoiced, f.accruing);
  if (b.available && f.burn_per_hour > 0)
    b.runway_minutes = std::max<int64_t>(0, static_cast<int64_t>(static_cast<__int128>(*b.available) * 60 / f.burn_per_hour));
  else if (b.available && *b.available <= 0)
    b.runway_minutes = 0;
  return b;
}

namespace {

std::string day_label(TimeMs t) { return format_rfc3339(day_start(t)).substr(0, 10); }

Alert balance_alert(AlertKind kind, const Balance& b, const std::string& tenant, int64_t threshold, TimeMs now) {
  const Currency c = b.figures.currency;
  const std::string cur = currency_code(c);
  Alert a;
  a.kind = kind;
  a.severity = kind == AlertKind::kBalanceExhausted ? AlertSeverity::kCritical : AlertSeverity::kWarning;
  a.key = std::string(enum_name(kAlertKindNames, kind)) + ":" + cur + ":" + day_label(now);
  a.subject = tenant;
  a.from = day_start(now);
  a.to = now;
  a.measured = b.runway_minutes ? std::to_string(*b.runway_minutes) : "0";
  a.threshold = std::to_string(threshold);
  a.unit = "min";
  a.message = Message(kind == AlertKind::kBalanceExhausted ? "alert.balance_exhausted" : "alert.balance_low")
                  .arg("tenant", tenant)
                  .arg("available", Money(*b.available, c).round_to_cents().amount_string())
                  .arg("currency", cur)
                  .arg("burn", Money(b.figures.burn_per_hour, c).round_to_cents().amount_string())
                  .arg("runway", a.measured)
                  .arg("threshold", a.threshold);
  a.stop_work = kind == AlertKind::kBalanceExhausted;
  a.hold_submissions = a.stop_work;
  return a;
}

}  // namespace

std::vector<Alert> evaluate_balance(const BillingSettings& s, const Balance& b, const std::string& tenant, TimeMs now) {
  std::vector<Alert> out;
  if (!s.enforced() || !b.available) return out;
  const bool exhausted = *b.available <= 0 || (b.runway_minutes && *b.runway_minutes < s.stop_minutes);
  if (s.runway_alert_minutes > 0 && b.runway_minutes && *b.runway_minutes < s.runway_alert_minutes)
    out.push_back(balance_alert(AlertKind::kBalanceLow, b, tenant, s.runway_alert_minutes, now));
  if (exhausted) out.push_back(balance_alert(AlertKind::kBalanceExhausted, b, tenant, s.stop_minutes, now));
  return out;
}

}  // namespace gpurent
