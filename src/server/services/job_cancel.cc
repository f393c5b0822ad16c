#include "server/services/job_cancel.h"

#include "model/job_state.h"
#include "server/services/allocation_ledger.h"

namespace gpurent {

Result<Record> cancel_job_in(StoreTx& tx, const std::string& job_id, const Message& reason, const std::string& user_id,
                             TimeMs now) {
  auto cur = tx.get("jobs", job_id);
  if (!cur) return cur.error();
  auto status = stored_job_status(cur->body);
  if (!status) return status.error();
  if (auto s = check_transition(status->state, JobState::kCancelled); !s) return s.error();
  std::string from = job_state_name(status->state);
  const JobStatus before = *status;
  status->state = JobState::kCancelled;
  status->reason = reason;
  status->updated_at = now;
  status->placement.clear();
  if (auto s = sync_allocation(tx, *cur, before, *status, now); !s) return s.error();
  Record r = *cur;
  set_stored_job_status(r.body, *status);
  r.state = "cancelled";
  r.updated_at = now;
  if (auto s = tx.update(r); !s) return s.error();
  if (auto s = tx.append_job_event({r.id, now, from, "cancelled", reason}); !s) return s.error();
  if (auto s = tx.append_audit({now, user_id, "cancel", "jobs", r.id, render_en(reason)}); !s) return s.error();
  r.version = cur->version + 1;
  return r;
}

}  // namespace gpurent
