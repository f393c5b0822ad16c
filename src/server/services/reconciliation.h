// Reconciliation: per run (allocation) and per job, the GPU-seconds gpurent allocated (the ledger:
// GPUs × time) against the GPU-seconds the meter saw (time covered by each card's utilization
// samples), with the gaps flagged. A card's sample covers the time to its next sample, at most
// `max_sample_gap` (a silent exporter is a gap, not usage); a rolled-up minute covers its minute.
// With the Slurm executor, Slurm's own accounting of each run (sacct's elapsed time × AllocTRES
// gres/gpu, clipped to the period) joins the report. Reads the store only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/message.h"
#include "store/store.h"

namespace gpurent {

struct ReconciliationRow {
  std::string allocation, job_id, job, project_id;
  TimeMs from = 0, to = 0;           // the run clipped to the period
  int64_t allocated_milli_s = 0;     // milli-GPU-seconds
  int64_t metered_milli_s = 0;
  bool flagged = false;              // |gap| > 5% of allocated, or > 300 GPU-seconds
  Message note;  // why the row is flagged; empty when it is not
  int64_t slurm_job_id = 0;                   // the run's Slurm job (executor slurm); 0: none
  std::optional<int64_t> slurm_milli_s;       // Slurm's accounting: elapsed × AllocTRES gres/gpu
};

// Slurm's accounting of a job's runs (sacct, or jobcomp): id -> one record per run.
struct SlurmRun {
  TimeMs start = 0, end = 0;
  int64_t elapsed_s = 0;
  int64_t gpus = 0;  // AllocTRES gres/gpu over all the job's nodes
};
using SlurmTimes = std::map<int64_t, std::vector<SlurmRun>>;

struct ReconciliationOptions {
  DurationMs max_sample_gap = kMsPerMinute;
};

// `slurm`: Slurm's accounting when the executor is Slurm (runs are joined by their slurm_job_id).
Result<std::vector<ReconciliationRow>> reconcile(StoreReader& store, const std::string& tenant_id, TimeMs from, TimeMs to,
                                                 TimeMs now, const ReconciliationOptions& opt = {},
                                                 const SlurmTimes* slurm = nullptr);
// {"period":..., "rows":[...], "jobs":[per-job sums], "totals":{...}}; GPU-seconds as exact decimals.
nlohmann::json to_json(const std::vector<ReconciliationRow>& rows, TimeMs from, TimeMs to);

}  // namespace gpurent
