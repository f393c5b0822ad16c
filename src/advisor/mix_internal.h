// Private to the mix optimizer's files (mix.cc, mix_parse.cc, mix_output.cc; not for other
// modules): the capacity-mode wire names, the load curve that the baselines and the steps price
// on-demand against, and the steps compute_mix attaches to its result. Free functions and a class
// that is immutable once built (it refers to the levels it was built from); thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "advisor/mix.h"
#include "core/fields.h"

namespace gpurent::mix_detail {

using i128 = __int128;

inline constexpr EnumEntry<CapacityMode> kModes[] = {{CapacityMode::kOnDemand, "on_demand"},
                                                     {CapacityMode::kReserved1m, "reserved_1m"},
                                                     {CapacityMode::kReserved12m, "reserved_12m"},
                                                     {CapacityMode::kReserved36m, "reserved_36m"},
                                                     {CapacityMode::kSpot, "spot"}};

inline std::string num(int64_t v) { return std::to_string(v); }

// ---- Baselines (micro-units, no spot) ----

// G(x) = Σ_h min(d_h, x): the GPU-hours of demand at or below x GPUs.
class LoadCurve {
 public:
  explicit LoadCurve(const std::vector<DemandLevel>& levels)
      : levels_(levels), below_(levels.size() + 1, 0), hours_above_(levels.size() + 1, 0) {
    for (size_t k = 0; k < levels.size(); ++k)
      below_[k + 1] = below_[k] + static_cast<i128>(levels[k].gpus) * levels[k].hours;
    for (size_t k = levels.size(); k-- > 0;) hours_above_[k] = hours_above_[k + 1] + levels[k].hours;
  }
  i128 operator()(int64_t x) const {
    const auto it =
        std::upper_bound(levels_.begin(), levels_.end(), x, [](int64_t v, const DemandLevel& l) { return v < l.gpus; });
    const auto k = static_cast<size_t>(it - levels_.begin());
    return below_[k] + static_cast<i128>(x) * hours_above_[k];
  }

 private:
  const std::vector<DemandLevel>& levels_;
  std::vector<i128> below_;
  std::vector<int64_t> hours_above_;
};

// The demand above `base` GPUs bought on-demand, cheapest option first: cost in micro-units and
// the GPU-hours per on-demand option (in MixModel::hourly order). -1 when the options fall short.
i128 on_demand_above(const MixModel& m, const LoadCurve& g, int64_t base, std::vector<int64_t>* gpu_hours);

// The arithmetic of the result, in the order a reader checks it (mix_output.cc).
std::vector<MixStep> mix_steps(const MixResult& r, const MixInput& in, const MixModel& m);

}  // namespace gpurent::mix_detail
