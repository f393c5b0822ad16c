// What Slurm's tools print (src/exec/slurm_cli.h): squeue --json and sinfo --json of every
// data_parser version, jobcomp/filetxt lines, sacct -P rows. The first byte picks the reader, the
// rest is the text; none may throw or crash whatever a (changed, truncated) Slurm prints.
#include <string>

#include "exec/slurm_cli.h"
#include "fuzz_target.h"

using namespace gpurent;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      (void)parse_squeue_json(text);
      break;
    case 1:
      (void)parse_sinfo_json(text);
      break;
    case 2:
      (void)parse_jobcomp(text);
      break;
    case 3:
      (void)parse_sacct(text);
      break;
    default:
      (void)expand_hostlist(text);
      (void)tres_gpus(text);
      break;
  }
  return 0;
}
