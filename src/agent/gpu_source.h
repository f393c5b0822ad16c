// The node agent's GPU sources (docs/resources/usage.md#node-agent): what `gpurent agent` reads on a
// node each interval and reports as GPU samples (POST /api/v1/usage). Two sources give the same
// readings:
//   NVML     NVIDIA's management library, loaded at run time with dlopen (libnvidia-ml.so.1, which
//            the driver installs): declarations of our own, no build-time dependency, so the agent
//            builds and runs on machines without a driver and says so when it cannot load it
//   simulated  a JSON file of GPUs and utilization sequences (machines without GPUs, tests): each
//            read takes the next value of every sequence, cycling
// Not thread-safe: one agent loop owns its source.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/fields.h"
#include "core/result.h"

namespace gpurent {

struct AgentGpu {
  int64_t index = 0;
  std::string uuid;  // "GPU-…" as nvidia-smi prints it; "" when unknown
  int64_t utilization_pct = 0;
  std::optional<int64_t> memory_used_mib, power_mw, sm_clock_mhz;
};

// Whether this machine's GPUs can be node `node` (its record as GET /api/v1/nodes/{ref} answers it):
// a card whose UUID both know, at one index, with another UUID there means --node names another
// machine, whose readings these would be stored as. The first such, in words; nullopt otherwise
// (also where either side does not know a card's UUID).
std::optional<std::string> node_uuid_mismatch(const json& node, const std::vector<AgentGpu>& gpus);

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  virtual std::string describe() const = 0;  // "NVML 550.54.15 (libnvidia-ml.so.1)", "simulated (4 GPUs)"
  virtual Result<std::vector<AgentGpu>> read() = 0;
};

// kUnavailable naming the library and dlerror() when it cannot be loaded or lacks a function, or
// NVML's own error string when nvmlInit fails (no driver, no device).
Result<std::unique_ptr<GpuSource>> open_nvml_source(const std::string& library = "libnvidia-ml.so.1");

// {"gpus": [{"index", "uuid"?, "utilization_pct": [..], "memory_used_mib"?: [..], "power_mw"?: [..]}]}:
// each list 1..10,000 whole numbers in range; errors name the field.
Result<std::unique_ptr<GpuSource>> open_simulated_source(const json& doc);

// The POST /api/v1/usage body for one reading of a node's GPUs at `at`, keyed so that a batch sent
// again (a lost answer) is recorded once: "agent-<node>-<at ms>".
json agent_usage_batch(const std::string& node, const std::vector<AgentGpu>& gpus, TimeMs at);

}  // namespace gpurent
