// Trace and demand CSVs (Alibaba cluster-trace-gpu-v2023 nodes and pods, Microsoft Philly jobs,
// the advisor's demand curves): the first byte picks the reader, the rest is the file.
#include <sstream>
#include <string>

#include "advisor/demand.h"
#include "fuzz_target.h"
#include "sim/philly.h"
#include "sim/trace_reader.h"

using namespace gpurent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::istringstream in(text);
  switch (data[0] % 4) {
    case 0:
      (void)read_trace_nodes(in, "fuzz");
      break;
    case 1:
      (void)read_trace_pods(in, "fuzz");
      break;
    case 2:
      (void)read_philly(in, "fuzz");
      break;
    default:
      (void)parse_demand_csv(text, "fuzz");
      break;
  }
  return 0;
}
