// Scenario files (tests/scenarios/{sched,billing}/*.yaml, `gpurent rate -f`): the first byte picks
// the runner (even: scheduling, odd: billing), the rest is the file. Inputs over 8 KiB are skipped:
// a scenario's cost grows with what it asks to simulate, not with parser bugs.
#include <string>

#include "billing/scenario.h"
#include "catalog/gpu_catalog.h"
#include "fuzz_target.h"
#include "io/files.h"
#include "sched/scenario.h"

using namespace gpurent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const GpuCatalog catalog = load_catalog_file(default_catalog_path()).value();
  if (size < 1 || size > 8192) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0)
    (void)run_scenario(text, catalog);
  else
    (void)run_billing_scenario(text, catalog);
  return 0;
}
