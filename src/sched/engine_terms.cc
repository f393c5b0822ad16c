// Terms of placement: which offers a job may run under on a node (contract-only offers, offers it
// names, its tenant's currency, reserved commitments, its price cap), where it may run (suppliers,
// regions, data sovereignty), what binds a gang together (one offer, one site), and the reason
// that names the term blocking a job. docs/scheduler.md#terms has the rules.
#include <algorithm>

#include "core/money.h"
#include "sched/engine_impl.h"

namespace gpurent {
namespace {

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

// A price in micro-units as canonical decimal text ("2.99", "0.125"); the currency is named beside it.
std::string decimal(int64_t micros) { return Money(micros, Currency::kUSD).amount_string(); }

}  // namespace

int SchedEngine::Impl::offer_slot(const std::string& id) {
  auto [it, added] = offer_ids.try_emplace(id, static_cast<int>(offers.size()));
  if (added) {
    offers.emplace_back();
    offers.back().spec.id = id;
  }
  return it->second;
}

Status SchedEngine::set_offer(const SchedOffer& offer) {
  Impl& e = *impl_;
  if (offer.id.empty()) return Error::invalid("offer.id", "must not be empty");
  EngineOffer& o = e.offers[e.offer_slot(offer.id)];
  if (o.known && o.spec == offer) return ok_status();
  o.spec = offer;
  o.known = true;
  e.contract_tenants.clear();
  for (const EngineOffer& x : e.offers)
    for (const auto& t : x.spec.contract_tenants) e.contract_tenants.insert(t);
  e.commercial = true;
  ++e.terms_version;
  ++e.epoch;  // a lower price or a new contract may let a waiting job start
  return ok_status();
}

Status SchedEngine::set_node_offers(const std::string& node, const std::vector<std::string>& offer_ids) {
  Impl& e = *impl_;
  auto it = e.node_index.find(node);
  if (it == e.node_index.end()) return Error::make(Code::kNotFound, Message("sched.node_unknown").arg("node", node));
  std::vector<int> slots;
  for (const auto& id : offer_ids) slots.push_back(e.offer_slot(id));
  EngineNode& n = e.nodes[it->second];
  if (n.offers == slots) return ok_status();
  n.offers = std::move(slots);
  n.spec.offers = offer_ids;
  ++e.terms_version;
  ++e.epoch;
  return ok_status();
}

int SchedEngine::Impl::tenant_slot(const std::string& tenant) {
  return tenant_ids.try_emplace(tenant, static_cast<int>(tenant_ids.size())).first->second;
}

int SchedEngine::Impl::supplier_slot(const std::string& name) {
  auto [it, added] = supplier_ids.try_emplace(name, static_cast<int>(supplier_names.size()));
  if (added) supplier_names.push_back(name);
  return it->second;
}

Status SchedEngine::set_procurement_split(const std::string& tenant, const std::map<std::string, int64_t>& split) {
  Impl& e = *impl_;
  int64_t sum = 0;
  for (const auto& [supplier, permille] : split) {
    if (supplier.empty()) return Error::invalid("procurement_split", Message("sched.split.supplier_empty"));
    if (permille < 1 || permille > 1000)
      return Error::invalid("procurement_split." + supplier, Message("sched.split.share_range"));
    sum += permille;
  }
  if (sum > 1000) return Error::invalid("procurement_split", Message("sched.split.sum").arg("sum", std::to_string(sum)));
  std::vector<std::pair<int, int64_t>> next;
  for (const auto& [supplier, permille] : split) next.push_back({e.supplier_slot(supplier), permille});
  auto it = e.splits.find(tenant);
  if (next.empty()) {
    if (it == e.splits.end()) return ok_status();
    e.splits.erase(it);
  } else {
    if (it != e.splits.end() && it->second == next) return ok_status();
    e.splits[tenant] = std::move(next);
  }
  ++e.epoch;  // steering changes where the tenant's next jobs go, not whether they fit
  return ok_status();
}

std::map<std::string, int64_t> SchedEngine::held_by_supplier(const std::string& tenant) const {
  const Impl& e = *impl_;
  std::map<std::string, int64_t> out;
  auto t = e.tenant_usage.find(tenant);
  if (t == e.tenant_usage.end()) return out;
  int64_t named = 0;
  for (const auto& [s, milli] : t->second.milli_by_supplier)
    if (milli > 0) out[e.supplier_names[s]] = milli, named += milli;
  if (t->second.gpu_milli > named) out[""] = t->second.gpu_milli - named;
  return out;
}

std::vector<int> SchedEngine::Impl::split_order(const SchedJob& j) const {
  auto sp = splits.find(j.tenant);
  if (sp == splits.end()) return {};
  const int64_t need = j.milli_per_replica();
  if (need <= 0) return {};
  int64_t total = need;
  const Usage* u = nullptr;
  if (auto t = tenant_usage.find(j.tenant); t != tenant_usage.end()) u = &t->second, total += t->second.gpu_milli;
  // What each supplier is owed: its target share of what the tenant will hold with this job, less
  // what it holds there now (GPU milli × 1000); those owed something, the most first, ties in the
  // split's order.
  std::vector<std::pair<int64_t, int>> room;  // (-room, position)
  for (size_t k = 0; k < sp->second.size(); ++k) {
    const auto& [s, target] = sp->second[k];
    int64_t held = 0;
    if (u)
      if (auto h = u->milli_by_supplier.find(s); h != u->milli_by_supplier.end()) held = h->second;
    const int64_t r = target * total - 1000 * held;
    if (r > 0) room.push_back({-r, static_cast<int>(k)});
  }
  std::stable_sort(room.begin(), room.end());
  std::vector<int> out;
  for (const auto& [r, k] : room) out.push_back(sp->second[k].first);
  return out;
}

bool SchedEngine::Impl::location_ok(const SchedJob& j, int i) const {
  const SchedNode& n = nodes[i].spec;
  const SchedTerms& t = j.terms;
  if (!t.suppliers.empty() && !has(t.suppliers, n.supplier)) return false;
  if (!t.regions.empty() && !has(t.regions, n.region)) return false;
  if (!t.places.empty() && !has(t.places, n.region) && !has(t.places, n.country)) return false;
  return true;
}

int64_t SchedEngine::Impl::price_of(const SchedJob& j, int oi) const {
  const SchedOffer& o = offers[oi].spec;
  return j.spot && o.spot ? *o.spot : o.on_demand;
}

bool SchedEngine::Impl::offer_ok(const SchedJob& j, int oi, int64_t need) const {
  const EngineOffer& eo = offers[oi];
  if (!eo.known) return false;
  const SchedOffer& o = eo.spec;
  const SchedTerms& t = j.terms;
  const bool under_contract = has(o.contract_tenants, j.tenant);
  if (o.contract_only && !under_contract) return false;
  if (!t.offers.empty() && !has(t.offers, o.id)) return false;
  // Another currency only when the tenant chose it: by naming the offer, or by a contract naming it.
  if (t.offers.empty() && !under_contract && !t.currency.empty() && o.currency != t.currency) return false;
  // Reserved mode: only under its tenant's contracts; beyond the commitments there only when the
  // contract lets reserved work overflow (billed on demand), else it waits for room inside them.
  if (j.reserved) {
    if (!under_contract) return false;
    if (has(o.overflow_waits, j.tenant)) {
      auto c = o.committed_milli.find(j.tenant);
      auto u = reserved_used.find({j.tenant, oi});
      const int64_t committed = c == o.committed_milli.end() ? 0 : c->second;
      if ((u == reserved_used.end() ? 0 : u->second) + need > committed) return false;
    }
  }
  if (t.max_price && !j.reserved && (o.currency != t.currency || price_of(j, oi) > *t.max_price)) return false;
  return true;
}

int SchedEngine::Impl::offer_on(const SchedJob& j, int i, std::optional<int> fixed) const {
  const EngineNode& n = nodes[i];
  // A node no offer sells bills nothing: within any price cap, but no offer can be named there
  // and no commitment covers it.
  const bool unpriced_ok = j.terms.offers.empty() && !j.reserved;
  const int64_t need = j.milli_per_replica();
  if (fixed) {
    if (*fixed == kUnpriced) return n.offers.empty() && unpriced_ok ? kUnpriced : kNoOffer;
    return has(n.spec.offers, offers[*fixed].spec.id) && offer_ok(j, *fixed, need) ? *fixed : kNoOffer;
  }
  if (n.offers.empty()) return unpriced_ok ? kUnpriced : kNoOffer;
  int best = kNoOffer;
  bool best_contract = false;
  for (int oi : n.offers) {
    if (!offer_ok(j, oi, need)) continue;
    const bool contract = has(offers[oi].spec.contract_tenants, j.tenant);
    const bool better = best == kNoOffer || (contract && !best_contract) ||
                        (contract == best_contract && offers[oi].spec.currency == offers[best].spec.currency &&
                         price_of(j, oi) < price_of(j, best));
    if (better) best = oi, best_contract = contract;
  }
  return best;
}

bool SchedEngine::Impl::under_contract(const SchedJob& j, int i) const {
  const int o = offer_on(j, i);
  return o >= 0 && has(offers[o].spec.contract_tenants, j.tenant);
}

bool SchedEngine::Impl::terms_ok_slow(const SchedJob& j, int i) const {
  return location_ok(j, i) && offer_on(j, i) != kNoOffer;
}

void SchedEngine::Impl::lock_to(const SchedJob& j, GangLock& lock, int i) const {
  if (!lock.offer_set) {
    lock.offer = commercial ? offer_on(j, i) : kUnpriced;
    lock.offer_set = true;
  }
  if (!lock.site_set && !j.terms.span_sites) {
    lock.site = nodes[i].site;
    lock.site_set = true;
  }
}

std::string SchedEngine::Impl::terms_key(const SchedJob& j) const {
  const SchedTerms& t = j.terms;
  std::string k = (j.reserved ? "r" : "") + std::string(t.span_sites ? "x" : "") + '\x1e' + t.currency + '\x1e' +
                  (t.max_price ? std::to_string(*t.max_price) : "") + '\x1e';
  for (const auto* v : {&t.regions, &t.suppliers, &t.offers, &t.places}) k += joined(*v) + '\x1e';
  return k;
}

Message SchedEngine::Impl::terms_block(const SchedJob& j, const std::vector<int>& models) const {
  if (!commercial && !j.terms.any() && !j.reserved) return {};
  // Each node matching the hardware fails at one stage (or passes them all); the job is blocked
  // by the stage at which the last of them dropped out.
  enum Stage { kSupplier, kRegion, kSovereignty, kOffer, kReserved, kPrice, kPass };
  const SchedTerms& t = j.terms;
  int furthest = -1;
  std::optional<int> cheapest;  // among offers failing only the price cap
  std::vector<std::string> currencies;
  bool named_any = false, contract_only = false, reserved_full = false;
  const int64_t need = j.milli_per_replica();
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    const int m = cluster.node(i).model_id;
    if (j.milli_per_worker() > 0 && (std::find(models.begin(), models.end(), m) == models.end() ||
                                     !node_matches_hardware(j, i, m)))
      continue;
    if (j.milli_per_worker() == 0 && !pinned_ok(j, i)) continue;
    const SchedNode& n = nodes[i].spec;
    int stage = kPass;
    if (!t.suppliers.empty() && !has(t.suppliers, n.supplier)) stage = kSupplier;
    else if (!t.regions.empty() && !has(t.regions, n.region)) stage = kRegion;
    else if (!t.places.empty() && !has(t.places, n.region) && !has(t.places, n.country)) stage = kSovereignty;
    else if (offer_on(j, i) == kNoOffer) {
      stage = kOffer;
      if (nodes[i].offers.empty()) stage = j.reserved ? kReserved : kOffer;  // named offers or reserved
      for (int oi : nodes[i].offers) {
        const EngineOffer& eo = offers[oi];
        if (!eo.known) continue;
        const SchedOffer& o = eo.spec;
        if (o.contract_only && !has(o.contract_tenants, j.tenant)) { contract_only = true; continue; }
        if (!t.offers.empty() && !has(t.offers, o.id)) continue;
        named_any = named_any || !t.offers.empty();
        if (t.offers.empty() && !has(o.contract_tenants, j.tenant) && !t.currency.empty() && o.currency != t.currency) {
          if (!has(currencies, o.currency)) currencies.push_back(o.currency);
          continue;
        }
        if (j.reserved && !offer_ok(j, oi, need)) {
          stage = std::max<int>(stage, kReserved);
          reserved_full = reserved_full || has(o.contract_tenants, j.tenant);
          continue;
        }
        stage = std::max<int>(stage, kPrice);
        if (o.currency == t.currency && (!cheapest || price_of(j, oi) < price_of(j, *cheapest))) cheapest = oi;
      }
    }
    furthest = std::max(furthest, stage);
  }
  if (furthest < 0 || furthest == kPass) return {};
  switch (furthest) {
    case kSupplier: return Message("sched.terms.suppliers").arg("suppliers", joined(t.suppliers));
    case kRegion: return Message("sched.terms.regions").arg("regions", joined(t.regions));
    case kSovereignty: return Message("sched.terms.sovereignty").arg("places", joined(t.places));
    case kOffer:
      if (!t.offers.empty() && !named_any) return Message("sched.terms.named_offers");
      if (!currencies.empty())
        return Message("sched.terms.currency").arg("currency", t.currency).arg("currencies", joined(currencies));
      if (contract_only) return Message("sched.terms.contract_only");
      return Message("sched.terms.no_offer");
    case kReserved: return Message(reserved_full ? "sched.terms.reserved_full" : "sched.terms.reserved");
    default: break;
  }
  if (!t.max_price || !cheapest) return Message("sched.terms.no_offer");
  return Message(j.spot ? "sched.terms.price_spot" : "sched.terms.price")
      .arg("cap", decimal(*t.max_price) + " " + t.currency)
      .arg("price", decimal(price_of(j, *cheapest)) + " " + t.currency)
      .arg("offer", offers[*cheapest].spec.name.empty() ? offers[*cheapest].spec.id : offers[*cheapest].spec.name);
}

}  // namespace gpurent
