// Market defaults from node failures (market_node_defaults.h).
#include "server/services/market_node_defaults.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "model/contract.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

constexpr const char* kActor = "gpurent-scheduler";

Status write(StoreTx& tx, Record next, TimeMs now, const std::string& detail) {
  next.updated_at = now;
  if (auto s = tx.update(next); !s) return s;
  return tx.append_audit({now, kActor, "default", next.kind, next.id, detail});
}

bool lists(const json& settlement, const char* key, const std::string& node_id) {
  const json& ids = settlement.value(key, json::array());
  return std::find(ids.begin(), ids.end(), node_id) != ids.end();
}

// The trades of the node's supplier, model and region that ever held the node: `holding` those
// whose settlement holds it now, `resold` those that resold it since (each the seller of a resale
// trade that took it), and `by_id` all of them.
struct NodeTrades {
  std::vector<Record> holding, resold;
  std::map<std::string, const Record*> by_id;
  std::vector<Record> all;
};
Result<std::unique_ptr<NodeTrades>> trades_of(StoreTx& tx, const Record& node) {
  auto all = list_all(tx, "market-trades", {{"supplier_id", node.supplier_id}, {"gpu_model", node.gpu_model}, {"region", node.region}});
  if (!all) return all.error();
  auto out = std::make_unique<NodeTrades>();
  out->all = std::move(*all);
  for (const Record& t : out->all) {
    out->by_id[t.id] = &t;
    const json& st = t.body.value("settlement", json::object());
    if (!lists(st, "node_ids", node.id)) continue;
    (lists(st, "resold_node_ids", node.id) ? out->resold : out->holding).push_back(t);
  }
  return out;
}

// For a resale trade `held` holding a node: the trades it came down from, each of which resold
// the node to the next (the reseller's latest trade of the same window that resold it before the
// next was made), and the first trade (the supplier's sale, which no one resold) with its price.
struct Chain {
  std::vector<std::pair<const Record*, std::string>> resellers;  // a trade, and the trade it resold to
  const Record* first = nullptr;
  std::optional<std::string> supplier_price;
};
Chain chain_of(const NodeTrades& nt, const Record& held) {
  Chain c;
  const Record* at = &held;
  std::set<std::string> seen{held.id};
  const auto window = [](const Record& r) { return r.body.value("starts_at", "") + "/" + r.body.value("ends_at", ""); };
  while (at->body.contains("reseller_tenant_id")) {
    const Record* from = nullptr;
    for (const Record& r : nt.resold)
      if (r.tenant_id == at->body["reseller_tenant_id"] && !seen.count(r.id) && window(r) == window(held) &&
          r.created_at <= at->created_at && (!from || r.created_at > from->created_at))
        from = &r;
    if (!from) return c;  // where it came from is gone: the buyer's own price stands
    seen.insert(from->id);
    c.resellers.push_back({from, at->id});
    at = from;
  }
  if (at != &held) c.first = at;
  if (at != &held && at->body.contains("price_per_gpu_hour") && at->body["price_per_gpu_hour"].is_string())
    c.supplier_price = at->body["price_per_gpu_hour"].get<std::string>();
  return c;
}

// The contract a settled trade's commitment lies in, decoded; nullopt when the trade was never
// settled into one or the contract is gone.
struct TradeContract {
  Record rec;
  Contract c;
};
Result<std::optional<TradeContract>> contract_of_trade(StoreTx& tx, const Record& trade, const char* consequence) {
  const json& st = trade.body.at("settlement");
  if (!st.contains("contract_id")) return std::optional<TradeContract>();
  auto crec = tx.get("contracts", st.at("contract_id").get<std::string>());
  if (!crec)
    return crec.error().code == Code::kNotFound ? Result<std::optional<TradeContract>>(std::nullopt)
                                                : Result<std::optional<TradeContract>>(crec.error());
  auto c = decode_record(*crec, decode_contract, consequence);
  if (!c) return c.error();
  return std::optional<TradeContract>(TradeContract{std::move(*crec), std::move(*c)});
}

