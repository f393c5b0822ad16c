// /api/v1/jobs: submit (POST), list, get, cancel (POST /jobs/{id}/cancel) and the state history
// (GET /jobs/{id}/events). Jobs are immutable once submitted; every state change is recorded with
// its time and reason. Submission checks what can be known at once: the project, the GPU models
// against the catalog, and the project's per-job GPU limit; placement and the remaining quota
// checks belong to the scheduler.
#include "model/job.h"
#include "model/project.h"
#include "server/http_util.h"
#include "server/resources.h"

namespace gpurent {

static Status check_against_project(const Job& j, const Record& project, const GpuCatalog& catalog) {
  for (size_t i = 0; i < j.constraints.gpu_models.size(); ++i)
    if (!catalog.find(j.constraints.gpu_models[i]))
      return Error::invalid("constraints.gpu_models[" + std::to_string(i) + "]",
                            "unknown GPU model '" + j.constraints.gpu_models[i] + "' (see GET /api/v1/gpu-models)");
  const json& q = project.body.value("quota", json::object());
  if (q.contains("max_gpus_per_job") && q["max_gpus_per_job"].is_number_integer()) {
    int64_t limit = q["max_gpus_per_job"].get<int64_t>();
    int64_t want = j.workers * j.gpu_milli_per_worker();  // milli-GPUs
    int64_t replicas = j.replicas ? j.replicas->min : 1;
    if (want * replicas > limit * 1000)
      return Error::invalid("workers", "the job asks for " + std::to_string(want * replicas / 1000) +
                                           (want * replicas % 1000 ? "." + std::to_string(want * replicas % 1000) : "") +
                                           " GPUs but project '" + project.name + "' allows at most " +
                                           std::to_string(limit) + " per job (quota.max_gpus_per_job)");
  }
  return ok_status();
}

void register_job_routes(App& app, httplib::Server& srv) {
  KindSpec spec;
  spec.kind = "jobs";
  spec.id_prefix = "job";
  spec.object_kind = ObjectKind::kJob;
  spec.updatable = false;
  spec.deletable = false;
  spec.filters = {{"tenant", "tenant_id"}, {"project", "project_id"}, {"state", "state"},
                  {"gpu_model", "gpu_model"}, {"name", "name"}};
  spec.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record*) -> Result<Built> {
    std::string ref = body.is_object() && body.contains("project") && body["project"].is_string()
                          ? body["project"].get<std::string>()
                          : "";
    std::map<std::string, std::string> scope;
    if (!p.is_operator()) scope["tenant_id"] = p.tenant_id.empty() ? "-" : p.tenant_id;
    auto project = resolve_ref(tx, "projects", ref, scope, "project");
    if (!project) return project.error();
    auto tenant = tx.get("tenants", project->tenant_id);
    if (!tenant) return tenant.error();
    auto currency = parse_currency(tenant->body.value("currency", "USD"));
    if (!currency) return currency.error();
    auto j = parse_job(body, *currency);
    if (!j) return j.error();
    if (auto s = check_against_project(*j, *project, app.catalog); !s) return s.error();
    j->tenant_id = project->tenant_id;
    j->project_id = project->id;
    j->status = JobStatus{JobState::kPending, "submitted; waiting for the scheduler", app.clock.now(), {}};
    return Built{to_json(*j), index_of(*j)};
  };
  spec.after_create = [](const Principal&, const Record& r, StoreTx& tx) -> Status {
    return tx.append_job_event({r.id, r.created_at, "", "pending", "submitted"});
  };
  register_crud(app, srv, spec);
  const KindSpec* sp = &app.kinds["jobs"];

  route(app, srv, "POST", "/api/v1/jobs/([^/]+)/cancel", "/api/v1/jobs/{id}/cancel",
        [&app, sp](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          auto existing = find_visible(app.store, *sp, p, req.matches[1]);
          if (!existing) return send_problem(res, existing.error(), req.path);
          if (!in_scope(write_scope(p, ObjectKind::kJob), p, *existing))
            return send_problem(res, forbidden("role " + std::string(role_name(p.role)) + " may not cancel jobs"), req.path);
          std::string reason = "cancelled by " + p.user_id;
          if (!req.body.empty()) {
            auto body = parse_body(req);
            if (!body) return send_problem(res, body.error(), req.path);
            FieldErrors errs;
            Fields f(*body, "", errs);
            if (auto r = f.opt_str("reason", {.min_len = 1, .max_len = 512})) reason += ": " + *r;
            f.finish();
            if (!errs.empty()) return send_problem(res, errs.to_error(), req.path);
          }
          Record out;
          Status st = app.loop.run([&](StoreTx& tx) -> Status {
            auto cur = tx.get("jobs", existing->id);
            if (!cur) return cur.error();
            auto status = parse_job_status(cur->body.value("status", json::object()), "status");
            if (!status) return status.error();
            if (auto s = check_transition(status->state, JobState::kCancelled); !s) return s;
            TimeMs now = app.clock.now();
            std::string from = job_state_name(status->state);
            status->state = JobState::kCancelled;
            status->reason = reason;
            status->updated_at = now;
            status->placement.clear();
            Record r = *cur;
            r.body["status"] = to_json(*status);
            r.state = "cancelled";
            r.updated_at = now;
            if (auto s = tx.update(r); !s) return s;
            if (auto s = tx.append_job_event({r.id, now, from, "cancelled", reason}); !s) return s;
            if (auto s = tx.append_audit({now, p.user_id, "cancel", "jobs", r.id, reason}); !s) return s;
            r.version = cur->version + 1;
            out = std::move(r);
            return ok_status();
          });
          if (!st) return send_problem(res, st.error(), req.path);
          app.metrics.count_write("jobs", "cancel");
          send_json(res, 200, present(out));
        });

  route(app, srv, "GET", "/api/v1/jobs/([^/]+)/events", "/api/v1/jobs/{id}/events",
        [&app, sp](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          auto job = find_visible(app.store, *sp, p, req.matches[1]);
          if (!job) return send_problem(res, job.error(), req.path);
          auto events = app.store.job_events(job->id);
          if (!events) return send_problem(res, events.error(), req.path);
          json items = json::array();
          for (const auto& e : *events)
            items.push_back({{"at", format_rfc3339(e.at)},
                             {"from", e.from_state.empty() ? json(nullptr) : json(e.from_state)},
                             {"to", e.to_state},
                             {"reason", e.reason}});
          send_json(res, 200, {{"items", items}, {"next_after", nullptr}});
        });
}

}  // namespace gpurent
