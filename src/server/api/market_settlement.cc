// Settlement of market trades into reservations and contract commitments, and the supplier's
// default (docs/market.md#settlement, #defaults). See market_settlement.h.
#include "server/api/market_settlement.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "model/contract.h"
#include "model/node.h"
#include "model/offer.h"
#include "model/reservation.h"
#include "server/api/market_books.h"
#include "server/http/http_util.h"
#include "server/services/allocation_ledger.h"
#include "server/services/issued_invoices.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

bool settlement_overlaps(TimeMs a0, TimeMs a1, TimeMs b0, TimeMs b1) { return a0 < b1 && b0 < a1; }

// Every stored reservation, decoded (by id).
using Holds = std::vector<std::pair<std::string, Reservation>>;
Result<Holds> all_reservations(StoreTx& tx) {
  auto all = list_all(tx, "reservations");
  if (!all) return all.error();
  Holds out;
  out.reserve(all->size());
  for (const Record& r : *all) {
    auto res = decode_record(r, decode_reservation, "no market trade can be settled without it");
    if (!res) return res.error();
    out.emplace_back(r.id, std::move(*res));
  }
  return out;
}

// Node ids held by reservations whose windows overlap [from, to) — of `read` when given (read once
// for many questions), else of the store; with `change`, as if it were written.
Result<std::set<std::string>> reserved_nodes(StoreTx& tx, TimeMs from, TimeMs to, const ReservationChange* change,
                                             const Holds* read = nullptr) {
  Holds here;
  if (!read) {
    auto all = all_reservations(tx);
    if (!all) return all.error();
    here = std::move(*all);
    read = &here;
  }
  std::set<std::string> out;
  for (const auto& [id, res] : *read) {
    if (change && id == change->replacing_id) continue;
    if (settlement_overlaps(res.starts_at, res.ends_at, from, to)) out.insert(res.node_ids.begin(), res.node_ids.end());
  }
  if (change && settlement_overlaps(change->starts_at, change->ends_at, from, to))
    out.insert(change->node_ids.begin(), change->node_ids.end());
  return out;
}

// The seller's available nodes of the book that `offer` sells and no reservation holds then (with
// `out_of_service_too`, also those unavailable or drained).
Result<std::vector<FreeNode>> free_nodes(StoreTx& tx, const std::string& supplier_id, const MarketBook& k,
                                         const Record& offer, const ReservationChange* change = nullptr,
                                         const Holds* read = nullptr, bool out_of_service_too = false) {
  auto reach = stored_offer_reach(offer.body);
  if (!reach) return reach.error();
  auto held = reserved_nodes(tx, k.starts_at, k.ends_at, change, read);
  if (!held) return held.error();
  auto nodes = list_all(tx, "nodes", {{"supplier_id", supplier_id}, {"gpu_model", k.gpu_model}, {"region", k.region}});
  if (!nodes) return nodes.error();
  std::vector<FreeNode> out;
  for (Record& n : *nodes) {
    if ((!out_of_service_too && n.body.value("state", "available") != "available") || held->count(n.id)) continue;
    if (!n.body.contains("gpus") || !n.body["gpus"].is_array() || n.body["gpus"].empty()) continue;
    auto site = stored_node_site(n.body);
    if (!site || !offer_sells(*reach, n, *site)) continue;
    const auto gpus = static_cast<int64_t>(n.body["gpus"].size());
    out.push_back({std::move(n), gpus});
  }
  return out;
}

}  // namespace

std::vector<const FreeNode*> pick_nodes(const std::vector<FreeNode>& free, int64_t want, int64_t node_gpus,
                                        size_t max_nodes) {
  std::vector<const FreeNode*> left;
  for (const auto& n : free)
    if (node_gpus == 0 || n.gpus == node_gpus) left.push_back(&n);
  std::sort(left.begin(), left.end(), [](auto* a, auto* b) { return std::tie(a->gpus, a->node.id) < std::tie(b->gpus, b->node.id); });
  std::vector<const FreeNode*> out;
  // `left` is in size order: the smallest node holding `want` is a binary search away, and taking
  // it ends the loop; otherwise the largest goes, from the back (no pass over thousands of nodes
  // per pick).
  while (want > 0 && !left.empty() && out.size() < max_nodes) {
    auto it = std::lower_bound(left.begin(), left.end(), want, [](auto* n, int64_t w) { return n->gpus < w; });
    if (it == left.end()) it = std::prev(left.end());
    out.push_back(*it);
    want -= (*it)->gpus;
    left.erase(it);
  }
  return out;
}

