// Runs an external command (Slurm's sbatch, squeue, scancel, scontrol, sinfo) with arguments passed
// as a vector (no shell), extra environment variables, an optional stdin text and a timeout, and
// captures its stdout and stderr. Thread-safe (each call forks its own child).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/result.h"

namespace gpurent {

struct ProcessResult {
  int exit_code = -1;  // the exit status; 128+signal when killed by a signal
  std::string out, err;
};

// kUnavailable when the program cannot be started or runs past timeout_ms (it is killed).
Result<ProcessResult> run_process(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                  const std::string& stdin_text, int timeout_ms);

}  // namespace gpurent
