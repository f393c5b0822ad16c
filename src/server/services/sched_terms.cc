#include "server/services/sched_terms.h"

#include <algorithm>

#include "billing/rating_input.h"
#include "model/contract.h"
#include "model/node.h"
#include "model/offer.h"
#include "model/supplier.h"
#include "model/tenant.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"
#include "server/services/spot_timeline.h"

namespace gpurent {
namespace {

void add_once(std::vector<std::string>& v, const std::string& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// GPUs of a market commitment its supplier is not delivering at t (docs/market.md#defaults).
int64_t defaulted_at(const ContractCommitment& c, TimeMs t) {
  int64_t n = 0;
  for (const auto& d : c.defaults)
    if (d.from <= t && t < d.to) n += d.gpus;
  return std::min(n, c.gpus);
}

}  // namespace

Result<PlacementTerms> read_placement_terms(StoreTx& tx, const GpuCatalog& catalog, TimeMs now) {
  PlacementTerms t;
  auto tenants = list_all(tx, "tenants");
  if (!tenants) return tenants.error();
  for (const Record& r : *tenants) {
    auto c = decode_record(r, stored_tenant_currency, "its jobs cannot be placed by its terms");
    if (c) t.tenant_currency[r.id] = currency_code(*c);
    if (r.body.is_object() && r.body.contains("procurement_split"))
      if (auto full = decode_record(r, parse_tenant, "its jobs are placed without its procurement split"))
        for (const ProcurementShare& s : full->procurement_split) t.tenant_split[r.id][s.supplier] = s.share_permille;
  }

  // Offers, their spot prices in force now.
  auto offer_recs = list_all(tx, "offers");
  if (!offer_recs) return offer_recs.error();
  std::map<std::string, Offer> offers;      // id -> decoded
  std::map<std::string, size_t> index;      // id -> t.offers index
  for (const Record& r : *offer_recs) {
    auto o = decode_record(r, [&](const json& b) { return parse_offer(b, catalog); }, "no new job is placed under it");
    if (!o) continue;
    SchedOffer so;
    so.id = r.id;
    so.name = r.name;
    so.currency = currency_code(o->currency);
    so.on_demand = o->prices.on_demand.micros();
    if (o->prices.spot) so.spot = o->prices.spot->micros();
    so.contract_only = o->contract_only;
    index[r.id] = t.offers.size();
    t.offers.push_back(std::move(so));
    o->supplier_id = r.supplier_id;
    offers.emplace(r.id, std::move(*o));
  }
  // Each offer's spot price in force, from its timeline record (not every price ever recorded).
  auto spots = spot_prices_in_force(tx, now);
  if (!spots) return spots.error();
  for (const auto& [offer_id, price] : *spots)
    if (auto it = index.find(offer_id); it != index.end()) t.offers[it->second].spot = price;

  // Contracts in force: who may buy under which offer, their commitments, sovereignty.
  auto contracts = list_all(tx, "contracts");
  if (!contracts) return contracts.error();
  for (const Record& r : *contracts) {
    auto k = decode_record(r, decode_contract, "its tenant's jobs are placed without it");
    if (!k) continue;
    auto in_force = contract_in_force(tx, *k, now);
    if (!in_force) return in_force.error();
    if (!*in_force) continue;
    for (const std::string& oid : k->offer_ids) {
      auto it = index.find(oid);
      if (it == index.end()) continue;
      SchedOffer& so = t.offers[it->second];
      add_once(so.contract_tenants, r.tenant_id);
      if (k->reserved_overflow == ReservedOverflow::kWait) add_once(so.overflow_waits, r.tenant_id);
    }
    for (const ContractCommitment& c : k->commitments) {
      if (c.starts_at > now) continue;
      if (now >= (c.market() ? *c.ends_at : add_months(c.starts_at, c.term_months))) continue;
      for (size_t i = 0; i < k->offers.size() && i < k->offer_ids.size(); ++i)
        if (k->offers[i] == c.offer || k->offer_ids[i] == c.offer)
          if (auto it = index.find(k->offer_ids[i]); it != index.end())
            t.offers[it->second].committed_milli[r.tenant_id] += (c.gpus - defaulted_at(c, now)) * 1000;
    }
    std::optional<std::string> place;
    if (k->clauses) place = k->clauses->data_sovereignty;
    else if (!k->offer_ids.empty())
      if (auto o = offers.find(k->offer_ids.front()); o != offers.end()) place = o->second.contract_template.data_sovereignty;
    if (place) add_once(t.tenant_places[r.tenant_id], *place);
  }

  // Nodes: which offers sell each, and its site's country.
  auto suppliers = list_all(tx, "suppliers");
  if (!suppliers) return suppliers.error();
  std::map<std::string, Supplier> sup;
  for (const Record& r : *suppliers) {
    auto s = decode_record(r, parse_supplier, "its nodes are placed as if their country were unknown");
    if (s) sup.emplace(r.id, std::move(*s));
  }
  auto nodes = list_all(tx, "nodes");
  if (!nodes) return nodes.error();
  for (const Record& n : *nodes) {
    auto site = stored_node_site(n.body);
    if (!site) continue;  // reported where the node is read for placement
    if (auto s = sup.find(n.supplier_id); s != sup.end()) {
      std::string country = s->second.country;
      for (const Site& st : s->second.sites)
        if (st.name == *site && st.country) country = *st.country;
      t.node_country[n.id] = country;
    }
    auto& sold = t.node_offers[n.id];
    for (const auto& [oid, o] : offers) {
      if (o.supplier_id != n.supplier_id) continue;
      const OfferReach reach{o.gpu_model, o.region, o.node_selector};
      if (offer_sells(reach, n, *site)) sold.push_back(oid);
    }
  }
  return t;
}

void apply_tenant_terms(const PlacementTerms& terms, SchedJob& job) {
  if (job.terms.currency.empty())
    if (auto c = terms.tenant_currency.find(job.tenant); c != terms.tenant_currency.end()) job.terms.currency = c->second;
  if (auto p = terms.tenant_places.find(job.tenant); p != terms.tenant_places.end()) job.terms.places = p->second;
}

}  // namespace gpurent