// Applies `change` to the resale of trade `trade` to trade `to` in the trade's commitment (to
// each of its resales when `to` is ""), and writes the contract when it changed one.
template <class Change>
Status edit_resale(StoreTx& tx, const Record& trade, const std::string& to, TimeMs now, const std::string& detail,
                   Change change) {
  auto k = contract_of_trade(tx, trade, "a resold node's default cannot be recorded in it");
  if (!k) return k.error();
  if (!*k) return ok_status();
  bool changed = false;
  for (auto& m : (*k)->c.commitments)
    if (m.trade == trade.id)
      for (auto& x : m.resales)
        if (to.empty() || x.trade == to) changed |= change(x);
  if (!changed) return ok_status();
  Record next = (*k)->rec;
  next.body = to_json((*k)->c);
  return write(tx, next, now, detail);
}

// Applies `change` to the trade's commitment in its contract and to the trade's own list of
// defaults (each a JSON array of {gpus, from, to, reason, node}); nothing when it changes nothing.
template <class Change>
Status edit_defaults(StoreTx& tx, const Record& trade, TimeMs now, const std::string& detail, Change change) {
  auto k = contract_of_trade(tx, trade, "a market default cannot be recorded in it");
  if (!k) return k.error();
  if (!*k) return ok_status();
  Contract& c = (*k)->c;
  auto cm =
      std::find_if(c.commitments.begin(), c.commitments.end(), [&](const auto& m) { return m.trade == trade.id; });
  if (cm == c.commitments.end()) return ok_status();
  json trade_defaults = trade.body.at("settlement").value("defaults", json::array());
  if (!change(*cm, trade_defaults)) return ok_status();
  Record cnext = (*k)->rec;
  cnext.body = to_json(c);
  if (auto s = write(tx, cnext, now, detail); !s) return s;
  Record tnext = trade;
  tnext.body["settlement"]["defaults"] = std::move(trade_defaults);
  tnext.body["settlement"]["state"] = tnext.body["state"] = tnext.state = "defaulted";
  return write(tx, tnext, now, detail);
}

}  // namespace

