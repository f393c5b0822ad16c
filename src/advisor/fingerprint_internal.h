// Private to fingerprint.cc, fingerprint_parse.cc and fingerprint_output.cc (not part of the
// advisor's API): what compute_fingerprint learns about today's job (Analysis), the GPU speed
// model the option model and the explanation share (perf_of), the per-mille formatting both use,
// and explain(), which writes a result's steps, summary and notes. Pure functions and value
// types; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "advisor/advisor_util.h"
#include "advisor/fingerprint.h"
#include "catalog/gpu_catalog.h"

namespace gpurent::fingerprint_internal {

using i128 = __int128;

inline constexpr int64_t kBytesPerMb = 1'000'000;

// v / scale as a decimal with `decimals` places (trailing zeros dropped when `trim`).
inline std::string fixed(int64_t v, int64_t scale, int decimals, bool trim) {
  const bool neg = v < 0;
  const int64_t a = neg ? -v : v;
  std::string frac = std::to_string(a % scale);
  frac.insert(0, static_cast<size_t>(decimals) - frac.size(), '0');
  if (trim)
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return (neg ? "-" : "") + std::to_string(a / scale) + (frac.empty() ? "" : "." + frac);
}
inline std::string fmt_pm(int64_t pm) { return fixed(pm, 10, 1, false) + " %"; }  // 355 -> "35.5 %"

// The unit in which GPU speed is compared across models (docs/advisor/fingerprint.md).
enum class PerfMode { kRoofline, kBandwidth, kPeak, kNone };

// What compute_fingerprint learns about today's job; the option model scales these parts.
struct Analysis {
  const FingerprintInput* in = nullptr;
  const GpuCatalog* catalog = nullptr;
  const GpuModel* model = nullptr;
  int64_t n = 1;      // GPUs today
  int64_t cores = 1;  // CPU cores per GPU today (1 when unknown: only ratios matter)
  int64_t T = 0, G = 0, W = 0, N = 0, H = 0, X = 0, R = 0;  // microseconds
  bool read_from_storage = false;                           // R is set by storage: faster storage can shrink it
  bool read_cpu_bound = false;                              // R is CPU-bound decoding: more cores shrink it
  bool explore_cores = false;
  PerfMode mode = PerfMode::kPeak;
  GpuInterconnect link = GpuInterconnect::kPcie;
  int64_t link_gbps = 1;
};

// The GPU part's speed on model m, in a unit shared by every model under the same mode; nullopt
// when the catalog lacks the datasheet figure the mode needs.
std::optional<i128> perf_of(const Analysis& a, const GpuModel& m);

// Fills r.steps, r.summary and r.notes (message codes) from the finished analysis (fingerprint_output.cc).
void explain(const Analysis& a, FingerprintResult& r);

}  // namespace gpurent::fingerprint_internal
