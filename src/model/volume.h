// Volume: a tenant's persistent folder that jobs mount (docs/resources/volumes.md). It has a
// provisioned size, billed per GB-month under an offer's fees.volume_storage from the first run
// that mounts it until it is deleted; the executor keeps it under its volume root, one folder per
// tenant (`<volume root>/<tenant id>/<name>`, created empty on first use). The size is what is
// billed; the folder is not capped at it (the volume root is a plain directory tree).
// Written by the API (api/volumes.cc). Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/enum_names.h"
#include "model/resource.h"

namespace gpurent {

inline constexpr int64_t kMaxVolumeGb = 1'000'000;  // 1 PB

// Where a volume's data lives: on the volume root every node mounts (shared, the default), or on
// the own disk of one node at a time (node: `gpurent serve --node-volume-root`), copied to another
// node when the instance it is the data disk of starts there (docs/resources/volumes.md#node-volumes).
enum class VolumePlacement { kShared, kNode };
inline constexpr EnumEntry<VolumePlacement> kVolumePlacementNames[] = {{VolumePlacement::kShared, "shared"},
                                                                        {VolumePlacement::kNode, "node"}};

// A node volume's copy from one node to another, as the node that received it measured it.
struct VolumeCopy {
  std::string from_node, to_node;  // node ids
  int64_t bytes = 0;               // what the folder held after the copy
  int64_t ms = 0;                  // how long the copy took
  TimeMs at = 0;                   // when it ended, by the node's clock
  std::string job_id;              // the run that copied it ("" for copies recorded before it was kept)
  bool operator==(const VolumeCopy&) const = default;
};
struct Volume {
  std::string name;  // slug, unique within the tenant
  std::string tenant;  // as the client named it (operators name one; tenant users may omit it)
  int64_t size_gb = 0;  // 1..kMaxVolumeGb, 1 GB = 10^9 bytes; only grows
  std::optional<std::string> description;  // 1..512 characters
  // A project's volume: only that project's jobs and instances mount it (id or name as given).
  std::optional<std::string> project;
  VolumePlacement placement = VolumePlacement::kShared;  // fixed once created
  std::string tenant_id;   // set by the server
  std::string project_id;  // set by the server: project's id, "" for a volume of the whole tenant
  // Set by the server for a node volume: the node its data is on ("" until a run first mounts it),
  // what its folder held when last measured (after a copy, at the end of each run) and when, and
  // its last copy to another node.
  std::string node_id;
  std::optional<int64_t> used_bytes;
  std::optional<TimeMs> used_at;
  std::optional<VolumeCopy> last_copy;
  bool operator==(const Volume&) const = default;
};

// POST/PUT body: name, size_gb, description, tenant, project, placement.
Result<Volume> parse_volume(const json& body);
Result<Volume> decode_volume(const json& body);  // the stored body, strictly by type
json to_json(const Volume& v);                   // the stored body; the API adds id, times, version
IndexCols index_of(const Volume& v);             // name, tenant_id, project_id

// What a tenant keeps stored for the nodes of one offer: a volume (kind "volume_storage", id
// "vls_…", state "open" or "closed"), from the start of the first run of a job that mounts it
// billed under that offer until the volume is deleted or resized (a resize closes it and opens one
// at the new size). Rated per GB-month under the offer's fees.volume_storage. Written by the server
// only (services/allocation_ledger.h).
struct KeptVolume {
  std::string volume_id, volume;      // the volume's id and name
  std::string offer_id, contract_id;  // contract "" at list prices
  int64_t bytes = 0;                  // the provisioned size
  TimeMs from = 0;
  std::optional<TimeMs> to;  // none while kept
  bool operator==(const KeptVolume&) const = default;
};
Result<KeptVolume> decode_kept_volume(const json& body);  // strictly by type
json to_json(const KeptVolume& k);

}  // namespace gpurent
