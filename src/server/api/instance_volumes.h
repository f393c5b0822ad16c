// An instance's volumes (docs/resources/instances.md#volumes): its data disk is one instance's
// alone (no other instance mounts it, as a data disk or shared); its shared volumes (a project's
// volume, say) are mounted by as many instances and jobs as want them, except another instance's
// data disk. Checked when an instance is created and when a volume is attached; a volume an
// instance holds cannot be deleted. Attach and detach act on a stopped instance: its next start
// mounts what it holds then.
//   POST /instances/{ref}/attach  {name, mount, shared, read_only}
//   POST /instances/{ref}/detach  {name}
#pragma once

#include <optional>
#include <string>

#include "model/instance.h"
#include "server/api/resources.h"

namespace gpurent {

// The instance of the tenant, other than `self_id`, that holds volume `name`, and how.
struct VolumeHolder {
  std::string instance;  // its name
  bool data = false;     // as its data disk (else as a shared volume)
};
Result<std::optional<VolumeHolder>> volume_holder(StoreTx& tx, const std::string& tenant_id, const std::string& name,
                                                  const std::string& self_id);

// 409 (api.instances.volume_taken) when i's data disk is held by another instance, or one of its
// shared volumes is another instance's data disk; 422 when a shared volume is a node volume (a
// data disk only). `self_id`: i's own id ("" while it is created).
Status check_instance_volumes(StoreTx& tx, const Instance& i, const std::string& self_id);

// The attach and detach routes (registered by register_instance_routes).
void register_instance_volume_routes(App& app, Router& srv);

}  // namespace gpurent
