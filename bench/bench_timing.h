// Timing helpers the benchmarks share: elapsed milliseconds, the median of repeated runs, and a
// fatal error. Header-only; for bench/ only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/result.h"

namespace gpurent::bench {

using BenchClock = std::chrono::steady_clock;

inline double ms_since(BenchClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(BenchClock::now() - t0).count();
}

[[noreturn]] inline void die(const std::string& what, const Error& e) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), e.message.c_str());
  std::exit(1);
}

// Median of `reps` timings of fn, in milliseconds.
template <class F>
double median_ms(int reps, F&& fn) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = BenchClock::now();
    fn();
    t.push_back(ms_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace gpurent::bench
