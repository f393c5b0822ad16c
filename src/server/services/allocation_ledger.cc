#include "server/services/allocation_ledger.h"

#include <algorithm>
#include <map>
#include <set>

#include "billing/rating_input.h"
#include "core/ids.h"
#include "model/artifact.h"
#include "model/contract.h"
#include "model/image.h"
#include "model/job.h"
#include "model/job_run.h"
#include "model/node.h"
#include "model/offer.h"
#include "model/tenant.h"
#include "model/volume.h"
#include "server/services/image_builder.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

}  // namespace

bool offer_sells(const OfferReach& o, const Record& node_rec, const std::string& site) {
  if (o.gpu_model != node_rec.gpu_model || o.region != node_rec.region) return false;
  if (o.node_selector.site && *o.node_selector.site != site) return false;
  const auto& names = o.node_selector.node_names;
  return names.empty() || std::find(names.begin(), names.end(), node_rec.name) != names.end();
}

namespace {

// (offer id, contract id) for a run on `node`; empty offer when nothing sells the node. A contract
// or offer that no longer decodes is reported and sells nothing here (its tenant's invoices fail
// until it is fixed): one broken record must not stop every job from starting.
Result<std::pair<std::string, std::string>> offer_for(StoreTx& tx, const std::string& tenant_id, const Record& node_rec,
                                                      TimeMs now) {
  auto site = decode_record(node_rec, stored_node_site, "no run can be recorded on it");
  if (!site) return site.error();
  auto sells_node = [&](const Record& o) {
    auto reach = decode_record(o, stored_offer_reach, "it sells no new run until it is fixed");
    return reach && offer_sells(*reach, node_rec, *site);
  };
  auto contracts = list_all(tx, "contracts", {{"tenant_id", tenant_id}, {"supplier_id", node_rec.supplier_id}});
  if (!contracts) return contracts.error();
  for (const Record& c : *contracts) {
    auto k = decode_record(c, decode_contract, "runs started meanwhile are priced at list prices");
    if (!k) continue;
    auto in_force = contract_in_force(tx, *k, now);
    if (!in_force) return in_force.error();
    if (!*in_force) continue;
    for (const auto& oid : k->offer_ids) {
      auto o = tx.get("offers", oid);
      if (o && sells_node(*o)) return std::make_pair(oid, c.id);
    }
  }
  auto offers = list_all(tx, "offers", {{"supplier_id", node_rec.supplier_id}});
  if (!offers) return offers.error();
  for (const Record& o : *offers)
    if (sells_node(o)) return std::make_pair(o.id, std::string());
  return std::make_pair(std::string(), std::string());
}

// (offer id, contract id) for a run the scheduler placed under `offer_id`: the tenant's contract
// in force that names the offer, if any. A placement without one (stored before the scheduler
// chose offers), or whose offer has been deleted since, gets offer_for's choice.
Result<std::pair<std::string, std::string>> run_offer(StoreTx& tx, const std::string& tenant_id, const Record& node_rec,
                                                      const std::string& offer_id, TimeMs now) {
  if (offer_id.empty()) return offer_for(tx, tenant_id, node_rec, now);
  // Locked against its delete (offers.cc, perhaps on another server): an offer deleted since the
  // placement chose it prices nothing: offer_for's choice does, as for a placement naming none.
  if (auto offer = tx.get_locked("offers", offer_id); !offer) {
    if (offer.error().code != Code::kNotFound) return offer.error();
    return offer_for(tx, tenant_id, node_rec, now);
  }
  auto contracts = list_all(tx, "contracts", {{"tenant_id", tenant_id}, {"supplier_id", node_rec.supplier_id}});
  if (!contracts) return contracts.error();
  for (const Record& c : *contracts) {
    auto k = decode_record(c, decode_contract, "runs started meanwhile are priced at list prices");
    if (!k) continue;
    auto in_force = contract_in_force(tx, *k, now);
    if (!in_force) return in_force.error();
    if (!*in_force) continue;
    if (std::find(k->offer_ids.begin(), k->offer_ids.end(), offer_id) != k->offer_ids.end())
      return std::make_pair(offer_id, c.id);
  }
  return std::make_pair(offer_id, std::string());
}

}  // namespace

