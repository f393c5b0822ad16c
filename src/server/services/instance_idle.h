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

// Instances whose stop_at has come and whose latest start has not finished (a start that waited
// for room counts its job's time limit from when it ran, so it would run past stop_at): stopped
// as a user's stop is, saying so. The cost firewall runs it each pass. How many it stopped.
Result<int> stop_timed_out_instances(ServiceContext& app, TimeMs now);

// The balance guard's stop of instances (docs/resources/instances.md#money): every instance of a
// tenant under an active balance_exhausted stop whose latest start has not ended is stopped as a
// user's stop is, saying so (the scheduler has already requeued its job, closing its run; without
// this the instance would start by itself once money is paid in). Started again by its users.
// How many it stopped.
Result<int> stop_unfunded_instances(ServiceContext& app, TimeMs now);

}  // namespace gpurent
