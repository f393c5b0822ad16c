// The scheduler's policy knobs as a file or a YAML block: the `config:` block of a scenario and
// the file `gpurent serve --sched-config FILE` reads. Keys (all optional):
//   policy: fgd                    # placement scoring (score_policy.h)
//   preemption: true
//   protect_inference_min: true
//   inference_extra_rank: low      # the class inference replicas above min rank as
//   spot_notice_seconds: 30
//   backfill: true
//   quota_lending: true            # a project may borrow its tenant's idle quota (reclaimable)
//   tenant_weights: {acme: 2}      # fair-share weight per tenant (name or id), 1..1000
// Unknown keys and bad values are errors naming the field. Pure functions; thread-safe.
#pragma once

#include <string>

#include "core/fields.h"
#include "sched/engine_types.h"

namespace gpurent {

// Reads the keys above from `c` into `cfg` (keys absent keep cfg's values); errors go to c.
void read_sched_config(Fields& c, SchedConfig& cfg);
// A YAML or JSON document holding the keys above at its top level (the shell reads the file:
// io/files.h load_sched_config_file). A document that is not a map is an error on
// "--sched-config"; bad keys are errors naming them.
Result<SchedConfig> parse_sched_config(const std::string& text, SchedConfig defaults = {});

}  // namespace gpurent
