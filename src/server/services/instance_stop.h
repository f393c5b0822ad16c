// Stopping an instance (docs/resources/instances.md#stopping). A stop (by a user, idle
// auto-stop, the balance guard, a release) cancels the instance's latest job inside the caller's
// transaction, so its GPUs and its billing stop at that instant. When that job had a run (it was
// starting or running), the instance reads `stopping` until the executor no longer sees the run
// alive (the container being stopped: podman stop, Slurm's KillWait); meanwhile its volumes cannot be
// attached or detached, because its container may still write to them; a start (or a restart) is
// accepted, and the executor submits its run only once the old one has gone (waits_for_earlier_run).
// Every executor ends the marks each tick (end_instance_stops) with the gpurent jobs whose runs it
// still sees; the simulated executor has none and marks none. Inside the caller's transaction; any thread.
#pragma once

#include <functional>
#include <set>
#include <string>

#include "core/message.h"
#include "model/instance.h"
#include "store/store.h"

namespace gpurent {

// Cancels i's latest job unless it has ended and records why it stopped (i.stop_reason) and, when
// the job is placed or ever ran (preempted, or requeued after a run) and its executor's runs
// outlive a cancel (`lingering`: the Slurm and local executors' do, the simulated executor's do
// not), that it is stopping. The caller writes i (write_instance).
Status stop_instance_job(StoreTx& tx, Instance& i, const Message& why, const std::string& who, TimeMs now,
                         bool lingering);
// A job cancelled directly (POST /jobs/{id}/cancel) that is its instance's latest start stops the
// instance the same way (stop_instance_job, and the instance written): true when it did, the job
// then cancelled; false when the job is no instance's latest start (the caller cancels it).
Result<bool> stop_instance_of_job(StoreTx& tx, const Record& job, const Message& why, const std::string& who,
                                  TimeMs now, bool lingering);
// Whether the server's executor leaves runs to stop after a cancel (all but the simulated one).
inline bool runs_linger(const std::string& executor) { return executor != "sim"; }

// 409 while i is stopping: a start or a volume change waits until its run has gone.
Status check_not_stopping(const Instance& i);
// 409 once i is released: it is kept to be read, not used.
Status check_not_released(const Instance& i);

// i as r's body and index columns.
void put_instance(Record& r, const Instance& i);
// Stores i over `cur` (body and index columns) at `now`; the stored record, with its new version.
Result<Record> write_instance(StoreTx& tx, const Record& cur, const Instance& i, TimeMs now);

// Whether job `r` (j) is an instance's start that must wait: its instance is still stopping an
// earlier run, or a run of an earlier job of it is still alive (`alive`: the executor's view) — a
// job requeued (preempted, its node failed) and then cancelled by a stop or a restart left no
// stopping_job, but its container may still be writing the instance's volumes. The executor
// submits it at a later tick, once that run has gone.
Result<bool> waits_for_earlier_run(StoreTx& tx, const Record& r, const Job& j,
                                   const std::function<bool(const std::string& job_id)>& alive);

// The executor is stopping a run of job `job_id` that is no longer placed: when that job is a
// stopped instance's with no stop under way (a requeued job cancelled by the stop), the instance
// reads `stopping` until the run has gone, as after the stop of a running one.
Status note_lingering_run(StoreTx& tx, const std::string& job_id, TimeMs now);

// Instances stopping whose job is not in `live` (gpurent jobs whose runs the executor still sees)
// become stopped kStopSettleMs after the run was first seen gone (the runtime releases the
// published ports a moment after the run ends). How many.
Result<int> end_instance_stops(StoreTx& tx, const std::set<std::string>& live, TimeMs now);

}  // namespace gpurent
