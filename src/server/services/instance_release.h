// Release of stopped instances (docs/resources/instances.md#release): an instance whose last run
// ended its offer's stopped_instance_release_days ago is released (kept as `released` to be read,
// holding no name, ports or volumes; its jobs and its volume stay), after warnings 3 and 1 days
// before: alerts of kind instance_release, delivered to the tenant's webhooks like every alert,
// saying what goes and what is kept. Released instances (by this rule or by hand) are removed
// kReleasedKeptDays after their release. The cost firewall runs a pass each time it runs
// (services/cost_firewall.h). Reads off the loop, writes through it; any thread.
#pragma once

#include <optional>

#include "model/instance.h"
#include "server/services/context.h"

namespace gpurent {

// When a stopped instance will be released, and by which offer's rule.
struct ReleaseDue {
  TimeMs stopped_at = 0;  // its last run's end, or its latest start's end when later (never ran)
  TimeMs release_at = 0;
  int64_t days = 0;
  std::string offer;      // the offer's name
};

// Nothing when the instance is not stopped (its latest job is active), never ran, or its last
// run's offer sets no release. The days count from the later of its last run's end and its latest
// job's end (a start stopped before it ever ran counts as use).
Result<std::optional<ReleaseDue>> release_due(StoreReader& store, const GpuCatalog& catalog, const Instance& i);

// One pass at `now`: warnings due, releases due, released instances past keeping removed, and
// warnings no longer true (the instance was started again or released by hand) resolved. Returns
// how many instances it released.
Result<int> release_stopped_instances(ServiceContext& app, TimeMs now);

}  // namespace gpurent