namespace {

Principal system_of(const Principal& who) { return {who.user_id, who.token_id, Role::kOperatorAdmin, "", ""}; }

std::string slug_of(const std::string& id) {
  std::string s = id;
  std::replace(s.begin(), s.end(), '_', '-');
  return s;
}

// Writes `c` over the stored contract `cur` through the contracts resource's own checks.
Status store_contract(App& app, const Record& cur, const Contract& c, const Principal& op, const std::string& detail,
                      StoreTx& tx) {
  auto built = app.kinds.at("contracts").build(to_json(c), op, tx, &cur);
  if (!built) return built.error();
  Record r = cur;
  r.body = std::move(built->body);
  return store_change(tx, cur, r, op, "settle", detail, app.clock.now());
}

// The buyer's contract with the seller that will bill its runs on `offer` through the window (the
// first in force from the window's start to its end naming it, in the book's currency), and the
// reference by which that contract names the offer.
Result<std::pair<std::optional<Record>, std::string>> contract_for(StoreTx& tx, const Record& trade, const MarketBook& k,
                                                                   const Record& offer) {
  auto all = list_all(tx, "contracts", {{"tenant_id", trade.tenant_id}, {"supplier_id", trade.supplier_id}});
  if (!all) return all.error();
  for (const Record& r : *all) {
    auto c = decode_record(r, decode_contract, "no market trade of its tenant can be settled without it");
    if (!c) return c.error();
    if (c->currency != k.currency || c->starts_at > k.starts_at) continue;
    auto exit = contract_exit(tx, *c);  // effective: where billing cuts its commitments
    if (!exit) return exit.error();
    if (*exit && **exit < k.ends_at) continue;
    if (c->commitments.size() >= kMaxContractCommitments) continue;  // full: the trade opens a new market contract
    for (size_t i = 0; i < c->offer_ids.size() && i < c->offers.size(); ++i)
      if (c->offer_ids[i] == offer.id) return std::make_pair(std::optional<Record>(r), c->offers[i]);
  }
  return std::make_pair(std::optional<Record>(), offer.id);
}

// A name for a new market contract, unique within the tenant: market-<supplier>-<currency>[-n].
Result<std::string> new_contract_name(StoreTx& tx, const std::string& tenant_id, const std::string& supplier_name,
                                      Currency cur) {
  std::string base = supplier_name.substr(0, 40);
  while (!base.empty() && base.back() == '-') base.pop_back();
  std::string cur_code = currency_code(cur);
  std::transform(cur_code.begin(), cur_code.end(), cur_code.begin(), [](unsigned char ch) { return std::tolower(ch); });
  base = "market-" + base + "-" + cur_code;
  for (int n = 1;; ++n) {
    const std::string name = n == 1 ? base : base + "-" + std::to_string(n);
    auto same = tx.count("contracts", {{"tenant_id", tenant_id}, {"name", name}});
    if (!same) return same.error();
    if (*same == 0) return name;
  }
}

json default_json(const CommitmentDefault& d) {
  json j = {{"gpus", d.gpus}, {"from", format_rfc3339(d.from)}, {"to", format_rfc3339(d.to)}};
  if (!d.reason.empty()) j["reason"] = d.reason;
  return j;
}

// A tenant's holdings in a node book: per settled trade it bought with the same model, region,
// window, currency and node size, the nodes of that size its reservation still holds (resold
// nodes leave it), oldest trade first.
struct Held {
  Record trade;
  std::vector<std::string> nodes;  // node ids
  int64_t resale_slots = 0;        // resales its commitment may still take (each resale trade one)
};
Result<std::vector<Held>> held_nodes(StoreTx& tx, const std::string& tenant_id, const std::string& supplier_id,
                                     const MarketBook& k, TimeMs now) {
  auto trades = list_all(tx, "market-trades", {{"tenant_id", tenant_id}, {"gpu_model", k.gpu_model}, {"region", k.region}});
  if (!trades) return trades.error();
  std::sort(trades->begin(), trades->end(), [](const Record& a, const Record& b) {
    return std::tie(a.created_at, a.id) < std::tie(b.created_at, b.id);
  });
  std::vector<Held> out;
  for (Record& t : *trades) {
    if (!supplier_id.empty() && t.supplier_id != supplier_id) continue;
    const int64_t bought_in = t.body.value("node_gpus", int64_t{0});
    if (t.body.value("starts_at", "") != format_rfc3339(k.starts_at) || t.body.value("ends_at", "") != format_rfc3339(k.ends_at) ||
        t.body.value("currency", "") != currency_code(k.currency) || (bought_in != 0 && bought_in != k.node_gpus))
      continue;
    const json& st = t.body.value("settlement", json::object());
    if (!st.value("reservation_id", json()).is_string()) continue;
    // A trade the seller does not deliver in full now or later (a default still open: a node out of
    // service, the seller's own) resells nothing: its buyer would pay for what is not there while
    // the reseller kept the compensation.
    bool withheld = false;
    for (const auto& d : st.value("defaults", json::array())) {
      auto to = parse_rfc3339(d.value("to", ""), "to");
      if (!to || *to > now) withheld = true;
    }
    if (withheld) continue;
    auto r = tx.get("reservations", st["reservation_id"].get<std::string>());
    if (!r) {
      if (r.error().code == Code::kNotFound) continue;
      return r.error();
    }
    // A reservation cut short (a default released it) no longer holds the window.
    if (r->body.value("ends_at", "") != format_rfc3339(k.ends_at)) continue;
    // A commitment holds at most kMaxCommitmentResales resales (a contract with more does not
    // decode): a purchase resold in that many pieces resells nothing more, rather than fail the
    // buyer's trade when it settles.
    int64_t slots = static_cast<int64_t>(kMaxCommitmentResales);
    if (auto c = tx.get("contracts", st.value("contract_id", "")); !c && c.error().code != Code::kNotFound) {
      return c.error();
    } else if (c) {
      for (const json& m : c->body.value("commitments", json::array()))  // each takes one per resale
        if (m.is_object() && m.value("trade", "") == t.id)
          slots = std::min(slots, static_cast<int64_t>(kMaxCommitmentResales) -
                                      static_cast<int64_t>(m.value("resales", json::array()).size()));
    }
    if (slots <= 0) continue;
    // Bought in a book of GPUs: resold only when it bought its nodes whole (a part-node trade holds
    // a whole node it did not wholly buy), and only its nodes of this size.
    std::map<std::string, int64_t> size;
    int64_t held_gpus = 0;
    for (const auto& id : st.value("node_ids", json::array())) {
      auto n = tx.get("nodes", id.get<std::string>());
      if (!n && n.error().code != Code::kNotFound) return n.error();
      const int64_t g = n && n->body.contains("gpus") && n->body["gpus"].is_array() ? static_cast<int64_t>(n->body["gpus"].size()) : 0;
      size[id.get<std::string>()] = g;  // a node since removed holds nothing
      held_gpus += g;
    }
    if (bought_in == 0 && held_gpus != t.body.value("gpus", int64_t{0})) continue;
    Held h{std::move(t), {}, slots};
    for (const auto& id : r->body.value("node_ids", json::array()))
      if (auto it = size.find(id.get<std::string>()); it != size.end() && it->second == k.node_gpus)
        h.nodes.push_back(id.get<std::string>());
    if (!h.nodes.empty()) out.push_back(std::move(h));
  }
  return out;
}

// Moves `count` held nodes of a reseller to trade `t`'s buyer: out of the reseller's reservations
// (deleted when empty), into `taken`; each source trade's commitment gets a resale of what it gave
// at the resale price over the window, and its settlement lists the nodes resold.
Status take_resold_nodes(App& app, const Record& t, const MarketBook& k, int64_t count, const Principal& op, StoreTx& tx,
                         std::vector<std::pair<std::string, std::string>>& taken) {
  const std::string reseller = t.body.at("reseller_tenant_id").get<std::string>();
  auto held = held_nodes(tx, reseller, t.supplier_id, k, app.clock.now());
  if (!held) return held.error();
  const TimeMs now = app.clock.now();
  auto price = Money::parse(t.body.at("price_per_gpu_hour").get<std::string>(), k.currency);
  if (!price) return price.error();
  for (Held& h : *held) {
    if (static_cast<int64_t>(taken.size()) >= count) break;
    const json& st = h.trade.body.at("settlement");
    auto rrec = tx.get("reservations", st.at("reservation_id").get<std::string>());
    if (!rrec) return rrec.error();
    std::vector<std::string> keep, moved;
    for (const auto& id : h.nodes)
      if (static_cast<int64_t>(taken.size() + moved.size()) < count) moved.push_back(id);
    if (moved.empty()) continue;
    // The reservation keeps every node not resold, of this book's size or not (h.nodes holds
    // only the nodes of this size).
    for (const auto& id : rrec->body.value("node_ids", json::array()))
      if (std::find(moved.begin(), moved.end(), id.get<std::string>()) == moved.end())
        keep.push_back(id.get<std::string>());
    for (const auto& id : moved) {
      auto n = tx.get("nodes", id);
      taken.push_back({id, n ? n->name : id});
    }
    if (keep.empty()) {
      if (auto s = tx.remove("reservations", rrec->id); !s) return s;
      if (auto s = tx.append_audit({now, op.user_id, "resale", "reservations", rrec->id, t.id}); !s) return s;
    } else {
      Record nr = *rrec;
      nr.body["node_ids"] = keep;
      nr.body["nodes"] = keep;
      if (auto s = store_change(tx, *rrec, nr, op, "resale", t.id, now); !s) return s;
    }
    // The reseller's commitment: these GPUs no longer cover its runs; their proceeds are its.
    auto crec = tx.get("contracts", st.at("contract_id").get<std::string>());
    if (!crec) return crec.error();
    auto c = decode_record(*crec, decode_contract, "a resale cannot be recorded in it");
    if (!c) return c.error();
    for (auto& m : c->commitments)
      if (m.trade == h.trade.id)
        m.resales.push_back({static_cast<int64_t>(moved.size()) * k.node_gpus, k.starts_at, k.ends_at, *price, t.id});
    if (auto s = store_contract(app, *crec, *c, op, t.id, tx); !s) return s;
    Record tr = h.trade;
    for (const auto& id : moved) tr.body["settlement"]["resold_node_ids"].push_back(id);
    if (auto s = store_change(tx, h.trade, tr, op, "resale", t.id, now); !s) return s;
  }
  return ok_status();
}

// One trade: its reservation, its commitment, its settlement.
Status settle_one(App& app, Record& t, const MarketBook& k, const Principal& who, StoreTx& tx) {
  const Principal op = system_of(who);
  const TimeMs now = app.clock.now();
  auto offer = market_offer(tx, t.supplier_id, k);
  if (!offer) return offer.error();
  const int64_t gpus = t.body.at("gpus").get<int64_t>();
  int64_t delivered = 0;
  json nodes = json::array(), node_names = json::array();
  const bool resale = t.body.contains("reseller_tenant_id");
  if (resale) {  // the reseller's held nodes (a node book: whole nodes)
    std::vector<std::pair<std::string, std::string>> taken;
    if (auto s = take_resold_nodes(app, t, k, gpus / std::max<int64_t>(k.node_gpus, 1), op, tx, taken); !s) return s;
    for (const auto& [id, name] : taken) nodes.push_back(id), node_names.push_back(name), delivered += k.node_gpus;
  } else {
    auto free = free_nodes(tx, t.supplier_id, k, *offer);
    if (!free) return free.error();
    for (const FreeNode* n : pick_nodes(*free, gpus, k.node_gpus)) {
      delivered += n->gpus;
      nodes.push_back(n->node.id);
      node_names.push_back(n->node.name);
    }
  }
  delivered = std::min(delivered, gpus);
  const std::string price = t.body.at("price_per_gpu_hour").get<std::string>();
  json settlement = {{"offer_id", offer->id}, {"offer", offer->name}, {"nodes", node_names}, {"node_ids", nodes},
                     {"delivered_gpus", delivered}, {"reservation_id", nullptr}, {"reservation", nullptr}};
  if (!nodes.empty()) {
    json body = {{"name", "market-" + slug_of(t.id)}, {"tenant", t.tenant_id}, {"nodes", nodes},
                 {"starts_at", format_rfc3339(k.starts_at)}, {"ends_at", format_rfc3339(k.ends_at)}, {"offer", offer->id},
                 {"note", "market trade " + t.id + ": " + std::to_string(gpus) + " GPU(s) at " + price + " per GPU-hour" +
                              (resale ? " (resold by tenant " + t.body["reseller_tenant_id"].get<std::string>() + ")" : "")}};
    KindSpec spec = app.kinds.at("reservations");  // without the open-sell check: these are the sell's nodes
    spec.build = [](const json& b, const Principal&, StoreTx& t, const Record* existing) {
      return build_reservation(b, t, existing, false);
    };
    auto r = create_in(app, spec, body, op, tx);
    if (!r) return r.error();
    settlement["reservation_id"] = r->id;
    settlement["reservation"] = r->name;
  }

  ContractCommitment cm;
  cm.name = "trade-" + slug_of(t.id);
  cm.gpus = gpus;
  cm.term_months = 0;
  cm.starts_at = k.starts_at;
  cm.ends_at = k.ends_at;
  auto money = Money::parse(price, k.currency);
  if (!money) return money.error();
  cm.price_per_gpu_hour = *money;
  cm.trade = t.id;
  if (delivered < gpus)
    cm.defaults.push_back({gpus - delivered, k.starts_at, k.ends_at,
                           "at settlement the seller had no deliverable node for " + std::to_string(gpus - delivered) +
                               " of the GPUs"});
  auto found = contract_for(tx, t, k, *offer);
  if (!found) return found.error();
  auto& [cur, offer_ref] = *found;
  cm.offer = offer_ref;
  if (cur) {
    auto c = decode_record(*cur, decode_contract, "no market trade of its tenant can be settled without it");
    if (!c) return c.error();
    c->commitments.push_back(cm);
    if (auto s = store_contract(app, *cur, *c, op, t.id, tx); !s) return s;
    settlement["contract_id"] = cur->id;
    settlement["contract"] = cur->name;
  } else {
    auto supplier = tx.get("suppliers", t.supplier_id);
    if (!supplier) return supplier.error();
    auto name = new_contract_name(tx, t.tenant_id, supplier->name, k.currency);
    if (!name) return name.error();
    Contract c;
    c.name = *name;
    c.tenant = t.tenant_id;
    c.supplier = t.supplier_id;
    c.offers = {offer->id};
    c.currency = k.currency;
    c.starts_at = std::min(now, k.starts_at);
    c.commitments = {cm};
    auto r = create_in(app, app.kinds.at("contracts"), to_json(c), op, tx);
    if (!r) return r.error();
    settlement["contract_id"] = r->id;
    settlement["contract"] = r->name;
  }
  settlement["commitment"] = cm.name;
  json defaults = json::array();
  for (const auto& d : cm.defaults) defaults.push_back(default_json(d));
  settlement["defaults"] = std::move(defaults);
  t.state = delivered < gpus ? "defaulted" : "settled";
  settlement["state"] = t.body["state"] = t.state;
  t.body["settlement"] = std::move(settlement);
  return ok_status();
}

// POST /api/v1/market-trades/{id}/default {gpus?, from?, reason}: the seller (or an operator)
// records capacity of a settled trade it cannot deliver from `from` to the window's end.
void post_default(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto rec = find_visible(app.store, spec, p, req.matches[1]);
  if (!rec) return send_problem(res, rec.error(), req.path);
  if (!p.is_operator() && (p.role != Role::kSupplier || p.supplier_id != rec->supplier_id))
    return send_problem(res, forbidden(Message("api.market.default_forbidden").arg("role", role_name(p.role))), req.path);
  auto body = body_or_empty(req);
  if (!body) return send_problem(res, body.error(), req.path);
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    // The lane first (market_books.h): what the default releases is what a new sell may offer.
    if (auto lane = lock_market_lane(tx, rec->gpu_model, rec->region); !lane) return lane.error();
    auto cur = tx.get(spec.kind, rec->id);
    if (!cur) return cur.error();
    const json& s = cur->body.value("settlement", json());
    if (!s.is_object() || !s.contains("contract_id"))
      return Error::make(Code::kConflict, Message("api.market.not_settled").arg("trade", cur->id));
    // A resale's capacity is whole nodes someone resold: what is not delivered of it is a node out
    // of service, whose default also passes back to its resellers (market_node_defaults.h); a
    // count of GPUs recorded here could not say whose node it was.
    if (cur->body.contains("reseller_tenant_id"))
      return Error::make(Code::kConflict, Message("api.market.resale_default_by_node").arg("trade", cur->id));
    const TimeMs now = app.clock.now();
    const TimeMs start = parse_rfc3339(cur->body.at("starts_at").get<std::string>(), "starts_at").value();
    const TimeMs end = parse_rfc3339(cur->body.at("ends_at").get<std::string>(), "ends_at").value();
    const int64_t gpus_all = cur->body.at("gpus").get<int64_t>();
    FieldErrors errs;
    Fields f(*body, "", errs);
    CommitmentDefault d;
    d.from = f.opt_time("from").value_or(std::clamp(now, start, end));
    d.to = end;
    d.reason = f.str("reason", {.min_len = 1, .max_len = 1024});
    const std::optional<int64_t> asked = f.opt_integer("gpus", 1, gpus_all);
    f.finish();
    if (!errs.empty()) return errs.to_error();
    if (d.from < start || d.from >= end)
      return Error::invalid("from", Message("api.market.default_in_window").arg("from", format_rfc3339(start)).arg("to", format_rfc3339(end)));
    // Its credit would fall in a month whose invoices are issued (or due): none would carry it.
    auto billable = billable_from(tx, now, app.opts.firewall_interval_s > 0, app.opts.month_close_delay_h * kMsPerHour);
    if (!billable) return billable.error();
    if (d.from < *billable)
      return Error::invalid("from", Message("api.market.default_in_closed_month")
                                        .arg("month", format_rfc3339(d.from).substr(0, 7))
                                        .arg("from", format_rfc3339(*billable)));

    auto crec = tx.get("contracts", s.at("contract_id").get<std::string>());
    if (!crec) return crec.error();
    auto c = decode_record(*crec, decode_contract, "the trade's default cannot be recorded without it");
    if (!c) return c.error();
    auto cm = std::find_if(c->commitments.begin(), c->commitments.end(), [&](const auto& m) { return m.trade == cur->id; });
    if (cm == c->commitments.end())
      return Error::make(Code::kConflict, Message("api.market.commitment_gone").arg("trade", cur->id).arg("contract", crec->name));
    const int64_t left = cm->gpus - most_withheld_from(*cm, d.from);  // neither defaulted nor resold already
    d.gpus = asked.value_or(left);
    if (left <= 0 || d.gpus > left)
      return Error::invalid("gpus", Message("api.market.default_too_many").arg("gpus", std::to_string(d.gpus))
                                        .arg("left", std::to_string(std::max<int64_t>(left, 0))).arg("from", format_rfc3339(d.from)));
    // Its nodes are released only when nothing of it is delivered for good: a node out of service
    // (a default recorded for that node, ended when it is back) will deliver again.
    ContractCommitment lasting = *cm;
    std::erase_if(lasting.defaults, [](const CommitmentDefault& x) { return !x.node.empty(); });
    const bool none_left = d.gpus >= lasting.gpus - most_withheld_from(lasting, d.from);
    cm->defaults.push_back(d);
    const Principal op = system_of(p);
    if (auto s2 = store_contract(app, *crec, *c, op, cur->id, tx); !s2) return s2;

    Record t = *cur;
    // Nothing of it is delivered any more: its nodes are released from `from`.
    if (none_left && s.value("reservation_id", json()).is_string()) {
      auto rrec = tx.get("reservations", s["reservation_id"].get<std::string>());
      if (rrec) {
        auto r = decode_record(*rrec, decode_reservation, "the trade's default cannot be recorded without it");
        if (!r) return r.error();
        if (d.from <= r->starts_at) {
          if (auto s3 = tx.remove("reservations", rrec->id); !s3) return s3;
          if (auto s3 = tx.append_audit({now, p.user_id, "delete", "reservations", rrec->id, rrec->name}); !s3) return s3;
        } else if (d.from < r->ends_at) {
          Record nr = *rrec;
          nr.body["ends_at"] = format_rfc3339(d.from);
          if (auto s3 = store_change(tx, *rrec, nr, op, "default", cur->id, now); !s3) return s3;
        }
      } else if (rrec.error().code != Code::kNotFound) {
        return rrec.error();
      }
    }
    json dj = default_json(d);
    dj["at"] = format_rfc3339(now);
    dj["by"] = p.user_id;
    t.body["settlement"]["defaults"].push_back(std::move(dj));
    t.state = "defaulted";
    t.body["settlement"]["state"] = t.body["state"] = "defaulted";
    if (auto s4 = store_change(tx, *cur, t, p, "default", std::to_string(d.gpus) + " GPU(s)", now); !s4) return s4;
    out = std::move(t);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  send_json(res, 200, present(out));
}

}  // namespace

