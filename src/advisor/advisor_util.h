// Small helpers the advisor's calculators share: integer division rounded half to even with
// 128-bit operands, and reading a price field with a ceiling. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>

#include "core/fields.h"
#include "core/money.h"

namespace gpurent {

// a / b rounded half to even; b > 0. Not range-checked: the caller decides what fits.
__int128 div_half_even(__int128 a, __int128 b);

// div_half_even saturated to the int64 range (for physical quantities: microseconds, bytes/s,
// per-mille; money goes through Money::mul_ratio or a checked path).
int64_t div_half_even_sat(__int128 a, __int128 b);

// Reads f[key] as money in currency c. Absent: an error when `required`, else nullopt (the key
// is still marked as known). Present: zero is an error when `positive`; more than `max_units`
// whole units is an error (the ceilings catch misplaced decimal points and keep products in range).
std::optional<Money> read_capped_money(Fields& f, const char* key, Currency c, int64_t max_units, bool required,
                                       bool positive);

}  // namespace gpurent