Status market_node_down(StoreTx& tx, const std::string& node_id, const std::string& why, TimeMs now) {
  auto node = tx.get("nodes", node_id);
  if (!node) return node.error().code == Code::kNotFound ? ok_status() : Status(node.error());
  const int64_t node_gpus = node->body.contains("gpus") && node->body["gpus"].is_array()
                                ? static_cast<int64_t>(node->body["gpus"].size()) : 0;
  auto trades = trades_of(tx, *node);
  if (!trades) return trades.error();
  for (const Record& t : (*trades)->holding) {
    auto start = parse_rfc3339(t.body.at("starts_at").get<std::string>(), "starts_at");
    auto end = parse_rfc3339(t.body.at("ends_at").get<std::string>(), "ends_at");
    if (!start || !end) return Error::make(Code::kInternal, "market trade " + t.id + " does not decode");
    if (now < *start || now >= *end) continue;  // only a window in progress (a later one may still be delivered)
    const std::string reason = "node " + node->name + " out of service" + (why.empty() ? "" : " (" + why + ")");
    // A resold node: its resellers' proceeds for the time are not theirs, and the compensation is
    // figured at the price the supplier sold it at (docs/market.md#resold-nodes).
    const Chain chain = chain_of(**trades, t);
    std::optional<int64_t> supplier_pct;  // the first buyer's contract's outage compensation
    if (chain.first) {
      auto k = contract_of_trade(tx, *chain.first, "a resold node's default cannot be figured from it");
      if (!k) return k.error();
      if (*k && (*k)->c.clauses) supplier_pct = (*k)->c.clauses->outage_compensation_pct;
    }
    std::optional<Money> supplier_price;
    int64_t defaulted = 0;
    auto st = edit_defaults(tx, t, now, "node " + node->name + " down", [&](ContractCommitment& cm, json& list) {
      if (chain.supplier_price && cm.price_per_gpu_hour)
        if (auto m = Money::parse(*chain.supplier_price, cm.price_per_gpu_hour->currency()); m && m->micros() > 0)
          supplier_price = *m;
      // Figured as the supplier owed the node's first buyer (on the default and the trade's list).
      const auto stamp = [&](CommitmentDefault& d) {
        if (!supplier_price ||
            (d.compensation_price_per_gpu_hour == supplier_price && d.compensation_pct == supplier_pct))
          return false;
        d.compensation_price_per_gpu_hour = supplier_price;
        d.compensation_pct = supplier_pct;
        const std::string from = format_rfc3339(d.from);
        for (auto& e : list)
          if (e.is_object() && e.value("node", "") == node_id && e.value("from", "") == from) {
            e["compensation_price_per_gpu_hour"] = supplier_price->amount_string();
            if (supplier_pct) e["compensation_pct"] = *supplier_pct;
          }
        return true;
      };
      for (auto& d : cm.defaults)
        if (d.node == node_id && d.from <= now && now < d.to) {  // already recorded (a restart re-reads states)
          defaulted = d.gpus;  // its resellers are seen to as well: an outage begun before they were
          return stamp(d);
        }
      if (cm.defaults.size() >= kMaxCommitmentDefaults) {
        // A node down a thousand times in one window: its latest default is reopened to the
        // window's end (the time it was up since counts as defaulted, in the buyer's favour)
        // rather than one more record than a contract may hold (it would no longer decode).
        CommitmentDefault* last = nullptr;
        for (auto& d : cm.defaults)
          if (d.node == node_id && (!last || d.from > last->from)) last = &d;
        if (!last) return false;
        const std::string from = format_rfc3339(last->from);
        last->to = *end;
        for (auto& d : list)
          if (d.value("node", "") == node_id && d.value("from", "") == from) d["to"] = format_rfc3339(*end);
        defaulted = last->gpus;
        stamp(*last);
        return true;
      }
      const int64_t gpus = std::min(node_gpus, cm.gpus - most_withheld_from(cm, now));
      if (gpus <= 0) return false;
      CommitmentDefault d{gpus, now, *end, reason, node_id, std::nullopt, std::nullopt};
      cm.defaults.push_back(d);
      json dj = {{"gpus", gpus},
                 {"from", format_rfc3339(now)},
                 {"to", format_rfc3339(*end)},
                 {"reason", reason},
                 {"node", node_id},
                 {"at", format_rfc3339(now)},
                 {"by", kActor}};
      list.push_back(std::move(dj));
      stamp(cm.defaults.back());
      defaulted = gpus;
      return true;
    });
    if (!st) return st;
    if (defaulted == 0) continue;
    for (const auto& [seller, to] : chain.resellers) {
      auto rs = edit_resale(tx, *seller, to, now, "node " + node->name + " down, resold", [&](CommitmentResale& x) {
        for (const auto& u : x.undelivered)
          if (u.node == node_id && u.from <= now && now < u.to) return false;  // already recorded
        if (x.undelivered.size() >= kMaxCommitmentDefaults) {                  // as a default: its latest reopened
          ResaleUndelivered* last = nullptr;
          for (auto& u : x.undelivered)
            if (u.node == node_id && (!last || u.from > last->from)) last = &u;
          if (!last) return false;
          last->to = std::min(*end, x.to);
          return true;
        }
        if (now < x.from || now >= x.to) return false;
        x.undelivered.push_back({std::min(defaulted, x.gpus), now, std::min(*end, x.to), node_id});
        return true;
      });
      if (!rs) return rs;
    }
  }
  return ok_status();
}

Status market_node_up(StoreTx& tx, const std::string& node_id, TimeMs now) {
  auto node = tx.get("nodes", node_id);
  if (!node) return node.error().code == Code::kNotFound ? ok_status() : Status(node.error());
  auto trades = trades_of(tx, *node);
  if (!trades) return trades.error();
  for (const Record& t : (*trades)->resold) {  // the undelivered time of its resales ends too
    auto rs = edit_resale(tx, t, "", now, "node " + node->name + " back, resold", [&](CommitmentResale& x) {
      bool changed = false;
      for (auto& u : x.undelivered)
        if (u.node == node_id && u.from <= now && now < u.to) u.to = std::max(now, u.from + 1), changed = true;
      return changed;
    });
    if (!rs) return rs;
  }
  for (const Record& t : (*trades)->holding) {
    auto st = edit_defaults(tx, t, now, "node " + node->name + " back", [&](ContractCommitment& cm, json& list) {
      bool changed = false;
      for (auto& d : cm.defaults)
        if (d.node == node_id && d.from <= now && now < d.to) d.to = std::max(now, d.from + 1), changed = true;
      for (auto& d : list)
        if (d.value("node", "") == node_id) {
          auto from = parse_rfc3339(d.value("from", ""), "from");
          auto to = parse_rfc3339(d.value("to", ""), "to");
          if (from && to && *from <= now && now < *to) d["to"] = format_rfc3339(std::max(now, *from + 1));
        }
      return changed;
    });
    if (!st) return st;
  }
  return ok_status();
}

}  // namespace gpurent
