#include "model/job_state.h"

#include <string>

#include "core/fields.h"
#include "model/resource.h"

namespace gpurent {
namespace {

constexpr EnumEntry<JobState> kStateNames[] = {
    {JobState::kPending, "pending"},     {JobState::kAdmitted, "admitted"}, {JobState::kRunning, "running"},
    {JobState::kSucceeded, "succeeded"}, {JobState::kFailed, "failed"},     {JobState::kPreempted, "preempted"},
    {JobState::kCancelled, "cancelled"},
};

bool allowed(JobState from, JobState to) {
  using S = JobState;
  switch (from) {
    case S::kPending:
      return to == S::kAdmitted || to == S::kCancelled;
    case S::kAdmitted:
      // Placement lost (node drained or failed before start) sends the job back to the queue;
      // an executor that cannot start it at all (no image to run: docs/containers.md) fails it.
      return to == S::kRunning || to == S::kPending || to == S::kFailed || to == S::kCancelled;
    case S::kRunning:
      return to == S::kSucceeded || to == S::kFailed || to == S::kPreempted || to == S::kCancelled;
    case S::kPreempted:
      // Requeue, or the user's cancel arriving before the requeue.
      return to == S::kPending || to == S::kCancelled;
    case S::kSucceeded:
    case S::kFailed:
    case S::kCancelled:
      return false;
  }
  return false;
}

}  // namespace

const char* job_state_name(JobState s) { return enum_name(kStateNames, s); }

std::optional<JobState> parse_job_state(std::string_view s) { return enum_parse(kStateNames, s); }

bool is_terminal(JobState s) {
  return s == JobState::kSucceeded || s == JobState::kFailed || s == JobState::kCancelled;
}

bool holds_resources(JobState s) { return s == JobState::kAdmitted || s == JobState::kRunning; }

Status check_transition(JobState from, JobState to) {
  if (allowed(from, to)) return ok_status();
  if (from == to) return Error::make(Code::kConflict, Message("job.state.already").arg("state", job_state_name(from)));
  return Error::make(Code::kConflict,
                     Message("job.state.cannot_move").arg("from", job_state_name(from)).arg("to", job_state_name(to)));
}

Result<JobStatus> parse_job_status(const json& status, const std::string& path) {
  FieldErrors errs;
  Fields f(status, path, errs);
  JobStatus s;
  s.state = f.enumeration("state", kStateNames);
  // "reason" is the English rendering of "reason_message" (code and arguments); a document written
  // before messages had codes has only the text, kept as it is.
  const std::string text = f.opt_str("reason", {.min_len = 0, .max_len = 4096}).value_or("");
  if (const json* m = f.raw("reason_message")) {
    if (auto msg = message_from_json(*m)) s.reason = std::move(msg.value());
    else if (!msg.error().detail.empty()) f.error("reason_message", msg.error().detail);
    else f.error("reason_message", msg.error().message);
  } else if (!text.empty()) {
    s.reason = verbatim(text);
  }
  s.updated_at = f.opt_time("updated_at").value_or(0);
  s.fault_retries_used = f.opt_integer("fault_retries_used", 0, 1000).value_or(0);
  f.objects("placement", false, 1024 * 1000, [&](Fields& p, size_t) {
    WorkerPlacement w;
    w.replica = p.integer("replica", 0, 999);
    w.worker = p.integer("worker", 0, 1023);
    w.node = p.str("node", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
    const json* gpus = p.raw("gpus");
    if (gpus && !gpus->is_array()) {
      p.error("gpus", Message("job.placement.gpus_not_list"));
    } else if (gpus) {
      for (size_t i = 0; i < gpus->size(); ++i) {
        const json& g = (*gpus)[i];
        if (!g.is_number_integer() || g.get<int64_t>() < 0 || g.get<int64_t>() > 15) {
          p.error("gpus[" + std::to_string(i) + "]", Message("job.placement.gpu_index"));
        } else if (!w.gpus.empty() && g.get<int64_t>() <= w.gpus.back()) {
          p.error("gpus[" + std::to_string(i) + "]", Message("job.placement.gpu_order"));
        } else {
          w.gpus.push_back(g.get<int64_t>());
        }
      }
    }
    w.gpu_milli = p.opt_integer("gpu_milli", 1, 999).value_or(0);
    if (w.gpu_milli > 0 && w.gpus.size() != 1) p.error("gpu_milli", Message("job.placement.gpu_milli_one_gpu"));
    w.nvlink_domain = p.opt_str("nvlink_domain", {.max_len = 63, .pattern = kSlug}).value_or("");
    w.offer_id = p.opt_str("offer_id", {.max_len = 128}).value_or("");
    s.placement.push_back(std::move(w));
  });
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return s;
}

json to_json(const JobStatus& s) {
  json placement = json::array();
  for (const auto& w : s.placement) {
    json p = {{"replica", w.replica}, {"worker", w.worker}, {"node", w.node}, {"gpus", w.gpus}};
    if (w.gpu_milli > 0) p["gpu_milli"] = w.gpu_milli;
    if (!w.nvlink_domain.empty()) p["nvlink_domain"] = w.nvlink_domain;
    if (!w.offer_id.empty()) p["offer_id"] = w.offer_id;
    placement.push_back(std::move(p));
  }
  json j = {{"state", job_state_name(s.state)}, {"placement", std::move(placement)}};
  if (!s.reason.empty()) {
    j["reason"] = render_en(s.reason);
    j["reason_message"] = message_to_json(s.reason);
  }
  if (s.updated_at != 0) j["updated_at"] = format_rfc3339(s.updated_at);
  if (s.fault_retries_used > 0) j["fault_retries_used"] = s.fault_retries_used;
  return j;
}

}  // namespace gpurent
