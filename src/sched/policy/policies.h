// Factories for the allocation-experiment policies, one file each (protocol §5-§6), and the
// integer helpers they share. Each policy object is used by one simulation; not thread-safe.
#pragma once

#include <memory>

#include "sched/score_policy.h"

namespace gpurent {

std::unique_ptr<ScorePolicy> make_random_policy();
std::unique_ptr<ScorePolicy> make_dotprod_policy();
std::unique_ptr<ScorePolicy> make_gpuclustering_policy();
std::unique_ptr<ScorePolicy> make_gpupacking_policy();
std::unique_ptr<ScorePolicy> make_bestfit_policy();
std::unique_ptr<ScorePolicy> make_fgd_policy();
std::unique_ptr<ScorePolicy> make_fgdpack_policy();

// floor(a / b) for b > 0, also for negative a.
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

inline constexpr int64_t kCmax = 128000;  // CPU milli normaliser of DotProd and BestFit
inline constexpr int64_t kGmax = 8000;    // GPU milli normaliser

}  // namespace gpurent
