#pragma once

#include <string>

namespace gpurent {

// `s` as one POSIX sh word: in single quotes, each ' written as '\'' (the scripts the executors
// write for Podman, Slurm and the local runner).
std::string shell_quote(const std::string& s);

}  // namespace gpurent
