#include "server/services/instance_stop.h"

#include <algorithm>

#include "core/clock.h"
#include "model/job_state.h"
#include "server/services/allocation_ledger.h"
#include "server/services/job_cancel.h"

namespace gpurent {

Status stop_instance_job(StoreTx& tx, Instance& i, const Message& why, const std::string& who, TimeMs now,
                         bool lingering) {
  if (!i.job_ids.empty()) {
    auto job = tx.get("jobs", i.job_ids.back());
    if (!job && job.error().code != Code::kNotFound) return job.error();
    if (job) {
      auto st = stored_job_status(job->body);
      if (!st) return st.error();
      if (!is_terminal(st->state)) {
        // Placed: the executor has (or is about to have) a run that must go first. Preempted or
        // requeued after a run: that run's process may still be dying (a Slurm job lives on for
        // its KillWait), and the executor's tick that would see it finds a released instance by
        // name no more, so a job that ever ran counts too (a run long gone ends the stop at that
        // tick). An earlier run still stopping (a restart, then a stop) stays the one to wait for:
        // this job's start waited for it, so it has no run of its own.
        bool ran = st->state == JobState::kAdmitted || st->state == JobState::kRunning;
        if (lingering && i.stopping_job.empty() && !ran) {
          auto newest = newest_run_of(tx, *job);
          if (!newest) return newest.error();
          ran = newest->has_value();
        }
        if (auto c = cancel_job_in(tx, job->id, why, who, now); !c) return c.error();
        if (lingering && i.stopping_job.empty() && ran) {
          i.stopping_job = job->id;
          i.stopping_since = now;
        }
      }
    }
  }
  i.want_running = false;
  i.stop_reason = why;
  return ok_status();
}

Result<bool> stop_instance_of_job(StoreTx& tx, const Record& job, const Message& why, const std::string& who,
                                  TimeMs now, bool lingering) {
  const json* labels = job.body.contains("labels") ? &job.body["labels"] : nullptr;
  if (!labels || !labels->is_object() || !labels->contains(kInstanceLabel) || !(*labels)[kInstanceLabel].is_string())
    return false;
  auto st = stored_job_status(job.body);
  if (!st) return st.error();
  if (is_terminal(st->state)) return false;  // the caller's cancel says it has ended
  auto found = tx.list({"instances", {{"tenant_id", job.tenant_id}, {"name", (*labels)[kInstanceLabel].get<std::string>()}}, "", 1});
  if (!found) return found.error();
  if (found->items.empty()) return false;  // released: its name is free, its jobs are plain jobs
  const Record& cur = found->items.front();
  auto i = decode_instance(cur.body);
  if (!i) return i.error();
  if (i->job_ids.empty() || i->job_ids.back() != job.id) return false;
  if (auto s = stop_instance_job(tx, *i, why, who, now, lingering); !s) return s.error();
  if (auto w = write_instance(tx, cur, *i, now); !w) return w.error();
  return true;
}

Status check_not_stopping(const Instance& i) {
  if (i.stopping_job.empty()) return ok_status();
  return Error::make(Code::kConflict, Message("api.instances.still_stopping")
                                          .arg("name", i.name)
                                          .arg("since", format_rfc3339(i.stopping_since)));
}

Status check_not_released(const Instance& i) {
  if (!i.released_at) return ok_status();
  return Error::make(Code::kConflict,
                     Message("api.instances.released").arg("name", i.name).arg("at", format_rfc3339(*i.released_at)));
}

void put_instance(Record& r, const Instance& i) {
  const IndexCols idx = index_of(i);
  r.body = to_json(i);
  r.name = idx.name;
  r.state = idx.state;
}

Result<Record> write_instance(StoreTx& tx, const Record& cur, const Instance& i, TimeMs now) {
  Record r = cur;
  put_instance(r, i);
  r.updated_at = now;
  if (auto s = tx.update(r); !s) return s.error();
  r.version = cur.version + 1;
  return r;
}

Result<bool> waits_for_earlier_run(StoreTx& tx, const Record& r, const Job& j,
                                   const std::function<bool(const std::string& job_id)>& alive) {
  auto label = j.labels.find(kInstanceLabel);
  if (label == j.labels.end()) return false;
  auto found = tx.list({"instances", {{"tenant_id", r.tenant_id}, {"name", label->second}}, "", 1});
  if (!found) return found.error();
  if (found->items.empty()) return false;
  auto i = decode_instance(found->items.front().body);
  if (!i) return false;
  if (!i->stopping_job.empty() && i->stopping_job != r.id) return true;
  for (const std::string& earlier : i->job_ids)
    if (earlier != r.id && alive(earlier)) return true;
  return false;
}

Status note_lingering_run(StoreTx& tx, const std::string& job_id, TimeMs now) {
  auto job = tx.get("jobs", job_id);
  if (!job) return job.error().code == Code::kNotFound ? ok_status() : Status(job.error());
  const json* labels = job->body.contains("labels") ? &job->body["labels"] : nullptr;
  if (!labels || !labels->is_object() || !labels->contains(kInstanceLabel) || !(*labels)[kInstanceLabel].is_string())
    return ok_status();
  auto found = tx.list(
      {"instances", {{"tenant_id", job->tenant_id}, {"name", (*labels)[kInstanceLabel].get<std::string>()}}, "", 1});
  if (!found) return found.error();
  if (found->items.empty()) return ok_status();
  const Record& cur = found->items.front();
  auto i = decode_instance(cur.body);
  if (!i || i->want_running || !i->stopping_job.empty() ||
      std::find(i->job_ids.begin(), i->job_ids.end(), job_id) == i->job_ids.end())
    return ok_status();
  i->stopping_job = job_id;
  i->stopping_since = now;
  if (auto w = write_instance(tx, cur, *i, now); !w) return w.error();
  return ok_status();
}

Result<int> end_instance_stops(StoreTx& tx, const std::set<std::string>& live, TimeMs now) {
  auto stopping = list_all(tx, "instances", {{"state", "stopping"}});
  if (!stopping) return stopping.error();
  int ended = 0;
  for (const Record& r : *stopping) {
    auto i = decode_instance(r.body);
    if (!i) continue;
    if (live.count(i->stopping_job)) {
      if (i->stopping_gone_at == 0) continue;
      i->stopping_gone_at = 0;  // seen again (a snapshot from before): not gone after all
    } else if (i->stopping_gone_at == 0) {
      i->stopping_gone_at = now;  // gone: stopped once the runtime has let go of its ports
    } else if (now < i->stopping_gone_at + kStopSettleMs) {
      continue;
    } else {
      i->stopping_job.clear();
      i->stopping_since = 0;
      i->stopping_gone_at = 0;
      ++ended;
    }
    if (auto w = write_instance(tx, r, *i, now); !w) return w.error();
  }
  return ended;
}

}  // namespace gpurent
