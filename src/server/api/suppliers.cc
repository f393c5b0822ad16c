// /api/v1/suppliers: the companies that list GPUs. Operators manage them; every signed-in user reads them.
#include <set>

#include "model/supplier.h"
#include "server/api/resources.h"

namespace gpurent {

// 409 naming "sites" when an update drops a site one of the supplier's nodes or offers still names.
static Status check_sites_in_use(StoreTx& tx, const Supplier& s, const std::string& supplier_id) {
  std::set<std::string> sites;
  for (const auto& site : s.sites) sites.insert(site.name);
  for (const char* kind : {"nodes", "offers"}) {
    ListQuery q{kind, {{"supplier_id", supplier_id}}, "", 1000};
    for (;;) {
      auto page = tx.list(q);
      if (!page) return page.error();
      for (const auto& r : page->items) {
        const json& b = r.body;
        std::string site = b.value("site", "");
        if (b.contains("node_selector") && b["node_selector"].is_object())
          site = b["node_selector"].value("site", site);
        if (!site.empty() && !sites.count(site))
          return error_with_field(
              Code::kConflict,
              field_detail(
                  "sites",
                  Message("api.suppliers.site_in_use_change").arg("site", site).arg("kind", kind).arg("name", r.name)),
              "sites", Message("api.suppliers.site_in_use").arg("site", site).arg("kind", kind).arg("name", r.name));
      }
      if (page->next_after.empty()) break;
      q.after_id = page->next_after;
    }
  }
  return ok_status();
}

void register_supplier_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "suppliers";
  spec.id_prefix = "sup";
  spec.object_kind = ObjectKind::kSupplier;
  spec.self_supplier = true;
  spec.global_names = true;
  spec.filters = {{"name", "name"}, {"region", "region"}};
  spec.build = [](const json& body, const Principal&, StoreTx& tx, const Record* existing) -> Result<Built> {
    auto s = parse_supplier(body);
    if (!s) return s.error();
    if (existing)
      if (auto st = check_sites_in_use(tx, *s, existing->id); !st) return st.error();
    return Built{to_json(*s), index_of(*s)};
  };
  spec.on_delete = [](const Principal&, const Record& r, StoreTx& tx) -> Status {
    // Users too: a supplier user whose supplier is gone would still authenticate with its id.
    for (const char* kind : {"nodes", "offers", "users", "market-orders", "market-trades"}) {
      auto n = tx.count(kind, {{"supplier_id", r.id}});
      if (!n) return n.error();
      if (*n > 0)
        return Error::make(Code::kConflict, Message("api.suppliers.has_objects")
                                                .arg("supplier", r.name)
                                                .arg("n", std::to_string(*n))
                                                .arg("kind", kind));
    }
    return ok_status();
  };
  register_crud(app, srv, spec);
}

}  // namespace gpurent
