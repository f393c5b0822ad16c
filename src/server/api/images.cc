// /api/v1/images: container images jobs run in (model/image.h, docs/resources/images.md).
//   POST   /images                        {name, description, recipe | archive}: an operator's are
//                                         public, a tenant user's its tenant's own
//   PUT    /images/{ref}/archive?offset=N  the archive's bytes from N (api/uploads.h)
//   GET    /images                        public ones and the caller's tenant's
//   GET    /images/{ref}                  by id, or by name (the tenant's own first, then public)
//   DELETE /images/{ref}                  204
//   POST   /instances/{ref}/image         {name, description}: the instance's running container
//                                         saved as its tenant's image (services/image_saves.h)
// Public images are the operators' to write; a tenant's, those who may submit its jobs. Recipes
// are built by the image builder (services/image_builder.h) when the server runs one.
#include "core/ids.h"
#include "model/image.h"
#include "model/instance.h"
#include "model/job.h"
#include "model/job_state.h"
#include "server/api/resources.h"
#include "server/api/uploads.h"
#include "server/http/http_util.h"
#include "server/services/access.h"
#include "server/services/allocation_ledger.h"
#include "server/services/image_builder.h"
#include "server/services/instance_stop.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

constexpr const char* kAllImages = "/api/v1/images";
constexpr const char* kOneImage = "/api/v1/images/([^/]+)";
constexpr const char* kArchive = "/api/v1/images/([^/]+)/archive";
constexpr const char* kFromInstance = "/api/v1/instances/([^/]+)/image";

Result<Image> decode_stored_image(const Record& r) { return decode_record(r, decode_image, "jobs cannot run in it"); }

bool visible(const Principal& p, const Record& r) {
  return p.is_operator() || r.tenant_id.empty() || (!p.tenant_id.empty() && r.tenant_id == p.tenant_id);
}

// Who may change it: operators public images; those who may submit a tenant's jobs its images.
bool writable(const Principal& p, const Record& r) {
  if (r.tenant_id.empty()) return p.is_operator();
  return in_scope(write_scope(p, ObjectKind::kJob), p, r);
}

json image_answer(StoreReader& store, const Record& r, const Image& i) {
  json out = to_json(i);
  out["id"] = r.id;
  out["visibility"] = i.is_public() ? "public" : "tenant";
  if (i.state == ImageState::kReady) out["reference"] = image_reference(i);  // what nodes know it by
  auto u = store.get("users", i.created_by);
  out["created_by"] = u && !u->name.empty() ? u->name : i.created_by;
  out["created_at"] = format_rfc3339(r.created_at);
  out["updated_at"] = format_rfc3339(r.updated_at);
  return out;
}

// Adds the image inside tx (409 when its scope has one of that name), with an audit entry by its
// creator whose detail is its index name and `how`.
// Images one tenant may hold (the platform's own are not counted).
constexpr int64_t kMaxImagesPerTenant = 1000;

Result<Record> insert_image(StoreTx& tx, const Image& i, TimeMs now, const std::string& how) {
  const IndexCols idx = index_of(i);
  auto found = tx.list({"images", {{"name", idx.name}}, "", 1});
  if (!found) return found.error();
  if (!found->items.empty()) return Error::make(Code::kConflict, Message("api.images.exists").arg("name", i.name));
  // A count as well as bytes: small images take little room, yet every upload's and save's room
  // check reads all of the tenant's images.
  if (!idx.tenant_id.empty()) {
    auto held = tx.count("images", {{"tenant_id", idx.tenant_id}});
    if (!held) return held.error();
    if (*held >= kMaxImagesPerTenant)
      return Error::invalid("name", Message("api.images.too_many").arg("max", std::to_string(kMaxImagesPerTenant)));
  }
  Record r;
  r.kind = "images";
  r.id = new_id("img");
  r.name = idx.name;
  r.tenant_id = idx.tenant_id;
  r.state = idx.state;
  r.created_at = r.updated_at = now;
  r.version = 1;
  r.body = to_json(i);
  if (auto w = tx.insert(r); !w) return w.error();
  if (auto a = tx.append_audit({now, i.created_by, "create", "images", r.id, idx.name + how}); !a) return a.error();
  return r;
}

// The image `ref` as p sees it (an operator names a tenant's image by id).
Result<Record> image_for(App& app, const httplib::Request& req, const Principal& p, bool write) {
  auto r = find_image(app.store, p.is_operator() ? "*" : p.tenant_id, req.matches[1]);
  if (!r) return r.error();
  if (!visible(p, *r)) return not_found_error("images", req.matches[1]);
  if (write && !writable(p, *r))
    return Error::make(Code::kForbidden, Message("api.images.forbidden").arg("role", role_name(p.role)));
  return r;
}

