// Exact money: a signed count of micro-units (1e-6 of the currency's main unit) and a currency.
// No floating point anywhere. Rounding rule (docs/money.md): every operation that cannot be exact
// (multiplying by a ratio, rounding to cents) rounds half to even ("banker's rounding") at the
// target unit; parsing never rounds: more than 6 decimals is an error. Overflow is an error.
// Value type; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gpurent {

enum class Currency { kUSD, kCNY };

const char* currency_code(Currency c);
Result<Currency> parse_currency(std::string_view s);

class Money {
 public:
  static constexpr int64_t kMicrosPerUnit = 1'000'000;

  constexpr Money() = default;
  constexpr Money(int64_t micros, Currency c) : micros_(micros), currency_(c) {}
  static Money zero(Currency c) { return Money(0, c); }

  // "12", "3.2", "-0.000125": at most 6 decimals, optional leading '-', no exponent, no spaces.
  static Result<Money> parse(std::string_view amount, Currency c);

  int64_t micros() const { return micros_; }
  Currency currency() const { return currency_; }

  // Same currency required; overflow is reported.
  Result<Money> plus(const Money& o) const;
  Result<Money> minus(const Money& o) const;
  // this * num / den, rounded half to even at the micro-unit. den must be > 0.
  Result<Money> mul_ratio(int64_t num, int64_t den) const;
  // Rounded half to even to whole cents (fen for CNY); within a cent of int64's end (|amount|
  // above 9,223,372,036,854.77 units), to the cent toward zero, the nearest that fits.
  Money round_to_cents() const;

  // Canonical decimal text: at least 2 decimals, trailing zeros beyond that trimmed ("3.20", "0.000125").
  std::string amount_string() const;
  std::string to_string() const;  // "3.20 USD"

  bool operator==(const Money&) const = default;

 private:
  int64_t micros_ = 0;
  Currency currency_ = Currency::kUSD;
};

// Integer division rounded half to even (banker's rounding), the project's one implementation;
// den > 0. Pick the variant by what an overflow of the int64 result would mean:
//  - money and anything a caller can report: div_round_half_even sets *overflow (and returns 0);
//    the caller turns it into an error;
//  - a caller whose inputs validation has bounded far inside int64 (an overflow is a bug):
//    div_half_even_checked throws std::overflow_error, which the API answers with a 500;
//  - statistics and physical quantities (means, shares, bytes/s): div_half_even_sat saturates;
//  - 128-bit intermediate results: div_half_even_wide.
__int128 div_half_even_wide(__int128 num, __int128 den);
int64_t div_round_half_even(__int128 num, int64_t den, bool* overflow);
int64_t div_half_even_checked(__int128 num, int64_t den);
int64_t div_half_even_sat(__int128 num, __int128 den);

}  // namespace gpurent
