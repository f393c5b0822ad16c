#include "server/dashboard/usage.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "core/money.h"
#include "insight/card_label.h"
#include "model/node.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"

namespace gpurent {

using json = nlohmann::json;

namespace {

using UsageInterval = TimeInterval;  // [first, second)
using CardKey = std::pair<std::string, int64_t>;  // node id, GPU index

struct NodeInfo {
  std::string name, supplier_id, gpu_model;
  int64_t gpus = 0;
};

struct CardSums {
  std::vector<UsageInterval> intervals;  // allocation scope only
  std::set<std::string> project_ids;
  std::map<TimeMs, std::pair<int64_t, int64_t>> buckets;  // bucket -> (samples, sum)
  int64_t samples = 0, sum = 0;
};

// A mean of percentages (0..100): saturating is exact here (core/money.h).
int64_t usage_half_even(int64_t sum, int64_t n) { return div_half_even_sat(sum, n); }

TimeMs floor_to(TimeMs t, DurationMs step) { return t - (((t % step) + step) % step); }

Result<NodeInfo> node_info(const Record& r) {
  auto cards = decode_record(r, stored_node_cards, "the utilization view cannot be drawn without it");
  if (!cards) return cards.error();
  return NodeInfo{r.name, r.supplier_id, r.gpu_model, static_cast<int64_t>(cards->size())};
}

// The nodes the scope covers, by id.
Result<std::map<std::string, NodeInfo>> scoped_nodes(StoreReader& store, const UtilizationScope& s) {
  std::map<std::string, NodeInfo> out;
  if (!s.node_id.empty()) {
    auto r = store.get("nodes", s.node_id);
    if (!r) return r.error();
    if (!s.supplier_id.empty() && r->supplier_id != s.supplier_id) return out;
    auto info = node_info(*r);
    if (!info) return info.error();
    out.emplace(r->id, std::move(*info));
    return out;
  }
  std::map<std::string, std::string> eq;
  if (!s.supplier_id.empty()) eq["supplier_id"] = s.supplier_id;
  auto nodes = list_all(store, "nodes", eq);
  if (!nodes) return nodes.error();
  for (const Record& r : *nodes) {
    auto info = node_info(r);
    if (!info) return info.error();
    out.emplace(r.id, std::move(*info));
  }
  return out;
}

// Cards that ran allocations in [from, to) on the scoped nodes, with the (clipped) intervals and
// the projects. In allocation scope only the tenant's (project's) allocations count.
Status add_allocations(StoreReader& store, const UtilizationScope& s, const std::map<std::string, NodeInfo>& nodes,
                       std::map<CardKey, CardSums>& cards) {
  std::map<std::string, std::string> eq;
  if (!s.project_id.empty())
    eq["project_id"] = s.project_id;
  else if (!s.tenant_id.empty())
    eq["tenant_id"] = s.tenant_id;
  auto runs = list_runs(store, eq, "the utilization view cannot be drawn without it");
  if (!runs) return runs.error();
  for (const auto& [a, run] : *runs) {
    const auto& start = run.running_at;
    if (!start) continue;
    const TimeMs b = std::max(*start, s.from), e = std::min(run.ended_at.value_or(s.now), s.to);
    if (e <= b) continue;
    for (const auto& p : run.placement) {
      auto n = nodes.find(p.node_id);
      if (n == nodes.end()) continue;
      for (int64_t g : p.gpus) {
        if (g < 0 || g >= n->second.gpus) continue;
        CardSums& c = cards[{n->first, g}];
        c.intervals.emplace_back(b, e);
        if (!a.project_id.empty()) c.project_ids.insert(a.project_id);
      }
    }
  }
  return ok_status();
}

Status add_buckets(StoreReader& store, const CardKey& card, TimeMs from, TimeMs to, CardSums& c) {
  auto rows = store.gpu_usage_buckets({card.first, card.second, from, to, kHeatmapBucketMs});
  if (!rows) return rows.error();
  for (const GpuBucket& b : *rows) {
    auto& [n, sum] = c.buckets[b.bucket];
    n += b.samples;
    sum += b.util_sum;
    c.samples += b.samples;
    c.sum += b.util_sum;
  }
  return ok_status();
}

std::string usage_name_of(StoreReader& store, const std::string& kind, const std::string& id,
                    std::map<std::string, std::string>& cache) {
  auto it = cache.find(id);
  if (it != cache.end()) return it->second;
  auto r = store.get(kind, id);
  return cache.emplace(id, r ? r->name : id).first->second;
}

}  // namespace

Result<json> utilization_report(StoreReader& store, const UtilizationScope& s) {
  if (s.to <= s.from) return Error::invalid("to", Message("dashboard.to_after_from"));
  auto nodes = scoped_nodes(store, s);
  if (!nodes) return nodes.error();
  const bool allocation_scope = !s.tenant_id.empty() || !s.project_id.empty();
  std::map<CardKey, CardSums> cards;
  if (allocation_scope || s.show_projects)
    if (auto st = add_allocations(store, s, *nodes, cards); !st) return st.error();
  if (allocation_scope) {
    for (auto& [key, c] : cards)
      for (const UsageInterval& i : merge_intervals(c.intervals))
        if (auto st = add_buckets(store, key, i.first, i.second, c); !st) return st.error();
  } else {
    for (const auto& [id, n] : *nodes)
      for (int64_t g = 0; g < n.gpus; ++g) {
        const CardKey key{id, g};
        if (auto st = add_buckets(store, key, s.from, s.to, cards[key]); !st) return st.error();
      }
  }

  // Cards with samples, ordered by supplier name, node name, GPU.
  std::map<std::string, std::string> supplier_names, project_names;
  std::vector<std::tuple<std::string, std::string, int64_t, const CardKey*, const CardSums*>> order;
  for (const auto& [key, c] : cards) {
    if (c.samples == 0) continue;
    const NodeInfo& n = nodes->at(key.first);
    order.emplace_back(usage_name_of(store, "suppliers", n.supplier_id, supplier_names), n.name, key.second, &key, &c);
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
           std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
  });

