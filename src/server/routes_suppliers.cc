// /api/v1/suppliers: the companies that list GPUs. Operators manage them; suppliers read their own.
#include "model/supplier.h"
#include "server/resources.h"

namespace gpurent {

void register_supplier_routes(App& app, httplib::Server& srv) {
  KindSpec spec;
  spec.kind = "suppliers";
  spec.id_prefix = "sup";
  spec.object_kind = ObjectKind::kSupplier;
  spec.self_supplier = true;
  spec.global_names = true;
  spec.filters = {{"name", "name"}, {"region", "region"}};
  spec.build = [](const json& body, const Principal&, StoreTx&, const Record*) -> Result<Built> {
    auto s = parse_supplier(body);
    if (!s) return s.error();
    return Built{to_json(*s), index_of(*s)};
  };
  spec.on_delete = [](const Principal&, const Record& r, StoreTx& tx) -> Status {
    // Users too: a supplier user whose supplier is gone would still authenticate with its id.
    for (const char* kind : {"nodes", "offers", "users"}) {
      auto n = tx.count(kind, {{"supplier_id", r.id}});
      if (!n) return n.error();
      if (*n > 0)
        return Error::make(Code::kConflict, "supplier '" + r.name + "' still has " + std::to_string(*n) + " object(s) of " + kind +
                                                ": delete them first");
    }
    return ok_status();
  };
  register_crud(app, srv, spec);
}

}  // namespace gpurent