Result<Record> market_offer(StoreTx& tx, const std::string& supplier_id, const MarketBook& k) {
  auto offers = list_all(tx, "offers", {{"supplier_id", supplier_id}, {"gpu_model", k.gpu_model}, {"region", k.region}});
  if (!offers) return offers.error();
  std::sort(offers->begin(), offers->end(), [](const Record& a, const Record& b) { return a.id < b.id; });
  auto nodes = list_all(tx, "nodes", {{"supplier_id", supplier_id}, {"gpu_model", k.gpu_model}, {"region", k.region}});
  if (!nodes) return nodes.error();
  for (const Record& o : *offers) {
    if (o.body.value("currency", "") != currency_code(k.currency)) continue;
    auto reach = stored_offer_reach(o.body);
    if (!reach) continue;  // an offer that no longer decodes sells nothing
    for (const Record& n : *nodes) {
      auto site = stored_node_site(n.body);
      if (site && offer_sells(*reach, n, *site)) return o;
    }
  }
  return Error::invalid("currency", Message("api.market.no_offer")
                                        .arg("gpu_model", k.gpu_model)
                                        .arg("region", k.region)
                                        .arg("currency", currency_code(k.currency)));
}

namespace {

// deliverable_gpus before the floor at 0 (below 0: open sells the seller could not deliver), with
// `change` as if it were written.
Result<int64_t> sell_slack(StoreTx& tx, const std::string& supplier_id, const MarketBook& k,
                           const ReservationChange* change, const Holds* read = nullptr) {
  auto offer = market_offer(tx, supplier_id, k);
  if (!offer) return offer.error();
  auto free = free_nodes(tx, supplier_id, k, *offer, change, read);
  if (!free) return free.error();
  int64_t cap = 0, sized = 0;  // every free GPU; those of free nodes of the node book's size
  for (const auto& n : *free) {
    cap += n.gpus;
    if (n.gpus == k.node_gpus) sized += n.gpus;
  }
  auto orders =
      list_all(tx, "market-orders",
               {{"supplier_id", supplier_id}, {"gpu_model", k.gpu_model}, {"region", k.region}, {"state", "open"}});
  if (!orders) return orders.error();
  for (const Record& o : *orders) {
    auto s = parse_rfc3339(o.body.at("starts_at").get<std::string>(), "starts_at");
    auto e = parse_rfc3339(o.body.at("ends_at").get<std::string>(), "ends_at");
    if (!s || !e) return Error::make(Code::kInternal, "market order " + o.id + " does not decode");
    if (!settlement_overlaps(*s, *e, k.starts_at, k.ends_at)) continue;
    const int64_t open = o.body.at("remaining_gpus").get<int64_t>();
    cap -= open;
    if (k.node_gpus > 0 && o.body.value("node_gpus", int64_t{0}) == k.node_gpus) sized -= open;
  }
  if (k.node_gpus > 0) cap = std::min(cap, sized);
  return cap;
}

}  // namespace

