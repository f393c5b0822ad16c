// Trace replay: jobs arrive at their submission times, run for their recorded duration once the
// scheduler (the live SchedEngine, same code as the server's) places them, and leave. The
// discrete-event loop advances virtual time from event to event — arrivals and completions — and
// runs one scheduling pass at each distinct time. Reports queueing delay, JCT, GPU utilisation,
// the allocation ratio over time and preemptions. Not thread-safe; one replay per call.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sched/engine_types.h"

namespace gpurent {

struct ReplayJob {
  SchedJob job;               // job.submitted_at is the arrival time (ms)
  int64_t duration_ms = 0;    // how long it runs once started
};

struct ReplayInput {
  std::vector<SchedNode> nodes;
  std::vector<SchedProject> projects;
  std::vector<ReplayJob> jobs;  // any order
};

struct ReplayReport {
  std::string policy;
  int64_t jobs = 0, finished = 0, never_started = 0, preemptions = 0;
  int64_t cluster_gpus = 0;
  double wait_mean_s = 0, wait_p50_s = 0, wait_p95_s = 0;   // submission -> first start
  double jct_mean_s = 0, jct_p50_s = 0, jct_p95_s = 0;      // submission -> finish
  double utilization_pct = 0;   // GPU-time allocated / (cluster GPUs × makespan)
  double makespan_s = 0;        // first arrival -> last finish
  std::vector<double> alloc_pct;  // allocated GPUs as % of the cluster, sampled at 100 even times
  int64_t passes = 0;
  int64_t decisions = 0;        // admissions and preemptions
  double run_seconds = 0;       // wall time of the replay
};

// `progress(done, total)` is called now and then with jobs finished so far (for a progress bar).
Result<ReplayReport> replay(const ReplayInput& in, const SchedConfig& config,
                            const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace gpurent
