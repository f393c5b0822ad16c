#include "server/demo/demo_history.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <set>
#include <unordered_map>

#include "model/job.h"
#include "model/node.h"
#include "model/tenant.h"
#include "server/api/resources.h"
#include "server/demo/seed.h"
#include "server/services/allocation_ledger.h"
#include "server/services/cost_firewall.h"
#include "server/services/record_faults.h"
#include "server/services/scheduler_service.h"

namespace gpurent {
namespace {

constexpr TimeMs kStep = 5 * kMsPerMinute;
constexpr TimeMs kMetricEvery = 30 * kMsPerMinute;
constexpr TimeMs kFirewallEvery = 6 * 60 * kMsPerMinute;
constexpr TimeMs kMeterFlushEvery = kMsPerHour;

TimeMs floor_min(TimeMs t) { return t - ((t % kMsPerMinute) + kMsPerMinute) % kMsPerMinute; }

// One allocation (a run of a job on its cards) as the meter needs it.
struct MeteredRun {
  std::string job_id, job, tenant_id, project_id;
  TimeMs from = 0, to = 0;  // to = 0: still open
  int64_t gpu_milli = 0;
  std::vector<std::pair<std::string, int64_t>> cards;  // (node id, gpu) per placement entry
  bool covers(TimeMs m) const { return m >= from && (to == 0 || m < to); }
};

// What the meter keeps about a job: its workload, and its GPU demand per replica.
struct JobInfo {
  Workload workload;
  uint64_t key = 0;
  int64_t replica_milli = 1000;
};

// The runs that cover part of a window, each job's workload, and each job's runs (indices).
struct WindowRuns {
  std::vector<MeteredRun> runs;
  std::map<std::string, JobInfo> jobs;
  std::map<std::string, std::vector<size_t>> runs_of_job;

