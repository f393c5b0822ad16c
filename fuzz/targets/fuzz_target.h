// The one function every fuzz target defines (libFuzzer's entry point): parse `data` as a
// hostile client, file or peer would send it, and abort() when a property the parser promises is
// broken. Crashes, sanitizer reports and aborts are findings. See fuzz/README.md.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
