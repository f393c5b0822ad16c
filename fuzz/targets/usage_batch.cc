// Usage batches (POST /api/v1/usage): the streaming parser against the validating one. Property:
// whenever the fast path accepts a text, the DOM path accepts the same text and yields the same
// batch (usage.h promises it); neither crashes.
#include <cstdlib>
#include <string_view>

#include "core/json_limits.h"
#include "fuzz_target.h"
#include "meter/usage.h"

using namespace gpurent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  UsageParseOptions opts;
  opts.now = 1'764'547'200'000;  // 2025-12-01T00:00:00Z: the seeds' samples lie around it
  opts.max_samples = 1000;
  auto fast = parse_usage_batch_fast(text, opts);
  auto doc = parse_json_bounded(text);
  if (!doc) {
    if (fast) std::abort();  // the fast path took text that is not JSON
    return 0;
  }
  auto slow = parse_usage_batch(*doc, opts);
  if (!fast) return 0;
  if (!slow) std::abort();
  if (fast->idempotency_key != slow->idempotency_key || fast->gpu_samples != slow->gpu_samples ||
      fast->job_samples != slow->job_samples)
    std::abort();
  return 0;
}
