// /api/v1/nodes: servers with their whole hardware truth. A node's site must be one of its
// supplier's sites; suppliers manage their own nodes.
#include "model/node.h"
#include "model/supplier.h"
#include "server/api/resources.h"
#include "server/api/supply_refs.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"

namespace gpurent {

void register_node_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "nodes";
  spec.id_prefix = "nod";
  spec.object_kind = ObjectKind::kNode;
  spec.filters = {{"supplier", "supplier_id"}, {"region", "region"}, {"gpu_model", "gpu_model"},
                  {"state", "state"},          {"name", "name"}};
  spec.filter_values["state"] = enum_names(kNodeStates);
  spec.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record*) -> Result<Built> {
    auto n = parse_node(body, app.catalog);
    if (!n) return n.error();
    auto sup = resolve_supplier(tx, p, n->supplier);
    if (!sup) return sup.error();
    n->supplier_id = sup->id;
    auto supplier = decode_record(*sup, parse_supplier, "no node can be listed under it");
    if (!supplier) return supplier.error();
    if (!supplier->has_site(n->site))
      return Error::invalid("site", Message("api.suppliers.no_site").arg("supplier", sup->name).arg("site", n->site));
    return Built{to_json(*n), index_of(*n)};
  };
  spec.warnings = [](StoreReader& store, const Record& r) {
    std::vector<Message> out;
    auto sold = node_is_sold(store, r);
    if (sold && !*sold)
      out.push_back(Message("api.nodes.no_offer").arg("node", r.name).arg("model", r.gpu_model).arg("region", r.region));
    return out;
  };
  register_crud(app, srv, spec);
}

}  // namespace gpurent
