// The allocation ledger: one "allocations" record per run of a job on GPUs — opened when the job
// starts running, closed (ended_at, end_reason) when it stops or its placement changes (an
// inference replica added or removed opens a new record). Each record names the offer it is
// billed under: the one the scheduler placed the job under (the placement's offer_id, with the
// tenant's contract in force that names it); for a placement stored without one, the first offer
// of the tenant's contract with the node's supplier that sells the node, else the supplier's
// first offer that does. The billing engine
// rates these records (server/invoices.h); GET /api/v1/allocations lists them.
// Called inside the control loop's transaction by every writer of a job's status.
// A run of a job in one of the tenant's own images (model/image.h KeptImage) also opens that
// image's "image_storage" record for the run's offer, unless one is open: the image is kept on
// the offer's nodes from then until it is deleted (close_kept_image); so do the project's
// artifacts it mounts ("artifact_storage") and the tenant's volumes ("volume_storage", at their
// provisioned size).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/job_run.h"
#include "model/job_state.h"
#include "model/offer.h"
#include "store/store.h"

namespace gpurent {

// Keeps the ledger in step with a job's status change (before -> after) at `now`.
Status sync_allocation(StoreTx& tx, const Record& job, const JobStatus& before, const JobStatus& after, TimeMs now);

// Whether offer `o` (of the node's supplier) sells the node: the same GPU model and region, and a
// node selector (site, names) that lets it in; `site` is the node's.
bool offer_sells(const OfferReach& o, const Record& node_rec, const std::string& site);

// Whether any offer of the node's supplier sells it (the test runs use to pick their offer): a
// node none sells runs jobs that are not billed. Offers that no longer decode sell nothing.
Result<bool> node_is_sold(StoreReader& store, const Record& node_rec);

// When contract `k` stops taking new runs: its effective exit as billing cuts its commitments
// (billing/rating_input.h effective_exit: the later of exit_at and the notice plus the notice days
// of its clauses; a contract stored without them, by a server older than the migration that
// copied them in, reads its first offer's template through `tx`, else 30 days); none without an
// exit.
struct Contract;
Result<std::optional<TimeMs>> contract_exit(StoreTx& tx, const Contract& k);
// Whether contract `k` takes new runs at `now`: started, and its effective exit not reached.
Result<bool> contract_in_force(StoreTx& tx, const Contract& k, TimeMs now);

// Edits the job's latest run with the executor's own facts (the Slurm job id, and the start and
// end times Slurm recorded, so billing follows the executor's clock). No run: no-op. A stored run
// of the project that no longer decodes fails it (services/record_faults.h).
// A stored run with its record (id, index columns, times).
struct StoredRun {
  Record record;
  JobRun run;
};

// The runs whose index columns match `eq`, decoded; a run that no longer decodes fails the read,
// saying `consequence` (services/record_faults.h). Any thread.
Result<std::vector<StoredRun>> list_runs(StoreReader& store, std::map<std::string, std::string> eq,
                                         const std::string& consequence);

// The record is written at `now` (its updated_at moves on: invoices find the runs changed since a
// time by it).
Status annotate_latest_run(StoreTx& tx, const std::string& job_id, const std::string& project_id,
                           const std::function<void(JobRun&)>& edit, TimeMs now);

// A job just submitted: the chain of its runs begins (each run names the one before it,
// JobRun::previous_run, "" for its first). A job submitted before gpurent kept the chain has none
// until one of its runs closes; a run it begins before that names no previous run at all. In the
// transaction that inserts the job.
Status begin_job_runs(StoreTx& tx, const Record& job);

// The job's open run (a running job has one), nullopt when it has none.
Result<std::optional<JobRun>> open_run_of(StoreTx& tx, const Record& job);

// Whether the tenant ever ran on the node (a run of any of its jobs held one of its GPUs): what a
// tenant's dispute or acceptance run about a node needs. One record read: each run's opening
// notes its tenant and nodes ("node-tenancies"); a store from before those notes is read by
// walking the tenant's runs with the node's supplier until backfill_node_tenancies has run.
Result<bool> tenant_ran_on(StoreTx& tx, const std::string& tenant_id, const std::string& node_id);
// Notes every run already stored, once (a marker record says it is done; later starts do nothing).
// At server start, in one transaction.
Status backfill_node_tenancies(StoreTx& tx, TimeMs now);

// The job's newest run: its open one, else its latest closed one (the chain's last-runs record),
// nullopt when it never ran. Reads the project's open runs and one record, not the project's
// history; only a job submitted before the chain was kept, with no run closed since, walks its
// project's runs.
Result<std::optional<JobRun>> newest_run_of(StoreTx& tx, const Record& job);

// The newest closed run of the job that `pred` accepts, nullopt when none: through the job's chain
// of runs (its last-runs record, then each run's previous_run), not its project's history; a job
// whose chain does not reach its first run (runs from before it was kept) walks its project's
// closed runs.
Result<std::optional<JobRun>> newest_closed_run_where(StoreTx& tx, const std::string& job_id,
                                                      const std::string& project_id,
                                                      const std::function<bool(const JobRun&)>& pred);
// The same off the control loop (any thread), from the last committed state.
Result<std::optional<JobRun>> newest_closed_run_where(StoreReader& store, const std::string& job_id,
                                                      const std::string& project_id,
                                                      const std::function<bool(const JobRun&)>& pred);

// Whether a closed run of the job ran as the executor's job `slurm_job_id`: its end has been acted
// on (a requeue), so it is not the run of the job's next admission.
Result<bool> closed_run_was(StoreTx& tx, const std::string& job_id, const std::string& project_id,
                            int64_t slurm_job_id);

// The executor saw the job's open run become ready at `at` (its health check passed or the
// workload's heartbeat came): ready_at = max(at, running_at) unless already set. No open run: no-op.
Status mark_run_ready(StoreTx& tx, const Record& job, TimeMs at);

// The artifact was deleted at `at`: every open artifact_storage record of it is closed then.
Status close_kept_artifact(StoreTx& tx, const std::string& project_id, const std::string& artifact_id, TimeMs at);

// The image was deleted at `at`: every open image_storage record of it is closed then.
Status close_kept_image(StoreTx& tx, const std::string& tenant_id, const std::string& image_id, TimeMs at);

// The volume was deleted at `at`: every open volume_storage record of it is closed then.
Status close_kept_volume(StoreTx& tx, const std::string& tenant_id, const std::string& volume_id, TimeMs at);
// The volume grew to `bytes` at `at`: each open volume_storage record of it is closed then and
// one at the new size opens for the same offer.
Status resize_kept_volume(StoreTx& tx, const std::string& tenant_id, const std::string& volume_id, int64_t bytes,
                          TimeMs at);

// The executor says a running job's GPUs are other indices of the same nodes than gpurent
// recorded (Slurm picks them itself): the job's open run takes them in place. It is the same
// run on the same number of cards, so it is neither closed nor reopened. No open run: no-op.
Status correct_open_run_gpus(StoreTx& tx, const Record& job, const std::vector<WorkerPlacement>& placement);

}  // namespace gpurent
