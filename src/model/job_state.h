// Lifecycle of a job: the states, their wire names and the one table of legal moves.
//
//   pending ──► admitted ──► running ──► succeeded | failed | preempted | cancelled
//      ▲  ◄──────┘ (placement lost)          │
//      └──────────── preempted ◄─────────────┘ (requeue)
//   cancel: from pending, admitted, running (and preempted, before it is requeued)
//   terminal: succeeded, failed, cancelled — nothing leaves them.
//
// The scheduler and the API both call check_transition() before recording a move, so the store
// never holds an illegal history. Also JobStatus: the server-set "status" object of a job
// document (state, why, when, where its workers run). Values and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/message.h"
#include "model/resource.h"

namespace gpurent {

enum class JobState { kPending, kAdmitted, kRunning, kSucceeded, kFailed, kPreempted, kCancelled };

inline constexpr JobState kAllJobStates[] = {JobState::kPending,   JobState::kAdmitted,  JobState::kRunning,
                                             JobState::kSucceeded, JobState::kFailed,    JobState::kPreempted,
                                             JobState::kCancelled};

// "pending", "admitted", "running", "succeeded", "failed", "preempted", "cancelled".
const char* job_state_name(JobState s);
std::optional<JobState> parse_job_state(std::string_view s);

// succeeded, failed, cancelled: the job will never run again.
bool is_terminal(JobState s);
// admitted, running: the job holds an allocation (counts against quotas, is billed when running).
bool holds_resources(JobState s);

// ok if from -> to is a legal move; otherwise Code::kConflict with a message such as
// "job is succeeded; cannot move to running". A move to the same state is also a conflict
// ("job is already running"): callers that want idempotence check for it first.
Status check_transition(JobState from, JobState to);

// Where one worker of one replica runs. Non-inference jobs have replica 0 only.
struct WorkerPlacement {
  int64_t replica = 0;        // 0..999
  int64_t worker = 0;         // 0..workers-1 (rank in the gang)
  std::string node;           // node id
  std::vector<int64_t> gpus;  // device indices on the node (nvidia-smi numbering), ascending
  int64_t gpu_milli = 0;      // for a fractional job: the share of gpus[0] (1..999); else 0
  std::string nvlink_domain;  // the node's NVLink domain holding all of gpus; "" when none or mixed
  std::string offer_id;       // the offer the job runs under (the scheduler's choice); "" unpriced

  bool operator==(const WorkerPlacement&) const = default;
};

struct JobStatus {
  JobState state = JobState::kPending;
  Message reason;       // why the job is in this state ("preempted by job_…", "exit code 137")
  TimeMs updated_at = 0;  // when state last changed; 0 = not yet recorded
  std::vector<WorkerPlacement> placement;  // non-empty only while admitted or running
  int64_t fault_retries_used = 0;  // runs requeued after a killed worker (Job::fault_retries); kept by every move

  bool operator==(const JobStatus&) const = default;
};

// Reads the "status" object of a stored job document (the server's own output; request bodies
// never carry it). `path` prefixes error fields, e.g. "status".
Result<JobStatus> parse_job_status(const json& status, const std::string& path);
json to_json(const JobStatus& s);

}  // namespace gpurent