// Recipe images of one tenant queued or building at a time.
constexpr int64_t kMaxWaitingBuilds = 3;

void create_image(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  if (!p.is_operator() && (p.tenant_id.empty() || !role_can_submit_jobs(p.role)))
    return send_problem(res, Error::make(Code::kForbidden, Message("api.images.forbidden").arg("role", role_name(p.role))),
                        req.path);
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  auto i = parse_image(*body, app.opts.artifact_max_gib * (int64_t{1} << 30));
  if (!i) return send_problem(res, i.error(), req.path);
  i->tenant_id = p.is_operator() ? "" : p.tenant_id;
  i->created_by = p.user_id;
  const TimeMs now = app.clock.now();
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    if (!i->recipe)
      if (auto room = check_room(app, tx, i->tenant_id, i->size_bytes, "archive.size_bytes"); !room) return room;
    if (i->recipe && !i->tenant_id.empty()) {
      // Builds run one at a time for everyone: a tenant has a few waiting at most, and none while
      // its storage is full (what it builds counts against it).
      if (auto room = check_room(app, tx, i->tenant_id, 0, "recipe"); !room) return room;
      int64_t waiting = 0;
      for (const char* state : {"queued", "building"}) {
        auto page = tx.list({"images", {{"tenant_id", i->tenant_id}, {"state", state}}, "", kMaxWaitingBuilds + 1});
        if (!page) return page.error();
        waiting += static_cast<int64_t>(page->items.size());
      }
      if (waiting >= kMaxWaitingBuilds)
        return Error::make(Code::kConflict, Message("api.images.builds_waiting").arg("max", std::to_string(kMaxWaitingBuilds)));
    }
    auto r = insert_image(tx, *i, now, i->recipe ? " recipe" : " archive sha256:" + i->sha256);
    if (!r) return r.error();
    out = *r;
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  if (i->recipe) wake_image_builder(app);
  app.metrics.count_write("images", "create");
  send_json(res, 201, image_answer(app.store, out, *i));
}

void upload_archive(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto r = image_for(app, req, p, true);
  if (!r) return send_problem(res, r.error(), req.path);
  if (auto cur = decode_stored_image(*r); cur && cur->recipe)
    return send_problem(res, Error::make(Code::kConflict, Message("api.images.recipe_no_upload").arg("name", cur->name)),
                        req.path);
  if (auto cur = decode_stored_image(*r); cur && cur->source)
    return send_problem(res, Error::make(Code::kConflict, Message("api.images.saved_no_upload").arg("name", cur->name)),
                        req.path);
  auto out = receive_chunk(app, typed_upload_target("images", *r, r->name, decode_stored_image, ImageState::kUploading, ImageState::kReady),
                           req, p.user_id);
  if (!out) return send_problem(res, out.error(), req.path);
  auto i = decode_stored_image(*out);
  if (!i) return send_problem(res, i.error(), req.path);
  if (i->state == ImageState::kReady) app.metrics.count_write("images", "upload");
  send_json(res, 200, image_answer(app.store, *out, *i));
}

// Pages of the images p sees, in id order (?limit=, ?after= as every list).
void list_images(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto pp = page_params(req);
  if (!pp) return send_problem(res, pp.error(), req.path);
  if (auto st = only_params(req, {"limit", "after"}); !st) return send_problem(res, st.error(), req.path);
  json items = json::array(), next = nullptr;
  ListQuery q{"images", {}, pp->after, 1000};
  while (items.size() < static_cast<size_t>(pp->limit) && next.is_null()) {
    auto page = app.store.list(q);
    if (!page) return send_problem(res, page.error(), req.path);
    for (const Record& r : page->items) {
      if (!visible(p, r)) continue;
      auto i = decode_stored_image(r);
      if (!i) continue;  // reported by decode; the others are still listed
      items.push_back(image_answer(app.store, r, *i));
      if (items.size() == static_cast<size_t>(pp->limit)) {
        if (&r != &page->items.back() || !page->next_after.empty()) next = r.id;
        break;
      }
    }
    if (page->next_after.empty()) break;
    q.after_id = page->next_after;
  }
  send_json(res, 200, {{"items", std::move(items)}, {"next_after", next}});
}

void get_image(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto r = image_for(app, req, p, false);
  if (!r) return send_problem(res, r.error(), req.path);
  auto i = decode_stored_image(*r);
  if (!i) return send_problem(res, i.error(), req.path);
  send_json(res, 200, image_answer(app.store, *r, *i));
}

