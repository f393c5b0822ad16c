#include "server/dashboard/fragmentation.h"

#include <map>

#include "insight/stranded.h"
#include "model/node.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"

namespace gpurent {

using json = nlohmann::json;

Result<json> fragmentation_report(StoreReader& store, const GpuCatalog& catalog) {
  auto nodes = list_all(store, "nodes");
  if (!nodes) return nodes.error();
  auto runs = list_runs(store, {{"state", "open"}}, "the fragmentation report cannot be made without it");
  if (!runs) return runs.error();
  std::map<std::pair<std::string, int64_t>, int64_t> used;  // (node id, card) -> milli-GPU held
  for (const StoredRun& r : *runs) {
    int64_t cards = 0;
    for (const RunCards& p : r.run.placement) cards += static_cast<int64_t>(p.gpus.size());
    if (cards == 0) continue;
    for (const RunCards& p : r.run.placement)
      for (int64_t g : p.gpus) used[{p.node_id, g}] += std::max<int64_t>(1, r.run.gpu_milli / cards);
  }
  std::vector<StrandedNode> in_service;
  for (const Record& n : *nodes) {
    if (n.state != "available") continue;  // drained or out of service: nothing new lands there
    auto cards = decode_record(n, stored_node_cards, "the fragmentation report leaves it out");
    if (!cards) return cards.error();
    StrandedNode s{n.name, n.gpu_model, static_cast<int64_t>(cards->size()), 0, 0};
    for (const StoredCard& c : *cards) {
      auto it = used.find({n.id, c.index});
      if (it == used.end())
        ++s.free_gpus;
      else if (it->second < 1000)
        ++s.partly_used;
    }
    in_service.push_back(std::move(s));
  }
  auto pending = list_all(store, "jobs", {{"state", "pending"}});
  if (!pending) return pending.error();
  std::vector<WaitingJob> waiting;
  int64_t fractional = 0;
  for (const Record& r : *pending) {
    const json& b = r.body;
    const json gpw = b.value("gpus_per_worker", json(1));
    if (!gpw.is_number_integer() || gpw.get<int64_t>() < 1) {
      ++fractional;  // a fraction of a GPU (or none): whole-GPU shapes do not apply
      continue;
    }
    WaitingJob w{gpw.get<int64_t>(), std::max<int64_t>(1, b.value("workers", int64_t{1})), {}};
    if (const auto c = b.find("constraints"); c != b.end() && c->is_object())
      if (const auto m = c->find("gpu_models"); m != c->end() && m->is_array())
        for (const json& x : *m)
          if (x.is_string()) {
            const GpuModel* g = catalog.find(x.get<std::string>());
            w.gpu_models.push_back(g ? g->id : x.get<std::string>());
          }
    waiting.push_back(std::move(w));
  }
  const StrandedReport rep = stranded_gpus(in_service, waiting);
  json models = json::array();
  for (const StrandedModel& m : rep.models) {
    json shapes = json::array();
    for (const StrandedShape& s : m.shapes)
      shapes.push_back({{"gpus_per_worker", s.gpus_per_worker},
                        {"usable_gpus", s.usable_gpus},
                        {"stranded_gpus", s.stranded_gpus},
                        {"nodes_that_fit", s.nodes_that_fit},
                        {"waiting_jobs", s.waiting_jobs},
                        {"blocked_by_fragmentation", s.blocked_by_fragmentation}});
    models.push_back({{"gpu_model", m.gpu_model},
                      {"nodes", m.nodes},
                      {"gpus", m.gpus},
                      {"free_gpus", m.free_gpus},
                      {"partly_used", m.partly_used},
                      {"shapes", shapes}});
  }
  return json{{"nodes", rep.nodes},
              {"gpus", rep.gpus},
              {"free_gpus", rep.free_gpus},
              {"waiting_jobs", static_cast<int64_t>(waiting.size()) + fractional},
              {"fractional_waiting_jobs", fractional},
              {"models", models}};
}

}  // namespace gpurent
