// Private to the supplier score (supplier_score.cc, supplier_score_parse.cc, supplier_history.cc):
// integer helpers and the history grading the score calls. Not a public API: include only from
// those files. Stateless helpers; thread-compatible.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "advisor/supplier_score.h"

namespace gpurent::supplier_score_internal {

inline int64_t he128(__int128 num, __int128 den) {  // half to even for 128-bit denominators (> 0)
  __int128 q = num / den, r = num % den;
  if (r < 0) r = -r;
  if (r * 2 > den || (r * 2 == den && q % 2 != 0)) q += num < 0 ? -1 : 1;
  return static_cast<int64_t>(q);
}
inline std::string n2s(int64_t v) { return std::to_string(v); }

// "entered" when the figure was typed in rather than derived from the platform's records.
inline std::string source_of(const SupplierHistory& h, const std::string& field) {
  return std::find(h.entered.begin(), h.entered.end(), field) != h.entered.end() ? "entered" : "measured";
}

// ---- supplier_history.cc
// One history rule applied to the supplier's history: credit 0..1000‰ between bad and good, with
// the evidence as a message; no credit when the figure is missing.
SupplierItemResult grade(const SupplierHistoryRule& r, const SupplierHistory& h);

}  // namespace gpurent::supplier_score_internal
