#include "sim/replay.h"

#include <algorithm>
#include <chrono>
#include <queue>
#include <unordered_map>

#include "sched/engine.h"

namespace gpurent {
namespace {

double pct(std::vector<int64_t>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  return static_cast<double>(v[i]) / 1000.0;
}

double mean(const std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  long double s = 0;
  for (int64_t x : v) s += x;
  return static_cast<double>(s / static_cast<long double>(v.size()) / 1000.0L);
}

// Waits, completion times, makespan and utilization from the replay's raw figures (sorts waits and jcts).
void summarize(ReplayReport& r, std::vector<int64_t>& waits, std::vector<int64_t>& jcts, long double gpu_ms,
               TimeMs first, TimeMs last) {
  r.wait_mean_s = mean(waits);
  r.wait_p50_s = pct(waits, 0.5);
  r.wait_p95_s = pct(waits, 0.95);
  r.jct_mean_s = mean(jcts);
  r.jct_p50_s = pct(jcts, 0.5);
  r.jct_p95_s = pct(jcts, 0.95);
  r.makespan_s = static_cast<double>(last - first) / 1000.0;
  if (r.cluster_gpus > 0 && last > first)
    r.utilization_pct = static_cast<double>(100.0L * gpu_ms / (static_cast<long double>(r.cluster_gpus) *
                                                               static_cast<long double>(last - first)));
}

// Allocation over time: the step function (time, allocated milli-GPUs after it) sampled at 100
// evenly spaced times, as a percentage of the cluster.
std::vector<double> allocation_curve(const std::vector<std::pair<TimeMs, int64_t>>& steps, int64_t cluster_gpus,
                                     TimeMs first, TimeMs last) {
  std::vector<double> out;
  size_t k = 0;
  for (int i = 0; i < 100 && last > first; ++i) {
    const TimeMs at = first + (last - first) * i / 99;
    while (k + 1 < steps.size() && steps[k + 1].first <= at) ++k;
    const int64_t a = steps.empty() ? 0 : steps[k].second;
    out.push_back(cluster_gpus ? 100.0 * static_cast<double>(a) / (1000.0 * static_cast<double>(cluster_gpus)) : 0);
  }
  return out;
}

// Jobs in order of arrival (stable: ties keep their input order).
std::vector<const ReplayJob*> arrival_order(const std::vector<ReplayJob>& jobs) {
  std::vector<const ReplayJob*> arrivals;
  for (const auto& j : jobs) arrivals.push_back(&j);
  std::stable_sort(arrivals.begin(), arrivals.end(),
                   [](const ReplayJob* a, const ReplayJob* b) { return a->job.submitted_at < b->job.submitted_at; });
  return arrivals;
}

using JobIndex = std::unordered_map<std::string, const ReplayJob*>;
using Done = std::pair<TimeMs, std::string>;  // (finish time, job)

// The jobs placed so far, when they are due to finish, and the waits and completion times seen.
struct InFlight {
  std::priority_queue<Done, std::vector<Done>, std::greater<>> running;
  std::unordered_map<std::string, TimeMs> started, finish_at;
  std::vector<int64_t> waits, jcts;
};

// Removes the jobs that finish at `now` from the engine, recording their completion times.
void retire_finished(SchedEngine& engine, InFlight& fl, JobIndex& by_id, TimeMs now, ReplayReport& r,
                     const std::function<void(int64_t, int64_t)>& progress, int64_t report_every) {
  while (!fl.running.empty() && fl.running.top().first == now) {
    const std::string id = fl.running.top().second;
    fl.running.pop();
    auto f = fl.finish_at.find(id);
    if (f == fl.finish_at.end() || f->second != now) continue;  // stale: the job was preempted
    fl.finish_at.erase(f);
    fl.jcts.push_back(now - by_id[id]->job.submitted_at);
    engine.remove(id);
    ++r.finished;
    if (progress && r.finished % report_every == 0) progress(r.finished, r.jobs);
  }
}

// Runs one scheduling pass at `now`: admitted jobs start (or restart) their run, preempted ones stop.
void schedule_pass(SchedEngine& engine, InFlight& fl, JobIndex& by_id, TimeMs now, ReplayReport& r) {
  for (const SchedEvent& e : engine.schedule(now)) {
    if (e.kind == SchedEventKind::kAdmitted) {
      ++r.decisions;
      if (!fl.started.count(e.job)) {
        fl.started[e.job] = now;
        fl.waits.push_back(now - by_id[e.job]->job.submitted_at);
      }
      const TimeMs end = now + std::max<int64_t>(1, by_id[e.job]->duration_ms);
      fl.finish_at[e.job] = end;
      fl.running.push({end, e.job});
    } else if (e.kind == SchedEventKind::kPreempted) {
      ++r.decisions;
      ++r.preemptions;
      fl.finish_at.erase(e.job);  // restarts from the beginning when placed again
    }
  }
}

}  // namespace

Result<ReplayReport> replay(const ReplayInput& in, const SchedConfig& config,
                            const std::function<void(int64_t, int64_t)>& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  auto made = SchedEngine::make(config);
  if (!made) return made.error();
  SchedEngine& engine = **made;
  for (const auto& n : in.nodes)
    if (auto s = engine.add_node(n); !s) return s.error();
  for (const auto& p : in.projects) engine.set_project(p);

  const std::vector<const ReplayJob*> arrivals = arrival_order(in.jobs);
  JobIndex by_id;
  for (const auto* j : arrivals) by_id[j->job.id] = j;

  ReplayReport r;
  r.policy = config.score_policy;
  r.jobs = static_cast<int64_t>(arrivals.size());
  r.cluster_gpus = engine.total_gpu_milli() / 1000;
  InFlight fl;
  std::vector<std::pair<TimeMs, int64_t>> alloc_steps;  // (time, allocated milli after it)
  long double gpu_ms = 0;
  TimeMs now = arrivals.empty() ? 0 : arrivals.front()->job.submitted_at;
  const TimeMs first = now;
  TimeMs last = now;
  int64_t allocated = 0;
  size_t next = 0;
  int64_t report_every = std::max<int64_t>(1, r.jobs / 200);
  while (next < arrivals.size() || !fl.running.empty()) {
    TimeMs t = next < arrivals.size() ? arrivals[next]->job.submitted_at : INT64_MAX;
    if (!fl.running.empty()) t = std::min(t, fl.running.top().first);
    gpu_ms += static_cast<long double>(allocated) / 1000.0L * static_cast<long double>(t - now);
    now = t;
    retire_finished(engine, fl, by_id, now, r, progress, report_every);
    while (next < arrivals.size() && arrivals[next]->job.submitted_at == now) {
      if (auto s = engine.submit(arrivals[next]->job); !s) return s.error();
      ++next;
    }
    schedule_pass(engine, fl, by_id, now, r);
    ++r.passes;
    allocated = engine.allocated_gpu_milli();
    alloc_steps.push_back({now, allocated});
    last = now;
    if (next == arrivals.size() && fl.running.empty()) break;
  }
  r.never_started = r.jobs - static_cast<int64_t>(fl.started.size());
  summarize(r, fl.waits, fl.jcts, gpu_ms, first, last);
  r.alloc_pct = allocation_curve(alloc_steps, r.cluster_gpus, first, last);
  if (progress) progress(r.finished, r.jobs);
  r.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace gpurent
