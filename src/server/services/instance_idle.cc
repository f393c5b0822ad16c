#include "server/services/instance_idle.h"

#include <spdlog/spdlog.h>

#include <map>

#include "model/instance.h"
#include "model/job_state.h"
#include "model/tenant.h"
#include "server/services/cost_firewall.h"
#include "server/services/instance_stop.h"
#include "server/services/invoices.h"
#include "server/services/node_volumes.h"
#include "server/services/record_faults.h"

namespace gpurent {

namespace {

struct IdleFound {
  std::string instance_id, job_id;
  IdleStop rule;
  TimeMs since = 0;
};

// The tenant's default rule (nothing when it sets none or cannot be read).
std::optional<IdleStop> tenant_rule(StoreReader& store, const std::string& tenant_id) {
  auto t = store.get("tenants", tenant_id);
  if (!t) return std::nullopt;
  auto it = t->body.find("instance_idle_stop");
  if (it == t->body.end()) return std::nullopt;
  FieldErrors errs;
  json holder = {{"instance_idle_stop", *it}};
  Fields f(holder, "", errs);
  auto rule = read_idle_stop(f, "instance_idle_stop");
  return errs.empty() ? rule : std::nullopt;
}

// When the node volumes job `job` mounts are all on node `node_id` (node_volumes_ready_at); a
// volume gone since, or one that cannot be decoded (recorded as such), is left out.
Result<std::optional<TimeMs>> volumes_ready_at(StoreReader& store, const Record& job, const std::string& node_id,
                                               TimeMs run_started, TimeMs now, int64_t assumed_mbps) {
  std::vector<Volume> volumes;
  const auto it = job.body.find("volumes");
  if (it != job.body.end() && it->is_array())
    for (const json& m : *it) {
      if (!m.is_object() || !m.contains("name") || !m["name"].is_string()) continue;
      auto found =
          store.list({"volumes", {{"tenant_id", job.tenant_id}, {"name", m["name"].get<std::string>()}}, "", 1});
      if (!found) return found.error();
      if (found->items.empty()) continue;
      if (auto v =
              decode_record(found->items.front(), decode_volume, "idle auto-stop cannot tell whether it is copied"))
        volumes.push_back(std::move(*v));
    }
  return node_volumes_ready_at(volumes, node_id, job.id, run_started, now, assumed_mbps);
}

// Whether instance `i` (running job `job`) is idle by `rule` at `now`, and since when.
Result<std::optional<TimeMs>> idle_since(StoreReader& store, const Record& job, const IdleStop& rule, TimeMs now,
                                         int64_t assumed_mbps) {
  auto st = stored_job_status(job.body);
  if (!st) return st.error();
  if (st->state != JobState::kRunning || st->placement.empty()) return std::optional<TimeMs>();
  std::vector<RunCards> cards;
  for (const WorkerPlacement& w : st->placement) cards.push_back({w.node, "", w.gpus});
  // A node volume copied to its node before the container starts is no idle time: readings count
  // from the end of the copy, and none while it is still going (its GPUs read low meanwhile).
  auto ready = volumes_ready_at(store, job, st->placement.front().node, st->updated_at, now, assumed_mbps);
  if (!ready) return ready.error();
  if (!*ready) return std::optional<TimeMs>();
  // Readings since then, over twice the rule's window: enough to see a trailing run of low
  // readings that lasts the window.
  const TimeMs from = std::max(**ready, now - 2 * rule.minutes * 60'000);
  auto util = run_utilization(store, cards, from, now + 1);
  if (!util) return util.error();
  std::vector<UtilPoint> points;
  for (const UtilSample& u : *util) points.push_back({u.at, u.utilization_pct});
  return instance_idle_since(points, rule);
}

}  // namespace

namespace {

// Stops the instance's start `job_id` as a user's stop does, in one write, if it is still its
// latest start, wanted running, and its job running (or, without `running_only`, not finished):
// a user may have stopped or restarted it since it was read. Whether it stopped it.
Result<bool> stop_if_still(ServiceContext& app, const std::string& instance_id, const std::string& job_id,
                           const Message& why, const char* who, TimeMs now, bool running_only) {
  bool did = false;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get("instances", instance_id);
    if (!cur) return cur.error().code == Code::kNotFound ? ok_status() : Status(cur.error());
    auto i = decode_record(*cur, decode_instance, "it cannot be stopped by itself");
    if (!i) return i.error();
    if (!i->want_running || i->job_ids.empty() || i->job_ids.back() != job_id) return ok_status();
    auto job = tx.get("jobs", job_id);
    if (!job) return job.error();
    auto js = stored_job_status(job->body);
    if (!js || (running_only ? js->state != JobState::kRunning : is_terminal(js->state))) return ok_status();
    if (auto s = stop_instance_job(tx, *i, why, who, now, runs_linger(app.opts.executor)); !s) return s;
    auto r = write_instance(tx, *cur, *i, now);
    if (!r) return r.error();
    if (auto s = tx.append_audit({now, who, "stop", "instances", r->id, r->name}); !s) return s;
    did = true;
    return ok_status();
  });
  if (!st) return st.error();
  return did;
}

}  // namespace

