// The Alibaba GPU trace (cluster-trace-gpu-v2023 "openb" CSVs) as a replay with arrivals and
// departures: the node list is the cluster, every pod a one-worker job that arrives at its
// creation_time and runs until its deletion_time (a pod without both times, or deleted before it
// was created, is refused naming it). Shares (num_gpu 1, gpu_milli < 1000) are fractional jobs; gpu_spec becomes
// the allowed models; CPU and memory are kept exactly (milli-CPU, MiB). One tenant, no quota.
// Free functions; thread-safe.
#pragma once

#include <vector>

#include "core/result.h"
#include "sim/replay.h"
#include "sim/trace_reader.h"

namespace gpurent {

// Errors when a pod lacks creation_time/deletion_time (the multigpu20 file has neither).
// `speedup` > 0 compresses the arrival times (durations unchanged): 10 = ten times the load.
Result<ReplayInput> alibaba_replay_input(const std::vector<TraceNode>& nodes, const std::vector<TracePod>& pods,
                                         double speedup = 1.0);

}  // namespace gpurent
