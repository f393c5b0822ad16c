// /api/v1/offers: price sheets (every billing mode, the fee rules, the contract template). A change
// to an offer's pricing keeps the sheet it replaces (GET /api/v1/offers/{id}/history), so usage is
// rated by the sheet in force when it happened; an offer's currency never changes.
// /api/v1/spot-prices: an offer's spot market prices over time, appended by operators and the
// offer's supplier, never changed, removed or dated in the past (model/offer.h SpotPriceEntry).
#include <algorithm>

#include "model/contract.h"
#include "model/offer.h"
#include "model/supplier.h"
#include "server/api/resources.h"
#include "server/api/supply_refs.h"
#include "server/http/http_util.h"
#include "server/services/access.h"
#include "server/services/offer_history.h"
#include "server/services/record_faults.h"
#include "server/services/spot_timeline.h"

namespace gpurent {
namespace {

// GET /api/v1/offers/{id}/history: every sheet the offer has had, oldest first, the current last
// (until null), each with the time it took effect and the time it was replaced.
void offer_history(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res,
                   const Principal& p) {
  auto offer = find_visible(app.store, spec, p, req.matches[1]);
  if (!offer) return send_problem(res, offer.error(), req.path);
  auto versions = offer_versions(app.store, offer->id);
  if (!versions) return send_problem(res, versions.error(), req.path);
  auto sheet_of = [](const json& body) {
    json j = json::object();
    for (const char* k : {"currency", "prices", "served_models", "min_increment_seconds", "fees"})
      if (body.contains(k)) j[k] = body[k];
    return j;
  };
  json items = json::array();
  for (const auto& v : *versions) {
    json item = sheet_of(v.sheet);
    item["version"] = v.version;
    item["from"] = format_rfc3339(v.from);
    item["until"] = format_rfc3339(v.until);
    item["changed_by"] = v.changed_by;
    items.push_back(std::move(item));
  }
  json now = sheet_of(offer->body);
  now["version"] = offer->version;
  now["from"] = format_rfc3339(versions->empty() ? offer->created_at : versions->back().until);
  now["until"] = nullptr;
  items.push_back(std::move(now));
  send_json(res, 200, {{"offer_id", offer->id}, {"offer", offer->name}, {"items", items}, {"next_after", nullptr}});
}

}  // namespace

void register_offer_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "offers";
  spec.id_prefix = "off";
  spec.object_kind = ObjectKind::kOffer;
  spec.filters = {{"supplier", "supplier_id"}, {"region", "region"}, {"gpu_model", "gpu_model"}, {"name", "name"}};
  spec.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record* existing) -> Result<Built> {
    auto o = parse_offer(body, app.catalog);
    if (!o) return o.error();
    // Past usage stays rated in the offer's currency: a different currency is a different offer.
    if (existing && existing->body.value("currency", "") != currency_code(o->currency))
      return Error::invalid("currency", Message("api.offers.currency_fixed").arg("currency", existing->body.value("currency", "")));
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
    // A commitment not yet started is priced from the sheet in force when it starts: a sheet that
    // drops its term's reserved price would leave it without one (and its tenant's invoices
    // unrated). Kept until the commitment has started (its sheet is then history).
    if (existing) {
      auto contracts = list_all(tx, "contracts", {{"supplier_id", sup->id}});
      if (!contracts) return contracts.error();
      const TimeMs now = app.clock.now();
      for (const Record& k : *contracts) {
        auto c = decode_record(k, decode_contract, "an offer's new sheet cannot be checked against it");
        if (!c) return c.error();
        for (const auto& m : c->commitments) {
          if (m.market() || m.starts_at <= now) continue;
          if (m.offer != o->name && m.offer != existing->id && m.offer != existing->name) continue;
          const auto& price = m.term_months == 1    ? o->prices.reserved_1m
                              : m.term_months == 12 ? o->prices.reserved_12m
                                                    : o->prices.reserved_36m;
          if (price) continue;
          const std::string field = "prices.reserved_" + std::to_string(m.term_months) + "m";
          return error_with_field(Code::kConflict,
                                  Message("api.offers.reserved_price_in_use")
                                      .arg("contract", k.name)
                                      .arg("commitment", m.name)
                                      .arg("at", format_rfc3339(m.starts_at))
                                      .arg("field", field),
                                  field, Message("api.offers.reserved_price_needed"));
        }
      }
    }
    json out = to_json(*o);
    // A new price sheet: the one it replaces is kept, in force until now (price history).
    if (existing && pricing_differs(existing->body, out))
      if (auto s = keep_offer_version(tx, *existing, p.user_id, app.clock.now()); !s) return s.error();
    return Built{std::move(out), index_of(*o)};
  };
  // Billed usage, contracts and kept images, artifacts and volumes name the offer: its sheets must stay readable.
  spec.on_delete = [](const Principal&, const Record& r, StoreTx& tx) -> Status {
    // Locked first: a run starting under it (allocation_ledger.cc, perhaps on another server)
    // waits and then finds it gone, or has committed its allocation, which is counted below.
    if (auto locked = tx.get_locked("offers", r.id); !locked) return locked.error();
    for (const char* kind : {"allocations", "contracts", "image_storage", "artifact_storage", "volume_storage"}) {
      auto recs = list_all(tx, kind, {{"supplier_id", r.supplier_id}});
      if (!recs) return recs.error();
      int64_t n = 0;
      for (const Record& x : *recs) {
        const json& ids = x.body.contains("offer_ids") ? x.body["offer_ids"] : json::array();
        if (x.body.value("offer_id", "") == r.id || (ids.is_array() && std::find(ids.begin(), ids.end(), json(r.id)) != ids.end()))
          ++n;
      }
      if (n > 0)
        return Error::make(Code::kConflict, Message("api.offers.in_use")
                                                .arg("offer", r.name)
                                                .arg("n", std::to_string(n))
                                                .arg("kind", kind));
    }
    return ok_status();
  };
  register_crud(app, srv, spec);
  item_route(app, srv, "GET", "offers", "history", offer_history);

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
    auto found = resolve_ref(tx, "offers", ref->get<std::string>(), {}, "offer");
    if (!found) return found.error();
    // Locked: another server's spot price for this offer waits, then sees this one (one timeline).
    auto rec = tx.get_locked("offers", found->id);
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
    // One timeline per offer: each price starts after the latest one, read from the offer's
    // timeline record (services/spot_timeline.h), not its whole history.
    auto line = spot_timeline(tx, rec->id);
    if (!line) return line.error();
    if (!line->empty() && line->front().from >= e->from)
      return Error::invalid("from",
                            Message("api.spot_prices.not_after").arg("latest", format_rfc3339(line->front().from)));
    if (e->from > now && std::count_if(line->begin(), line->end(), [&](const SpotPoint& q) { return q.from > now; }) >=
                             static_cast<std::ptrdiff_t>(kMaxPendingSpotPrices))
      return Error::invalid(
          "from", Message("api.spot_prices.too_many_pending").arg("max", std::to_string(kMaxPendingSpotPrices)));
    if (auto s = note_spot_price(tx, rec->id, {e->from, e->price.micros()}, now); !s) return s.error();
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
