// /api/v1/reservations: nodes held for a tenant over a time window (the capacity side of a reserved
// commitment). Operators write; the tenant's users read their own (the tenants row of the
// permission matrix). A node can be in only one reservation at a time: an overlapping window on a
// shared node is a 409 that names both, and so is taking nodes a supplier's open sell order on the
// market needs (docs/market.md#books-in-memory-several-servers). The scheduler applies active
// reservations every tick.
#include <algorithm>
#include <map>
#include <tuple>

#include "model/reservation.h"
#include "server/api/market_books.h"
#include "server/api/market_settlement.h"
#include "server/api/resources.h"
#include "server/services/record_faults.h"

namespace gpurent {

Result<Built> build_reservation(const json& body, StoreTx& tx, const Record* existing, bool check_open_sells) {
  auto r = parse_reservation(body);
  if (!r) return r.error();
  auto tenant = resolve_ref(tx, "tenants", r->tenant, {}, "tenant");
  if (!tenant) return tenant.error();
  r->tenant_id = tenant->id;
  std::map<std::string, std::pair<std::string, std::string>> lanes;  // its nodes' lanes: id -> (model, region)
  std::vector<SellerLane> sellers;                                   // its nodes' suppliers in those lanes
  for (size_t i = 0; i < r->nodes.size(); ++i) {
    auto n = resolve_ref(tx, "nodes", r->nodes[i], {}, "nodes[" + std::to_string(i) + "]");
    if (!n) return n.error();
    if (std::find(r->node_ids.begin(), r->node_ids.end(), n->id) != r->node_ids.end())
      return Error::invalid("nodes[" + std::to_string(i) + "]", Message("api.reservations.node_repeated"));
    r->node_ids.push_back(n->id);
    lanes[market_lane_id(n->gpu_model, n->region)] = {n->gpu_model, n->region};
    SellerLane sl{n->body.value("supplier_id", ""), n->gpu_model, n->region};
    if (std::none_of(sellers.begin(), sellers.end(), [&](const SellerLane& x) {
          return std::tie(x.supplier_id, x.gpu_model, x.region) == std::tie(sl.supplier_id, sl.gpu_model, sl.region);
        }))
      sellers.push_back(std::move(sl));
  }
  if (r->offer) {
    auto o = resolve_ref(tx, "offers", *r->offer, {}, "offer");
    if (!o) return o.error();
    r->offer_id = o->id;
  }
  // One reservation per node at a time. Market trades reserve nodes too, each inside its lane
  // (GPU model, region) locked (market_books.h): this check takes its nodes' lanes first, in the
  // lanes' order, so with several servers on one database two writes that would hold one node
  // at once run one after the other and the second sees the first.
  for (const auto& [_, lane] : lanes)
    if (auto l = lock_market_lane(tx, lane.first, lane.second); !l) return l.error();
  ListQuery q{"reservations", {}, "", 1000};
  for (;;) {
    auto page = tx.list(q);
    if (!page) return page.error();
    for (const Record& other : page->items) {
      if (existing && other.id == existing->id) continue;
      auto o = decode_record(other, decode_reservation, "no reservation can be checked against it");
      if (!o) return o.error();
      const TimeMs os = o->starts_at, oe = o->ends_at;
      if (!(os < r->ends_at && r->starts_at < oe)) continue;
      for (const auto& id : o->node_ids)
        if (std::find(r->node_ids.begin(), r->node_ids.end(), id) != r->node_ids.end())
          return Error::make(Code::kConflict, Message("api.reservations.node_taken")
                                                  .arg("node", id)
                                                  .arg("reservation", other.name)
                                                  .arg("from", format_rfc3339(os))
                                                  .arg("to", format_rfc3339(oe)));
    }
    if (page->next_after.empty()) break;
    q.after_id = page->next_after;
  }
  // Nor may it take nodes a supplier has offered on the market: a sell it could then no longer
  // deliver would be a default at settlement. The operator cancels the order first (or reserves
  // other nodes).
  if (!check_open_sells) return Built{to_json(*r), index_of(*r)};
  auto short_sell = sell_left_short(tx, {existing ? existing->id : "", r->node_ids, r->starts_at, r->ends_at}, sellers);
  if (!short_sell) return short_sell.error();
  if (*short_sell) {
    const json& o = (*short_sell)->body;
    return Error::make(Code::kConflict, Message("api.reservations.sell_short")
                                            .arg("order", (*short_sell)->id)
                                            .arg("gpus", std::to_string(o.value("remaining_gpus", int64_t{0})))
                                            .arg("from", o.value("starts_at", ""))
                                            .arg("to", o.value("ends_at", "")));
  }
  return Built{to_json(*r), index_of(*r)};
}

void register_reservation_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "reservations";
  spec.id_prefix = "rsv";
  spec.object_kind = ObjectKind::kTenant;
  spec.filters = {{"tenant", "tenant_id"}, {"name", "name"}};
  spec.build = [](const json& body, const Principal&, StoreTx& tx, const Record* existing) {
    return build_reservation(body, tx, existing, true);
  };
  register_crud(app, srv, spec);
}

}  // namespace gpurent
