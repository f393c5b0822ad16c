// Translations from the stored resources (model/) to what the engine schedules (engine_types.h).
// The server and the scenario runner use these, so a job means the same thing in both.
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "catalog/gpu_catalog.h"
#include "model/job.h"
#include "model/node.h"
#include "model/project.h"
#include "sched/engine_types.h"

namespace gpurent {

// NVLink domains are scoped to the node ("<node id>/<domain>"): a domain name is unique within a
// node, not across a supplier (multi-node NVLink racks are not modelled yet).
SchedNode to_sched_node(const Node& n, const std::string& id, const GpuCatalog& catalog);
SchedJob to_sched_job(const Job& j, const std::string& id, TimeMs submitted_at);
SchedProject to_sched_project(const Project& p, const std::string& id);

}  // namespace gpurent
