#include "server/services/instance_release.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "model/alert.h"
#include "model/job_run.h"
#include "model/job_state.h"
#include "model/offer.h"
#include "server/services/allocation_ledger.h"
#include "server/services/cost_firewall.h"
#include "server/services/instance_stop.h"
#include "server/services/record_faults.h"

namespace gpurent {

namespace {

constexpr const char* kKeyPrefix = "instance_release:";

// "instance_release:<instance id>:<release time ms>:<days before>" (a warning) or
// "…:released" (the release): one alert per warning and per release.
std::string warning_key(const std::string& id, TimeMs release_at, int64_t days) {
  return kKeyPrefix + id + ":" + std::to_string(release_at) + ":" + std::to_string(days);
}

Message what_stays(const Instance& i) {
  return i.volume ? Message("instance.release.volume_kept").arg("volume", verbatim(i.volume->name))
                  : Message("instance.release.no_volume");
}

Alert release_alert(const Instance& i, const std::string& project, const ReleaseDue& due, TimeMs now, int64_t days_before) {
  Alert a;
  a.kind = AlertKind::kInstanceRelease;
  a.severity = AlertSeverity::kWarning;
  a.project = project;
  a.subject = i.name;
  a.from = due.stopped_at;
  a.to = due.release_at;
  a.measured = std::to_string((now - due.stopped_at) / 86'400'000);  // whole days stopped
  a.threshold = std::to_string(due.days);
  a.unit = "days";
  Message m = days_before > 0 ? Message("alert.instance_release").arg("days_left", std::to_string(days_before))
                              : Message("alert.instance_released");
  a.message = m.arg("instance", verbatim(i.name))
                  .arg("since", format_rfc3339(due.stopped_at))
                  .arg("at", format_rfc3339(due.release_at))
                  .arg("days", std::to_string(due.days))
                  .arg("offer", verbatim(due.offer))
                  .arg("kept", what_stays(i));
  return a;
}

}  // namespace

Result<std::optional<ReleaseDue>> release_due(StoreReader& store, const GpuCatalog& catalog, const Instance& i) {
  if (i.job_ids.empty() || i.released_at) return std::optional<ReleaseDue>();
  auto job = store.get("jobs", i.job_ids.back());
  if (!job) return job.error().code == Code::kNotFound ? Result<std::optional<ReleaseDue>>(std::nullopt) : job.error();
  auto st = stored_job_status(job->body);
  if (!st) return st.error();
  if (!is_terminal(st->state)) return std::optional<ReleaseDue>();  // requested, starting or running
  // Its last run: of its jobs newest first (its starts follow one another), the newest job's newest
  // run, through the job's chain of runs rather than its project's whole history.
  std::optional<JobRun> last;
  for (auto id = i.job_ids.rbegin(); id != i.job_ids.rend() && !last; ++id) {
    auto run = newest_closed_run_where(store, *id, i.project_id, [](const JobRun&) { return true; });
    if (!run) return run.error();
    last = std::move(*run);
  }
  if (!last || !last->ended_at || last->offer_id.empty()) return std::optional<ReleaseDue>();
  // Stopped since that run's end; when the latest start never ran (stopped while it still waited
  // for capacity: the user's use too), since that start's end when later. A start that ran counts
  // from its run's end alone (an executor may record the job's end after the run's own end time).
  const bool latest_ran = last->job_id == i.job_ids.back();
  const TimeMs stopped_at = latest_ran ? *last->ended_at : std::max(*last->ended_at, st->updated_at);
  auto o = store.get("offers", last->offer_id);
  if (!o) return o.error().code == Code::kNotFound ? Result<std::optional<ReleaseDue>>(std::nullopt) : o.error();
  auto offer = decode_record(*o, [&](const json& b) { return parse_offer(b, catalog); }, "its instances' release cannot be known");
  if (!offer) return offer.error();
  if (!offer->stopped_instance_release_days) return std::optional<ReleaseDue>();
  const int64_t days = *offer->stopped_instance_release_days;
  return std::optional<ReleaseDue>(ReleaseDue{stopped_at, release_time(stopped_at, days), days, o->name});
}

Result<int> release_stopped_instances(ServiceContext& app, TimeMs now) {
  auto all = list_all(app.store, "instances");
  if (!all) return all.error();
  std::set<std::string> current;  // the warning keys still true
  int released = 0;
  for (const Record& r : *all) {
    auto i = decode_record(r, decode_instance, "its release is not applied");
    if (!i) continue;
    if (i->released_at) {  // kept to be read for kReleasedKeptDays, then removed
      if (now < *i->released_at + kReleasedKeptDays * 86'400'000) continue;
      Status st = app.loop.run([&](StoreTx& tx) -> Status {
        auto cur = tx.get("instances", r.id);
        if (!cur) return cur.error().code == Code::kNotFound ? ok_status() : Status(cur.error());
        if (cur->version != r.version) return ok_status();
        if (auto s = tx.remove("instances", r.id); !s) return s;
        return tx.append_audit({now, "auto-release", "remove", "instances", r.id, i->name});
      });
      if (!st) return st.error();
      continue;
    }
    auto due = release_due(app.store, app.catalog, *i);
    if (!due) return due.error();
    if (!*due) continue;
    auto project = app.store.get("projects", i->project_id);
    const std::string pname = project ? project->name : i->project_id;
    if (now < (*due)->release_at) {
      for (int64_t d : kReleaseWarningDays) current.insert(warning_key(r.id, (*due)->release_at, d));
      for (int64_t d : release_warnings_due(now, (*due)->stopped_at, (*due)->release_at)) {
        Alert a = release_alert(*i, pname, **due, now, d);
        a.key = warning_key(r.id, (*due)->release_at, d);
        Status st = app.loop.run([&](StoreTx& tx) -> Status {
          auto raised = record_security_alert(app, tx, i->tenant_id, i->project_id, a, now);
          return raised ? ok_status() : Status(raised.error());
        });
        if (!st) return st.error();
      }
      continue;
    }
    // Due: released in one write, if it is still the instance that was read (not started since).
    bool did = false;
    Status st = app.loop.run([&](StoreTx& tx) -> Status {
      auto cur = tx.get("instances", r.id);
      if (!cur) return cur.error().code == Code::kNotFound ? ok_status() : Status(cur.error());
      if (cur->version != r.version) return ok_status();  // changed meanwhile: the next pass decides
      Instance gone = *i;
      mark_released(gone, Message("instance.released_after").arg("days", std::to_string((*due)->days))
                              .arg("offer", verbatim((*due)->offer)), now);
      if (auto w = write_instance(tx, *cur, gone, now); !w) return w.error();
      if (auto s = tx.append_audit({now, "auto-release", "release", "instances", r.id, r.name}); !s) return s;
      Alert a = release_alert(*i, pname, **due, now, 0);
      a.key = kKeyPrefix + r.id + ":released";
      auto raised = record_security_alert(app, tx, i->tenant_id, i->project_id, a, now);
      if (!raised) return raised.error();
      did = true;
      return ok_status();
    });
    if (!st) return st.error();
    if (did) {
      ++released;
      app.metrics.count_write("instances", "release");
      spdlog::info("{}", json({{"event", "instance_released"}, {"instance", r.id}, {"name", r.name},
                               {"stopped_at", format_rfc3339((*due)->stopped_at)}})
                             .dump(-1, ' ', false, json::error_handler_t::replace));
    }
  }
  // Warnings no longer true (started again, released by hand, the rule changed) are resolved.
  auto active = list_all(app.store, "alerts", {{"state", "active"}});
  if (!active) return active.error();
  for (const Record& a : *active) {
    if (a.name.rfind(kKeyPrefix, 0) != 0 || current.count(a.name)) continue;
    if (a.name.size() >= 9 && a.name.compare(a.name.size() - 9, 9, ":released") == 0) continue;  // a fact
    Status st = app.loop.run([&](StoreTx& tx) { return resolve_stored_alert(tx, a.id, now); });
    if (!st) return st.error();
  }
  return released;
}

}  // namespace gpurent
