// The market's daily price index (docs/market.md#price-index): per UTC day, the volume-weighted
// average price of the day's trades of one (GPU model, region, currency) — every delivery window
// together, each trade weighted by its GPU-hours (GPUs × window hours):
//   VWAP(day) = Σ price × GPU-hours ÷ Σ GPU-hours, over the trades executed that day,
// in micro-units per GPU-hour rounded half to even. A day without trades has no index (it is left
// out, not carried over). Pure and deterministic; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "core/clock.h"
#include "core/result.h"

namespace gpurent {

struct IndexTrade {
  TimeMs at = 0;              // when it was executed
  int64_t price_micros = 0;   // per GPU-hour, > 0
  int64_t gpu_hours = 0;      // > 0
};

struct IndexDay {
  TimeMs day = 0;                // 00:00 UTC of the day
  int64_t vwap_micros = 0;       // per GPU-hour
  int64_t gpu_hours = 0;         // the day's volume
  int64_t trades = 0;
  int64_t low_micros = 0, high_micros = 0;
};

// The days of [from, to) that had trades, oldest first. Trades outside the range are ignored. An
// error (kInvalid naming trades[i]) for a trade without a positive price or volume, or a sum that
// would not fit in 128 bits' worth of care (it cannot with API-bounded trades).
Result<std::vector<IndexDay>> daily_index(const std::vector<IndexTrade>& trades, TimeMs from, TimeMs to);

}  // namespace gpurent
