#include "server/dashboard/suppliers.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "advisor/supplier_score.h"
#include "core/money.h"
#include "insight/decimal.h"
#include "insight/outage.h"
#include "model/fault.h"
#include "model/measurement.h"
#include "model/node.h"
#include "server/services/advisor_live.h"
#include "server/services/record_faults.h"

namespace gpurent {

using json = nlohmann::json;

namespace {

using Interval = TimeInterval;  // [first, second)


// Minutes, hours and availability shares of a period: statistics, saturating (core/money.h).
int64_t half_even(__int128 num, int64_t den) { return div_half_even_sat(num, den); }

std::string date_of(TimeMs day) { return format_rfc3339(day).substr(0, 10); }

json opt(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

Status tally_supplier(StoreReader& store, const std::string& supplier_id, OutageTally& t, int64_t& nodes_n, int64_t& gpus_n) {
  auto nodes = list_all(store, "nodes", {{"supplier_id", supplier_id}});
  if (!nodes) return nodes.error();
  auto records = list_all(store, "measurements", {{"supplier_id", supplier_id}});
  if (!records) return records.error();
  std::map<std::string, std::vector<Interval>> incidents;  // node id -> incident windows, as recorded
  const std::set<std::string> corrected = corrected_ids(*records);
  for (const Record& r : *records) {
    if (corrected.count(r.id) || !measurement_counts(r.body)) continue;  // corrected, or a dispute not accepted
    auto m = decode_record(r, decode_measurement, "the supplier's health cannot be scored without it");
    if (!m) return m.error();
    if (m->kind != MeasurementKind::kIncident || !m->from || !m->to) continue;
    incidents[m->node_id.empty() ? m->node : m->node_id].emplace_back(*m->from, *m->to);
  }
  for (const Record& n : *nodes) {
    ++nodes_n;
    auto cards = decode_record(n, stored_node_cards, "the supplier's health cannot be scored without it");
    if (!cards) return cards.error();
    gpus_n += static_cast<int64_t>(cards->size());
    const TimeMs a = std::max(n.created_at, t.from());
    if (a < t.end()) t.add_node_time(t.end() - a);
    auto it = incidents.find(n.id);
    if (it == incidents.end()) continue;
    for (const Interval& i : it->second) t.count_incident(i.first);
    std::vector<Interval> clipped;
    for (const Interval& i : it->second) {
      const TimeMs b = std::max(i.first, a), e = std::min(i.second, t.end());
      if (b < e) clipped.emplace_back(b, e);
    }
    for (const Interval& i : merge_intervals(std::move(clipped))) t.add_down(i.first, i.second);
  }
  // A node failure the scheduler recorded (one fault per job it hit) is one incident unless an
  // incident measurement on that node already covers the moment.
  auto faults = list_all(store, "faults", {{"supplier_id", supplier_id}});
  if (!faults) return faults.error();
  std::set<std::pair<std::string, TimeMs>> seen;
  for (const Record& r : *faults) {
    auto f = decode_record(r, decode_fault, "the supplier's health cannot be scored without it");
    if (!f) return f.error();
    const std::string& node = f->node;
    const TimeMs at = f->at;
    if (!seen.emplace(node, at).second) continue;
    bool covered = false;
    if (auto it = incidents.find(node); it != incidents.end())
      for (const Interval& i : it->second) covered = covered || (i.first <= at && at <= i.second);
    if (!covered) t.count_incident(at);
  }
  return ok_status();
}

}  // namespace

Result<json> supplier_health_report(StoreReader& store, const GpuCatalog& catalog, const SupplierHealthScope& s) {
  if (s.to <= s.from) return Error::invalid("to", Message("dashboard.to_after_from"));
  if (s.from >= s.now) return Error::invalid("from", Message("dashboard.from_in_past"));
  const TimeMs end = std::min(s.to, s.now);
  auto candidates = load_supplier_candidates(store, catalog, s.from, end);
  if (!candidates) return candidates.error();
  std::map<std::string, SupplierScore> scores;  // by supplier name
  if (!candidates->empty()) {
    SupplierScoreInput in{default_supplier_checklist(), default_history_rules(), *candidates, {}};
    auto scored = compute_supplier_score(in);
    if (!scored) return scored.error();
    for (SupplierScore& sc : scored->suppliers) scores.emplace(sc.name, std::move(sc));
  }
  std::vector<Record> suppliers;
  if (!s.supplier_id.empty()) {
    auto r = store.get("suppliers", s.supplier_id);
    if (!r) return r.error();
    suppliers.push_back(std::move(*r));
  } else {
    auto all = list_all(store, "suppliers");
    if (!all) return all.error();
    suppliers = std::move(*all);
  }
  std::sort(suppliers.begin(), suppliers.end(), [](const Record& a, const Record& b) { return a.name < b.name; });

  json out = json::array();
  for (const Record& r : suppliers) {
    OutageTally t(s.from, end, s.to);
    int64_t nodes = 0, gpus = 0;
    if (auto st = tally_supplier(store, r.id, t, nodes, gpus); !st) return st.error();
    SupplierHistory h;
    for (const SupplierCandidate& c : *candidates)
      if (c.supplier.name == r.name) h = c.history;
    const auto sc = scores.find(r.name);
    json daily = json::array();
    for (size_t d = 0; d < t.days(); ++d)
      daily.push_back({{"date", date_of(t.first_day() + static_cast<TimeMs>(d) * kMsPerDay)},
                       {"incidents", t.incidents(d)},
                       {"outage_minutes", half_even(t.outage_ms(d), kMsPerMinute)}});
    const int64_t node_ms = static_cast<int64_t>(t.node_ms());
    out.push_back({{"supplier_id", r.id},
                   {"supplier", r.name},
                   {"nodes", nodes},
                   {"gpus", gpus},
                   {"node_hours", fixed_decimal(half_even(t.node_ms(), 3600), 3)},
                   {"incidents", t.total_incidents()},
                   {"failure_rate_bp", opt(h.monthly_failure_rate_bp)},
                   {"restore_minutes", opt(h.restore_minutes)},
                   {"response_minutes", opt(h.response_minutes)},
                   {"fp16_attainment_permille", opt(h.fp16_attainment_permille)},
                   {"nccl_attainment_permille", opt(h.nccl_attainment_permille)},
                   {"availability_pct",
                    node_ms > 0 ? json(fixed_decimal(half_even((t.node_ms() - t.down_ms()) * 10'000, node_ms), 2)) : json(nullptr)},
                   {"score", sc != scores.end() ? json(fixed_decimal(sc->second.score_x10, 1)) : json(nullptr)},
                   {"blocked", sc != scores.end() && sc->second.blocked},
                   {"share_pct", sc != scores.end() ? json(fixed_decimal(sc->second.share_permille, 1)) : json(nullptr)},
                   {"daily", std::move(daily)}});
  }
  return json{{"from", format_rfc3339(s.from)}, {"to", format_rfc3339(s.to)}, {"suppliers", std::move(out)}};
}

}  // namespace gpurent
