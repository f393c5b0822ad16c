// /api/v1/jobs: submit (POST), list, get, cancel (POST /jobs/{id}/cancel), the state history
// (GET /jobs/{id}/events) and, through job_cost.cc, the cost so far (GET /jobs/{id}/cost) and,
// through job_logs.cc, the runs' output (GET /jobs/{id}/logs). Jobs
// are immutable once submitted; every state change is recorded with its time, its reason and, for
// a user's act, the user by name. Submission checks what can be known at once: the project, the
// GPU models against the catalog, and the project's per-job GPU limit; placement and the
// remaining quota checks belong to the scheduler.
#include "model/artifact.h"
#include "model/image.h"
#include "model/instance.h"
#include "model/job.h"
#include "model/job_state.h"
#include <algorithm>

#include "model/project.h"
#include "model/tenant.h"
#include "server/http/http_util.h"
#include "server/services/allocation_ledger.h"
#include "server/services/image_builder.h"
#include "server/services/instance_stop.h"
#include "server/services/record_faults.h"
#include "server/api/job_actions.h"
#include "server/api/resources.h"

namespace gpurent {

static std::string gpus_text(int64_t milli) {
  std::string s = std::to_string(milli / 1000);
  if (milli % 1000) {
    std::string frac = std::to_string(1000 + milli % 1000).substr(1);
    while (frac.back() == '0') frac.pop_back();
    s += "." + frac;
  }
  return s;
}

// What can be known at submission: the GPU models exist, and the project's quota could ever admit
// the job (per-job limit; some allowed model with enough GPUs). A job that could never run is
// refused now instead of waiting forever. Inference counts its maximum replicas: the job may scale
// to them.
static Status check_against_project(Job& j, const Record& project, const GpuCatalog& catalog,
                                    Currency currency) {
  std::vector<std::string> models;
  // Also rewrites j's GPU models (ids or aliases) to catalog ids.
  for (size_t i = 0; i < j.constraints.gpu_models.size(); ++i) {
    const GpuModel* m = catalog.find(j.constraints.gpu_models[i]);
    if (!m)
      return Error::invalid("constraints.gpu_models[" + std::to_string(i) + "]",
                            Message("api.jobs.unknown_gpu_model").arg("model", j.constraints.gpu_models[i]));
    models.push_back(m->id);
  }
  j.constraints.gpu_models = models;  // stored as catalog ids, so filters and the scheduler match
  if (j.cpu_only()) return ok_status();
  auto stored = decode_record(project, [&](const json& b) { return decode_project(b, currency); }, "no job can be checked against its quota");
  if (!stored) return stored.error();
  const std::optional<Quota> quota = stored->quota;
  int64_t replicas = j.replicas ? j.replicas->max : 1;
  int64_t want_milli = j.workers * j.gpu_milli_per_worker() * replicas;
  int64_t want_gpus = (want_milli + 999) / 1000;  // a share still occupies a GPU of the quota
  if (quota->max_gpus_per_job && want_milli > *quota->max_gpus_per_job * 1000)
    return Error::invalid(j.replicas ? "replicas.max" : "workers",
                          Message("api.jobs.over_gpus_per_job")
                              .arg("gpus", gpus_text(want_milli))
                              .arg("project", project.name)
                              .arg("limit", std::to_string(*quota->max_gpus_per_job)));
  if (models.empty()) {
    for (const auto& m : catalog.models()) models.push_back(m.id);
  }
  int64_t best = 0;
  for (const auto& id : models) best = std::max(best, quota->gpu_limit(id));
  if (best < want_gpus)
    return Error::invalid(j.constraints.gpu_models.empty() ? "constraints.gpu_models" : "constraints.gpu_models",
                          Message("api.jobs.over_gpus_per_model")
                              .arg("gpus", std::to_string(want_gpus))
                              .arg("project", project.name)
                              .arg("limit", std::to_string(best)));
  return ok_status();
}

// What this server's executor cannot run is refused at once rather than failed later: in
// containers (docs/containers.md) a job needs an image (its own or the server's default) and, for
// volumes, a volume root.
static Status check_runnable(const ServerOptions& o, const Job& j) {
  if (!j.secrets.empty() && o.executor == "slurm" && !o.containers)
    return Error::invalid("secrets", Message("api.jobs.secrets_need_containers"));
  if (!j.artifacts.empty() && o.executor == "slurm" && !o.containers)
    return Error::invalid("artifacts", Message("api.jobs.artifacts_need_containers"));
  if (!o.containers) return ok_status();
  if (!j.secrets.empty() && o.slurm_output_dir.empty())
    return Error::invalid("secrets", Message("api.jobs.secrets_need_output_dir"));
  // The node's check reports a changed file (and raises the alert) through the output folder.
  if (!j.artifacts.empty() && o.slurm_output_dir.empty())
    return Error::invalid("artifacts", Message("api.jobs.artifacts_need_output_dir"));
  if (!j.image && o.container_default_image.empty())
    return Error::invalid("image", Message("exec.container.no_image"));
  if (!j.volumes.empty() && o.volume_root.empty())
    return Error::invalid("volumes", Message("exec.container.no_volume_root"));
  return ok_status();
}

void register_job_cost_route(App& app, Router& srv);  // GET /api/v1/jobs/{id}/cost (job_cost.cc)
void register_job_logs_route(App& app, Router& srv);  // GET /api/v1/jobs/{id}/logs (job_logs.cc)

namespace {

// The name events show for the user acting (users are named, not numbered); the id when the user
// record is gone.
std::string user_name(StoreReader& store, const std::string& user_id) {
  auto u = store.get("users", user_id);
  return u && !u->name.empty() ? u->name : user_id;
}

// An artifact a job names (docs/resources/artifacts.md): the project's, uploaded, and holding the
// content the job expects. Errors name `at` (artifacts[i]).
Status check_job_artifact(StoreTx& tx, const Record& project, const JobArtifact& ja, const std::string& at) {
  auto found = tx.list({"artifacts", {{"project_id", project.id}, {"name", project.id + "/" + ja.name}}, "", 1});
  if (!found) return found.error();
  if (found->items.empty())
    return Error::invalid(at + ".name", Message("api.jobs.unknown_artifact").arg("project", project.name).arg("name", ja.name));
  auto a = decode_record(found->items.front(), decode_artifact, "jobs cannot use it");
  if (!a) return a.error();
  if (a->state != ArtifactState::kReady)
    return Error::invalid(at + ".name", Message("api.jobs.artifact_not_ready")
                                            .arg("name", ja.name)
                                            .arg("received", std::to_string(a->received_bytes))
                                            .arg("size", std::to_string(a->size_bytes)));
  if (a->sha256 != ja.sha256)
    return Error::invalid(at + ".sha256",
                          Message("api.jobs.artifact_digest").arg("name", ja.name).arg("have", a->sha256).arg("want", ja.sha256));
  return ok_status();
}

// POST /api/v1/jobs: the job parsed against its project's tenant currency and checked against
// the project's quotas and models, pending.
// `instance_start`: the job an instance's start submits (api/instances.cc), which alone may carry
// the label gpurent.io/instance (what makes it the instance's: its node volume, its saves).
// A job just inserted (by a submit or an instance's start) is refused when its tenant now has more
// unfinished jobs than --tenant-max-jobs: every scheduler pass reads the waiting jobs, so one
// tenant's queue cannot grow without end. Counted after the insert, one writer at a time per tenant
// (servers sharing a PostgreSQL database each hold the tenant's lock until they commit).
Status check_tenant_job_room(App& app, StoreTx& tx, const Record& job) {
  if (auto l = take_write_lock(tx, "jobs-of-" + job.tenant_id, "the unfinished jobs of " + job.tenant_id); !l) return l;
  int64_t unfinished = 0;
  for (JobState st : kAllJobStates) {
    if (is_terminal(st)) continue;
    auto n = tx.count("jobs", {{"tenant_id", job.tenant_id}, {"state", job_state_name(st)}});
    if (!n) return n.error();
    unfinished += *n;
  }
  if (unfinished <= app.opts.tenant_max_jobs) return ok_status();
  auto tenant = tx.get("tenants", job.tenant_id);
  return Error::invalid("project", Message("api.jobs.too_many")
                                       .arg("tenant", tenant ? tenant->name : job.tenant_id)
                                       .arg("max", std::to_string(app.opts.tenant_max_jobs)));
}

Result<Built> build_job(App& app, const json& body, const Principal& p, StoreTx& tx, bool instance_start) {
  std::string ref = body.is_object() && body.contains("project") && body["project"].is_string()
                        ? body["project"].get<std::string>()
                        : "";
  std::map<std::string, std::string> scope;
  if (!p.is_operator()) scope["tenant_id"] = p.tenant_id.empty() ? "-" : p.tenant_id;
  auto project = resolve_ref(tx, "projects", ref, scope, "project");
  if (!project) return project.error();
  auto tenant = tx.get("tenants", project->tenant_id);
  if (!tenant) return tenant.error();
  auto currency = decode_record(*tenant, stored_tenant_currency, "its jobs cannot be checked against their budget");
  if (!currency) return currency.error();
  auto j = parse_job(body, *currency);
  if (!j) return j.error();
  if (!instance_start && j->labels.count(kInstanceLabel))
    return Error::invalid(std::string("labels.") + kInstanceLabel, Message("api.jobs.reserved_label").arg("label", kInstanceLabel));
  if (auto s = check_against_project(*j, *project, app.catalog, *currency); !s) return s.error();
  if (auto s = check_runnable(app.opts, *j); !s) return s.error();
  for (size_t i = 0; i < j->constraints.nodes.size(); ++i) {  // stored as node ids, as the scheduler knows them
    auto node = resolve_ref(tx, "nodes", j->constraints.nodes[i], {}, "constraints.nodes[" + std::to_string(i) + "]");
    if (!node) return node.error();
    j->constraints.nodes[i] = node->id;
  }
  for (size_t i = 0; i < j->constraints.suppliers.size(); ++i) {  // stored as supplier ids
    auto sup = resolve_ref(tx, "suppliers", j->constraints.suppliers[i], {}, "constraints.suppliers[" + std::to_string(i) + "]");
    if (!sup) return sup.error();
    j->constraints.suppliers[i] = sup->id;
  }
  if (j->billing.offer) {  // stored as the offer's id
    auto offer = resolve_ref(tx, "offers", *j->billing.offer, {}, "billing.offer");
    if (!offer) return offer.error();
    j->billing.offer = offer->id;
  }
  for (size_t i = 0; i < j->secrets.size(); ++i) {  // the project's own secrets (docs/resources/secrets.md)
    auto found = tx.list({"secrets", {{"project_id", project->id}, {"name", project->id + "/" + j->secrets[i].name}}, "", 1});
    if (!found) return found.error();
    if (found->items.empty())
      return Error::invalid("secrets[" + std::to_string(i) + "].name", Message("api.jobs.unknown_secret")
                                                                          .arg("project", project->name)
                                                                          .arg("name", j->secrets[i].name));
  }
  if (j->image && names_platform_image(*j->image)) {  // a gpurent image: the tenant's own or a public one, ready
    auto img = find_image(tx, project->tenant_id, *j->image);
    if (!img && img.error().code != Code::kNotFound) return img.error();
    if (!img) return Error::invalid("image", Message("api.jobs.unknown_image").arg("name", *j->image));
    auto i = decode_record(*img, decode_image, "jobs cannot run in it");
    if (!i) return i.error();
    if (i->state != ImageState::kReady)
      return Error::invalid("image", Message("api.jobs.image_not_ready")
                                         .arg("name", *j->image)
                                         .arg("state", enum_name(kImageStateNames, i->state)));
    if (i->format == ImageFormat::kRootfsTar && j->command.empty())  // a root file system runs nothing by itself
      return Error::invalid("command", Message("api.jobs.image_needs_command").arg("name", *j->image));
  } else if (j->image && j->image->rfind("localhost/gpurent/", 0) == 0 && j->image->find('@') != std::string::npos &&
             j->image->find('/', 18) < j->image->find('@')) {
    // By digest the node's Podman finds any image with those bytes, whatever the name says, and
    // the node skips its check of whose image it is for a public or the tenant's own scope
    // (exec/container.cc): gpurent's scoped images (localhost/gpurent/<scope>/…) by tag only.
    return Error::invalid("image", Message("api.jobs.image_digest_ref").arg("image", *j->image));
  } else if (j->image && !gpurent_reference_allowed(*j->image, project->tenant_id)) {
    // Another tenant's image as the nodes name it once loaded: not this tenant's to run.
    return Error::invalid("image", Message("api.jobs.image_not_yours").arg("image", *j->image));
  }
  for (size_t i = 0; i < j->volumes.size(); ++i) {  // the tenant's own volumes (docs/resources/volumes.md)
    auto found = tx.list({"volumes", {{"tenant_id", project->tenant_id}, {"name", j->volumes[i].name}}, "", 1});
    if (!found) return found.error();
    if (found->items.empty())
      return Error::invalid("volumes[" + std::to_string(i) + "].name",
                            Message("api.jobs.unknown_volume").arg("name", j->volumes[i].name));
    if (found->items.front().body.value("placement", "") == "node" && !j->labels.count(kInstanceLabel))
      return Error::invalid("volumes[" + std::to_string(i) + "].name",
                            Message("api.jobs.node_volume").arg("name", j->volumes[i].name));
    const std::string owner = found->items.front().project_id;  // a project's volume: its jobs only
    if (!owner.empty() && owner != project->id) {
      auto other = tx.get("projects", owner);
      return Error::invalid("volumes[" + std::to_string(i) + "].name",
                            Message("api.jobs.volume_other_project")
                                .arg("name", j->volumes[i].name)
                                .arg("project", other ? other->name : owner));
    }
  }
  for (size_t i = 0; i < j->artifacts.size(); ++i)  // ready, with the content the job expects
    if (auto s = check_job_artifact(tx, *project, j->artifacts[i], "artifacts[" + std::to_string(i) + "]"); !s)
      return s.error();
  j->tenant_id = project->tenant_id;
  j->project_id = project->id;
  j->status = JobStatus{JobState::kPending, Message("job.submitted"), app.clock.now(), {}};
  return Built{to_json(*j), index_of(*j)};
}

}  // namespace

namespace {

// POST /api/v1/jobs/{id}/cancel: the caller's reason (optional body {"reason"}) and the
// transition, its allocation closed, event and audit in one transaction.
void cancel_job(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto existing = find_visible(app.store, spec, p, req.matches[1]);
  if (!existing) return send_problem(res, existing.error(), req.path);
  if (!in_scope(write_scope(p, ObjectKind::kJob), p, *existing))
    return send_problem(
        res, Error::make(Code::kForbidden, Message("api.jobs.cancel_forbidden").arg("role", role_name(p.role))),
        req.path);
  const std::string who = user_name(app.store, p.user_id);
  Message reason = Message("job.cancelled_by").arg("user", who);
  if (!req.body.empty()) {
    auto body = parse_body(req);
    if (!body) return send_problem(res, body.error(), req.path);
    FieldErrors errs;
    Fields f(*body, "", errs);
    if (auto r = f.opt_str("reason", {.min_len = 1, .max_len = 512}))
      reason = Message("job.cancelled_by_because").arg("user", who).arg("why", verbatim(*r));
    f.finish();
    if (!errs.empty()) return send_problem(res, errs.to_error(), req.path);
  }
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    const TimeMs now = app.clock.now();
    // An instance's start: the instance stops with it (stopping until its run has gone).
    auto job = tx.get("jobs", existing->id);
    if (!job) return job.error();
    auto by_instance = stop_instance_of_job(tx, *job, reason, p.user_id, now, runs_linger(app.opts.executor));
    if (!by_instance) return by_instance.error();
    if (*by_instance) {
      auto r = tx.get("jobs", existing->id);
      if (!r) return r.error();
      out = std::move(*r);
      return ok_status();
    }
    auto r = cancel_job_in(tx, existing->id, reason, p.user_id, now);
    if (!r) return r.error();
    out = std::move(*r);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  app.metrics.count_write("jobs", "cancel");
  send_json(res, 200, present(out));
}

// GET /api/v1/jobs/{id}/events: the job's state changes, oldest first.
void job_events(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto job = find_visible(app.store, spec, p, req.matches[1]);
  if (!job) return send_problem(res, job.error(), req.path);
  auto events = app.store.job_events(job->id);
  if (!events) return send_problem(res, events.error(), req.path);
  json items = json::array();
  for (const auto& e : *events) {
    json item = {{"at", format_rfc3339(e.at)},
                 {"from", e.from_state.empty() ? json(nullptr) : json(e.from_state)},
                 {"to", e.to_state},
                 {"reason", render_en(e.reason)}};
    if (!e.reason.empty()) item["reason_message"] = message_to_json(e.reason);
    items.push_back(std::move(item));
  }
  send_json(res, 200, {{"items", items}, {"next_after", nullptr}});
}

}  // namespace

void register_job_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "jobs";
  spec.id_prefix = "job";
  spec.object_kind = ObjectKind::kJob;
  spec.updatable = false;
  spec.deletable = false;
  spec.filters = {{"tenant", "tenant_id"}, {"project", "project_id"}, {"state", "state"},
                  {"gpu_model", "gpu_model"}, {"name", "name"}};
  for (JobState st : kAllJobStates) spec.filter_values["state"].push_back(job_state_name(st));
  spec.updated_since = true;
  spec.after_create = [&app](const Principal&, const Record& r, StoreTx& tx) -> Status {
    if (auto room = check_tenant_job_room(app, tx, r); !room) return room;
    if (auto chain = begin_job_runs(tx, r); !chain) return chain;
    return tx.append_job_event({r.id, r.created_at, "", "pending", Message("job.submitted_event")});
  };
  spec.build_by_server = [&app](const json& body, const Principal& p, StoreTx& tx, const Record*) {
    return build_job(app, body, p, tx, true);  // an instance's start (api/instances.cc)
  };
  spec.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record*) {
    return build_job(app, body, p, tx, false);
  };
  register_crud(app, srv, spec);
  item_route(app, srv, "POST", "jobs", "cancel", cancel_job);
  item_route(app, srv, "GET", "jobs", "events", job_events);

  register_job_cost_route(app, srv);
  register_job_logs_route(app, srv);
}

}  // namespace gpurent
