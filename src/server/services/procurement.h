// A tenant's procurement split against what it achieved (docs/scheduler.md#procurement-split):
// per supplier, the target share (the tenant's procurement_split), the GPUs its running work holds
// there now (what the scheduler steers by) and the GPU-hours of its runs in a window (the
// allocation ledger). Shares are per mille of the tenant's total, each rounded half up (so they
// may not add up to exactly 1000). Reads the store only; any thread.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"

namespace gpurent {

using json = nlohmann::json;

struct ProcurementRow {
  std::string supplier, supplier_name;  // id; name "" when the supplier record is gone
  int64_t target_permille = 0;          // 0: not in the split
  int64_t held_milli = 0;               // GPU milli held by open runs now
  int64_t held_permille = 0;
  int64_t gpu_milli_ms = 0;             // GPU milli × ms of runs inside the window
  int64_t hours_permille = 0;
};

struct ProcurementReport {
  std::string tenant;  // its name
  TimeMs from = 0, to = 0;
  bool split = false;  // the tenant has a procurement split
  std::vector<ProcurementRow> rows;  // the split's suppliers in its order, then the others by name
  int64_t held_milli = 0, gpu_milli_ms = 0;
};

// Runs count from the capacity committed to them (requested_at, else running_at) to their end
// (now while open), clipped to [from, to).
Result<ProcurementReport> procurement_report(StoreReader& store, const Record& tenant, TimeMs from, TimeMs to,
                                             TimeMs now);
json to_json(const ProcurementReport& r);

}  // namespace gpurent
