// /api/v1/measurements: card FP16 benchmarks, node NCCL bandwidth and node outages
// (model/measurement.h) that contract clauses turn into credits on the invoice. Operators and the
// node's supplier write (the nodes row of the permission matrix); everyone who sees nodes reads.
// Records are facts and append-only (no PUT, no DELETE): a wrong one is corrected by a new record
// naming it in `corrects` (same kind, same node; once), which readers use in its place. The server
// records who wrote each (`recorded_by`).
#include "model/measurement.h"
#include "model/node.h"
#include "server/api/resources.h"
#include "server/services/record_faults.h"

namespace gpurent {

void register_measurement_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "measurements";
  spec.id_prefix = "msr";
  spec.object_kind = ObjectKind::kNode;
  spec.filters = {{"kind", "state"}, {"supplier", "supplier_id"}};
  spec.filter_values["kind"] = enum_names(kMeasurementKindNames);
  spec.updatable = false;
  spec.deletable = false;
  spec.build = [](const json& body, const Principal& p, StoreTx& tx, const Record*) -> Result<Built> {
    auto m = parse_measurement(body);
    if (!m) return m.error();
    auto node = resolve_ref(tx, "nodes", m->node, {}, "node");
    if (!node) return node.error();
    m->node_id = node->id;
    m->recorded_by = p.user_id;
    if (m->corrects) {  // the same fact measured again: same kind, same node, corrected once
      auto old = tx.get("measurements", *m->corrects);
      if (!old && old.error().code != Code::kNotFound) return old.error();
      if (!old) return Error::invalid("corrects", Message("api.resources.not_found").arg("kind", "measurements").arg("ref", *m->corrects));
      auto prior = decode_record(*old, decode_measurement, "it cannot be corrected");
      if (!prior) return prior.error();
      if (prior->node_id != m->node_id || prior->kind != m->kind)
        return Error::invalid("corrects", Message("api.measurements.correction_mismatch")
                                              .arg("kind", enum_name(kMeasurementKindNames, m->kind))
                                              .arg("node", node->name));
      auto siblings = list_all(tx, "measurements", {{"supplier_id", node->supplier_id}});
      if (!siblings) return siblings.error();
      for (const Record& r : *siblings)
        if (r.body.is_object() && r.body.value("corrects", "") == *m->corrects)
          return Error::invalid("corrects", Message("api.measurements.already_corrected").arg("id", *m->corrects).arg("by", r.id));
    }
    if (m->gpu) {
      auto gpus = decode_record(*node, stored_node_cards, "no card measurement can be recorded on it");
      if (!gpus) return gpus.error();
      if (*m->gpu >= static_cast<int64_t>(gpus->size()))
        return Error::invalid("gpu", Message("api.measurements.gpu_index")
                                         .arg("node", node->name)
                                         .arg("gpus", std::to_string(gpus->size()))
                                         .arg("last", std::to_string(static_cast<int64_t>(gpus->size()) - 1)));
    }
    IndexCols idx = index_of(*m);
    idx.supplier_id = node->supplier_id;
    idx.region = node->region;
    idx.gpu_model = node->gpu_model;
    return Built{to_json(*m), idx};
  };
  register_crud(app, srv, spec);
}

}  // namespace gpurent