  // Run time of a job before `m` over all its runs (a requeued job resumes from its checkpoint).
  TimeMs run_ms_before(const std::string& job_id, TimeMs m) const {
    TimeMs total = 0;
    auto it = runs_of_job.find(job_id);
    if (it == runs_of_job.end()) return total;
    for (size_t i : it->second) {
      const MeteredRun& r = runs[i];
      total += std::max<TimeMs>(0, std::min(m, r.to ? r.to : m) - r.from);
    }
    return total;
  }
};

// The workload, key and per-replica demand of the job a run belongs to.
Result<JobInfo> job_info(StoreReader& store, const std::string& job_id) {
  auto rec = store.get("jobs", job_id);
  if (!rec) return rec.error();
  auto tenant = store.get("tenants", rec->tenant_id);
  if (!tenant) return tenant.error();
  auto currency = decode_record(*tenant, stored_tenant_currency, "the demo meter cannot read its jobs");
  if (!currency) return currency.error();
  auto j = decode_record(*rec, [&](const json& b) { return parse_job(b, *currency); }, "the demo meter cannot report it");
  if (!j) return j.error();
  JobInfo info;
  info.workload = workload_of(rec->name, enum_name(kJobKindNames, j->kind));
  info.key = demo_key(rec->id);
  info.replica_milli = std::max<int64_t>(1, j->gpu_milli_per_worker() * j->workers);
  return info;
}

// The ledger's runs that were running at some minute of [first - 1 min, last].
Result<WindowRuns> window_runs(StoreReader& store, TimeMs first, TimeMs last) {
  auto allocs = list_runs(store, {}, "the demo meter cannot report its GPUs without it");
  if (!allocs) return allocs.error();
  WindowRuns w;
  for (const auto& [a, run] : *allocs) {
    MeteredRun r;
    r.from = run.running_at.value_or(0);
    r.to = run.ended_at.value_or(0);
    if (r.from == 0 || r.from > last || (r.to != 0 && r.to < first - kMsPerMinute)) continue;
    r.job_id = run.job_id;
    r.job = run.job;
    r.tenant_id = a.tenant_id;
    r.project_id = a.project_id;
    r.gpu_milli = run.gpu_milli;
    for (const RunCards& p : run.placement)
      for (int64_t g : p.gpus) r.cards.emplace_back(p.node_id, g);
    if (r.cards.empty() || r.job_id.empty()) continue;
    if (!w.jobs.count(r.job_id)) {
      auto info = job_info(store, r.job_id);
      if (!info) return info.error();
      w.jobs[r.job_id] = std::move(*info);
    }
    w.runs_of_job[r.job_id].push_back(w.runs.size());
    w.runs.push_back(std::move(r));
  }
  return w;
}

// One card's samples of a minute, summed over the runs sharing it (fractional GPUs).
struct CardAcc {
  CardSample s;
  int n = 0;
  void add(const CardSample& x, const GpuModel& model) {
    s.utilization_pct = std::min<int64_t>(100, s.utilization_pct + x.utilization_pct);
    s.memory_used_mib = std::min<int64_t>(model.memory_gib * 1024, s.memory_used_mib + x.memory_used_mib);
    s.power_mw = std::max(s.power_mw, x.power_mw);
    s.sm_clock_mhz = std::max(s.sm_clock_mhz, x.sm_clock_mhz);
    s.gr_engine_active_pct = std::min<int64_t>(100, s.gr_engine_active_pct + x.gr_engine_active_pct);
    ++n;
  }
};
using BusyCards = std::map<std::pair<std::string, int64_t>, CardAcc>;

// The busy cards of minute `m` (and, every kMetricEvery, each training job's metric).
BusyCards busy_cards(const GpuCatalog& catalog, const WindowRuns& w, TimeMs m,
                     const std::unordered_map<std::string, const Record*>& nodes, std::vector<JobMetricRow>& metric_rows) {
  BusyCards busy;
  for (const MeteredRun& r : w.runs) {
    if (!r.covers(m)) continue;
    const JobInfo& info = w.jobs.at(r.job_id);
    const int64_t share = std::clamp<int64_t>(r.gpu_milli / static_cast<int64_t>(r.cards.size()), 1, 1000);
    for (const auto& card : r.cards) {
      auto nit = nodes.find(card.first);
      if (nit == nodes.end()) continue;
      const GpuModel* model = catalog.find(nit->second->gpu_model);
      if (!model) continue;
      busy[card].add(busy_card(info.workload, *model, info.key ^ demo_key(card.first) ^ static_cast<uint64_t>(card.second),
                               m, share),
                     *model);
    }
    if (!info.workload.metric.empty() && m % kMetricEvery == 0) {
      const double hours = static_cast<double>(w.run_ms_before(r.job_id, m)) / static_cast<double>(kMsPerHour);
      metric_rows.push_back({r.job_id, r.tenant_id, r.project_id, info.workload.metric, m,
                             metric_value(info.workload, info.key, hours), info.workload.higher_is_better});
    }
  }
  return busy;
}

// The idle cards of nodes in service at minute `m`: every card no run holds.
Status idle_cards(const GpuCatalog& catalog, const std::vector<Record>& nodes, const BusyCards& busy, TimeMs m,
                  UsageBatchRows& batch) {
  for (const Record& n : nodes) {
    if (n.state != "available") continue;
    const GpuModel* model = catalog.find(n.gpu_model);
    if (!model) continue;
    auto cards = decode_record(n, stored_node_cards, "the demo meter cannot report its idle cards");
    if (!cards) return cards.error();
    const int64_t count = static_cast<int64_t>(cards->size());
    for (int64_t g = 0; g < count; ++g) {
      if (busy.count({n.id, g})) continue;
      CardSample s = idle_card(*model, demo_key(n.id) ^ static_cast<uint64_t>(g), m);
      batch.gpu.push_back({n.id, g, m, s.utilization_pct, s.memory_used_mib, s.power_mw, s.sm_clock_mhz,
                           s.gr_engine_active_pct});
    }
  }
  return ok_status();
}

// Each run's traffic over the minutes it covered in [first, last].
void traffic(const DemoWeek& week, const WindowRuns& w, TimeMs first, TimeMs last, UsageBatchRows& batch) {
  for (const MeteredRun& r : w.runs) {
    const TimeMs lo = std::max(first, r.from), hi = std::min(last + kMsPerMinute, r.to ? r.to : last + kMsPerMinute);
    if (hi <= lo) continue;
    const JobInfo& info = w.jobs.at(r.job_id);
    JobTraffic t = job_traffic(info.workload, r.job, r.gpu_milli, std::max<int64_t>(1, r.gpu_milli / info.replica_milli),
                               lo, hi, week);
    if (t.storage_io_bytes == 0 && t.egress_bytes == 0 && t.requests == 0) continue;
    batch.jobs.push_back({r.job_id, r.tenant_id, r.project_id, floor_min(hi - 1), t.storage_io_bytes, t.egress_bytes,
                          t.input_tokens, t.output_tokens, t.requests});
  }
}

}  // namespace

DemoMeter::DemoMeter(App& app, DemoWeek week, TimeMs start)
    : app_(app), week_(std::move(week)), last_(floor_min(start) - kMsPerMinute) {}

DemoMeter::~DemoMeter() { stop(); }

Status DemoMeter::emit(TimeMs to) {
  if (auto s = collect(to); !s) return s;
  return flush();
}

Status DemoMeter::collect(TimeMs to) {
  const TimeMs first = last_ + kMsPerMinute, last = floor_min(to);
  if (last < first) return ok_status();

  auto nodes = list_all(app_.store, "nodes");
  if (!nodes) return nodes.error();
  auto w = window_runs(app_.store, first, last);
  if (!w) return w.error();
  std::unordered_map<std::string, const Record*> node_by_id;
  for (const Record& n : *nodes) node_by_id[n.id] = &n;

  // Built apart and kept only whole: a collect that fails half-way adds nothing (the next one
  // takes the same minutes again).
  UsageBatchRows batch;
  std::vector<JobMetricRow> metric_rows;
  for (TimeMs m = first; m <= last; m += kMsPerMinute) {
    const BusyCards busy = busy_cards(app_.catalog, *w, m, node_by_id, metric_rows);
    for (const auto& [card, acc] : busy)
      batch.gpu.push_back({card.first, card.second, m, acc.s.utilization_pct, acc.s.memory_used_mib, acc.s.power_mw,
                           acc.s.sm_clock_mhz, acc.s.gr_engine_active_pct});
    if (m % kStep == 0)
      if (auto s = idle_cards(app_.catalog, *nodes, busy, m, batch); !s) return s;
  }
  traffic(week_, *w, first, last, batch);
  if (!pending_first_) pending_first_ = first;
  auto append = [](auto& to, auto& from) {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  };
  append(pending_.gpu, batch.gpu);
  append(pending_.jobs, batch.jobs);
  append(pending_metrics_, metric_rows);
  last_ = last;
  return ok_status();
}

Status DemoMeter::flush() {
  if (!pending_first_) return ok_status();
  UsageBatchRows& batch = pending_;
  batch.idempotency_key = "demo-meter-" + format_rfc3339(last_);
  batch.content_sha256 = "demo-meter:" + std::to_string(*pending_first_) + ":" + std::to_string(last_);
  batch.received_at = last_;
  batch.submitted_by = "demo-meter";
  Status st = app_.loop.run([&](StoreTx& tx) -> Status {
    if (!batch.gpu.empty() || !batch.jobs.empty())
      if (auto r = tx.insert_usage_batch(batch); !r) return r.error();
    if (!pending_metrics_.empty())
      if (auto s = tx.insert_job_metrics(pending_metrics_); !s) return s;
    return ok_status();
  });
  if (!st) return st;  // kept: the next flush() writes them with what is collected meanwhile
  pending_ = {};
  pending_metrics_.clear();
  pending_first_.reset();
  return ok_status();
}

void DemoMeter::start(int64_t interval_ms) {
  thread_ = std::thread([this, interval_ms] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::milliseconds(interval_ms), [this] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      if (auto s = emit(app_.clock.now()); !s) spdlog::warn("demo meter: {}", s.error().message);
      lock.lock();
    }
  });
}

