// The demo's past week: what its tenants submitted hour by hour, which nodes failed, and how each
// demo workload behaves on its GPUs (utilization, memory, power, storage I/O, egress, tokens, a
// quality metric) — so `gpurent serve --demo` can fast-forward the live scheduler, executor,
// metering and cost firewall through it (server/demo/demo_history.h) and the dashboard opens on a
// populated week. The behaviour is a model, not a measurement: deterministic (the same job, card
// and minute give the same sample) and documented in docs/demo.md.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/gpu_model.h"
#include "core/clock.h"
#include "demo/demo_world.h"

namespace gpurent {

// A job submitted `at` (absolute) by the named tenant's admin; body is the POST body.
struct WeekSubmission {
  TimeMs at = 0;
  DemoObject job;
};

// A node out of service over [from, to): the scheduler requeues its jobs; the supplier records
// the incident (with its first response) when the node is back.
struct WeekOutage {
  std::string node;  // node name
  TimeMs from = 0, to = 0;
  TimeMs responded_at = 0;
  std::string reason;
};

// A job's egress multiplied by `factor` over [from, to) (a dataset export gone wrong).
struct WeekBurst {
  std::string job;  // job name
  TimeMs from = 0, to = 0;
  int64_t factor = 1;
};

struct DemoWeek {
  TimeMs start = 0, end = 0;
  std::vector<WeekSubmission> submissions;  // in time order
  std::vector<WeekOutage> outages;          // in time order
  std::vector<WeekBurst> bursts;
};

// The `days` before `end` (start = end − days, floored to the hour). days 1..31.
DemoWeek demo_week(TimeMs end, int days);

// How a demo job loads its GPUs and moves data.
struct Workload {
  int64_t busy_pct = 0;    // mean GPU utilization while running
  int64_t swing_pct = 0;   // ± daily swing (inference follows its users' day)
  int64_t peak_hour_utc = 0;
  int64_t storage_mb_per_gpu_min = 0;  // storage I/O read per GPU per minute (MB = 1e6 bytes)
  int64_t egress_mb_per_min = 0;       // per job
  int64_t requests_per_min = 0;        // inference: per replica
  int64_t tokens_per_request = 0;
  // A quality metric the job reports (empty: none): value(t) = last + (first − last)·e^(−t/tau).
  std::string metric;
  bool higher_is_better = true;
  double metric_first = 0, metric_last = 0, metric_tau_hours = 1;
};

// The workload of a demo job by its name and kind (the demo's catalogue of workloads).
Workload workload_of(std::string_view job_name, std::string_view kind);

// One card's sample in a minute. `share_milli` is the job's share of the card (1000 = whole).
struct CardSample {
  int64_t utilization_pct = 0, memory_used_mib = 0, power_mw = 0, sm_clock_mhz = 0, gr_engine_active_pct = 0;
};
CardSample busy_card(const Workload& w, const GpuModel& model, uint64_t key, TimeMs minute, int64_t share_milli);
CardSample idle_card(const GpuModel& model, uint64_t key, TimeMs minute);

// A job's traffic over (from, to], whole minutes. `gpus_milli` is the job's GPUs in milli-GPU,
// `replicas` its running replicas (inference). An egress burst multiplies egress in its window.
struct JobTraffic {
  int64_t storage_io_bytes = 0, egress_bytes = 0, input_tokens = 0, output_tokens = 0, requests = 0;
};
JobTraffic job_traffic(const Workload& w, std::string_view job_name, int64_t gpus_milli, int64_t replicas,
                       TimeMs from, TimeMs to, const DemoWeek& week);

// The metric after `run_hours` of running (w.metric non-empty); a little deterministic noise.
double metric_value(const Workload& w, uint64_t key, double run_hours);

// A stable 64-bit key for a string (FNV-1a), to seed per-job and per-card noise.
uint64_t demo_key(std::string_view s);

}  // namespace gpurent
