// /api/v1/offers: price sheets (every billing mode, the fee rules, the contract template).
#include "model/offer.h"
#include "model/supplier.h"
#include "server/api/resources.h"
#include "server/api/supply_refs.h"
#include "server/services/record_faults.h"

namespace gpurent {

void register_offer_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "offers";
  spec.id_prefix = "off";
  spec.object_kind = ObjectKind::kOffer;
  spec.filters = {{"supplier", "supplier_id"}, {"region", "region"}, {"gpu_model", "gpu_model"}, {"name", "name"}};
  spec.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record*) -> Result<Built> {
    auto o = parse_offer(body, app.catalog);
    if (!o) return o.error();
    auto sup = resolve_supplier(tx, p, o->supplier);
    if (!sup) return sup.error();
    o->supplier_id = sup->id;
    if (o->node_selector.site) {
      auto supplier = decode_record(*sup, parse_supplier, "no offer can select its sites");
      if (!supplier) return supplier.error();
      if (!supplier->has_site(*o->node_selector.site))
        return Error::invalid(
            "node_selector.site",
            Message("api.suppliers.no_site").arg("supplier", sup->name).arg("site", *o->node_selector.site));
    }
    return Built{to_json(*o), index_of(*o)};
  };
  register_crud(app, srv, spec);
}

}  // namespace gpurent