Result<int> stop_timed_out_instances(ServiceContext& app, TimeMs now) {
  auto all = list_all(app.store, "instances");
  if (!all) return all.error();
  int stopped = 0;
  for (const Record& r : *all) {
    auto i = decode_record(r, decode_instance, "its stop_at cannot be applied");
    if (!i || !i->stop_at || *i->stop_at > now || !i->want_running || i->job_ids.empty()) continue;
    const Message why = Message("instance.stop_at_reached").arg("at", format_rfc3339(*i->stop_at));
    auto did = stop_if_still(app, r.id, i->job_ids.back(), why, "stop-at", now, false);
    if (!did) return did.error();
    if (*did) {
      ++stopped;
      app.metrics.count_write("instances", "stop_at");
      spdlog::info("{}", json({{"event", "instance_stop_at"}, {"instance", r.id}, {"job", i->job_ids.back()}}).dump());
    }
  }
  return stopped;
}

Result<int> stop_idle_instances(ServiceContext& app, TimeMs now) {
  auto all = list_all(app.store, "instances");
  if (!all) return all.error();
  std::map<std::string, std::optional<IdleStop>> tenants;
  std::vector<IdleFound> found;
  for (const Record& r : *all) {
    auto i = decode_record(r, decode_instance, "its idle rule cannot be applied");
    if (!i || i->gpus == 0 || !i->want_running || i->job_ids.empty()) continue;
    std::optional<IdleStop> rule = i->idle_stop;
    if (!rule) {
      auto [it, fresh] = tenants.try_emplace(i->tenant_id);
      if (fresh) it->second = tenant_rule(app.store, i->tenant_id);
      rule = it->second;
    }
    if (!rule || rule->minutes <= 0) continue;
    auto job = app.store.get("jobs", i->job_ids.back());
    if (!job) continue;
    auto since = idle_since(app.store, *job, *rule, now, app.opts.volume_copy_mbps);
    if (!since) return since.error();
    if (*since) found.push_back({r.id, job->id, *rule, **since});
  }
  int stopped = 0;
  for (const IdleFound& f : found) {
    const Message why = Message("instance.idle_stopped")
                            .arg("percent", std::to_string(f.rule.below_percent))
                            .arg("minutes", std::to_string(f.rule.minutes))
                            .arg("since", format_rfc3339(f.since));
    auto did = stop_if_still(app, f.instance_id, f.job_id, why, "idle-stop", now, true);
    if (!did) return did.error();
    if (*did) {
      ++stopped;
      app.metrics.count_write("instances", "idle_stop");
      spdlog::info("{}", json({{"event", "instance_idle_stopped"}, {"instance", f.instance_id}, {"job", f.job_id},
                               {"idle_since", format_rfc3339(f.since)}})
                             .dump());
    }
  }
  return stopped;
}

Result<int> stop_unfunded_instances(ServiceContext& app, TimeMs now) {
  int stopped = 0;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto stops = balance_stops(tx);
    if (!stops) return stops.error();
    for (const auto& [tenant, hold] : *stops) {
      auto mine = list_all(tx, "instances", {{"tenant_id", tenant}});
      if (!mine) return mine.error();
      for (const Record& r : *mine) {
        auto i = decode_record(r, decode_instance, "the balance guard cannot stop it");
        if (!i || !i->want_running || i->job_ids.empty()) continue;
        auto job = tx.get("jobs", i->job_ids.back());
        if (!job) continue;
        auto js = stored_job_status(job->body);
        if (!js || is_terminal(js->state)) continue;
        const Message why = Message("instance.balance_stopped").arg("hold", hold);
        if (auto s = stop_instance_job(tx, *i, why, "balance-guard", now, runs_linger(app.opts.executor)); !s) return s;
        if (auto u = write_instance(tx, r, *i, now); !u) return u.error();
        if (auto s = tx.append_audit({now, "balance-guard", "stop", "instances", r.id, r.name}); !s) return s;
        ++stopped;
      }
    }
    return ok_status();
  });
  if (!st) return st.error();
  if (stopped > 0) spdlog::info("{}", json({{"event", "instances_balance_stopped"}, {"count", stopped}}).dump());
  return stopped;
}

}  // namespace gpurent
