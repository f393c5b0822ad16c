#include "server/services/procurement.h"

#include <algorithm>
#include <map>

#include "model/tenant.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

// x of total in per mille, rounded half up; 0 when total is 0. 128-bit: GPU milli × ms grows large.
int64_t permille(int64_t x, int64_t total) {
  if (total <= 0) return 0;
  return static_cast<int64_t>((static_cast<__int128>(x) * 1000 + total / 2) / total);
}

// Thousandths as a canonical decimal: 24000 -> "24", 500 -> "0.5", 1250 -> "1.25".
std::string thousandths(int64_t v) {
  std::string s = std::to_string(v / 1000);
  int64_t frac = v % 1000;
  if (frac == 0) return s;
  std::string f = std::to_string(frac);
  f.insert(0, 3 - f.size(), '0');
  while (f.back() == '0') f.pop_back();
  return s + "." + f;
}

}  // namespace

Result<ProcurementReport> procurement_report(StoreReader& store, const Record& tenant, TimeMs from, TimeMs to,
                                             TimeMs now) {
  ProcurementReport rep;
  rep.tenant = tenant.name;
  rep.from = from;
  rep.to = to;
  auto t = decode_record(tenant, parse_tenant, "its procurement split cannot be read");
  if (!t) return t.error();
  rep.split = !t->procurement_split.empty();
  std::map<std::string, size_t> at;  // supplier id -> row
  auto row = [&](const std::string& id) -> ProcurementRow& {
    auto [it, added] = at.try_emplace(id, rep.rows.size());
    if (added) {
      rep.rows.emplace_back();
      rep.rows.back().supplier = id;
    }
    return rep.rows[it->second];
  };
  for (const ProcurementShare& s : t->procurement_split) row(s.supplier).target_permille = s.share_permille;
  const size_t in_split = rep.rows.size();
  auto runs = list_runs(store, {{"tenant_id", tenant.id}}, "the tenant's achieved procurement shares leave it out");
  if (!runs) return runs.error();
  for (const StoredRun& sr : *runs) {
    const JobRun& r = sr.run;
    if (r.gpu_milli <= 0) continue;
    const std::optional<TimeMs> start = r.requested_at ? r.requested_at : r.running_at;
    if (!start) continue;
    ProcurementRow& w = row(r.supplier_id);
    if (r.state == RunState::kOpen) w.held_milli += r.gpu_milli, rep.held_milli += r.gpu_milli;
    const TimeMs lo = std::max(*start, from), hi = std::min(r.ended_at.value_or(now), to);
    if (hi > lo) {
      const int64_t v = r.gpu_milli * (hi - lo);
      w.gpu_milli_ms += v;
      rep.gpu_milli_ms += v;
    }
  }
  for (ProcurementRow& w : rep.rows) {
    w.held_permille = permille(w.held_milli, rep.held_milli);
    w.hours_permille = permille(w.gpu_milli_ms, rep.gpu_milli_ms);
    if (auto s = store.get("suppliers", w.supplier)) w.supplier_name = s->name;
  }
  std::sort(rep.rows.begin() + static_cast<std::ptrdiff_t>(in_split), rep.rows.end(),
            [](const ProcurementRow& a, const ProcurementRow& b) { return a.supplier_name < b.supplier_name; });
  return rep;
}

json to_json(const ProcurementReport& r) {
  json rows = json::array();
  for (const ProcurementRow& w : r.rows)
    rows.push_back({{"supplier", w.supplier},
                    {"supplier_name", w.supplier_name},
                    {"target_permille", w.target_permille},
                    {"held_gpus", thousandths(w.held_milli)},
                    {"held_permille", w.held_permille},
                    {"gpu_hours", thousandths(w.gpu_milli_ms / kMsPerHour)},
                    {"gpu_hours_permille", w.hours_permille}});
  return {{"tenant", r.tenant},
          {"from", format_rfc3339(r.from)},
          {"to", format_rfc3339(r.to)},
          {"split", r.split},
          {"held_gpus", thousandths(r.held_milli)},
          {"gpu_hours", thousandths(r.gpu_milli_ms / kMsPerHour)},
          {"suppliers", rows}};
}

}  // namespace gpurent