Result<std::optional<TimeMs>> contract_exit(StoreTx& tx, const Contract& k) {
  if (!k.exit_at && !k.exit_notice_at) return std::optional<TimeMs>();
  ContractTerms t;
  t.exit_at = k.exit_at;
  t.exit_notice_at = k.exit_notice_at;
  if (k.clauses) {
    t.clauses = *k.clauses;
  } else if (!k.offer_ids.empty()) {
    // A first offer deleted since, or no longer decoding (reported), leaves the default notice:
    // one broken record must not stop every job from being placed.
    auto o = tx.get("offers", k.offer_ids[0]);
    if (!o && o.error().code != Code::kNotFound) return o.error();
    if (o)
      if (auto days =
              decode_record(*o, stored_offer_exit_notice_days, "its contracts' exits are read with 30 days' notice"))
        t.clauses.exit_notice_days = *days;
  }
  return effective_exit(t);
}

Result<bool> contract_in_force(StoreTx& tx, const Contract& k, TimeMs now) {
  if (k.starts_at > now) return false;
  auto exit = contract_exit(tx, k);
  if (!exit) return exit.error();
  return !*exit || **exit > now;
}

Result<bool> node_is_sold(StoreReader& store, const Record& node_rec) {
  auto site = stored_node_site(node_rec.body);
  if (!site) return site.error();
  std::string after;
  do {
    auto page = store.list(ListQuery{"offers", {{"supplier_id", node_rec.supplier_id}}, after, 1000});
    if (!page) return page.error();
    for (const Record& o : page->items) {
      auto reach = stored_offer_reach(o.body);
      if (reach && offer_sells(*reach, node_rec, *site)) return true;
    }
    after = page->next_after;
  } while (!after.empty());
  return false;
}

