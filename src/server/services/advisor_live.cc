#include "server/services/advisor_live.h"

#include <algorithm>
#include <map>

#include "model/measurement.h"
#include "model/node.h"
#include "model/supplier.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"

namespace gpurent {

Result<std::vector<Offer>> load_offers(StoreReader& store, const GpuCatalog& catalog, std::vector<std::string>* ids) {
  auto records = list_all(store, "offers");
  if (!records) return records.error();
  std::map<std::string, std::string> supplier_names;
  std::vector<Offer> out;
  for (const Record& r : *records) {
    auto o = decode_record(r, [&](const json& b) { return parse_offer(b, catalog); }, "the advisor cannot compare offers without it");
    if (!o) return o.error();
    o->supplier_id = r.supplier_id;
    auto it = supplier_names.find(r.supplier_id);
    if (it == supplier_names.end()) {
      auto s = store.get("suppliers", r.supplier_id);
      it = supplier_names.emplace(r.supplier_id, s ? s->name : r.supplier_id).first;
    }
    o->supplier = it->second;
    out.push_back(std::move(*o));
    if (ids) ids->push_back(r.id);
  }
  return out;
}

Result<std::vector<SupplierCandidate>> load_supplier_candidates(StoreReader& store, const GpuCatalog& catalog, TimeMs from,
                                                                TimeMs to) {
  auto suppliers = list_all(store, "suppliers");
  if (!suppliers) return suppliers.error();
  auto offers = load_offers(store, catalog);
  if (!offers) return offers.error();
  std::vector<SupplierCandidate> out;
  for (const Record& s : *suppliers) {
    auto sup = decode_record(s, parse_supplier, "suppliers cannot be scored without it");
    if (!sup) return sup.error();
    std::vector<SupplierNodeRecord> nodes;
    auto node_records = list_all(store, "nodes", {{"supplier_id", s.id}});
    if (!node_records) return node_records.error();
    for (const Record& n : *node_records) {
      auto node = decode_record(n, [&](const json& b) { return parse_node(b, catalog); }, "its supplier cannot be scored without it");
      if (!node) return node.error();
      node->name = n.name;
      nodes.push_back({n.id, std::move(*node)});
    }
    std::vector<Offer> own;
    for (const Offer& o : *offers)
      if (o.supplier_id == s.id) own.push_back(o);
    std::vector<Measurement> measurements;
    auto m_records = list_all(store, "measurements", {{"supplier_id", s.id}});
    if (!m_records) return m_records.error();
    const std::set<std::string> corrected = corrected_ids(*m_records);
    for (const Record& m : *m_records) {
      if (corrected.count(m.id) || !measurement_counts(m.body)) continue;  // corrected, or a dispute not accepted
      auto parsed = decode_record(m, decode_measurement, "its supplier cannot be scored without it");
      if (!parsed) return parsed.error();
      measurements.push_back(std::move(*parsed));
    }
    auto history = derive_supplier_history(nodes, own, measurements, from, to);
    if (!history) return history.error();
    out.push_back({std::move(*sup), {}, std::move(*history)});
  }
  return out;
}

Result<DemandCurve> ledger_demand(StoreReader& store, const std::string& tenant_id, TimeMs from, TimeMs to, TimeMs now,
                                  HourlyMeasure measure, const std::string& field) {
  auto runs = list_runs(store, {{"tenant_id", tenant_id}}, "the tenant's metered demand cannot be read without it");
  if (!runs) return runs.error();
  std::vector<GpuInterval> intervals;
  for (const auto& [rec, run] : *runs) {
    const auto& start = run.running_at;
    if (!start) continue;
    const TimeMs s = std::max(*start, from), e = std::min(run.ended_at.value_or(now), to);
    // A worker's share of a GPU is a whole GPU of capacity to buy.
    const int64_t gpus = std::max<int64_t>(run.cards(), (run.gpu_milli + 999) / 1000);
    if (e > s && gpus > 0) intervals.push_back({s, e, gpus});
  }
  if (intervals.empty())
    return Error::invalid(field, Message("services.advisor_live.no_demand")
                                     .arg("from", format_rfc3339(from))
                                     .arg("to", format_rfc3339(to)));
  // The whole window up to now, idle hours included: reserving for it is paying for them too.
  // (At most the curve's limit of hours back from its end: an "all history" from long ago counts
  // from where the runs are, as before.)
  const TimeMs end = std::min(to, now);
  const TimeMs earliest = end - (kMaxDemandHours - 1) * kMsPerHour;
  return demand_from_intervals(intervals, measure, std::make_pair(std::max(from, earliest), end));
}

Result<FingerprintInput> metered_fingerprint(StoreReader& store, const GpuCatalog& catalog, const Record& job, TimeMs now,
                                             std::optional<Money> price) {
  auto runs = list_runs(store, {{"tenant_id", job.tenant_id}}, "the job's metered usage cannot be read without it");
  if (!runs) return runs.error();
  MeteredJobUsage usage;
  std::string model, offer_id;
  int64_t gpus = 0, util_sum = 0, util_n = 0;
  TimeMs first = 0, last = 0;
  for (const auto& [rec, run] : *runs) {
    if (run.job_id != job.id) continue;
    const auto& start = run.running_at;
    if (!start) continue;
    const TimeMs end = run.ended_at.value_or(now);
    if (end <= *start) continue;
    usage.duration_ms += end - *start;
    if (!first || *start < first) first = *start;
    last = std::max(last, end);
    gpus = std::max(gpus, run.cards());
    offer_id = run.offer_id;
    for (const auto& p : run.placement) {
      const std::string& node_id = p.node_id;
      if (model.empty())
        if (auto n = store.get("nodes", node_id)) model = n->gpu_model;  // the index column: the catalog id
      for (int64_t g : p.gpus) {
        auto pts = store.gpu_usage(node_id, g, *start, end, 1'000'000);
        if (!pts) return pts.error();
        for (const auto& pt : *pts) {
          util_sum += pt.utilization_pct.sum;
          util_n += pt.utilization_pct.n;
          usage.peak_memory_mib = std::max(usage.peak_memory_mib, pt.memory_used_mib.max);
        }
      }
    }
  }
  if (usage.duration_ms == 0 || model.empty() || gpus == 0)
    return Error::invalid("job", Message("services.advisor_live.job_not_run").arg("job", job.name));
  if (util_n == 0)
    return Error::invalid("job", Message("services.advisor_live.no_utilization").arg("job", job.name));
  // Mean utilization in per-mille, rounded half up (a ratio, not money).
  usage.avg_gpu_utilization_permille = (util_sum * 10 * 2 + util_n) / (2 * util_n);
  auto totals = store.job_usage_totals({.job_id = job.id, .from = first, .to = last + 1});
  if (!totals) return totals.error();
  int64_t output_tokens = 0;
  for (const auto& t : *totals) {
    usage.storage_io_bytes += t.storage_io_bytes;
    output_tokens += t.output_tokens;
  }
  if (!price) {
    if (offer_id.empty())
      return Error::invalid("price_per_gpu_hour", Message("services.advisor_live.price_required").arg("job", job.name));
    auto o = store.get("offers", offer_id);
    if (!o) return o.error();
    auto offer = parse_offer(o->body, catalog);
    if (!offer) return offer.error();
    price = offer->prices.on_demand;
  }
  auto in = fingerprint_input_from_metered(model, gpus, *price, usage, catalog);
  if (in && output_tokens > 0)  // per hour of the job's runs, rounded half up (a rate, not money)
    in->output_tokens_per_hour =
        static_cast<int64_t>((static_cast<__int128>(output_tokens) * 2 * kMsPerHour + usage.duration_ms) / (2 * usage.duration_ms));
  return in;
}

}  // namespace gpurent
