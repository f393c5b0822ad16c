// Retention of the jobs' output files (`serve --job-log-retention-days N`): the files a job's runs
// leave in the output folder (--job-output-dir: "<job id>-<run>.log", "<job id>-<run>.status" and
// the nodes' "<job id>-<run>.ready.<node>", services/executor_slurm.cc, exec/container.cc) are
// deleted once the job has ended — succeeded, failed or cancelled, so it never runs again — at
// least N days ago (its status last changed before then) and nothing has written the file for as
// long. A job pending, admitted, running or preempted keeps every file, its earlier runs' too; so
// does a file whose name is not exactly a run file's, whose job the store does not hold, or that
// is not a regular file (a link, a folder: never followed, never removed). The log cap
// (services/log_capper.h) bounds each log's size; this bounds how long they stay.
//
// One pass lists the folder once and reads each job it names once (any thread: reads only, no
// write goes through the control loop). A job whose record cannot be read or decoded, or a file
// that cannot be removed, is counted as failed and the pass goes on. The server runs a pass when
// its work starts (the leader, where several share one database) and then every hour, on a thread
// of its own; each pass that removes or fails something logs `job_outputs_removed` and adds to the
// /metrics counters gpurent_job_output_files_removed_total and
// gpurent_job_output_bytes_removed_total.
// Not seen: a cancelled job's run that Slurm has not ended yet (a node that does not answer) and
// that has printed nothing for N days loses its log while it runs.
// Thread-safe: start/stop from the thread that owns it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "server/services/context.h"

namespace gpurent {

struct JobOutputSweep {
  int64_t files = 0;   // removed
  int64_t bytes = 0;   // the disk space they held (allocated blocks: a capped log's hole holds none)
  int64_t jobs = 0;    // jobs with a file removed
  int64_t failed = 0;  // jobs that could not be read and files that could not be removed (first_error: why)
  std::string first_error;
};

// One pass over `dir` at `now`: removes the run files of every job that ended before
// now - keep_ms and that nothing wrote since then. A folder that does not exist is an empty one;
// one that cannot be listed fails the pass. keep_ms must be > 0. `stopping`, when given, is asked
// before each job: true ends the pass there (the server's stop).
Result<JobOutputSweep> sweep_job_outputs(StoreReader& store, const std::string& dir, TimeMs now, int64_t keep_ms,
                                         const std::function<bool()>& stopping = {});

class JobOutputRetention {
 public:
  // Passes every `interval_ms` with the server's clock and --job-log-retention-days.
  explicit JobOutputRetention(ServiceContext& app, int64_t interval_ms = 3'600'000)
      : app_(app), interval_ms_(interval_ms) {}
  ~JobOutputRetention() { stop(); }
  JobOutputRetention(const JobOutputRetention&) = delete;
  JobOutputRetention& operator=(const JobOutputRetention&) = delete;

  // Starts the thread (its first pass at once) when the server keeps output (--job-output-dir)
  // and a retention (--job-log-retention-days > 0); else does nothing.
  void start();
  void stop();
  // One pass now, logged and counted as the thread's are.
  Result<JobOutputSweep> pass();

 private:
  ServiceContext& app_;
  const int64_t interval_ms_;
  std::mutex mu_;  // guards stopping_
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace gpurent
