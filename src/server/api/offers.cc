// /api/v1/offers: price sheets (every billing mode, the fee rules, the contract template).
// /api/v1/spot-prices: an offer's spot market prices over time, appended by operators and the
// offer's supplier, never changed, removed or dated in the past (model/offer.h SpotPriceEntry).
#include "model/offer.h"
#include "model/supplier.h"
#include "server/api/resources.h"
#include "server/api/supply_refs.h"
#include "server/services/access.h"
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

  KindSpec spot;
  spot.kind = "spot-prices";
  spot.id_prefix = "spp";
  spot.object_kind = ObjectKind::kOffer;
  spot.filters = {{"offer", "state"}, {"supplier", "supplier_id"}};  // the offer's id is the state column
  spot.updatable = false;
  spot.deletable = false;
  spot.build = [&app](const json& body, const Principal&, StoreTx& tx, const Record*) -> Result<Built> {
    const TimeMs now = app.clock.now();
    // The price is read in the offer's currency: find the offer first (the body's own errors win).
    const json* ref = body.is_object() && body.contains("offer") ? &body["offer"] : nullptr;
    if (!ref || !ref->is_string()) return parse_spot_price(body, Currency::kUSD, now).error();
    auto rec = resolve_ref(tx, "offers", ref->get<std::string>(), {}, "offer");
    if (!rec) return rec.error();
    auto offer = decode_record(*rec, [&](const json& b) { return parse_offer(b, app.catalog); }, "no spot price can be set on it");
    if (!offer) return offer.error();
    auto e = parse_spot_price(body, offer->currency, now);
    if (!e) return e.error();
    e->offer_id = rec->id;
    if (!offer->prices.spot) return Error::invalid("offer", Message("api.spot_prices.no_spot").arg("offer", rec->name));
    if (e->price.micros() > offer->prices.on_demand.micros())
      return Error::invalid("price", Message("offer.price.above_on_demand")
                                         .arg("on_demand", offer->prices.on_demand.amount_string())
                                         .arg("currency", currency_code(offer->currency))
                                         .arg("why", Message("offer.price.spot_below_on_demand")));
    // One timeline per offer: each price starts after the latest one.
    auto prior = list_all(tx, "spot-prices", {{"state", rec->id}});
    if (!prior) return prior.error();
    for (const Record& p : *prior) {
      auto q = decode_record(p, decode_spot_price, "no spot price can follow it");
      if (!q) return q.error();
      if (q->from >= e->from)
        return Error::invalid("from", Message("api.spot_prices.not_after").arg("latest", format_rfc3339(q->from)));
    }
    IndexCols idx;
    idx.supplier_id = rec->supplier_id;
    idx.state = rec->id;
    idx.region = rec->region;
    idx.gpu_model = rec->gpu_model;
    return Built{to_json(*e, offer->currency), idx};
  };
  register_crud(app, srv, spot);
}

}  // namespace gpurent
