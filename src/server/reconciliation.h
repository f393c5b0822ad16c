// Reconciliation: per run (allocation) and per job, the GPU-seconds gpurent allocated (the ledger:
// GPUs × time) against the GPU-seconds the meter saw (time covered by each card's utilization
// samples), with the gaps flagged. A card's sample covers the time to its next sample, at most
// `max_sample_gap` (a silent exporter is a gap, not usage); a rolled-up minute covers its minute.
// Slurm's accounting (sacct) joins this report in a later issue. Reads the store only.
#pragma once

#include <string>
#include <vector>

#include "store/store.h"

namespace gpurent {

struct ReconciliationRow {
  std::string allocation, job_id, job, project_id;
  TimeMs from = 0, to = 0;           // the run clipped to the period
  int64_t allocated_milli_s = 0;     // milli-GPU-seconds
  int64_t metered_milli_s = 0;
  bool flagged = false;              // |gap| > 5% of allocated, or > 300 GPU-seconds
  std::string note;
};

struct ReconciliationOptions {
  DurationMs max_sample_gap = 60'000;
};

Result<std::vector<ReconciliationRow>> reconcile(Store& store, const std::string& tenant_id, TimeMs from, TimeMs to,
                                                 TimeMs now, const ReconciliationOptions& opt = {});
// {"period":..., "rows":[...], "jobs":[per-job sums], "totals":{...}}; GPU-seconds as exact decimals.
nlohmann::json to_json(const std::vector<ReconciliationRow>& rows, TimeMs from, TimeMs to);

}  // namespace gpurent
