#include "server/services/allocation_ledger.h"

#include <map>

#include "core/ids.h"
#include "model/contract.h"
#include "model/job.h"
#include "model/node.h"

namespace gpurent {
namespace {

bool sells(const json& offer, const Record& node) {
  if (offer.value("gpu_model", "") != node.gpu_model || offer.value("region", "") != node.region) return false;
  const json sel = offer.value("node_selector", json::object());
  if (sel.contains("site") && sel["site"] != node.body.value("site", "")) return false;
  if (sel.contains("node_names") && !sel["node_names"].empty()) {
    bool listed = false;
    for (const auto& n : sel["node_names"]) listed = listed || n == node.name;
    if (!listed) return false;
  }
  return true;
}

// (offer id, contract id) for a run on `node`; empty offer when nothing sells the node.
Result<std::pair<std::string, std::string>> offer_for(StoreTx& tx, const std::string& tenant_id, const Record& node,
                                                      TimeMs now) {
  auto contracts = list_all(tx, "contracts", {{"tenant_id", tenant_id}, {"supplier_id", node.supplier_id}});
  if (!contracts) return contracts.error();
  for (const Record& c : *contracts) {
    auto k = parse_contract(c.body);
    if (!k || k->starts_at > now) continue;
    for (const auto& oid : c.body.value("offer_ids", std::vector<std::string>{})) {
      auto o = tx.get("offers", oid);
      if (o && sells(o->body, node)) return std::make_pair(oid, c.id);
    }
  }
  auto offers = list_all(tx, "offers", {{"supplier_id", node.supplier_id}});
  if (!offers) return offers.error();
  for (const Record& o : *offers)
    if (sells(o.body, node)) return std::make_pair(o.id, std::string());
  return std::make_pair(std::string(), std::string());
}

Status open_run(StoreTx& tx, const Record& job, const JobStatus& before, const JobStatus& after, TimeMs now) {
  if (after.placement.empty()) return ok_status();
  std::map<std::string, std::vector<int64_t>> by_node;
  int64_t milli = 0;
  for (const auto& w : after.placement) {
    auto& g = by_node[w.node];
    g.insert(g.end(), w.gpus.begin(), w.gpus.end());
    milli += w.gpu_milli > 0 ? w.gpu_milli : static_cast<int64_t>(w.gpus.size()) * 1000;
  }
  if (milli == 0) return ok_status();  // a CPU-only job holds no GPU: nothing to meter here
  auto node = tx.get("nodes", after.placement.front().node);
  if (!node) return node.error();
  auto offer = offer_for(tx, job.tenant_id, *node, now);
  if (!offer) return offer.error();
  json placement = json::array();
  for (const auto& [nid, gpus] : by_node) {
    auto n = tx.get("nodes", nid);
    placement.push_back({{"node_id", nid}, {"node", n ? n->name : nid}, {"gpus", gpus}});
  }
  Record r;
  r.kind = "allocations";
  r.id = new_id("alc");
  r.tenant_id = job.tenant_id;
  r.supplier_id = node->supplier_id;
  r.project_id = job.project_id;
  r.state = "open";
  r.gpu_model = node->gpu_model;
  r.created_at = r.updated_at = now;
  r.body = {{"job_id", job.id},
            {"job", job.name},
            {"project_id", job.project_id},
            {"tenant_id", job.tenant_id},
            {"supplier_id", node->supplier_id},
            {"offer_id", offer->first},
            {"contract_id", offer->second},
            {"billing_mode", job.body.value("billing", json::object()).value("mode", "on_demand")},
            {"gpu_milli", milli},
            {"placement", std::move(placement)},
            {"requested_at", format_rfc3339(job.created_at)},
            {"running_at", format_rfc3339(now)},
            {"ready_at", format_rfc3339(now)},
            {"ended_at", nullptr},
            {"end_reason", ""},
            {"state", "open"}};
  if (before.state == JobState::kAdmitted) r.body["admitted_at"] = format_rfc3339(before.updated_at);
  return tx.insert(r);
}

Status close_runs(StoreTx& tx, const Record& job, const Message& reason, TimeMs now) {
  auto open = list_all(tx, "allocations", {{"project_id", job.project_id}, {"state", "open"}});
  if (!open) return open.error();
  for (Record r : *open) {
    if (r.body.value("job_id", "") != job.id) continue;
    r.state = "closed";
    r.updated_at = now;
    r.body["state"] = "closed";
    r.body["ended_at"] = format_rfc3339(now);
    r.body["end_reason"] = render_en(reason);  // invoices.cc reads SLA outages from it
    if (!reason.empty()) r.body["end_reason_message"] = message_to_json(reason);
    if (auto s = tx.update(r); !s) return s;
  }
  return ok_status();
}

}  // namespace

Status sync_allocation(StoreTx& tx, const Record& job, const JobStatus& before, const JobStatus& after, TimeMs now) {
  const bool was = before.state == JobState::kRunning, is = after.state == JobState::kRunning;
  const bool moved = was && is && before.placement != after.placement;
  if (was && (!is || moved))
    if (auto s = close_runs(tx, job, moved ? Message("alloc.placement_changed").arg("reason", after.reason) : after.reason,
                            now);
        !s)
      return s;
  if (is && (!was || moved)) return open_run(tx, job, before, after, now);
  return ok_status();
}

Status annotate_latest_run(StoreTx& tx, const std::string& job_id, const std::string& project_id, const json& fields) {
  auto runs = list_all(tx, "allocations", {{"project_id", project_id}});
  if (!runs) return runs.error();
  const Record* latest = nullptr;
  for (const Record& r : *runs)
    if (r.body.value("job_id", "") == job_id && (!latest || r.created_at >= latest->created_at)) latest = &r;
  if (!latest) return ok_status();
  Record u = *latest;
  for (const auto& [k, v] : fields.items()) u.body[k] = v;
  return tx.update(u);
}

}  // namespace gpurent
