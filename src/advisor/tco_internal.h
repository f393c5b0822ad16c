// Private to tco.cc and tco_parse.cc (not part of the advisor's API): the limits both the parser
// and compute_tco enforce.
#pragma once

#include <cstdint>

namespace gpurent::tco_internal {

inline constexpr int64_t kMaxGpus = 1'000'000;

}  // namespace gpurent::tco_internal
