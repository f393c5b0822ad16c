// /api/v1/contracts: what a tenant signed with a supplier — offers, clauses, reserved commitments,
// exit (model/contract.h). Operators write; the tenant's users read their own (the tenants row of
// the permission matrix). Every offer must be the supplier's and priced in the contract currency;
// a commitment needs the offer's reserved price for its term.
//
// /api/v1/allocations: the allocation ledger (server/allocation_ledger.h), read-only; a tenant sees
// its own runs, operators all.
#include "model/contract.h"
#include "model/job_run.h"
#include "model/offer.h"
#include "server/api/resources.h"
#include "server/services/issued_invoices.h"
#include "server/services/record_faults.h"

namespace gpurent {

void register_contract_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "contracts";
  spec.id_prefix = "ctr";
  spec.object_kind = ObjectKind::kTenant;
  spec.filters = {{"tenant", "tenant_id"}, {"supplier", "supplier_id"}, {"name", "name"}};
  spec.build = [&app](const json& body, const Principal&, StoreTx& tx, const Record*) -> Result<Built> {
    auto c = parse_contract(body);
    if (!c) return c.error();
    auto tenant = resolve_ref(tx, "tenants", c->tenant, {}, "tenant");
    if (!tenant) return tenant.error();
    auto supplier = resolve_ref(tx, "suppliers", c->supplier, {}, "supplier");
    if (!supplier) return supplier.error();
    c->tenant_id = tenant->id;
    c->supplier_id = supplier->id;
    std::map<std::string, Offer> offers;  // reference -> offer
    for (size_t i = 0; i < c->offers.size(); ++i) {
      const std::string field = "offers[" + std::to_string(i) + "]";
      auto o = resolve_ref(tx, "offers", c->offers[i], {{"supplier_id", supplier->id}}, field);
      if (!o) return o.error();
      auto offer = decode_record(*o, [&](const json& b) { return parse_offer(b, app.catalog); }, "no contract can name it");
      if (!offer) return offer.error();
      if (offer->currency != c->currency)
        return Error::invalid(field, Message("api.contracts.offer_currency")
                                         .arg("offer", o->name)
                                         .arg("offer_currency", currency_code(offer->currency))
                                         .arg("currency", currency_code(c->currency)));
      c->offer_ids.push_back(o->id);
      offers[c->offers[i]] = std::move(*offer);
    }
    for (size_t i = 0; i < c->commitments.size(); ++i) {
      const auto& m = c->commitments[i];
      if (m.market()) continue;  // priced by its trade
      const std::string key = "reserved_" + std::to_string(m.term_months) + "m";
      if (!offers.at(m.offer).prices.reserved_for(m.term_months))
        return Error::invalid("commitments[" + std::to_string(i) + "].term_months",
                              Message("api.contracts.no_reserved_price").arg("offer", m.offer).arg("price", key));
    }
    return Built{to_json(*c), index_of(*c)};
  };
  // Runs (and kept storage) billed under a contract in a month not closed yet, or market trades
  // settled into it, would be re-priced at list prices (and lose its SLA credits) on those
  // months' invoices: such a contract stays; an exit ends it. Closed months' invoices are frozen.
  spec.on_delete = [](const Principal&, const Record& r, StoreTx& tx) -> Status {
    if (auto locked = tx.get_locked("contracts", r.id); !locked) return locked.error();
    auto closed = invoices_frozen_through(tx);  // a month still closing may rate them yet
    if (!closed) return closed.error();
    int64_t billed = 0;
    for (const auto& [kind, end_key] : {std::pair{"allocations", "ended_at"}, std::pair{"image_storage", "to"},
                                        std::pair{"artifact_storage", "to"}, std::pair{"volume_storage", "to"}}) {
      auto recs = list_all(tx, kind, {{"tenant_id", r.tenant_id}, {"supplier_id", r.supplier_id}});
      if (!recs) return recs.error();
      for (const Record& x : *recs) {
        if (!x.body.is_object() || x.body.value("contract_id", "") != r.id) continue;
        const json& end = x.body.contains(end_key) ? x.body[end_key] : json();
        auto ended = end.is_string() ? parse_rfc3339(end.get<std::string>(), end_key) : Result<TimeMs>(INT64_MAX);
        if (!ended || *ended >= *closed) ++billed;
      }
    }
    int64_t trades = 0;
    const json& cms = r.body.contains("commitments") ? r.body["commitments"] : json::array();
    if (cms.is_array())
      for (const json& m : cms)
        if (m.is_object() && !m.value("trade", "").empty()) ++trades;
    if (billed == 0 && trades == 0) return ok_status();
    return Error::make(Code::kConflict, Message("api.contracts.in_use")
                                            .arg("contract", r.name)
                                            .arg("runs", std::to_string(billed))
                                            .arg("trades", std::to_string(trades)));
  };
  register_crud(app, srv, spec);

  KindSpec alloc;
  alloc.kind = "allocations";
  alloc.id_prefix = "alc";
  alloc.object_kind = ObjectKind::kJob;
  alloc.creatable = false;
  alloc.updatable = false;
  alloc.deletable = false;
  alloc.filters = {{"tenant", "tenant_id"}, {"project", "project_id"}, {"supplier", "supplier_id"}, {"state", "state"}};
  alloc.filter_values["state"] = enum_names(kRunStateNames);
  alloc.updated_since = true;
  alloc.build = [](const json&, const Principal&, StoreTx&, const Record*) -> Result<Built> {
    return Error::make(Code::kMethodNotAllowed, Message("api.allocations.not_created"));
  };
  register_crud(app, srv, alloc);
}

}  // namespace gpurent
