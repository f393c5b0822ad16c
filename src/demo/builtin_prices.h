// Prices the demo world uses when ../shared/data/prices is absent, and the prices of the demo's
// Chinese supplier, which no public list covers. Constants; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/money.h"

namespace gpurent {

// An excerpt of a provider's public list ("lambda", "runpod") in the list's own CSV format and
// column order (CRLF line ends): the rows the representative-price rule of price_lists.h picks,
// copied from the stored lists at the commits ../shared/data/prices/SOURCE.md names. Read it
// with read_price_list() like the full file. Empty for any other provider.
std::string_view builtin_price_list(std::string_view provider);

// A price sheet stated per GPU-hour in its own currency, with its own reserved and spot prices
// (decimal text; empty = not offered).
struct StatedPriceSheet {
  std::string gpu_model;  // catalog id
  Currency currency = Currency::kCNY;
  std::string on_demand;
  std::string reserved_1m;
  std::string reserved_12m;
  std::string reserved_36m;
  std::string spot;
};

// The demo's 华东智算中心 (huadong-aidc), in CNY. Illustrative figures, not a quote.
const std::vector<StatedPriceSheet>& huadong_price_sheets();

}  // namespace gpurent
