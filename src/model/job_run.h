// JobRun: one run of a job on its cards — the allocation ledger's record (kind "allocations",
// id "alc_…"). The scheduler service opens a run when a job starts on GPUs (with the offer and
// contract it is billed under) and closes it when the job stops, fails, is preempted or requeued;
// a requeued job has one run per start. Billing rates runs, reconciliation compares them with the
// meter and Slurm, the advisor reads them as metered demand. Written only by the server
// (services/allocation_ledger.h); schema: docs/api.md "Contracts, allocations, invoices".
//
// decode_run() reads a stored document strictly by type (a time that is not RFC 3339, a billing
// mode that does not exist, a placement that is not a list of cards is an error naming the field)
// and ignores keys it does not know. Value types and pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/message.h"
#include "model/job.h"
#include "model/resource.h"

namespace gpurent {

enum class RunState { kOpen, kClosed };
inline constexpr EnumEntry<RunState> kRunStateNames[] = {{RunState::kOpen, "open"}, {RunState::kClosed, "closed"}};

struct RunCards {
  std::string node_id;
  std::string node;           // the node's name when the run opened
  std::vector<int64_t> gpus;  // card indexes on the node
  bool operator==(const RunCards&) const = default;
};

struct JobRun {
  std::string job_id, job;  // the job's id and name
  std::string project_id, tenant_id, supplier_id;
  std::string offer_id;     // "" when no offer sold the node (the run is unpriced)
  std::string contract_id;  // "" for list prices
  BillingMode billing_mode = BillingMode::kOnDemand;
  int64_t gpu_milli = 0;    // GPUs held, in thousandths (a fractional worker holds < 1000)
  // CPU-only runs (gpu_milli 0): the cores and memory the job's workers asked for, billed at the
  // offer's cpu_core_hour and memory_gib_hour. 0 on GPU runs (their price includes both).
  int64_t cpu_cores = 0;
  int64_t memory_gib = 0;
  std::optional<JobEndpoint> endpoint;  // the job's billing.endpoint when the run opened
  std::vector<RunCards> placement;
  std::optional<TimeMs> requested_at;  // capacity committed to the run: its placement (billing's cold start)
  std::optional<TimeMs> admitted_at;   // when the scheduler admitted the job, if it waited admitted
  std::optional<TimeMs> running_at;
  std::optional<TimeMs> ready_at;
  std::optional<TimeMs> ended_at;      // none while open
  std::string end_reason;              // English; end_reason_message is the code
  std::optional<Message> end_reason_message;
  RunState state = RunState::kOpen;
  std::optional<int64_t> slurm_job_id;  // the Slurm job that ran it (Slurm executor)
  // The id of the job's run before this one ("" when this is its first). Absent from runs
  // recorded before gpurent kept it. Invoices follow it back from a run in their period to the
  // run a node failure ended before it (whose outage lasted into the period).
  std::optional<std::string> previous_run;

  int64_t cards() const;  // GPU indexes listed in the placement
  bool operator==(const JobRun&) const = default;
};

Result<JobRun> decode_run(const json& body);
json to_json(const JobRun& r);

}  // namespace gpurent
