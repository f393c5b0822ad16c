// Readers for the Alibaba GPU trace (clusterdata cluster-trace-gpu-v2023, "openb" CSVs) used by
// the FGD allocation experiment: openb_node_list_gpu_node.csv and openb_pod_list_*.csv. Columns
// are found by header name; extra columns are ignored. Errors name the file, line and column.
// Free functions; thread-safe.
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "core/result.h"
#include "sched/alloc_cluster.h"

namespace gpurent {

// One line of a plain CSV (the traces quote nothing): cells split on ',', '\r' dropped.
std::vector<std::string> split_csv_line(const std::string& line);
// Why a line of a trace CSV cannot be read as such (empty when it can): a quoted field (the trace
// files are plain CSV; a quote would stay in the value). `header` drops a UTF-8 byte-order mark.
std::string csv_line_problem(std::string& line, bool header);

struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;
  std::string model;
};

struct TracePod {
  std::string name;
  AllocPod pod;  // spec_mask not yet set
  // Optional columns creation_time and deletion_time (seconds); -1 when the file lacks them.
  int64_t created_s = -1, deleted_s = -1;
};

// Columns sn, cpu_milli, memory_mib, gpu, model. `source` names the input in errors.
Result<std::vector<TraceNode>> read_trace_nodes(std::istream& in, const std::string& source);
Result<std::vector<TraceNode>> read_trace_nodes_file(const std::string& path);
// Columns name, cpu_milli, memory_mib, num_gpu, gpu_milli and optionally gpu_spec (multigpu20 has
// none: every spec is then empty). For k>0, g must be 1..1000: the reference simulator clamps it
// to [0,1000] (protocol §2), but no published pod list has a value outside 1..1000 for a GPU pod,
// so one that does is a broken file and is refused naming the line. For k=0, g and gpu_spec are
// dropped (protocol §2).
Result<std::vector<TracePod>> read_trace_pods(std::istream& in, const std::string& source);
Result<std::vector<TracePod>> read_trace_pods_file(const std::string& path);

}  // namespace gpurent
