// /api/v1/faults: node failures that hit a job, as the scheduler recorded them (which job, which
// node, when, why). Read-only: billing (outage compensation) and SLA checks read them. A tenant
// sees the faults of its own jobs; operators see all.
#include "server/api/resources.h"

namespace gpurent {

void register_fault_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "faults";
  spec.id_prefix = "flt";
  spec.object_kind = ObjectKind::kJob;
  spec.creatable = false;
  spec.updatable = false;
  spec.deletable = false;
  spec.filters = {{"tenant", "tenant_id"}, {"project", "project_id"}, {"supplier", "supplier_id"},
                  {"gpu_model", "gpu_model"}, {"region", "region"}};
  spec.build = [](const json&, const Principal&, StoreTx&, const Record*) -> Result<Built> {
    return Error::make(Code::kMethodNotAllowed, Message("api.faults.not_created"));
  };
  register_crud(app, srv, spec);
}

}  // namespace gpurent
