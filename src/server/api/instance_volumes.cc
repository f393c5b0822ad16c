#include "server/api/instance_volumes.h"

#include "model/job.h"
#include "model/job_state.h"
#include "server/http/http_util.h"
#include "server/services/instance_stop.h"
#include "server/services/record_faults.h"

namespace gpurent {

Result<std::optional<VolumeHolder>> volume_holder(StoreTx& tx, const std::string& tenant_id, const std::string& name,
                                                  const std::string& self_id) {
  auto all = list_all(tx, "instances", {{"tenant_id", tenant_id}});
  if (!all) return all.error();
  std::optional<VolumeHolder> shared;
  for (const Record& r : *all) {
    if (r.id == self_id) continue;
    auto i = decode_record(r, decode_instance, "its volumes are not counted");
    // Reported by decode_record; a released one holds none once its last run has gone.
    if (!i || (i->released_at && i->stopping_job.empty())) continue;
    if (i->volume && i->volume->name == name) return std::optional<VolumeHolder>(VolumeHolder{i->name, true});
    for (const VolumeMount& m : i->shared_volumes)
      if (m.name == name && !shared) shared = VolumeHolder{i->name, false};
  }
  return shared;
}

Status check_instance_volumes(StoreTx& tx, const Instance& i, const std::string& self_id) {
  // One writer at a time per tenant (several servers on one database): the instances read below
  // are not the record written, so only a lock keeps a disk from going to two instances at once.
  if (i.volume || !i.shared_volumes.empty())
    if (auto t = tx.get_locked("tenants", i.tenant_id); !t) return t.error();
  auto taken = [&](const std::string& field, const std::string& volume, const VolumeHolder& h) {
    return error_with_field(Code::kConflict,
                            Message(h.data ? "api.instances.volume_taken" : "api.instances.volume_shared")
                                .arg("volume", volume)
                                .arg("instance", h.instance),
                            field, Message(h.data ? "instance.volume.taken" : "instance.volume.shared").arg("instance", h.instance));
  };
  if (i.volume) {
    auto h = volume_holder(tx, i.tenant_id, i.volume->name, self_id);
    if (!h) return h.error();
    if (*h) return taken("volume.name", i.volume->name, **h);
  }
  for (size_t k = 0; k < i.shared_volumes.size(); ++k) {
    const std::string field = "shared_volumes[" + std::to_string(k) + "].name";
    auto found = tx.list({"volumes", {{"tenant_id", i.tenant_id}, {"name", i.shared_volumes[k].name}}, "", 1});
    if (!found) return found.error();
    if (!found->items.empty() && found->items.front().body.value("placement", "") == "node")  // on one node's disk
      return Error::invalid(field, Message("instance.volume.node_not_shared").arg("volume", i.shared_volumes[k].name));
    auto h = volume_holder(tx, i.tenant_id, i.shared_volumes[k].name, self_id);
    if (!h) return h.error();
    if (*h && (*h)->data) return taken(field, i.shared_volumes[k].name, **h);
  }
  return ok_status();
}

namespace {

// POST /instances/{ref}/attach and /detach: on a stopped instance (409 while its latest job is
// active: the running container keeps its mounts), checked as its next start's job would be.
void change_volume(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                   const Principal& p, bool attach) {
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  std::optional<VolumeAttach> add;
  std::string remove;
  if (attach) {
    auto a = parse_volume_attach(*body);
    if (!a) return send_problem(res, a.error(), req.path);
    add = *a;
  } else {
    auto d = parse_volume_detach(*body);
    if (!d) return send_problem(res, d.error(), req.path);
    remove = *d;
  }
  auto found = find_visible(app.store, spec, p, req.matches[1]);
  if (!found) return send_problem(res, found.error(), req.path);
  if (!in_scope(write_scope(p, ObjectKind::kJob), p, *found))
    return send_problem(res, Error::make(Code::kForbidden, Message("api.instances.forbidden").arg("role", role_name(p.role))),
                        req.path);
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get("instances", found->id);
    if (!cur) return cur.error();
    auto i = decode_record(*cur, decode_instance, "its volumes cannot be changed");
    if (!i) return i.error();
    if (!i->job_ids.empty())
      if (auto j = tx.get("jobs", i->job_ids.back()))
        if (auto s = stored_job_status(j->body); s && !is_terminal(s->state))
          return Error::make(Code::kConflict, Message("api.instances.volume_while_active").arg("name", i->name));
    if (auto s = check_not_released(*i); !s) return s;
    if (auto s = check_not_stopping(*i); !s) return s;
    const TimeMs now = app.clock.now();
    std::string detail;
    if (add) {
      if (!add->shared && i->volume)
        return error_with_field(Code::kConflict, Message("api.instances.has_data_disk").arg("name", i->name).arg("volume", i->volume->name),
                                "name", Message("instance.volume.has_data_disk").arg("volume", i->volume->name));
      if (add->shared && i->shared_volumes.size() >= kMaxSharedVolumes)
        return Error::invalid("shared", Message("instance.shared_volumes.too_many").arg("max", std::to_string(kMaxSharedVolumes)));
      if (add->shared)
        i->shared_volumes.push_back(add->mount);
      else
        i->volume = add->mount;
      detail = add->mount.name + (add->shared ? " shared at " : " as its data disk at ") + add->mount.mount;
      if (auto s = check_instance_volumes(tx, *i, cur->id); !s) return s;
      // Checked as its next start's job: the volume exists, is the project's to mount, its mount is
      // a plain path no other volume of it uses.
      auto job = instance_job(*i, static_cast<int64_t>(i->job_ids.size()) + 1, now);
      if (!job) return job.error();
      if (auto b = app.kinds.at("jobs").build_by_server(*job, p, tx, nullptr); !b) {
        Error e = b.error();
        for (auto& fe : e.fields) fe.field = instance_field(fe.field, i->volume.has_value());
        return e;
      }
    } else {
      const size_t before = i->shared_volumes.size() + (i->volume ? 1 : 0);
      if (i->volume && i->volume->name == remove) i->volume.reset();
      std::erase_if(i->shared_volumes, [&](const VolumeMount& m) { return m.name == remove; });
      if (i->shared_volumes.size() + (i->volume ? 1 : 0) == before)
        return Error::invalid("name", Message("instance.volume.not_attached").arg("instance", i->name).arg("volume", remove));
      detail = remove;
    }
    Record r = *cur;
    r.body = to_json(*i);
    if (auto s = store_change(tx, *cur, r, p, attach ? "attach" : "detach", detail, now); !s) return s;
    out = std::move(r);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  app.metrics.count_write("instances", attach ? "attach" : "detach");
  json answer = present(out);
  if (spec.decorate) spec.decorate(app.store, out, p, answer);
  send_json(res, 200, answer);
}

void attach_volume(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                   const Principal& p) {
  change_volume(app, spec, req, res, p, true);
}
void detach_volume(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                   const Principal& p) {
  change_volume(app, spec, req, res, p, false);
}

}  // namespace

void register_instance_volume_routes(App& app, Router& srv) {
  item_route(app, srv, "POST", "instances", "attach", attach_volume);
  item_route(app, srv, "POST", "instances", "detach", detach_volume);
}

}  // namespace gpurent
