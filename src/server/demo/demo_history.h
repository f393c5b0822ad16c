// The demo's moving parts beyond the simulated executor: a meter that writes what the running demo
// jobs do to their GPUs (usage samples and job metrics, through the same store path as
// POST /api/v1/usage and POST /api/v1/jobs/{id}/metrics), and the fast-forward that replays the
// demo's past week (demo/demo_week.h) through the live services, so the dashboard opens on a
// populated week. Only `gpurent serve --demo` with the simulated executor uses them.
//
// DemoMeter: emit(), collect() and flush() are called from one thread at a time (the fast-forward,
// then its own ticker); writes go through the control loop.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "demo/demo_week.h"
#include "server/api/app.h"

namespace gpurent {

class SchedulerService;
class CostFirewall;

class DemoMeter {
 public:
  // The first emit() writes the minute of `start` too: a run that starts seconds into the world's
  // first minute is covered from its start.
  DemoMeter(App& app, DemoWeek week, TimeMs start);
  ~DemoMeter();
  // Samples for every whole minute in (last emitted, to]: each card of a running allocation every
  // minute, every other card of an available node every 5 minutes (idle), each running job's
  // traffic, and each training job's metric every 30 minutes of the wall clock. One transaction:
  // collect(to), then flush().
  Status emit(TimeMs to);
  // The same samples, kept until flush() (the fast-forward writes an hour at a time).
  Status collect(TimeMs to);
  // Writes what collect() kept, in one transaction (nothing when nothing is kept); on failure it
  // keeps them for the next flush().
  Status flush();
  void start(int64_t interval_ms = kMsPerMinute);  // live: emit(now) every interval
  void stop();

 private:
  App& app_;
  DemoWeek week_;
  TimeMs last_;
  UsageBatchRows pending_;
  std::vector<JobMetricRow> pending_metrics_;
  std::optional<TimeMs> pending_first_;  // the first minute pending_ holds
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

struct FastForwardStats {
  int64_t steps = 0, jobs_submitted = 0, outages = 0, firewall_passes = 0;
  double seconds = 0;
};

// Replays `week` from week.start to `present` in 5-minute steps on `clock` (which must be set to
// week.start): submissions due are created as their tenant's admin through the POST path, nodes go
// out of service and come back (the supplier's incident is recorded on return), the scheduler ticks,
// the meter collects the step (after the tick: starts and ends are dated inside it) and writes an hour at a time, and
// every 6 hours the cost firewall runs (after the meter's write). Releases the clock at the end (also on error; the
// caller pins it again for a stopped clock). `day_done`, when given, is called after each replayed UTC day (the last
// one, today, when the present is reached) with the days done and the days in all (a progress line).
Result<FastForwardStats> fast_forward_demo_week(App& app, FastForwardClock& clock, const DemoWeek& week,
                                                SchedulerService& scheduler, CostFirewall& firewall, DemoMeter& meter,
                                                const std::string& admin_user_id, TimeMs present,
                                                const std::function<void(int, int)>& day_done = {});

}  // namespace gpurent