Result<int64_t> deliverable_gpus(StoreTx& tx, const std::string& supplier_id, const MarketBook& k) {
  auto slack = sell_slack(tx, supplier_id, k, nullptr);
  if (!slack) return slack.error();
  return std::max<int64_t>(*slack, 0);
}

Result<std::optional<Record>> sell_left_short(StoreTx& tx, const ReservationChange& change,
                                              const std::vector<SellerLane>& sellers) {
  std::optional<Holds> holds;
  for (const SellerLane& lane : sellers) {
    const std::string& supplier_id = lane.supplier_id;
    auto orders = list_all(
        tx, "market-orders",
        {{"supplier_id", supplier_id}, {"gpu_model", lane.gpu_model}, {"region", lane.region}, {"state", "open"}});
    if (!orders) return orders.error();
    std::sort(orders->begin(), orders->end(), [](const Record& a, const Record& b) { return a.id < b.id; });
    std::set<std::tuple<TimeMs, TimeMs, std::string, int64_t>> seen;  // books already checked
    for (const Record& o : *orders) {
      if (o.body.value("side", "") != "sell") continue;
      auto s = parse_rfc3339(o.body.at("starts_at").get<std::string>(), "starts_at");
      auto e = parse_rfc3339(o.body.at("ends_at").get<std::string>(), "ends_at");
      auto cur = parse_currency(o.body.value("currency", ""));
      if (!s || !e || !cur) return Error::make(Code::kInternal, "market order " + o.id + " does not decode");
      if (!settlement_overlaps(*s, *e, change.starts_at, change.ends_at)) continue;
      MarketBook k{lane.gpu_model, lane.region, *s, *e, *cur, o.body.value("node_gpus", int64_t{0})};
      if (!seen.insert({k.starts_at, k.ends_at, o.body.value("currency", ""), k.node_gpus}).second) continue;
      if (!holds) {  // read once, for every book checked
        auto all = all_reservations(tx);
        if (!all) return all.error();
        holds = std::move(*all);
      }
      auto before = sell_slack(tx, supplier_id, k, nullptr, &*holds);
      if (!before && before.error().code == Code::kInvalid) continue;  // no offer sells there any more
      if (!before) return before.error();
      auto after = sell_slack(tx, supplier_id, k, &change, &*holds);
      if (!after) return after.error();
      if (*after < 0 && *after < *before) return std::optional<Record>(o);
    }
  }
  return std::optional<Record>();
}

