// /api/v1/projects/{ref}/secrets: a project's secrets (model/secret.h, docs/resources/secrets.md).
//   PUT    /projects/{ref}/secrets/{name}  {"value": "..."}  sets it (201 new, 200 replaced)
//   GET    /projects/{ref}/secrets                           names and sizes, never values
//   DELETE /projects/{ref}/secrets/{name}                    204
// The project's writers (operator_admin, tenant_admin of its tenant: the projects row of the
// permission matrix) set and delete; its readers list. The value is never answered, logged or
// audited: the audit log names the secret only. Jobs receive secrets in their containers. A
// tenant's projects hold at most --tenant-max-secrets together.
#include "core/ids.h"
#include "model/secret.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/access.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

constexpr const char* kOneSecret = "/api/v1/projects/([^/]+)/secrets/([^/]+)";
constexpr const char* kAllSecrets = "/api/v1/projects/([^/]+)/secrets";

json secret_answer(const Record& r, const Secret& s) {
  json out = to_public_json(s);
  out["id"] = r.id;
  out["created_at"] = format_rfc3339(r.created_at);
  out["updated_at"] = format_rfc3339(r.updated_at);
  return out;
}

Result<Record> secret_project_for(App& app, const httplib::Request& req, const Principal& p, bool write) {
  return path_project(app, req, p, write, ObjectKind::kProject, "api.secrets.forbidden");
}

template <class Reader>
Result<Record> find_secret(Reader& store, const std::string& project_id, const std::string& name) {
  return find_in_project(store, "secrets", project_id, name);
}

void put_secret(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto project = secret_project_for(app, req, p, true);
  if (!project) return send_problem(res, project.error(), req.path);
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  auto s = parse_secret(req.matches[2], *body);
  if (!s) return send_problem(res, s.error(), req.path);
  s->project_id = project->id;
  s->tenant_id = project->tenant_id;
  const TimeMs now = app.clock.now();
  Record out;
  bool created = false;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    // The project held: its delete (which removes its secrets) waits for this write or ran first.
    if (auto h = hold_parent(tx, "projects", project->id, true); !h) return h;
    auto found = find_secret(tx, project->id, s->name);
    if (!found && found.error().code != Code::kNotFound) return found.error();
    Record r;
    created = !found;
    if (created) {
      if (auto room = check_tenant_room(tx, "secrets", project->tenant_id, app.opts.tenant_max_secrets, "name",
                                        "api.secrets.too_many");
          !room)
        return room;
      r.kind = "secrets";
      r.id = new_id("sec");
      r.created_at = now;
      r.version = 1;
    } else {
      r = *found;
    }
    const IndexCols idx = index_of(*s);
    r.name = idx.name;
    r.tenant_id = idx.tenant_id;
    r.project_id = idx.project_id;
    r.updated_at = now;
    r.body = to_stored_json(*s);
    if (auto w = created ? tx.insert(r) : tx.update(r); !w) return w;
    out = r;
    return tx.append_audit({now, p.user_id, created ? "create" : "update", "secrets", r.id,
                            project->name + "/" + s->name});
  });
  if (!st) return send_problem(res, st.error(), req.path);
  app.metrics.count_write("secrets", created ? "create" : "update");
  send_json(res, created ? 201 : 200, secret_answer(out, *s));
}

void list_secrets(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto project = secret_project_for(app, req, p, false);
  if (!project) return send_problem(res, project.error(), req.path);
  auto all = list_all(app.store, "secrets", {{"project_id", project->id}});
  if (!all) return send_problem(res, all.error(), req.path);
  json items = json::array();
  for (const Record& r : *all) {
    auto s = decode_record(r, decode_secret, "it cannot be listed or given to jobs");
    if (!s) return send_problem(res, s.error(), req.path);
    items.push_back(secret_answer(r, *s));
  }
  send_json(res, 200, {{"project_id", project->id}, {"project", project->name}, {"items", std::move(items)}});
}

void delete_secret(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto project = secret_project_for(app, req, p, true);
  if (!project) return send_problem(res, project.error(), req.path);
  const std::string name = req.matches[2];
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto r = find_secret(tx, project->id, name);
    if (!r) return r.error();
    if (auto s = tx.remove("secrets", r->id); !s) return s;
    return tx.append_audit({app.clock.now(), p.user_id, "delete", "secrets", r->id, project->name + "/" + name});
  });
  if (!st) return send_problem(res, st.error(), req.path);
  app.metrics.count_write("secrets", "delete");
  res.status = 204;
}

}  // namespace

void register_secret_routes(App& app, Router& srv) {
  route(app, srv, "PUT", kOneSecret, "/api/v1/projects/{id}/secrets/{name}", put_secret);
  route(app, srv, "DELETE", kOneSecret, "/api/v1/projects/{id}/secrets/{name}", delete_secret);
  route(app, srv, "GET", kAllSecrets, "/api/v1/projects/{id}/secrets", list_secrets);
}

}  // namespace gpurent
