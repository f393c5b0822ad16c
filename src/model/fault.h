// Fault: a node failure that hit a job, as the scheduler recorded it (kind "faults", id "flt_…"):
// which job, which node, when and why. Written only by the scheduler service; read by the
// supplier-health view (an outage unless an incident measurement covers it) and the API.
// decode_fault() reads a stored document strictly by type, naming the field that is wrong.
// Value types and pure functions; thread-safe.
#pragma once

#include <string>

#include "core/clock.h"
#include "core/message.h"
#include "model/resource.h"

namespace gpurent {

struct Fault {
  std::string name;  // "fault-<ms>-<n>"
  std::string job;   // the job's id
  std::string node;  // the node's id
  std::string tenant_id, project_id, supplier_id;
  TimeMs at = 0;
  Message reason;  // stored as "reason" (English) and "reason_message" (the code)
  bool operator==(const Fault&) const = default;
};

Result<Fault> decode_fault(const json& body);
json to_json(const Fault& f);

}  // namespace gpurent
