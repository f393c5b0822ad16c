// The simulated executor (executor.h): no process runs; time alone moves the jobs.
#include <set>
#include <string>

#include "server/services/allocation_ledger.h"
#include "server/services/executor.h"
#include "server/services/instance_stop.h"
#include "server/services/scheduler_internal.h"

namespace gpurent {

using namespace sched_detail;

namespace {

class SimExecutor final : public Executor {
 public:
  explicit SimExecutor(int64_t cold_start_ms) : cold_start_ms_(cold_start_ms) {}
  std::string_view name() const override { return "sim"; }

  Status advance(StoreTx& tx, TimeMs now, ExecutorHost& host) override {
    std::set<std::string> running;
    Status done = for_each_placed_job(tx, [&](const Record& r, Job& j) -> Status {
      // Each step happens at its exact time, not at the tick that notices it: a job admitted at T
      // starts at T + cold start and ends expected_duration_seconds later, however late the next
      // tick comes (a slow pass, or a new leader taking over after a lease ran out), so the
      // seconds billed are the same on one server and on several.
      const JobStatus& st = j.status;
      const TimeMs started_at = st.updated_at + cold_start_ms_;
      if (st.state == JobState::kAdmitted && now >= started_at)
        return move_job(tx, r.id, JobState::kRunning, Message("exec.sim.started"), st.placement, started_at);
      if (st.state != JobState::kRunning) return ok_status();
      running.insert(r.id);
      // A job that reports readiness passes its (simulated) health check cold_start_ms after it
      // started running: a model loading.
      if (j.readiness && !ready_.count(r.id) && now >= st.updated_at + cold_start_ms_) {
        if (auto s = mark_run_ready(tx, r, st.updated_at + cold_start_ms_); !s) return s;
        ready_.insert(r.id);
      }
      if (j.time_limit_seconds &&
          (!j.expected_duration_seconds || *j.time_limit_seconds < *j.expected_duration_seconds ||
           j.kind == JobKind::kInference) &&
          now >= st.updated_at + *j.time_limit_seconds * 1000) {
        // The simulated job would outrun its limit: stopped there, as Slurm would.
        if (auto s = move_job(tx, r.id, JobState::kFailed,
                              Message("exec.sim.time_limit").arg("seconds", std::to_string(*j.time_limit_seconds)),
                              {}, st.updated_at + *j.time_limit_seconds * 1000);
            !s)
          return s;
        host.forget(r.id);
      } else if (j.kind != JobKind::kInference && j.expected_duration_seconds &&
                 now >= st.updated_at + *j.expected_duration_seconds * 1000) {
        if (auto s = move_job(tx, r.id, JobState::kSucceeded, Message("exec.sim.finished"), {},
                              st.updated_at + *j.expected_duration_seconds * 1000);
            !s)
          return s;
        host.forget(r.id);
      }
      return ok_status();
    });
    for (auto it = ready_.begin(); it != ready_.end();)  // a requeued job's next run reports again
      it = running.count(*it) ? std::next(it) : ready_.erase(it);
    if (!done) return done;
    // No run outlives its cancel here: instances another executor left stopping are stopped.
    auto ended = end_instance_stops(tx, {}, now);
    return ended ? ok_status() : Status(ended.error());
  }

 private:
  int64_t cold_start_ms_;
  void rolled_back() override { ready_.clear(); }  // mark_run_ready skips a run already marked

  std::set<std::string> ready_;  // jobs whose current run was marked ready
};

}  // namespace

std::unique_ptr<Executor> make_sim_executor(int64_t cold_start_ms) {
  return std::make_unique<SimExecutor>(cold_start_ms);
}

}  // namespace gpurent
