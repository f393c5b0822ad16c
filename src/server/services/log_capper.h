// LogCapper: keeps the logs of the runs the executor lists within the cap (exec/log_cap.h,
// serve --job-log-max-mib), on a thread of its own: punching a hole in a file that is being
// written fast may wait for the file system to write back what it punches, and that wait must
// never be the scheduler's. The executor (executor_slurm.cc) says after each look at Slurm (or
// the local runner) which logs there are; every `interval_ms` the capper caps each, an ended
// run's log once more after it ended and then no longer. Before the first cap it checks that
// the folder's file system punches holes and finds data after them (probe_hole_punching); if it
// cannot, it logs job_log_cap_disabled once and caps nothing (the logs then grow as written); if
// the probe itself fails (a full disk), it logs job_log_cap_probe_failed once and tries again.
// Thread-safe: watch() from any thread; the destructor stops the thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace gpurent {

class LogCapper {
 public:
  struct Log {
    std::string job;  // for the log lines
    int64_t run = 0;
    bool ended = false;
  };
  // Starts the thread unless interval_ms is 0 (then pass() is called by hand: tests).
  LogCapper(std::string dir, int64_t keep_bytes, int64_t interval_ms);
  ~LogCapper();
  LogCapper(const LogCapper&) = delete;
  LogCapper& operator=(const LogCapper&) = delete;

  // The logs (by path) to keep capped from now on; a log not named again is forgotten.
  void watch(std::map<std::string, Log> logs);
  // One pass over the watched logs, on the calling thread.
  void pass();

 private:
  const std::string dir_;
  const int64_t keep_bytes_, interval_ms_;
  std::mutex mu_;  // guards watched_ and stopping_
  std::condition_variable cv_;
  std::map<std::string, Log> watched_;
  bool stopping_ = false;
  // The pass's own state (one pass at a time: the thread's, or a test's).
  enum class Probe { kNotYet, kUsable, kDisabled } probe_ = Probe::kNotYet;
  std::set<std::string> capped_said_, failure_said_, ended_done_;
  bool probe_failure_said_ = false;
  std::thread thread_;
};

}  // namespace gpurent
