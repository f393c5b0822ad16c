// The fixed-point decimal text the dashboards print (shares, GPU-hours, scores). Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace gpurent {

// v / 10^decimals as a decimal string: fixed_decimal(9912, 2) = "99.12", fixed_decimal(-5, 1) = "-0.5",
// fixed_decimal(7, 0) = "7".
std::string fixed_decimal(int64_t v, int decimals);

}  // namespace gpurent
