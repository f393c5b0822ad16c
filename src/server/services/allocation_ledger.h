// The allocation ledger: one "allocations" record per run of a job on GPUs — opened when the job
// starts running, closed (ended_at, end_reason) when it stops or its placement changes (an
// inference replica added or removed opens a new record). Each record names the offer it is
// billed under, chosen when it opens: the first offer of the tenant's contract with the node's
// supplier that sells the node, else the supplier's first offer that does. The billing engine
// rates these records (server/invoices.h); GET /api/v1/allocations lists them.
// Called inside the control loop's transaction by every writer of a job's status.
#pragma once

#include "model/job_state.h"
#include "store/store.h"

namespace gpurent {

// Keeps the ledger in step with a job's status change (before -> after) at `now`.
Status sync_allocation(StoreTx& tx, const Record& job, const JobStatus& before, const JobStatus& after, TimeMs now);

// Merges `fields` into the job's latest run (the executor's own facts: the Slurm job id, and the
// start and end times Slurm recorded, so billing follows the executor's clock). No run: no-op.
Status annotate_latest_run(StoreTx& tx, const std::string& job_id, const std::string& project_id, const json& fields);

}  // namespace gpurent