Result<ResaleHolding> resalable_nodes(StoreTx& tx, const std::string& tenant_id, const std::string& supplier_id,
                                      const MarketBook& k, TimeMs now) {
  auto held = held_nodes(tx, tenant_id, supplier_id, k, now);
  if (!held) return held.error();
  std::map<std::string, int64_t> by_supplier;
  for (const Held& h : *held) by_supplier[h.trade.supplier_id] += static_cast<int64_t>(h.nodes.size());
  if (by_supplier.size() > 1)
    return Error::invalid("supplier", Message("api.market.resale_which_supplier").arg("count", std::to_string(by_supplier.size())));
  ResaleHolding out;
  if (by_supplier.empty()) return out;
  out.supplier_id = by_supplier.begin()->first;
  out.nodes = by_supplier.begin()->second;
  auto orders = list_all(tx, "market-orders", {{"tenant_id", tenant_id}, {"gpu_model", k.gpu_model}, {"region", k.region}, {"state", "open"}});
  if (!orders) return orders.error();
  for (const Record& o : *orders)
    if (o.body.value("side", "") == "sell" && o.body.value("resale_supplier_id", "") == out.supplier_id &&
        o.body.value("starts_at", "") == format_rfc3339(k.starts_at) && o.body.value("ends_at", "") == format_rfc3339(k.ends_at) &&
        o.body.value("node_gpus", int64_t{0}) == k.node_gpus && o.body.value("currency", "") == currency_code(k.currency))
      out.nodes -= o.body.value("remaining_gpus", int64_t{0}) / std::max<int64_t>(k.node_gpus, 1);
  out.nodes = std::max<int64_t>(out.nodes, 0);
  return out;
}

