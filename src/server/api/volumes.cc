// /api/v1/volumes: a tenant's persistent volumes (model/volume.h, docs/resources/volumes.md).
// Those who may submit the tenant's jobs (the jobs row of the permission matrix) create, grow and
// delete them (at most --tenant-max-volumes a tenant); its users read them. A volume a job that has not finished names
// cannot be deleted; a deleted volume's storage stops being billed and its folder under the server's --volume-root is
// removed once the delete is committed.
#include <filesystem>
#include <system_error>

#include "model/job.h"
#include "model/job_state.h"
#include "model/volume.h"
#include "server/api/instance_volumes.h"
#include "server/api/resources.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

// The tenant's jobs that have not finished and mount volume `name`: the first one's name, or "".
// One scan by id, not one query per unfinished state: on PostgreSQL each query sees the latest
// commits, and a job moving between two states read apart (preempted -> pending) would be in
// neither. A finished job is passed over by its index column, without decoding its body.
Result<std::string> unfinished_job_using(StoreTx& tx, const std::string& tenant_id, const std::string& name) {
  ListQuery q{"jobs", {{"tenant_id", tenant_id}}, "", 500};
  for (;;) {
    auto page = tx.list(q);
    if (!page) return page.error();
    for (const Record& r : page->items) {
      if (auto st = parse_job_state(r.state); st && is_terminal(*st)) continue;
      auto status = stored_job_status(r.body);
      if (!status) return status.error();
      if (is_terminal(status->state)) continue;
      auto vols = stored_job_volumes(r.body);
      if (!vols) return vols.error();
      for (const VolumeMount& v : *vols)
        if (v.name == name) return r.name.empty() ? r.id : r.name;
    }
    if (page->next_after.empty()) return std::string();
    q.after_id = page->next_after;
  }
}

Result<Built> build_volume(App& app, const json& body, const Principal& p, StoreTx& tx, const Record* existing) {
  auto v = parse_volume(body);
  if (!v) return v.error();
  auto tenant = owning_tenant(tx, p, v->tenant.empty() && existing ? existing->tenant_id : v->tenant);
  if (!tenant) return tenant.error();
  v->tenant_id = tenant->id;
  if (!existing)
    if (auto room =
            check_tenant_room(tx, "volumes", tenant->id, app.opts.tenant_max_volumes, "tenant", "api.volumes.too_many");
        !room)
      return room.error();
  if (v->placement == VolumePlacement::kNode && app.opts.node_volume_root.empty())
    return Error::invalid("placement", Message("api.volumes.no_node_root"));
  if (v->project) {  // a project's volume: only its jobs and instances mount it
    auto project = resolve_ref(tx, "projects", *v->project, {{"tenant_id", tenant->id}}, "project");
    if (!project) return project.error();
    v->project_id = project->id;
  }
  if (existing) {
    auto old = decode_record(*existing, decode_volume, "it cannot be changed");
    if (!old) return old.error();
    if (tenant->id != existing->tenant_id) return Error::invalid("tenant", Message("api.volumes.tenant_fixed"));
    if (v->project_id != old->project_id)  // who may mount it does not change under running jobs
      return Error::invalid("project", Message("api.volumes.project_fixed"));
    if (v->placement != old->placement)
      return Error::invalid("placement", Message("api.volumes.placement_fixed")
                                             .arg("placement", enum_name(kVolumePlacementNames, old->placement)));
    v->node_id = old->node_id;  // what the nodes reported stays
    v->used_bytes = old->used_bytes;
    v->used_at = old->used_at;
    v->last_copy = old->last_copy;
    if (v->name != old->name)  // its folder on the nodes is named after it
      return Error::invalid("name", Message("api.volumes.name_fixed").arg("name", old->name));
    if (v->size_gb < old->size_gb)
      return Error::invalid("size_gb", Message("api.volumes.shrink")
                                           .arg("old", std::to_string(old->size_gb))
                                           .arg("new", std::to_string(v->size_gb)));
    if (v->size_gb > old->size_gb)  // billed at the new size from now on
      if (auto s = resize_kept_volume(tx, existing->tenant_id, existing->id, v->size_gb * 1'000'000'000, app.clock.now()); !s)
        return s.error();
  }
  return Built{to_json(*v), index_of(*v)};
}

}  // namespace

void register_volume_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "volumes";
  spec.id_prefix = "vol";
  spec.object_kind = ObjectKind::kJob;
  spec.filters = {{"tenant", "tenant_id"}, {"project", "project_id"}, {"name", "name"}};
  // A node volume's node and last copy by name as well as id.
  spec.decorate = [](StoreReader& store, const Record&, const Principal&, json& out) {
    if (out.contains("node_id") && out["node_id"].is_string())
      if (auto n = store.get("nodes", out["node_id"].get<std::string>())) out["node"] = n->name;
    if (out.contains("last_copy") && out["last_copy"].is_object())
      for (const char* k : {"from_node", "to_node"})
        if (out["last_copy"][k].is_string())
          if (auto n = store.get("nodes", out["last_copy"][k].get<std::string>()))
            out["last_copy"][std::string(k) + "_name"] = n->name;
  };
  spec.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record* existing) {
    return build_volume(app, body, p, tx, existing);
  };
  spec.on_delete = [&app](const Principal&, const Record& r, StoreTx& tx) -> Status {
    auto holder = volume_holder(tx, r.tenant_id, r.name, "");  // an instance's next start would miss it
    if (!holder) return holder.error();
    if (*holder)
      return Error::make(Code::kConflict,
                         Message("api.volumes.attached").arg("volume", r.name).arg("instance", (*holder)->instance));
    auto user = unfinished_job_using(tx, r.tenant_id, r.name);
    if (!user) return user.error();
    if (!user->empty())
      return Error::make(Code::kConflict, Message("api.volumes.in_use").arg("volume", r.name).arg("job", *user));
    return close_kept_volume(tx, r.tenant_id, r.id, app.clock.now());
  };
  // The data goes with it. Where the folder cannot be removed it stays, and a volume created later
  // under the same name finds it (as one created for a folder jobs made before volumes had sizes).
  spec.after_delete = [&app](const Record& r) {
    if (app.opts.volume_root.empty() || r.tenant_id.empty() || r.name.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(app.opts.volume_root) / r.tenant_id / r.name, ec);
  };
  register_crud(app, srv, spec);
}

}  // namespace gpurent
