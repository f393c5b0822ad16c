// Private to the quote comparison (quotes.cc, quotes_parse.cc, quotes_explain.cc): the input
// limits, the rated month, formatting helpers and the functions one part calls in another.
// Not a public API: include only from src/advisor/quotes*.cc. Stateless helpers; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "advisor/quotes.h"
#include "billing/rating.h"
#include "core/fields.h"

namespace gpurent::quotes_internal {

inline constexpr int64_t kBytesPerGb = 1'000'000'000;
inline constexpr int64_t kMaxLaunches = 1000;  // runs rated per offer and plan (each a stretch per segment)
inline constexpr size_t kMaxOffers = 20;       // each offer is rated up to 10 times (on-demand + 3 per term)
inline constexpr int64_t kMaxGpus = 1024;
inline constexpr int64_t kMaxGpuLaunches = 1'000'000;  // launches × GPUs: keeps milli-GPU × ms inside int64
inline constexpr int64_t kMaxRunMinutes = 30 * 24 * 60;
// Launches × profile segments: each segment of each launch is a stretch the engine rates on its
// own (and idle rules may split it), so this bounds a quote's work, not just launches.
inline constexpr int64_t kMaxLaunchSegments = 10'000;

// The rated month: November 2026, 30 days = 720 hours (any fixed month would do; this one is whole
// and stated in the docs so every figure can be re-derived).
inline TimeMs month_from() { return days_from_civil(2026, 11, 1) * kMsPerDay; }
inline TimeMs month_to() { return days_from_civil(2026, 12, 1) * kMsPerDay; }

// Half to even on figures the request's ceilings keep far inside int64: an overflow is a bug and
// throws (core/money.h div_half_even_checked), never a wrong quote.
inline int64_t he(__int128 num, int64_t den) { return div_half_even_checked(num, den); }

inline QuoteStep step(Message text, std::string formula, json value) {
  return {std::move(text), std::move(formula), std::move(value)};
}

inline std::string gpu_hours(__int128 milli_ms) { return format_scaled(he(milli_ms * 1000, kMilliMsPerGpuHour), 3); }
inline std::string cents(const Money& m) { return m.round_to_cents().amount_string(); }
inline std::string signed_cents(const Money& m) { return (m.micros() > 0 ? "+" : "") + cents(m); }
// num / den as a percentage with one decimal ("12.5"), half to even. A den of 0 (a sticker or a
// cheapest cost that rounds to nothing) gives "0.0" for a num of 0 and "∞" ("-∞") otherwise, as
// does a percentage past int64.
inline std::string pct_tenths(int64_t num, int64_t den) {
  if (den == 0) return num == 0 ? "0.0" : num > 0 ? "∞" : "-∞";
  // A quotient past int64 (a sticker of a few micro-units against huge fees) reads as ∞ too.
  const __int128 wide = div_half_even_wide(static_cast<__int128>(num) * 1000, den);
  if (wide > INT64_MAX || wide < -INT64_MAX) return wide > 0 ? "∞" : "-∞";
  const int64_t t = static_cast<int64_t>(wide);
  const int64_t a = t < 0 ? -t : t;
  return (t < 0 ? "-" : "") + std::to_string(a / 10) + "." + std::to_string(a % 10);
}

inline QuoteColdStart cold_of(const QuotesInput& in, const QuoteOffer& o) {
  return o.cold_start.value_or(in.workload.cold_start);
}
inline int64_t cold_ms(const QuoteColdStart& c) { return (c.to_running_seconds + c.to_ready_seconds) * 1000; }
inline int64_t run_ms_of(const QuoteWorkload& w) {
  int64_t t = 0;
  for (const auto& s : w.profile) t += s.duration_ms;
  return t;
}
inline int64_t busy_ms_of(const QuoteWorkload& w) {
  int64_t t = 0;
  for (const auto& s : w.profile)
    if (s.utilization_pct >= w.idle_below_pct) t += s.duration_ms;
  return t;
}

// One workload month as rated: the launch spacing, each launch's run and computing time.
struct Month {
  const QuotesInput& in;
  TimeMs from = 0, to = 0;
  int64_t spacing = 0, run_ms = 0, busy_ms = 0;
  int64_t useful = 0;  // milli-GPU × ms computing in the month
};

// ---- quotes_parse.cc
// Facts that involve several parts of the input (also checked for inputs the server builds).
void check_input(const QuotesInput& in, FieldErrors& errs);

// ---- quotes_explain.cc
// The plan in words: "on-demand at …" or "N GPUs reserved for … months at …".
Message plan_text(const QuotePlan& p, Currency c);
// Fills x's summary and, unless x is the first-ranked b, its component differences against b.
// With a workload precision the summary speaks of cost per useful PFLOP-hour.
void explain(OfferQuote& x, const OfferQuote& b, const std::string& precision, const std::string& work_unit);
// The unit of work in words: "training step" or "hour of the job's current work".
inline Message work_unit_text(const std::string& unit) {
  return Message(unit == "step" ? "advisor.quotes.work_unit.step" : "advisor.quotes.work_unit.hour_of_current_work");
}
// Warnings for q's best plan: the idle rule catching computing time, a multi-month commitment.
void add_warnings(const Month& m, OfferQuote& q);
// Fills res.misleads from the ranked offers and res.sticker_misleads.
void explain_sticker(QuotesResult& res);

}  // namespace gpurent::quotes_internal
