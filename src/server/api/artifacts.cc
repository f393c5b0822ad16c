// /api/v1/projects/{ref}/artifacts: a project's files in the content-addressed store
// (model/artifact.h, services/artifact_store.h, docs/resources/artifacts.md).
//   POST   /projects/{ref}/artifacts                          {name, sha256, size_bytes, kind, description}
//   PUT    /projects/{ref}/artifacts/{name}/content?offset=N  the bytes from N (at most --max-body-bytes)
//   GET    /projects/{ref}/artifacts                          the project's, and the tenant's use
//   GET    /projects/{ref}/artifacts/{name}
//   DELETE /projects/{ref}/artifacts/{name}                   204
// Those who may submit the project's jobs create, upload and delete; its readers list. The audit
// log records who created, completed and deleted which content (its digest).
#include <map>

#include "core/ids.h"
#include "model/artifact.h"
#include "server/api/resources.h"
#include "server/api/uploads.h"
#include "server/http/http_util.h"
#include "server/services/access.h"
#include "server/services/allocation_ledger.h"
#include "server/services/artifact_store.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

constexpr const char* kAll = "/api/v1/projects/([^/]+)/artifacts";
constexpr const char* kOne = "/api/v1/projects/([^/]+)/artifacts/([^/]+)";
constexpr const char* kContent = "/api/v1/projects/([^/]+)/artifacts/([^/]+)/content";
constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMaxArtifactsPerProject = 10'000;  // docs/resources/artifacts.md

Result<Artifact> decode(const Record& r) { return decode_record(r, decode_artifact, "it cannot be used or listed"); }

// User ids to names, looked up once per request (a list answers up to 10,000 artifacts).
using UserNames = std::map<std::string, std::string>;

json answer(StoreReader& store, const Record& r, const Artifact& a, const std::string& project,
            UserNames* names = nullptr) {
  json out = to_json(a);
  out.erase("tenant_id");
  out["id"] = r.id;
  out["project"] = project;
  auto name_of = [&](const std::string& id) {
    auto u = store.get("users", id);
    return u && !u->name.empty() ? u->name : id;
  };
  if (!names) {
    out["uploaded_by"] = name_of(a.uploaded_by);
  } else {
    auto it = names->find(a.uploaded_by);
    if (it == names->end()) it = names->emplace(a.uploaded_by, name_of(a.uploaded_by)).first;
    out["uploaded_by"] = it->second;
  }
  out["created_at"] = format_rfc3339(r.created_at);
  out["updated_at"] = format_rfc3339(r.updated_at);
  return out;
}

// The project, visible to p; for writes, p must be one who may submit its jobs.
Result<Record> project_for(App& app, const httplib::Request& req, const Principal& p, bool write) {
  return path_project(app, req, p, write, ObjectKind::kJob, "api.artifacts.forbidden");
}

template <class Reader>
Result<Record> find_artifact(Reader& store, const std::string& project_id, const std::string& name) {
  return find_in_project(store, "artifacts", project_id, name);
}

void create_artifact(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto project = project_for(app, req, p, true);
  if (!project) return send_problem(res, project.error(), req.path);
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  auto a = parse_artifact(*body, app.opts.artifact_max_gib * kGiB);
  if (!a) return send_problem(res, a.error(), req.path);
  a->project_id = project->id;
  a->tenant_id = project->tenant_id;
  a->uploaded_by = p.user_id;
  ArtifactStore files(artifact_root(app.opts));
  const TimeMs now = app.clock.now();
  if (a->state == ArtifactState::kReady) a->ready_at = now;  // empty: nothing to upload
  Record out;
  const std::string id = new_id("art");
  // An empty artifact is ready at once: its (empty) content file is published before its record
  // says ready (a crash in between leaves a harmless file; deletes never remove the empty
  // content: uploads.cc release_content).
  auto publish_empty = [&]() -> Status {
    if (a->state != ArtifactState::kReady) return ok_status();
    auto lock = files.content_lock();
    auto d = files.write_chunk(id, 0, {}, 0);
    if (!d) return d.error();
    return files.publish(id, a->sha256);
  };
  if (auto s = publish_empty(); !s) return send_problem(res, s.error(), req.path);
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    // The project held: its delete (409 while it has artifacts) waits for this write or ran first.
    if (auto h = hold_parent(tx, "projects", project->id, true); !h) return h;
    auto found = find_artifact(tx, project->id, a->name);
    if (found) return Error::make(Code::kConflict, Message("api.artifacts.exists").arg("name", a->name).arg("project", project->name));
    if (found.error().code != Code::kNotFound) return found.error();
    // A count as well as bytes: empty artifacts take no room, yet each one makes every later
    // create and list of the tenant's longer.
    auto count = tx.count("artifacts", {{"project_id", project->id}});
    if (!count) return count.error();
    if (*count >= kMaxArtifactsPerProject)
      return Error::invalid("name", Message("api.artifacts.too_many")
                                        .arg("project", project->name)
                                        .arg("max", std::to_string(kMaxArtifactsPerProject)));
    if (auto room = check_room(app, tx, project->tenant_id, a->size_bytes, "size_bytes"); !room) return room;
    Record r;
    r.kind = "artifacts";
    r.id = id;
    const IndexCols idx = index_of(*a);
    r.name = idx.name;
    r.tenant_id = idx.tenant_id;
    r.project_id = idx.project_id;
    r.state = idx.state;
    r.created_at = r.updated_at = now;
    r.version = 1;
    r.body = to_json(*a);
    if (auto w = tx.insert(r); !w) return w;
    out = r;
    return tx.append_audit({now, p.user_id, "create", "artifacts", r.id,
                            project->name + "/" + a->name + " sha256:" + a->sha256 + " " +
                                std::to_string(a->size_bytes) + " bytes"});
  });
  if (!st) return send_problem(res, st.error(), req.path);
  app.metrics.count_write("artifacts", "create");
  send_json(res, 201, answer(app.store, out, *a, project->name));
}

