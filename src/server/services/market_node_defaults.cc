// Market defaults from node failures (market_node_defaults.h).
#include "server/services/market_node_defaults.h"

#include <algorithm>

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

// The trades of the node's supplier, model and region whose settlement holds the node.
Result<std::vector<Record>> trades_holding(StoreTx& tx, const Record& node) {
  auto all = list_all(tx, "market-trades", {{"supplier_id", node.supplier_id}, {"gpu_model", node.gpu_model}, {"region", node.region}});
  if (!all) return all.error();
  std::vector<Record> out;
  for (Record& t : *all) {
    const json& st = t.body.value("settlement", json::object());
    const json& ids = st.value("node_ids", json::array());
    const json& resold = st.value("resold_node_ids", json::array());  // no longer its holder's to miss
    if (std::find(ids.begin(), ids.end(), node.id) != ids.end() && std::find(resold.begin(), resold.end(), node.id) == resold.end())
      out.push_back(std::move(t));
  }
  return out;
}

// Applies `change` to the trade's commitment in its contract and to the trade's own list of
// defaults (each a JSON array of {gpus, from, to, reason, node}); nothing when it changes nothing.
template <class Change>
Status edit_defaults(StoreTx& tx, const Record& trade, TimeMs now, const std::string& detail, Change change) {
  const json& st = trade.body.at("settlement");
  if (!st.contains("contract_id")) return ok_status();
  auto crec = tx.get("contracts", st.at("contract_id").get<std::string>());
  if (!crec) return crec.error().code == Code::kNotFound ? ok_status() : Status(crec.error());
  auto c = decode_record(*crec, decode_contract, "a market default cannot be recorded in it");
  if (!c) return c.error();
  auto cm = std::find_if(c->commitments.begin(), c->commitments.end(), [&](const auto& m) { return m.trade == trade.id; });
  if (cm == c->commitments.end()) return ok_status();
  json trade_defaults = st.value("defaults", json::array());
  if (!change(*cm, trade_defaults)) return ok_status();
  Record cnext = *crec;
  cnext.body = to_json(*c);
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
  auto trades = trades_holding(tx, *node);
  if (!trades) return trades.error();
  for (const Record& t : *trades) {
    auto start = parse_rfc3339(t.body.at("starts_at").get<std::string>(), "starts_at");
    auto end = parse_rfc3339(t.body.at("ends_at").get<std::string>(), "ends_at");
    if (!start || !end) return Error::make(Code::kInternal, "market trade " + t.id + " does not decode");
    if (now < *start || now >= *end) continue;  // only a window in progress (a later one may still be delivered)
    const std::string reason = "node " + node->name + " out of service" + (why.empty() ? "" : " (" + why + ")");
    auto st = edit_defaults(tx, t, now, "node " + node->name + " down", [&](ContractCommitment& cm, json& list) {
      for (const auto& d : cm.defaults)
        if (d.node == node_id && d.from <= now && now < d.to) return false;  // already recorded
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
        return true;
      }
      const int64_t gpus = std::min(node_gpus, cm.gpus - most_withheld_from(cm, now));
      if (gpus <= 0) return false;
      CommitmentDefault d{gpus, now, *end, reason, node_id};
      cm.defaults.push_back(d);
      list.push_back({{"gpus", gpus}, {"from", format_rfc3339(now)}, {"to", format_rfc3339(*end)}, {"reason", reason},
                      {"node", node_id}, {"at", format_rfc3339(now)}, {"by", kActor}});
      return true;
    });
    if (!st) return st;
  }
  return ok_status();
}

Status market_node_up(StoreTx& tx, const std::string& node_id, TimeMs now) {
  auto node = tx.get("nodes", node_id);
  if (!node) return node.error().code == Code::kNotFound ? ok_status() : Status(node.error());
  auto trades = trades_holding(tx, *node);
  if (!trades) return trades.error();
  for (const Record& t : *trades) {
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
