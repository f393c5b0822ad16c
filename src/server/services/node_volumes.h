// Node volumes, the server's half (docs/resources/volumes.md#node-volumes): a volume with
// placement "node" lives on the own disk of one node at a time (`gpurent serve --node-volume-root`),
// its `node_id`. When the instance it is the data disk of starts on another node, the run's
// batch script there copies it over first (the operator's --volume-copy-command), timed; the
// node reports what it measured in the artifact store's volume-reports/ folder (a shared
// folder, like the saves'), and each executor tick applies the reports: the volume's node becomes
// the new one, `last_copy` holds the measured copy, `used_bytes` what its folder holds; a volume on
// no node yet takes the node of the first run that creates its folder.
// Called by the container executors inside the tick's transaction; pure helpers otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "exec/container.h"
#include "model/volume.h"
#include "store/store.h"

namespace gpurent {

// <root>/<tenant id>/<name> on node `node` ("%n" in root is the node's name).
std::string node_volume_dir(const std::string& root, const std::string& node, const std::string& tenant_id,
                            const std::string& name);
// The copy command with {from_node}, {from_dir} and {dir} replaced by the shell-quoted values.
std::string render_volume_copy(const std::string& command, const std::string& from_node, const std::string& from_dir,
                               const std::string& dir);
// Where nodes write their reports, and the base name of one run's report on one volume.
std::string volume_reports_dir(const std::string& store_root);
std::string volume_report_base(const std::string& store_root, const std::string& volume_id, const std::string& job_id);

struct NodeVolumeSettings {
  std::string root;          // --node-volume-root ("" : none)
  std::string copy_command;  // --volume-copy-command
  std::string store_root;    // the artifact store, where reports go
};
// Inside the tick that submits job `job_id` of tenant `tenant_id` to `nodes` (id, name): each of
// `volumes` that is a node volume gets its folder on that node and a report file; one whose data
// is on another node gets the copy from there (the volume's node changes once the copy is
// reported); one on no node yet is created there by the run, which reports it. A
// message when the run cannot mount one: no --node-volume-root, or a run on several nodes.
Result<std::optional<Message>> place_node_volumes(StoreTx& tx, const NodeVolumeSettings& s, const std::string& tenant_id,
                                                  const std::string& job_id,
                                                  const std::vector<std::pair<std::string, std::string>>& nodes,
                                                  std::vector<ContainerVolume>& volumes, TimeMs now);

// What moving the volume to another node would copy and how long it is expected to take: its
// last measured size (else its provisioned size, `measured` false), at the rate of its last
// measured copy when that moved at least 64 MB in at least 1 ms (`rate_basis` "measured"), else
// at `assumed_mbps` ("assumed").
struct CopyEstimate {
  int64_t bytes = 0;
  bool measured = false;
  int64_t seconds = 0;     // rounded up
  int64_t rate_mbps = 0;   // Mbit/s used
  std::string rate_basis;  // measured | assumed
};
CopyEstimate estimate_volume_copy(const Volume& v, int64_t assumed_mbps);

// When run `job_id` on node `node_id`, running since `run_started`, has the data of every node
// volume among `volumes` on its node (shared volumes are always there; one on no node yet is
// created by the run as it starts), asked at `now`: `run_started`, or later by the time this run's
// copy of one took (`last_copy.ms`, timed by the node; its clock is not compared with the
// server's). Nothing while one is still recorded on another node — its copy is going on or not yet
// reported — until three times its estimated copy (estimate_volume_copy at `assumed_mbps`) and
// kCopyReportGraceMs have passed since the run began: a report that never comes (the node could
// not write it) delays, but does not stop, what waits for it; it is then ready from that moment.
inline constexpr TimeMs kCopyReportGraceMs = 15 * 60'000;
std::optional<TimeMs> node_volumes_ready_at(const std::vector<Volume>& volumes, const std::string& node_id,
                                            const std::string& job_id, TimeMs run_started, TimeMs now,
                                            int64_t assumed_mbps);

// Applies every report in the folder (a copy: the volume's node becomes the reporting node, its
// last_copy and used size are set; a size: set when the volume is still on that node), and removes
// the reports an earlier tick applied (the record shows them): a write that does not commit leaves
// its reports to be applied again. A report whose volume or node is gone is removed unapplied.
// Called first in each tick, so that a start submitted in the same tick sees where the volume is.
Status sync_volume_reports(StoreTx& tx, const std::string& store_root, TimeMs now);

}  // namespace gpurent