  const TimeMs first_hour = floor_to(s.from, kHeatmapBucketMs);
  json hours = json::array();
  for (TimeMs h = first_hour; h < s.to; h += kHeatmapBucketMs) hours.push_back(format_rfc3339(h));
  std::vector<CardName> names;
  for (const auto& [supplier, node, gpu, key, c] : order) names.push_back({key->first, node, supplier, gpu});
  const std::vector<std::string> labels = card_labels(names);
  json out_cards = json::array(), cells = json::array();
  for (const auto& [supplier, node, gpu, key, c] : order) {
    const NodeInfo& n = nodes->at(key->first);
    json projects = json::array();
    if (s.show_projects) {
      std::set<std::string> names;
      for (const std::string& pid : c->project_ids) names.insert(usage_name_of(store, "projects", pid, project_names));
      for (const std::string& name : names) projects.push_back(name);
    }
    const int64_t mean = usage_half_even(c->sum, c->samples);
    const int64_t index = static_cast<int64_t>(out_cards.size());
    out_cards.push_back({{"node_id", key->first},
                         {"node", n.name},
                         {"gpu", gpu},
                         {"label", labels[static_cast<size_t>(index)]},
                         {"supplier_id", n.supplier_id},
                         {"supplier", supplier},
                         {"gpu_model", n.gpu_model},
                         {"projects", std::move(projects)},
                         {"mean_pct", mean},
                         {"samples", c->samples},
                         {"idle", mean < kIdleThresholdPct}});
    for (const auto& [bucket, ns] : c->buckets)
      if (ns.first > 0)
        cells.push_back({index, (bucket - first_hour) / kHeatmapBucketMs, usage_half_even(ns.second, ns.first), ns.first});
  }
  return json{{"from", format_rfc3339(s.from)},
              {"to", format_rfc3339(s.to)},
              {"bucket_seconds", kHeatmapBucketMs / 1000},
              {"hours", std::move(hours)},
              {"idle_threshold_pct", kIdleThresholdPct},
              {"cards", std::move(out_cards)},
              {"cells", std::move(cells)}};
}

}  // namespace gpurent