Result<std::optional<size_t>> first_undeliverable(StoreTx& tx, const std::vector<Record>& trades, const MarketBook& k,
                                                  TimeMs now, std::string* exhausted) {
  std::map<std::string, std::optional<std::vector<FreeNode>>> free;  // seller -> its free nodes (none: no offer)
  std::optional<Holds> holds;  // every reservation, read once for all the sellers
  // (reseller tenant, supplier) -> per purchase it holds of that supplier, oldest first (the order
  // take_resold_nodes takes them in), the nodes still unsold in this match and the resales its
  // commitment may still take: a tenant may resell nodes of several suppliers in one book.
  struct Left {
    int64_t nodes, slots;
  };
  std::map<std::pair<std::string, std::string>, std::vector<Left>> resale_left;
  std::map<std::string, bool> resale_offered;  // supplier -> whether it has an offer for the book
  for (size_t i = 0; i < trades.size(); ++i) {
    const Record& t = trades[i];
    if (t.body.contains("reseller_tenant_id")) {
      // A resale delivers the nodes its reseller holds now (a holding with a default still open
      // holds none: held_nodes), not what it held when its order was placed.
      // It is also billed under the supplier's offer for the book (settle_one): a supplier with
      // none any more makes it as undeliverable as a seller's own order.
      const std::string reseller = t.body.at("reseller_tenant_id").get<std::string>();
      auto offered = resale_offered.find(t.supplier_id);
      if (offered == resale_offered.end()) {
        auto offer = market_offer(tx, t.supplier_id, k);
        if (!offer && offer.error().code != Code::kInvalid) return offer.error();
        offered = resale_offered.emplace(t.supplier_id, offer.ok()).first;
      }
      if (!offered->second) return std::optional<size_t>(i);
      auto left = resale_left.find({reseller, t.supplier_id});
      if (left == resale_left.end()) {
        auto held = held_nodes(tx, reseller, t.supplier_id, k, now);
        if (!held) return held.error();
        std::vector<Left> per;
        for (const Held& h : *held) per.push_back({static_cast<int64_t>(h.nodes.size()), h.resale_slots});
        left = resale_left.emplace(std::make_pair(reseller, t.supplier_id), std::move(per)).first;
      }
      // As take_resold_nodes will: each purchase it takes nodes from gets one more resale; one
      // whose resales are full offers no more nodes.
      int64_t want = t.body.at("gpus").get<int64_t>() / std::max<int64_t>(k.node_gpus, 1);
      for (Left& p : left->second) {
        if (want == 0) break;
        if (p.nodes == 0 || p.slots == 0) continue;
        const int64_t took = std::min(p.nodes, want);
        want -= took, p.nodes -= took, --p.slots;
      }
      if (want > 0) return std::optional<size_t>(i);
      continue;
    }
    auto it = free.find(t.supplier_id);
    if (it == free.end()) {
      std::optional<std::vector<FreeNode>> nodes;
      auto offer = market_offer(tx, t.supplier_id, k);
      if (offer) {
        // A node out of service is the seller's default (settle_one); the nodes the market's own
        // trades took are not.
        if (!holds) {
          auto all = all_reservations(tx);
          if (!all) return all.error();
          holds = std::move(*all);
        }
        auto f = free_nodes(tx, t.supplier_id, k, *offer, nullptr, &*holds, true);
        if (!f) return f.error();
        nodes = std::move(*f);
      } else if (offer.error().code != Code::kInvalid) {
        return offer.error();
      }
      it = free.emplace(t.supplier_id, std::move(nodes)).first;
    }
    if (!it->second || it->second->empty()) {
      if (exhausted) *exhausted = t.supplier_id;
      return std::optional<size_t>(i);
    }
    const int64_t gpus = t.body.at("gpus").get<int64_t>();
    int64_t got = 0;
    std::set<std::string> taken;
    for (const FreeNode* n : pick_nodes(*it->second, gpus, k.node_gpus)) got += n->gpus, taken.insert(n->node.id);
    if (got < gpus) return std::optional<size_t>(i);
    std::erase_if(*it->second, [&](const FreeNode& n) { return taken.count(n.node.id) > 0; });
  }
  return std::optional<size_t>();
}

Status settle_trades(App& app, std::vector<Record>& trades, const MarketBook& k, const Principal& who, StoreTx& tx) {
  for (Record& t : trades)
    if (auto s = settle_one(app, t, k, who, tx); !s) return s;
  return ok_status();
}

void register_market_default_route(App& app, Router& srv) {
  item_route(app, srv, "POST", "market-trades", "default", post_default);
}

}  // namespace gpurent
