// YAML (and JSON) documents as `gpurent … -f FILE` and Content-Type: application/yaml bodies read
// them. Property: no crash; nesting and alias expansion stay bounded (an error, not a blow-up).
#include <string>

#include "core/yaml_json.h"
#include "fuzz_target.h"

using namespace gpurent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  (void)yaml_to_json(text);
  (void)parse_json_or_yaml(text);
  return 0;
}
