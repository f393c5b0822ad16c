// What a dcgm-exporter (or anything at a --dcgm-target URL) answers: Prometheus text, then the
// mapping of its DCGM series to GPU readings.
#include <string_view>

#include "fuzz_target.h"
#include "meter/dcgm.h"

using namespace gpurent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto samples = parse_prometheus_text(std::string_view(reinterpret_cast<const char*>(data), size));
  if (samples) (void)map_dcgm(*samples);
  return 0;
}
