// The local runner: this machine is one node, and a job's batch script (the container script,
// exec/container.h) runs here as a detached process group, without Slurm. It answers like
// Slurm's tools do (BatchSystem, exec/slurm_cli.h), so the same executor drives it
// (`gpurent serve --executor local --containers`, docs/containers.md).
//
// Every run has a folder <dir>/<id>/ (ids count up from 1, never reused while a folder is there):
//   meta.json   what was submitted (gpurent job id, name, GPUs, time limit, submit time)
//   script.sh   the batch script (exec/slurm_cli.h batch_script)
//   run.sh      the wrapper that runs it; it writes
//   pid         the wrapper's pid and the run's start (epoch ms),
//   ending      "cancelled" or "timeout" when it stopped the script itself,
//   exit        "<exit status> <end epoch ms>" when the script ended (written last, by rename).
// The wrapper runs in its own session, so a restart or a kill -9 of the server leaves runs going;
// the next server finds them in their folders. A run whose wrapper is gone without an exit file
// (the machine restarted) reads as NODE_FAIL: gpurent requeues the job with a fault record.
// Folders of runs that ended more than a day ago are removed (the output files stay).
// Thread-compatible: one executor thread calls it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/slurm_cli.h"

namespace gpurent {

struct LocalRunnerSettings {
  std::string dir;        // the runs' folders (created)
  std::string node;       // this machine's node name
  int64_t gpus = 0;       // GPUs here (indices 0..gpus-1)
  int64_t cpus = 0;       // 0: the machine's
  int64_t memory_mb = 0;  // 0: the machine's
};

class LocalRunner final : public BatchSystem {
 public:
  // Creates the folder; kInvalid naming the setting when it cannot.
  static Result<std::unique_ptr<LocalRunner>> open(LocalRunnerSettings s);

  Result<int64_t> submit(const SlurmSubmit& job) override;
  Status cancel(int64_t id) override;
  Result<std::vector<SlurmJob>> jobs() override;
  Result<std::vector<SlurmNode>> nodes() override;

 private:
  explicit LocalRunner(LocalRunnerSettings s) : s_(std::move(s)) {}
  std::string run_dir(int64_t id) const;
  LocalRunnerSettings s_;
  int64_t next_id_ = 1;
};

// The wrapper's text for a run (run.sh): exported for the unit test.
std::string local_run_wrapper(const std::string& run_dir, const std::string& node, const std::vector<int64_t>& gpus,
                              int64_t run_id, const std::string& output, int64_t time_limit_s);

}  // namespace gpurent
