#include "core/money.h"

#include <limits>
#include <stdexcept>

#include "core/message.h"

namespace gpurent {

const char* currency_code(Currency c) { return c == Currency::kCNY ? "CNY" : "USD"; }

Result<Currency> parse_currency(std::string_view s) {
  if (s == "USD") return Currency::kUSD;
  if (s == "CNY") return Currency::kCNY;
  return Error::invalid("currency", Message("money.unknown_currency").arg("value", std::string(s)));
}

Result<Money> Money::parse(std::string_view s, Currency c) {
  auto bad = [&](Message why) {
    return Error::invalid("amount",
                          Message("money.not_decimal").arg("value", std::string(s)).arg("why", std::move(why)));
  };
  if (s.empty()) return bad(Message("money.why.empty"));
  bool neg = false;
  size_t i = 0;
  if (s[0] == '-') { neg = true; i = 1; }
  __int128 whole = 0;
  int int_digits = 0;
  for (; i < s.size() && s[i] != '.'; ++i) {
    if (s[i] < '0' || s[i] > '9') return bad(Message("money.why.unexpected_character"));
    whole = whole * 10 + (s[i] - '0');
    if (++int_digits > 13) return bad(Message("money.why.too_large"));
  }
  if (int_digits == 0) return bad(Message("money.why.no_whole_digits"));
  int64_t frac = 0;
  int frac_digits = 0;
  if (i < s.size()) {
    ++i;  // '.'
    if (i == s.size()) return bad(Message("money.why.no_fraction_digits"));
    for (; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') return bad(Message("money.why.unexpected_character"));
      if (++frac_digits > 6) return bad(Message("money.why.too_many_decimals"));
      frac = frac * 10 + (s[i] - '0');
    }
  }
  for (int k = frac_digits; k < 6; ++k) frac *= 10;
  __int128 m = whole * kMicrosPerUnit + frac;
  // 13 whole digits reach 9,999,999,999,999 but micro-units in int64 stop at 9,223,372,036,854.775807:
  // past it the cast would wrap (and flip the sign).
  if (m > INT64_MAX) return bad(Message("money.why.too_large"));
  return Money(static_cast<int64_t>(neg ? -m : m), c);
}

static Error currency_mismatch(Currency a, Currency b) {
  // Built in place: GCC 12 warns (falsely, -Wstringop-overread) when a short string is moved in.
  Error e;
  e.code = Code::kInvalid;
  e.detail = Message("money.currency_mismatch").arg("a", currency_code(a)).arg("b", currency_code(b));
  e.message = render_en(e.detail);
  return e;
}

Result<Money> Money::plus(const Money& o) const {
  if (o.currency_ != currency_) return currency_mismatch(currency_, o.currency_);
  int64_t r;
  if (__builtin_add_overflow(micros_, o.micros_, &r)) return Error::make(Code::kInvalid, Message("money.overflow"));
  return Money(r, currency_);
}

Result<Money> Money::minus(const Money& o) const {
  if (o.currency_ != currency_) return currency_mismatch(currency_, o.currency_);
  int64_t r;
  if (__builtin_sub_overflow(micros_, o.micros_, &r)) return Error::make(Code::kInvalid, Message("money.overflow"));
  return Money(r, currency_);
}

__int128 div_half_even_wide(__int128 num, __int128 den) {
  // A zero divisor is a caller's bug, but the hardware answers it with SIGFPE, which ends the
  // process: an exception instead reaches the route's handler (a 500) or the thread's.
  if (den == 0) throw std::domain_error("half-even division by zero");
  __int128 q = num / den;
  const __int128 r = num % den;
  if (r != 0) {
    const __int128 twice = (r < 0 ? -r : r) * 2;
    if (twice > den || (twice == den && q % 2 != 0)) q += num < 0 ? -1 : 1;
  }
  return q;
}

static bool fits_int64(__int128 q) {
  return q <= std::numeric_limits<int64_t>::max() && q >= std::numeric_limits<int64_t>::min();
}

int64_t div_round_half_even(__int128 num, int64_t den, bool* overflow) {
  const __int128 q = div_half_even_wide(num, den);
  if (!fits_int64(q)) {
    *overflow = true;
    return 0;
  }
  return static_cast<int64_t>(q);
}

int64_t div_half_even_checked(__int128 num, int64_t den) {
  const __int128 q = div_half_even_wide(num, den);
  if (!fits_int64(q)) throw std::overflow_error("a half-even quotient left the int64 range (inputs not bounded)");
  return static_cast<int64_t>(q);
}

int64_t div_half_even_sat(__int128 num, __int128 den) {
  const __int128 q = div_half_even_wide(num, den);
  if (q > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (q < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(q);
}

Result<Money> Money::mul_ratio(int64_t num, int64_t den) const {
  if (den <= 0) return Error::make(Code::kInvalid, Message("money.ratio_denominator"));
  bool overflow = false;
  int64_t r = div_round_half_even(static_cast<__int128>(micros_) * num, den, &overflow);
  if (overflow) return Error::make(Code::kInvalid, Message("money.overflow"));
  return Money(r, currency_);
}

Money Money::round_to_cents() const {
  int64_t cents = div_half_even_checked(micros_, 10'000);
  // Within a cent of int64's end the rounded amount does not fit: the cent toward zero does.
  if (cents > std::numeric_limits<int64_t>::max() / 10'000) --cents;
  if (cents < std::numeric_limits<int64_t>::min() / 10'000) ++cents;
  return Money(cents * 10'000, currency_);
}

std::string Money::amount_string() const {
  __int128 m = micros_;
  bool neg = m < 0;
  if (neg) m = -m;
  auto whole = static_cast<unsigned long long>(m / kMicrosPerUnit);
  auto frac = static_cast<unsigned long long>(m % kMicrosPerUnit);
  std::string f = std::to_string(frac);
  f.insert(0, 6 - f.size(), '0');
  while (f.size() > 2 && f.back() == '0') f.pop_back();
  return (neg ? "-" : "") + std::to_string(whole) + "." + f;
}

std::string Money::to_string() const { return amount_string() + " " + currency_code(currency_); }

}  // namespace gpurent
