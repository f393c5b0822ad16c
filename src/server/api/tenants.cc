// /api/v1/tenants: customer organisations. Operators manage them; tenant users read their own.
#include "model/tenant.h"
#include "server/api/resources.h"

namespace gpurent {

void register_tenant_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "tenants";
  spec.id_prefix = "ten";
  spec.object_kind = ObjectKind::kTenant;
  spec.self_tenant = true;
  spec.global_names = true;
  spec.filters = {{"name", "name"}};
  spec.build = [](const json& body, const Principal&, StoreTx&, const Record* existing) -> Result<Built> {
    auto t = parse_tenant(body);
    if (!t) return t.error();
    // A stored currency that no longer decodes may be rewritten: that is how such a record is fixed.
    auto old = existing ? stored_tenant_currency(existing->body) : Result<Currency>(t->currency);
    if (old && *old != t->currency) return Error::invalid("currency", Message("api.tenants.currency_fixed"));
    return Built{to_json(*t), index_of(*t)};
  };
  spec.on_delete = [](const Principal&, const Record& r, StoreTx& tx) -> Status {
    for (const char* kind : {"projects", "users", "reservations", "jobs", "volumes"}) {
      auto n = tx.count(kind, {{"tenant_id", r.id}});
      if (!n) return n.error();
      if (*n > 0)
        return Error::make(
            Code::kConflict,
            Message("api.tenants.has_objects").arg("tenant", r.name).arg("n", std::to_string(*n)).arg("kind", kind));
    }
    return ok_status();
  };
  register_crud(app, srv, spec);
}

}  // namespace gpurent
