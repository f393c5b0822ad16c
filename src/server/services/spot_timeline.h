// Each offer's spot prices as the single writer needs them (model/offer.h SpotPriceEntry;
// docs/resources/offers.md#spot-prices): the latest (a new price must start after it) and the one
// in force at any time from now on, in one record per offer (kind "spot-timelines", id
// "spot-of-<offer id>"), kept by the spot-price create in the same transaction. Neither the
// create nor the scheduler's tick reads the offers' whole price history, which grows with every
// spot trade of the market. The record holds, newest first, the prices still to come when it was
// written and the one in force then: an older one can never be in force again. Prices recorded
// before the records were kept are noted once, at server start (backfill_spot_timelines); until
// then the readers below walk the history as before. Functions of the control loop's transaction.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/result.h"
#include "store/store.h"

namespace gpurent {

struct SpotPoint {
  TimeMs from = 0;
  int64_t price_micros = 0;  // per GPU-hour, in the offer's currency
  bool operator==(const SpotPoint&) const = default;
};

// How many prices dated in the future one offer may have waiting (a create past it is a 422).
inline constexpr size_t kMaxPendingSpotPrices = 100;

// The offer's timeline, newest first (empty: no spot price yet).
Result<std::vector<SpotPoint>> spot_timeline(StoreTx& tx, const std::string& offer_id);

// Adds price `p` (newer than every price of the offer) to its timeline, dropping what can no
// longer be in force at `now` or later.
Status note_spot_price(StoreTx& tx, const std::string& offer_id, SpotPoint p, TimeMs now);

// Offer id -> its spot price in force at `now`, for every offer that has one. A timeline record
// that does not decode is reported (services/record_faults.h) and left out.
Result<std::map<std::string, int64_t>> spot_prices_in_force(StoreTx& tx, TimeMs now);

// Notes the timeline of every offer from the prices already stored, once (a marker record says it
// is done; later calls do nothing). At server start.
Status backfill_spot_timelines(StoreTx& tx, TimeMs now);

}  // namespace gpurent
