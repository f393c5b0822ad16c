// The Microsoft Philly trace as the Pollux authors summarised it (shared/data/traces/philly:
// timestamp, duration, num_gpus, gpu_time, cluster), turned into a replay: one tenant and project
// per virtual cluster (fair share between them, no quota), every job a training gang of 8-GPU
// workers (12 GPUs: 2 × 6; 24: 3 × 8), expected duration = the recorded one (an oracle hint for
// backfill), and a cluster of 8-GPU nodes sized from the trace. Free functions; thread-safe.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/replay.h"

namespace gpurent {

struct PhillyJob {
  TimeMs submit = 0;        // UTC
  int64_t duration_ms = 0;
  int64_t gpus = 0;
  std::string vc;           // virtual cluster id
};

// Columns found by header name: timestamp ("YYYY-MM-DD HH:MM:SS", UTC), duration (seconds,
// decimal), num_gpus, cluster. Errors name the source, line and column.
Result<std::vector<PhillyJob>> read_philly(std::istream& in, const std::string& source);
Result<std::vector<PhillyJob>> read_philly_file(const std::string& path);

// 8-GPU nodes for ceil(headroom × the mean GPU demand / 8), and at least the largest job.
// The mean demand is the sum of gpus × duration over the span from the first submission to the
// last finish if every job started at once.
int64_t philly_nodes_for(const std::vector<PhillyJob>& jobs, double headroom);

// `nodes` nodes of 8 GPUs in one NVLink domain, 64 cores and 512 GiB each. Their catalog model
// (v100-sxm2-32gb, the generation Philly ran) only names them; the trace asks for no model.
ReplayInput philly_replay_input(const std::vector<PhillyJob>& jobs, int64_t nodes);

}  // namespace gpurent