namespace {

// Opens a kept-storage record of `kind` (an image, artifact or volume kept for an offer's nodes).
Status insert_kept(StoreTx& tx, const char* kind, const char* id_prefix, const std::string& tenant_id,
                   const std::string& project_id, const std::string& supplier_id, json body, TimeMs now) {
  Record r;
  r.kind = kind;
  r.id = new_id(id_prefix);
  r.tenant_id = tenant_id;
  r.project_id = project_id;
  r.supplier_id = supplier_id;
  r.state = "open";
  r.created_at = r.updated_at = now;
  r.body = std::move(body);
  return tx.insert(r);
}

// The run's job runs in one of the tenant's own images: it is kept on the run's offer's nodes
// from now, unless an open record already says so. Images named by their node reference, public
// images and unpriced runs keep nothing billable.
Status keep_image(StoreTx& tx, const Record& job, const Job& j, const JobRun& run, TimeMs now) {
  if (run.offer_id.empty() || !j.image || !names_platform_image(*j.image)) return ok_status();
  auto found = find_image(tx, job.tenant_id, *j.image);
  if (!found) return found.error().code == Code::kNotFound ? ok_status() : Status(found.error());
  if (found->tenant_id != job.tenant_id) return ok_status();
  // Locked against its delete on another server: gone by then, nothing is kept.
  auto img = tx.get_locked("images", found->id);
  if (!img) return img.error().code == Code::kNotFound ? ok_status() : Status(img.error());
  auto image = decode_record(*img, decode_image, "its storage cannot be billed");
  if (!image) return image.error();
  auto open = list_all(tx, "image_storage", {{"tenant_id", job.tenant_id}, {"state", "open"}});
  if (!open) return open.error();
  for (const Record& o : *open) {
    auto k = decode_record(o, decode_kept_image, "its storage cannot be billed");
    if (!k) return k.error();
    if (k->image_id == img->id && k->offer_id == run.offer_id) return ok_status();
  }
  KeptImage k{img->id, image->name, run.offer_id, run.contract_id, image->size_bytes, now, std::nullopt};
  return insert_kept(tx, "image_storage", "ims", job.tenant_id, "", run.supplier_id, to_json(k), now);
}

// The run's job mounts artifacts of its project: each is kept for the run's offer's nodes from
// now, unless an open record already says so. Unpriced runs keep nothing billable.
Status keep_artifacts(StoreTx& tx, const Record& job, const Job& j, const JobRun& run, TimeMs now) {
  if (run.offer_id.empty() || j.artifacts.empty()) return ok_status();
  auto open = list_all(tx, "artifact_storage", {{"project_id", job.project_id}, {"state", "open"}});
  if (!open) return open.error();
  std::set<std::string> kept;
  for (const Record& o : *open) {
    auto k = decode_record(o, decode_kept_artifact, "its storage cannot be billed");
    if (!k) return k.error();
    if (k->offer_id == run.offer_id) kept.insert(k->artifact_id);
  }
  for (const JobArtifact& a : j.artifacts) {
    auto found = list_all(tx, "artifacts", {{"name", job.project_id + "/" + a.name}});
    if (!found) return found.error();
    if (found->empty() || kept.count(found->front().id)) continue;
    auto locked = tx.get_locked("artifacts", found->front().id);  // against its delete on another server
    if (!locked && locked.error().code == Code::kNotFound) continue;
    if (!locked) return locked.error();
    const Record& rec = *locked;
    auto art = decode_record(rec, decode_artifact, "its storage cannot be billed");
    if (!art) return art.error();
    KeptArtifact k{rec.id, art->name, run.offer_id, run.contract_id, art->size_bytes, now, std::nullopt};
    if (auto s = insert_kept(tx, "artifact_storage", "ars", job.tenant_id, job.project_id, run.supplier_id, to_json(k), now);
        !s)
      return s;
    kept.insert(rec.id);
  }
  return ok_status();
}

Status insert_kept_volume(StoreTx& tx, const std::string& tenant_id, const std::string& supplier_id,
                          const KeptVolume& k, TimeMs now) {
  return insert_kept(tx, "volume_storage", "vls", tenant_id, "", supplier_id, to_json(k), now);
}

// The run's job mounts volumes of its tenant: each is kept for the run's offer's nodes at its
// provisioned size from now, unless an open record already says so. Unpriced runs keep nothing
// billable; a volume that no longer exists (a job queued before volumes were records) neither.
Status keep_volumes(StoreTx& tx, const Record& job, const Job& j, const JobRun& run, TimeMs now) {
  if (run.offer_id.empty() || j.volumes.empty()) return ok_status();
  auto open = list_all(tx, "volume_storage", {{"tenant_id", job.tenant_id}, {"state", "open"}});
  if (!open) return open.error();
  std::set<std::string> kept;
  for (const Record& o : *open) {
    auto k = decode_record(o, decode_kept_volume, "its storage cannot be billed");
    if (!k) return k.error();
    if (k->offer_id == run.offer_id) kept.insert(k->volume_id);
  }
  for (const VolumeMount& m : j.volumes) {
    auto found = list_all(tx, "volumes", {{"tenant_id", job.tenant_id}, {"name", m.name}});
    if (!found) return found.error();
    if (found->empty() || kept.count(found->front().id)) continue;
    const Record& rec = found->front();
    auto vol = decode_record(rec, decode_volume, "its storage cannot be billed");
    if (!vol) return vol.error();
    KeptVolume k{rec.id, vol->name, run.offer_id, run.contract_id, vol->size_gb * 1'000'000'000, now, std::nullopt};
    if (auto s = insert_kept_volume(tx, job.tenant_id, run.supplier_id, k, now); !s) return s;
    kept.insert(rec.id);
  }
  return ok_status();
}

// Each job's latest closed run, one record per job (kind "last-runs", id "runs-of-<job id>"; "" from
// its submission until a run closes): the next run of the job names it as its previous_run, so an
// invoice reaches a run before its period through the run in it, without reading the tenant's
// whole history (invoices.cc, read_runs).
constexpr const char* kLastRuns = "last-runs";
// Its id: not the job's own, so that an id names one record whatever its kind.
std::string last_runs_id(const std::string& job_id) { return "runs-of-" + job_id; }

// A record of the ledger's own (last-runs, node-tenancies), new at `at`.
Record ledger_record(const char* kind, std::string id, std::string tenant_id, TimeMs at, json body) {
  Record r;
  r.kind = kind;
  r.id = std::move(id);
  r.tenant_id = std::move(tenant_id);
  r.created_at = r.updated_at = at;
  r.version = 1;
  r.body = std::move(body);
  return r;
}

// A new last-runs record of `job`, naming `run_id`, written at `at`.
Record new_last_runs(const Record& job, const std::string& run_id, TimeMs at) {
  Record r = ledger_record(kLastRuns, last_runs_id(job.id), job.tenant_id, at, {{"run", run_id}});
  r.name = r.id;  // names are unique within a tenant
  r.project_id = job.project_id;
  return r;
}

Status remember_last_run(StoreTx& tx, const Record& job, const std::string& run_id, TimeMs now) {
  auto cur = tx.get(kLastRuns, last_runs_id(job.id));
  if (!cur && cur.error().code != Code::kNotFound) return cur.error();
  // A job submitted before the chain was kept, whose run closes now, joins it: its next run names
  // this one.
  if (!cur) return tx.insert(new_last_runs(job, run_id, now));
  Record r = *cur;
  r.updated_at = now;
  r.body = {{"run", run_id}};
  return tx.update(r);
}

// "node-tenancies": one record per (tenant, node) the tenant ever ran on, and the marker saying
// every earlier run has been noted (allocation_ledger.h, tenant_ran_on).
constexpr const char* kNodeTenancies = "node-tenancies";
constexpr const char* kTenanciesNoted = "node-tenancies-noted";
std::string node_tenancy_id(const std::string& tenant_id, const std::string& node_id) {
  return "ran-" + tenant_id + "-on-" + node_id;
}

Status note_node_tenancy(StoreTx& tx, const std::string& tenant_id, const std::string& node_id, TimeMs now) {
  const std::string id = node_tenancy_id(tenant_id, node_id);
  auto cur = tx.get(kNodeTenancies, id);
  if (cur || cur.error().code != Code::kNotFound) return cur ? ok_status() : Status(cur.error());
  auto in =
      tx.insert(ledger_record(kNodeTenancies, id, tenant_id, now,
                              {{"tenant_id", tenant_id}, {"node_id", node_id}, {"first_run_at", format_rfc3339(now)}}));
  // Noted meanwhile by another transaction (a start's backfill, a server taking over the lead):
  // what this one wanted is there.
  if (!in && in.error().code == Code::kConflict && !in.error().fields.empty() && in.error().fields[0].field == "id")
    return ok_status();
  return in;
}

Status open_run(StoreTx& tx, const Record& job, const JobStatus& before, const JobStatus& after, TimeMs now) {
  if (after.placement.empty()) return ok_status();
  std::map<std::string, std::vector<int64_t>> by_node;
  int64_t milli = 0;
  for (const auto& w : after.placement) {
    auto& g = by_node[w.node];
    g.insert(g.end(), w.gpus.begin(), w.gpus.end());
    milli += w.gpu_milli > 0 ? w.gpu_milli : static_cast<int64_t>(w.gpus.size()) * 1000;
  }
  auto node = tx.get("nodes", after.placement.front().node);
  if (!node) return node.error();
  auto offer = run_offer(tx, job.tenant_id, *node, after.placement.front().offer_id, now);
  if (!offer) return offer.error();
  JobRun run;
  for (const auto& [nid, gpus] : by_node) {
    auto n = tx.get("nodes", nid);
    run.placement.push_back({nid, n ? n->name : nid, gpus});
    if (auto s = note_node_tenancy(tx, job.tenant_id, nid, now); !s) return s;
  }
  run.job_id = job.id;
  run.job = job.name;
  auto last = tx.get(kLastRuns, last_runs_id(job.id));
  if (!last && last.error().code != Code::kNotFound) return last.error();
  // None for a job submitted before the chain was kept whose runs all closed before: its earlier
  // runs are not known here, and the run says so by naming none (invoices then read every run).
  if (last) run.previous_run = last->body.is_object() ? last->body.value("run", "") : "";
  run.project_id = job.project_id;
  run.tenant_id = job.tenant_id;
  run.supplier_id = node->supplier_id;
  run.offer_id = offer->first;
  run.contract_id = offer->second;
  auto tenant = tx.get("tenants", job.tenant_id);
  if (!tenant) return tenant.error();
  auto currency = decode_record(*tenant, stored_tenant_currency, "its runs cannot be recorded");
  if (!currency) return currency.error();
  auto j = decode_record(job, [&](const json& b) { return parse_job(b, *currency); }, "its run cannot be recorded");
  if (!j) return j.error();
  run.billing_mode = j->billing.mode;
  run.gpu_milli = milli;
  run.endpoint = j->billing.endpoint;
  if (milli == 0) {  // a CPU-only job: billed by the cores and memory its workers asked for
    run.cpu_cores = j->resources.cpu_cores.value_or(1) * j->workers;
    run.memory_gib = j->resources.memory_gib.value_or(0) * j->workers;
  }
  // Capacity is committed to the run when the scheduler places it (admission): billing from
  // api_call counts from there. The job's time in the queue, before that, is never billed, and a
  // requeued job's next run counts from its own placement.
  run.requested_at = before.state == JobState::kAdmitted ? before.updated_at : now;
  run.running_at = now;
  if (!j->readiness) run.ready_at = now;  // else when the executor sees it ready (mark_run_ready)
  if (before.state == JobState::kAdmitted) run.admitted_at = before.updated_at;
  Record r;
  r.kind = "allocations";
  r.id = new_id("alc");
  r.tenant_id = job.tenant_id;
  r.supplier_id = node->supplier_id;
  r.project_id = job.project_id;
  r.state = "open";
  r.gpu_model = node->gpu_model;
  r.created_at = r.updated_at = now;
  r.body = to_json(run);
  if (auto s = tx.insert(r); !s) return s;
  if (auto s = keep_image(tx, job, *j, run, now); !s) return s;
  if (auto s = keep_artifacts(tx, job, *j, run, now); !s) return s;
  return keep_volumes(tx, job, *j, run, now);
}

Status close_runs(StoreTx& tx, const Record& job, const Message& reason, TimeMs now) {
  auto open = list_all(tx, "allocations", {{"project_id", job.project_id}, {"state", "open"}});
  if (!open) return open.error();
  for (Record r : *open) {
    auto run = decode_record(r, decode_run, "the run of job " + job.name + " cannot be closed");
    if (!run) return run.error();
    if (run->job_id != job.id) continue;
    run->state = RunState::kClosed;
    run->ended_at = now;
    run->end_reason = render_en(reason);  // invoices.cc reads SLA outages from it
    if (!reason.empty()) run->end_reason_message = reason;
    r.state = "closed";
    r.updated_at = now;
    r.body = to_json(*run);
    if (auto s = tx.update(r); !s) return s;
    if (auto s = remember_last_run(tx, job, r.id, now); !s) return s;
  }
  return ok_status();
}

}  // namespace

Status sync_allocation(StoreTx& tx, const Record& job, const JobStatus& before, const JobStatus& after, TimeMs now) {
  const bool was = before.state == JobState::kRunning, is = after.state == JobState::kRunning;
  const bool moved = was && is && before.placement != after.placement;
  if (was && (!is || moved))
    if (auto s = close_runs(tx, job, moved ? Message("alloc.placement_changed").arg("reason", after.reason) : after.reason,
                            now);
        !s)
      return s;
  if (is && (!was || moved)) return open_run(tx, job, before, after, now);
  return ok_status();
}

Result<std::vector<StoredRun>> list_runs(StoreReader& store, std::map<std::string, std::string> eq,
                                         const std::string& consequence) {
  auto records = list_all(store, "allocations", std::move(eq));
  if (!records) return records.error();
  std::vector<StoredRun> out;
  out.reserve(records->size());
  for (Record& r : *records) {
    auto run = decode_record(r, decode_run, consequence);
    if (!run) return run.error();
    out.push_back({std::move(r), std::move(*run)});
  }
  return out;
}

Status begin_job_runs(StoreTx& tx, const Record& job) { return tx.insert(new_last_runs(job, "", job.created_at)); }

Status annotate_latest_run(StoreTx& tx, const std::string& job_id, const std::string& project_id,
                           const std::function<void(JobRun&)>& edit, TimeMs now) {
  auto runs = list_all(tx, "allocations", {{"project_id", project_id}});
  if (!runs) return runs.error();
  const Record* latest = nullptr;
  JobRun latest_run;
  for (const Record& r : *runs) {
    auto run = decode_record(r, decode_run, "job " + job_id + "'s run cannot be updated");
    if (!run) return run.error();
    if (run->job_id == job_id && (!latest || r.created_at >= latest->created_at)) latest = &r, latest_run = std::move(*run);
  }
  if (!latest) return ok_status();
  Record u = *latest;
  edit(latest_run);
  u.body = to_json(latest_run);
  u.updated_at = std::max(u.updated_at, now);
  return tx.update(u);
}

Result<std::optional<JobRun>> open_run_of(StoreTx& tx, const Record& job) {
  auto open = list_all(tx, "allocations", {{"project_id", job.project_id}, {"state", "open"}});
  if (!open) return open.error();
  for (const Record& r : *open) {
    auto run = decode_record(r, decode_run, "the run of job " + job.name + " cannot be followed");
    if (!run) return run.error();
    if (run->job_id == job.id) return std::optional<JobRun>(std::move(*run));
  }
  return std::optional<JobRun>();
}

Result<bool> tenant_ran_on(StoreTx& tx, const std::string& tenant_id, const std::string& node_id) {
  auto noted = tx.get(kNodeTenancies, node_tenancy_id(tenant_id, node_id));
  if (noted) return true;
  if (noted.error().code != Code::kNotFound) return noted.error();
  auto done = tx.get(kNodeTenancies, kTenanciesNoted);
  if (done) return false;
  if (done.error().code != Code::kNotFound) return done.error();
  // Not backfilled yet: the tenant's runs with the node's supplier.
  auto node = tx.get("nodes", node_id);
  if (!node) return node.error().code == Code::kNotFound ? Result<bool>(false) : Result<bool>(node.error());
  auto runs = list_all(tx, "allocations", {{"tenant_id", tenant_id}, {"supplier_id", node->supplier_id}});
  if (!runs) return runs.error();
  for (const Record& r : *runs)
    if (r.body.is_object() && r.body.contains("placement") && r.body["placement"].is_array())
      for (const json& part : r.body["placement"])
        if (part.is_object() && part.value("node_id", "") == node_id) return true;
  return false;
}

Status backfill_node_tenancies(StoreTx& tx, TimeMs now) {
  auto done = tx.get(kNodeTenancies, kTenanciesNoted);
  if (done || done.error().code != Code::kNotFound) return done ? ok_status() : Status(done.error());
  auto runs = list_all(tx, "allocations", {});
  if (!runs) return runs.error();
  std::set<std::pair<std::string, std::string>> pairs;  // (tenant, node), each noted once
  for (const Record& r : *runs)
    if (r.body.is_object() && r.body.contains("placement") && r.body["placement"].is_array())
      for (const json& part : r.body["placement"])
        if (part.is_object() && part.contains("node_id") && part["node_id"].is_string() && !r.tenant_id.empty())
          pairs.insert({r.tenant_id, part["node_id"].get<std::string>()});
  for (const auto& [tenant, node] : pairs)
    if (auto s = note_node_tenancy(tx, tenant, node, now); !s) return s;
  return tx.insert(ledger_record(kNodeTenancies, kTenanciesNoted, "", now,
                                 {{"noted_at", format_rfc3339(now)}, {"runs", runs->size()}}));
}

// Whether run record `r` is of job `job_id` (false for a body that does not say so as a string).
static bool names_job(const Record& r, const std::string& job_id) {
  if (!r.body.is_object()) return false;
  auto it = r.body.find("job_id");
  return it != r.body.end() && it->is_string() && it->get_ref<const std::string&>() == job_id;
}

Result<std::optional<JobRun>> newest_run_of(StoreTx& tx, const Record& job) {
  auto open = list_all(tx, "allocations", {{"project_id", job.project_id}, {"state", "open"}});
  if (!open) return open.error();
  for (const Record& r : *open) {  // another job's run that does not decode is not this one's concern
    if (!names_job(r, job.id)) continue;
    auto run = decode_record(r, decode_run, "the run of job " + job.name + " cannot be followed");
    if (!run) return run.error();
    return std::optional<JobRun>(std::move(*run));
  }
  auto last = tx.get(kLastRuns, last_runs_id(job.id));
  if (!last && last.error().code != Code::kNotFound) return last.error();
  if (last) {
    const std::string id = last->body.is_object() ? last->body.value("run", "") : "";
    if (id.empty()) return std::optional<JobRun>();  // no run closed yet, none open: never ran
    auto r = tx.get("allocations", id);
    if (!r) return r.error();
    auto run = decode_record(*r, decode_run, "the runs of job " + job.name + " cannot be followed");
    if (!run) return run.error();
    return std::optional<JobRun>(std::move(*run));
  }
  // Submitted before the chain was kept: its runs, by walking the project's.
  auto runs = list_all(tx, "allocations", {{"project_id", job.project_id}});
  if (!runs) return runs.error();
  std::optional<JobRun> newest;
  for (const Record& r : *runs) {
    if (!names_job(r, job.id)) continue;
    auto run = decode_run(r.body);
    if (!run) continue;
    const TimeMs at = run->running_at.value_or(run->requested_at.value_or(0));
    if (!newest || at >= newest->running_at.value_or(newest->requested_at.value_or(0))) newest = std::move(*run);
  }
  return newest;
}

// newest_closed_run_where through a transaction or a plain reader.
template <class Reader>
static Result<std::optional<JobRun>> newest_closed_run_where_in(Reader& tx, const std::string& job_id,
                                                                const std::string& project_id,
                                                                const std::function<bool(const JobRun&)>& pred) {
  // The job's own closed runs, newest first, through the chain (each names the one before it):
  // not the project's whole history.
  auto last = tx.get(kLastRuns, last_runs_id(job_id));
  if (!last && last.error().code != Code::kNotFound) return last.error();
  bool whole = last.ok();  // the chain reaches the job's first run
  if (last) {
    std::string id = last->body.is_object() ? last->body.value("run", "") : "";
    std::set<std::string> seen;
    while (!id.empty() && seen.insert(id).second) {
      auto r = tx.get("allocations", id);
      if (!r && r.error().code != Code::kNotFound) return r.error();
      if (!r) {  // a link to nothing (not written by gpurent): the walk decides
        whole = false;
        break;
      }
      auto run = decode_record(*r, decode_run, "job " + job_id + "'s runs cannot be followed");
      if (!run) return run.error();
      if (pred(*run)) return std::optional<JobRun>(std::move(*run));
      if (!run->previous_run) {  // begun before the chain was kept: its earlier runs are not linked
        whole = false;
        break;
      }
      id = *run->previous_run;
    }
    if (whole) return std::optional<JobRun>();
  }
  // A job from before the chain was kept: the project's closed runs.
  auto runs = list_all(tx, "allocations", {{"project_id", project_id}, {"state", "closed"}});
  if (!runs) return runs.error();
  std::optional<JobRun> newest;
  for (const Record& r : *runs) {
    auto run = decode_record(r, decode_run, "job " + job_id + "'s runs cannot be followed");
    if (!run) return run.error();
    if (run->job_id != job_id || !pred(*run)) continue;
    const auto at = [](const JobRun& x) { return x.running_at.value_or(x.requested_at.value_or(0)); };
    if (!newest || at(*run) >= at(*newest)) newest = std::move(*run);
  }
  return newest;
}

Result<std::optional<JobRun>> newest_closed_run_where(StoreTx& tx, const std::string& job_id,
                                                      const std::string& project_id,
                                                      const std::function<bool(const JobRun&)>& pred) {
  return newest_closed_run_where_in(tx, job_id, project_id, pred);
}

Result<std::optional<JobRun>> newest_closed_run_where(StoreReader& store, const std::string& job_id,
                                                      const std::string& project_id,
                                                      const std::function<bool(const JobRun&)>& pred) {
  return newest_closed_run_where_in(store, job_id, project_id, pred);
}

Result<bool> closed_run_was(StoreTx& tx, const std::string& job_id, const std::string& project_id,
                            int64_t slurm_job_id) {
  auto found = newest_closed_run_where(tx, job_id, project_id,
                                       [&](const JobRun& run) { return run.slurm_job_id == slurm_job_id; });
  if (!found) return found.error();
  return found->has_value();
}

Status mark_run_ready(StoreTx& tx, const Record& job, TimeMs at) {
  auto open = list_all(tx, "allocations", {{"project_id", job.project_id}, {"state", "open"}});
  if (!open) return open.error();
  for (Record r : *open) {
    auto run = decode_record(r, decode_run, "the run of job " + job.name + " cannot be marked ready");
    if (!run) return run.error();
    if (run->job_id != job.id || run->ready_at) continue;
    run->ready_at = std::max(at, run->running_at.value_or(at));
    r.body = to_json(*run);
    if (auto s = tx.update(r); !s) return s;
  }
  return ok_status();
}

Status correct_open_run_gpus(StoreTx& tx, const Record& job, const std::vector<WorkerPlacement>& placement) {
  std::map<std::string, std::vector<int64_t>> by_node;
  for (const auto& w : placement) {
    auto& g = by_node[w.node];
    g.insert(g.end(), w.gpus.begin(), w.gpus.end());
  }
  auto open = list_all(tx, "allocations", {{"project_id", job.project_id}, {"state", "open"}});
  if (!open) return open.error();
  for (Record r : *open) {
    auto run = decode_record(r, decode_run, "the run of job " + job.name + " cannot be corrected");
    if (!run) return run.error();
    if (run->job_id != job.id) continue;
    bool changed = false;
    for (auto& p : run->placement)
      if (auto it = by_node.find(p.node_id); it != by_node.end() && it->second.size() == p.gpus.size() &&
                                             it->second != p.gpus) {
        p.gpus = it->second;
        changed = true;
      }
    if (!changed) continue;
    r.body = to_json(*run);
    if (auto s = tx.update(r); !s) return s;
  }
  return ok_status();
}

namespace {

// Closes at `at` every open record of `kind` matching `eq` whose kept item (`id_of`) is `id`.
template <class Kept>
Status close_kept(StoreTx& tx, const char* kind, std::map<std::string, std::string> eq,
                  Result<Kept> (*decode)(const json&), std::string Kept::*id_of, const std::string& id, TimeMs at) {
  eq["state"] = "open";
  auto open = list_all(tx, kind, std::move(eq));
  if (!open) return open.error();
  for (Record r : *open) {
    auto k = decode_record(r, decode, "its storage cannot be closed");
    if (!k) return k.error();
    if ((*k).*id_of != id) continue;
    k->to = std::max(at, k->from + 1);
    r.state = "closed";
    r.updated_at = at;
    r.body = to_json(*k);
    if (auto s = tx.update(r); !s) return s;
  }
  return ok_status();
}

}  // namespace

Status close_kept_artifact(StoreTx& tx, const std::string& project_id, const std::string& artifact_id, TimeMs at) {
  return close_kept(tx, "artifact_storage", {{"project_id", project_id}}, decode_kept_artifact, &KeptArtifact::artifact_id,
                    artifact_id, at);
}

Status close_kept_image(StoreTx& tx, const std::string& tenant_id, const std::string& image_id, TimeMs at) {
  return close_kept(tx, "image_storage", {{"tenant_id", tenant_id}}, decode_kept_image, &KeptImage::image_id, image_id,
                    at);
}

Status close_kept_volume(StoreTx& tx, const std::string& tenant_id, const std::string& volume_id, TimeMs at) {
  return close_kept(tx, "volume_storage", {{"tenant_id", tenant_id}}, decode_kept_volume, &KeptVolume::volume_id,
                    volume_id, at);
}

Status resize_kept_volume(StoreTx& tx, const std::string& tenant_id, const std::string& volume_id, int64_t bytes,
                          TimeMs at) {
  auto open = list_all(tx, "volume_storage", {{"tenant_id", tenant_id}, {"state", "open"}});
  if (!open) return open.error();
  if (auto s = close_kept_volume(tx, tenant_id, volume_id, at); !s) return s;
  for (const Record& o : *open) {
    auto k = decode_record(o, decode_kept_volume, "its storage cannot be billed");
    if (!k) return k.error();
    if (k->volume_id != volume_id) continue;
    KeptVolume grown = *k;
    grown.bytes = bytes;
    grown.from = std::max(at, k->from + 1);
    if (auto s = insert_kept_volume(tx, tenant_id, o.supplier_id, grown, at); !s) return s;
  }
  return ok_status();
}

}  // namespace gpurent
