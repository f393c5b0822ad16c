// Helpers the scheduler service and the executors share (scheduler_service.cc, executor_sim.cc,
// executor_slurm.cc): loading stored jobs and moving them through legal states, always inside the
// control loop's transaction.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "model/job.h"
#include "sched/engine_types.h"
#include "store/store.h"

namespace gpurent::sched_detail {

Result<Currency> tenant_currency(StoreTx& tx, const std::string& tenant_id);
Result<Job> load_job(StoreTx& tx, const Record& r);
// Calls fn(record, job) for every job that holds a placement (admitted, then running).
Status for_each_placed_job(StoreTx& tx, const std::function<Status(const Record&, Job&)>& fn);
std::vector<WorkerPlacement> to_placement(const std::vector<SchedWorker>& ws);
std::vector<SchedWorker> from_placement(const std::vector<WorkerPlacement>& ps);
// Writes a job's new status; records a job event when `event` (from -> to with the reason).
Status write_status(StoreTx& tx, Record r, const JobStatus& st, bool event, TimeMs now);
// Moves a stored job through legal states only.
Status move_job(StoreTx& tx, const std::string& id, JobState to, const Message& reason,
                std::vector<WorkerPlacement> placement, TimeMs now);

}  // namespace gpurent::sched_detail
