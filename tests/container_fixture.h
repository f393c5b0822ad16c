// What the container tests share (tests/container_slurm_test.cc, tests/container_local_test.cc):
// a shell command's output, and the Python image they run, built from Debian packages once.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace gpurent::testing {

// The image the container tests run (scripts/debian-image: Debian's python3, procps, iproute2).
inline constexpr const char* kImage = "localhost/gpurent/python:bookworm";

// Runs `cmd` with sh, stderr joined to stdout: its output, and its exit status in *rc.
inline std::string run_cmd(const std::string& cmd, int* rc = nullptr) {
  std::string out;
  if (FILE* p = popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    const int st = pclose(p);
    if (rc) *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  return out;
}

// Builds kImage unless Podman has it (cached by scripts/debian-image). "" when it is there; else
// what went wrong, with *skip set when only the Debian archive was out of reach.
inline std::string ensure_test_image(bool* skip) {
  int rc = 0;
  const std::string out = run_cmd(std::string(GPURENT_SOURCE_DIR) + "/scripts/debian-image " + kImage +
                                      " bookworm python3,procps,iproute2 minbase",
                                  &rc);
  *skip = rc == 77;
  return rc == 0 ? "" : out.empty() ? "scripts/debian-image failed" : out;
}

}  // namespace gpurent::testing
