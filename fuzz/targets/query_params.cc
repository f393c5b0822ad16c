// Query strings and the values routes read from them: percent-decoding and splitting (the HTTP
// front uses cpp-httplib's functions for both), then every value as an RFC 3339 time, the form of
// from/to/at parameters.
#include <httplib.h>

#include <string>

#include "core/clock.h"
#include "fuzz_target.h"

using namespace gpurent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string q(reinterpret_cast<const char*>(data), size);
  httplib::Params params;
  httplib::detail::parse_query_text(q, params);
  (void)httplib::detail::decode_url(q, false);
  for (const auto& [k, v] : params) (void)parse_rfc3339(v, k);
  (void)parse_rfc3339(q, "q");
  return 0;
}
