// Idle auto-stop of instances (docs/resources/instances.md#idle-auto-stop): a pass stops every
// running instance with GPUs whose rule (its own idle_stop, else its tenant's instance_idle_stop)
// finds it idle in the metered utilization of its run's GPUs (model/idle_stop.h), by cancelling its
// job as a user's stop does, with a reason that says so. The cost firewall runs a pass each time
// it runs (services/cost_firewall.h). Reads off the loop, writes through it; any thread.
#pragma once

#include "server/services/context.h"

namespace gpurent {

// One pass at `now`: how many instances it stopped.
Result<int> stop_idle_instances(ServiceContext& app, TimeMs now);

}  // namespace gpurent