void delete_image(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto r = image_for(app, req, p, true);
  if (!r) return send_problem(res, r.error(), req.path);
  Status st = delete_with_content(app, "images", r->id, r->name, p.user_id, [](const json& body) -> Status {
    auto i = decode_image(body);
    if (i && i->state == ImageState::kBuilding)  // the builder's result would have nowhere to go
      return Error::make(Code::kConflict, Message("api.images.building").arg("name", i->name));
    if (i && i->state == ImageState::kSaving)  // likewise the node's archive
      return Error::make(Code::kConflict, Message("api.images.saving").arg("name", i->name));
    return ok_status();
  }, [](StoreTx& tx, const Record& removed, TimeMs now) {  // no longer kept on any node: its storage stops
    return removed.tenant_id.empty() ? ok_status() : close_kept_image(tx, removed.tenant_id, removed.id, now);
  });
  if (!st) return send_problem(res, st.error(), req.path);
  res.status = 204;
}

// POST /instances/{ref}/image {name, description}: the instance's running container saved as an
// image of the instance's tenant, by those who may start and stop it. 202 with the image in state
// "saving"; the executor and the node do the rest (services/image_saves.h).
void save_instance(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  auto i = parse_saved_image(*body);
  if (!i) return send_problem(res, i.error(), req.path);
  auto found = find_visible(app.store, app.kinds.at("instances"), p, req.matches[1]);
  if (!found) return send_problem(res, found.error(), req.path);
  if (!in_scope(write_scope(p, ObjectKind::kJob), p, *found))
    return send_problem(res, Error::make(Code::kForbidden, Message("api.instances.forbidden").arg("role", role_name(p.role))),
                        req.path);
  if (auto inst = decode_instance(found->body); inst)  // checked again under the lock below
    if (auto s = check_not_released(*inst); !s) return send_problem(res, s.error(), req.path);
  if (!app.opts.containers)
    return send_problem(res, Error::make(Code::kConflict, Message("api.instances.save_no_containers")), req.path);
  const TimeMs now = app.clock.now();
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    // Locked: two saves of one instance through two servers check for each other one at a time.
    auto cur = tx.get_locked("instances", found->id);
    if (!cur) return cur.error();
    auto inst = decode_record(*cur, decode_instance, "it cannot be saved");
    if (!inst) return inst.error();
    if (auto s = check_not_released(*inst); !s) return s;  // as every other action on it
    std::optional<JobStatus> js;  // its latest start's
    if (!inst->job_ids.empty())
      if (auto j = tx.get("jobs", inst->job_ids.back()))
        if (auto s = stored_job_status(j->body)) js = *s;
    if (!js || js->state != JobState::kRunning)
      return Error::make(Code::kConflict, Message("api.instances.save_not_running").arg("name", inst->name));
    auto saving = list_all(tx, "images", {{"state", "saving"}, {"tenant_id", inst->tenant_id}});
    if (!saving) return saving.error();
    for (const Record& s : *saving)  // one save of an instance at a time
      if (auto other = decode_image(s.body); other && other->source && other->source->instance_id == cur->id)
        return Error::make(Code::kConflict,
                           Message("api.instances.save_under_way").arg("name", inst->name).arg("image", other->name));
    // Its size is known only once the node has written the archive: a tenant already at its
    // storage quota, or a store disk with less than a GiB free, gets no save at all (the archive
    // is checked against both again when it is there, and one larger than --artifact-max-gib is
    // failed without being read).
    if (auto room = check_room(app, tx, inst->tenant_id, 0, "name"); !room) return room;
    i->tenant_id = inst->tenant_id;
    i->created_by = p.user_id;
    i->source = ImageSource{cur->id, inst->name, inst->job_ids.back()};
    auto r = insert_image(tx, *i, now, " saved from instance " + inst->name + " (job " + inst->job_ids.back() + ")");
    if (!r) return r.error();
    out = *r;
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  app.metrics.count_write("images", "save");
  send_json(res, 202, image_answer(app.store, out, *i));
}

}  // namespace

void register_image_routes(App& app, Router& srv) {
  route(app, srv, "POST", kAllImages, "/api/v1/images", create_image);
  route(app, srv, "GET", kAllImages, "/api/v1/images", list_images);
  route(app, srv, "PUT", kArchive, "/api/v1/images/{ref}/archive", upload_archive);
  route(app, srv, "GET", kOneImage, "/api/v1/images/{ref}", get_image);
  route(app, srv, "DELETE", kOneImage, "/api/v1/images/{ref}", delete_image);
  route(app, srv, "POST", kFromInstance, "/api/v1/instances/{ref}/image", save_instance);
}

}  // namespace gpurent
