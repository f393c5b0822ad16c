// Scenario files: the scheduler's behaviour written down as YAML (cluster, projects, timed steps
// of submissions, finishes and node failures, and what must hold after each step), run against
// the real engine. tests/scenarios/sched/*.yaml are the suite; docs/scheduler.md describes the
// format. After every step the runner also checks the invariants that hold in any scenario: no
// GPU holds more than 1000 milli, running jobs hold whole gangs (min replicas × workers), pending
// jobs hold nothing, and no worker sits on a GPU model its job does not allow.
// Not thread-safe; one run per call.
#pragma once

#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "core/result.h"

namespace gpurent {

struct ScenarioResult {
  std::string description;
  int steps = 0;
  std::vector<std::string> failures;  // "step 3 (at 60s): expected train-b running; it is pending: ..."
};

// Parses and runs one scenario (YAML text). Errors for a malformed file name the field.
Result<ScenarioResult> run_scenario(const std::string& yaml_text, const GpuCatalog& catalog);

}  // namespace gpurent