void DemoMeter::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

namespace {

// An operator takes a node out of service (or returns it), as PUT /api/v1/nodes/{id} would.
Status set_node_state(App& app, const std::string& node_name, bool available, const std::string& reason,
                      const std::string& actor, TimeMs now) {
  return app.loop.run([&](StoreTx& tx) -> Status {
    auto node = resolve_ref(tx, "nodes", node_name, {}, "node");
    if (!node) return node.error();
    auto n = decode_record(*node, [&](const json& b) { return decode_node(b, app.catalog); }, "the demo week cannot change its state");
    if (!n) return n.error();
    n->state = available ? NodeState::kAvailable : NodeState::kUnavailable;
    n->state_reason = available ? std::nullopt : std::optional<std::string>(reason);
    Record r = *node;
    r.state = enum_name(kNodeStates, n->state);
    r.body = to_json(*n);
    r.updated_at = now;
    if (auto s = tx.update(r); !s) return s;
    return tx.append_audit({now, actor, "update", "nodes", r.id, "demo week: " + r.state});
  });
}

}  // namespace

Result<FastForwardStats> fast_forward_demo_week(App& app, FastForwardClock& clock, const DemoWeek& week,
                                                SchedulerService& scheduler, CostFirewall& firewall, DemoMeter& meter,
                                                const std::string& admin_user_id, TimeMs present,
                                                const std::function<void(int, int)>& day_done) {
  struct Release {
    FastForwardClock& c;
    ~Release() { c.release(); }
  } release{clock};
  const auto wall_start = std::chrono::steady_clock::now();
  const Principal op{admin_user_id, "", Role::kOperatorAdmin, "", ""};
  const KindSpec& jobs = app.kinds.at("jobs");
  const KindSpec& measurements = app.kinds.at("measurements");
  FastForwardStats stats;
  size_t next = 0;
  std::vector<int> outage_phase(week.outages.size(), 0);  // 0 before, 1 during, 2 after
  TimeMs next_firewall = week.start + kFirewallEvery;

  auto step = [&](TimeMs t) -> Status {
    clock.set(t);
    for (; next < week.submissions.size() && week.submissions[next].at <= t; ++next) {
      const DemoObject& o = week.submissions[next].job;
      auto who = demo_creator(app, op, o.as_tenant);
      if (!who) return who.error();
      if (auto r = create_object(app, jobs, o.body, *who); !r) {
        Error e = r.error();
        e.message = "demo week job '" + o.body.value("name", "?") + "': " + e.message;
        return e;
      }
      ++stats.jobs_submitted;
    }
    for (size_t i = 0; i < week.outages.size(); ++i) {
      const WeekOutage& o = week.outages[i];
      if (outage_phase[i] == 0 && o.from <= t) {
        if (auto s = set_node_state(app, o.node, false, o.reason, admin_user_id, t); !s) return s;
        outage_phase[i] = 1;
        ++stats.outages;
      } else if (outage_phase[i] == 1 && o.to <= t) {
        if (auto s = set_node_state(app, o.node, true, "", admin_user_id, t); !s) return s;
        json incident = {{"kind", "incident"},          {"node", o.node},
                         {"from", format_rfc3339(o.from)}, {"to", format_rfc3339(o.to)},
                         {"responded_at", format_rfc3339(o.responded_at)}, {"note", o.reason}};
        if (auto r = create_object(app, measurements, incident, op); !r) return r.error();
        outage_phase[i] = 2;
      }
    }
    if (auto s = scheduler.run_once(); !s) return s;
    // The meter writes the step's minutes after the tick: the simulated executor dates a start or
    // an end at its exact time inside the step, so only now does the ledger say who ran then.
    if (auto s = meter.collect(t); !s) return s;
    // Written an hour at a time (and before each firewall pass, which reads them): one
    // transaction per 5-minute step rewrote every card's last page of samples each time, about
    // 3.6 GB of WAL and database writes for two demo days.
    if (t % kMeterFlushEvery == 0)
      if (auto s = meter.flush(); !s) return s;
    ++stats.steps;
    return ok_status();
  };

  TimeMs t = week.start;
  const TimeMs first_day = week.start - week.start % kMsPerDay;
  const int days = static_cast<int>((present - first_day + kMsPerDay - 1) / kMsPerDay);
  for (; t + kStep < present; t += kStep) {
    if (auto s = step(t); !s) return s.error();
    if (day_done && (t + kStep) % kMsPerDay == 0) day_done(static_cast<int>((t + kStep - first_day) / kMsPerDay), days);
    if (t >= next_firewall) {
      if (auto s = meter.flush(); !s) return s.error();
      if (auto r = firewall.run_once(t); !r) return r.error();
      ++stats.firewall_passes;
      next_firewall += kFirewallEvery;
    }
  }
  if (auto s = step(present); !s) return s.error();
  if (auto s = meter.flush(); !s) return s.error();
  if (auto r = firewall.run_once(present); !r) return r.error();
  ++stats.firewall_passes;
  if (day_done) day_done(days, days);  // today, up to now
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return stats;
}

}  // namespace gpurent
