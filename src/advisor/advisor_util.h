// Small helpers the advisor's calculators share: reading a price field with a ceiling (the
// divisions rounded half to even are core/money.h's). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>

#include "core/fields.h"
#include "core/money.h"

namespace gpurent {

// a / b rounded half to even, not range-checked (core/money.h div_half_even_wide); b > 0.
inline __int128 div_half_even(__int128 a, __int128 b) { return div_half_even_wide(a, b); }

// Reads f[key] as money in currency c. Absent: an error when `required`, else nullopt (the key
// is still marked as known). Present: zero is an error when `positive`; more than `max_units`
// whole units is an error (the ceilings catch misplaced decimal points and keep products in range).
std::optional<Money> read_capped_money(Fields& f, const char* key, Currency c, int64_t max_units, bool required,
                                       bool positive);

}  // namespace gpurent