void upload_content(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto project = project_for(app, req, p, true);
  if (!project) return send_problem(res, project.error(), req.path);
  auto r = find_artifact(app.store, project->id, req.matches[2]);
  if (!r) return send_problem(res, r.error(), req.path);
  const UploadTarget target = typed_upload_target("artifacts", *r, project->name + "/" + std::string(req.matches[2]), decode,
                                                  ArtifactState::kUploading, ArtifactState::kReady);
  auto out = receive_chunk(app, target, req, p.user_id);
  if (!out) return send_problem(res, out.error(), req.path);
  auto a = decode(*out);
  if (!a) return send_problem(res, a.error(), req.path);
  if (a->state == ArtifactState::kReady) app.metrics.count_write("artifacts", "upload");
  send_json(res, 200, answer(app.store, *out, *a, project->name));
}

void list_artifacts(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto project = project_for(app, req, p, false);
  if (!project) return send_problem(res, project.error(), req.path);
  auto all = list_all(app.store, "artifacts", {{"project_id", project->id}});
  if (!all) return send_problem(res, all.error(), req.path);
  json items = json::array();
  UserNames names;
  for (const Record& r : *all) {
    auto a = decode(r);
    if (!a) return send_problem(res, a.error(), req.path);
    items.push_back(answer(app.store, r, *a, project->name, &names));
  }
  auto used = app.store.tenant_stored_bytes(project->tenant_id);
  if (!used) return send_problem(res, used.error(), req.path);
  send_json(res, 200,
            {{"project_id", project->id},
             {"project", project->name},
             {"items", std::move(items)},
             {"used_bytes", *used},
             {"limit_bytes", app.opts.artifact_tenant_gib * kGiB}});
}

void get_artifact(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto project = project_for(app, req, p, false);
  if (!project) return send_problem(res, project.error(), req.path);
  auto r = find_artifact(app.store, project->id, req.matches[2]);
  if (!r) return send_problem(res, r.error(), req.path);
  auto a = decode(*r);
  if (!a) return send_problem(res, a.error(), req.path);
  send_json(res, 200, answer(app.store, *r, *a, project->name));
}

void delete_artifact(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto project = project_for(app, req, p, true);
  if (!project) return send_problem(res, project.error(), req.path);
  auto r = find_artifact(app.store, project->id, req.matches[2]);
  if (!r) return send_problem(res, r.error(), req.path);
  // Its storage stops being billed with it (services/allocation_ledger.h).
  Status st = delete_with_content(app, "artifacts", r->id, project->name + "/" + std::string(req.matches[2]), p.user_id,
                                  nullptr, [&](StoreTx& tx, const Record& removed, TimeMs now) {
                                    return close_kept_artifact(tx, removed.project_id, removed.id, now);
                                  });
  if (!st) return send_problem(res, st.error(), req.path);
  res.status = 204;
}

}  // namespace

void register_artifact_routes(App& app, Router& srv) {
  route(app, srv, "POST", kAll, "/api/v1/projects/{id}/artifacts", create_artifact);
  route(app, srv, "GET", kAll, "/api/v1/projects/{id}/artifacts", list_artifacts);
  route(app, srv, "PUT", kContent, "/api/v1/projects/{id}/artifacts/{name}/content", upload_content);
  route(app, srv, "GET", kOne, "/api/v1/projects/{id}/artifacts/{name}", get_artifact);
  route(app, srv, "DELETE", kOne, "/api/v1/projects/{id}/artifacts/{name}", delete_artifact);
}

}  // namespace gpurent
