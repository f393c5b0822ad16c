// Supplier history: deriving failure rate, restore and response times and benchmark attainment from
// the platform's records, merging in entered figures, the default history rules, grading by a rule,
// and the JSON form.
#include <algorithm>

#include "advisor/supplier_score.h"
#include "advisor/supplier_score_internal.h"
#include "core/money.h"

namespace gpurent {

using namespace supplier_score_internal;

namespace {


int64_t he_sat(__int128 num, int64_t den) { return div_half_even_sat(num, den); }  // a share, clamped by callers

bool covers(const Offer& o, const Node& n) {
  if (o.region != n.region || o.gpu_model != n.gpu_model) return false;
  if (o.node_selector.site && *o.node_selector.site != n.site) return false;
  const auto& names = o.node_selector.node_names;
  return names.empty() || std::find(names.begin(), names.end(), n.name) != names.end();
}

// The strongest floor any of the supplier's offers promises for the node's cards.
std::optional<int64_t> floor_of(const std::vector<Offer>& offers, const Node& n, bool fp16) {
  std::optional<int64_t> best;
  for (const auto& o : offers) {
    const auto& f = fp16 ? o.contract_template.min_fp16_tflops_x10 : o.contract_template.min_nccl_busbw_gbps;
    if (f && covers(o, n)) best = std::max(best.value_or(0), *f);
  }
  return best;
}

// A criterion's name (a message code) and the unit of its figure (the same in every language).
struct HistoryFacts {
  Message name;
  const char* unit;
};

HistoryFacts history_facts(const std::string& id) {
  if (id == "failure_rate") return {Message("advisor.suppliers.history.failure_rate"), "bp"};
  if (id == "restore_time") return {Message("advisor.suppliers.history.restore_time"), "min"};
  if (id == "response_time") return {Message("advisor.suppliers.history.response_time"), "min"};
  if (id == "fp16_attainment") return {Message("advisor.suppliers.history.fp16_attainment"), "‰"};
  return {Message("advisor.suppliers.history.nccl_attainment"), "‰"};
}

const char* history_field(const std::string& id) {
  if (id == "failure_rate") return "monthly_failure_rate_bp";
  if (id == "restore_time") return "restore_minutes";
  if (id == "response_time") return "response_minutes";
  if (id == "fp16_attainment") return "fp16_attainment_permille";
  return "nccl_attainment_permille";
}

std::optional<int64_t> history_value(const std::string& id, const SupplierHistory& h) {
  if (id == "failure_rate") return h.monthly_failure_rate_bp;
  if (id == "restore_time") return h.restore_minutes;
  if (id == "response_time") return h.response_minutes;
  if (id == "fp16_attainment") return h.fp16_attainment_permille;
  return h.nccl_attainment_permille;
}

}  // namespace

SupplierHistory merge_history(SupplierHistory m, const SupplierHistory& e) {
  auto fill = [&](const char* name, std::optional<int64_t>& dst, const std::optional<int64_t>& src) {
    if (dst || !src) return;
    dst = src;
    m.entered.push_back(name);
  };
  fill("monthly_failure_rate_bp", m.monthly_failure_rate_bp, e.monthly_failure_rate_bp);
  fill("response_minutes", m.response_minutes, e.response_minutes);
  fill("restore_minutes", m.restore_minutes, e.restore_minutes);
  fill("max_restore_minutes", m.max_restore_minutes, e.max_restore_minutes);
  fill("fp16_attainment_permille", m.fp16_attainment_permille, e.fp16_attainment_permille);
  fill("nccl_attainment_permille", m.nccl_attainment_permille, e.nccl_attainment_permille);
  fill("worst_nccl_busbw_gbps", m.worst_nccl_busbw_gbps, e.worst_nccl_busbw_gbps);
  fill("allreduce_8gpu_1gb_ms", m.allreduce_8gpu_1gb_ms, e.allreduce_8gpu_1gb_ms);
  return m;
}

Result<SupplierHistory> derive_supplier_history(const std::vector<SupplierNodeRecord>& nodes,
                                                const std::vector<Offer>& offers,
                                                const std::vector<Measurement>& measurements, TimeMs from, TimeMs to) {
  if (from >= to) return Error::invalid("window", Message("advisor.suppliers.window_order"));
  SupplierHistory h;
  for (const auto& r : nodes) h.fleet_gpus += static_cast<int64_t>(r.node.gpus.size());
  auto node_of = [&](const Measurement& m) -> const Node* {
    for (const auto& r : nodes)
      if ((!m.node_id.empty() && m.node_id == r.id) || (!r.id.empty() && m.node == r.id) || m.node == r.node.name)
        return &r.node;
    return nullptr;
  };
  __int128 failed_gpus = 0, outage_ms = 0, fp_measured = 0, fp_floor = 0, nccl_measured = 0, nccl_floor = 0;
  __int128 response_ms = 0;
  int64_t longest = 0, responded = 0;
  for (const auto& m : measurements) {
    const Node* n = node_of(m);
    if (!n) continue;
    switch (m.kind) {
      case MeasurementKind::kIncident:
        if (!m.from || !m.to || *m.from < from || *m.from >= to || *m.to <= *m.from) break;
        ++h.incidents;
        failed_gpus += static_cast<int64_t>(n->gpus.size());  // an outage takes the node's GPUs down
        outage_ms += *m.to - *m.from;
        longest = std::max(longest, *m.to - *m.from);
        if (m.responded_at && *m.responded_at >= *m.from && *m.responded_at <= *m.to) {
          ++responded;
          response_ms += *m.responded_at - *m.from;
        }
        break;
      case MeasurementKind::kFp16Tflops: {
        if (!m.at || *m.at < from || *m.at >= to || !m.tflops_x10) break;
        const auto floor = floor_of(offers, *n, true);
        if (!floor) break;  // nothing was promised for this card
        ++h.benchmarks;
        fp_measured += *m.tflops_x10;
        fp_floor += *floor;
        break;
      }
      case MeasurementKind::kNcclBusbw: {
        if (!m.from || !m.to || !m.busbw_gbps) break;
        const TimeMs t0 = std::max(*m.from, from), t1 = std::min(*m.to, to);
        if (t0 >= t1) break;
        ++h.nccl_runs;
        h.worst_nccl_busbw_gbps = std::min(h.worst_nccl_busbw_gbps.value_or(*m.busbw_gbps), *m.busbw_gbps);
        if (const auto floor = floor_of(offers, *n, false)) {
          nccl_measured += static_cast<__int128>(*m.busbw_gbps) * (t1 - t0);
          nccl_floor += static_cast<__int128>(*floor) * (t1 - t0);
        }
        break;
      }
    }
  }
  if (h.fleet_gpus > 0)
    h.monthly_failure_rate_bp =
        he128(failed_gpus * 10'000 * kMsPerBillingMonth, static_cast<__int128>(h.fleet_gpus) * (to - from));
  if (h.incidents > 0) {
    h.restore_minutes = he128(outage_ms, static_cast<__int128>(h.incidents) * kMsPerMinute);
    h.max_restore_minutes = (longest + kMsPerMinute - 1) / kMsPerMinute;
  }
  if (responded > 0) h.response_minutes = he128(response_ms, static_cast<__int128>(responded) * kMsPerMinute);
  if (fp_floor > 0) h.fp16_attainment_permille = he128(fp_measured * 1000, fp_floor);
  if (nccl_floor > 0) h.nccl_attainment_permille = he128(nccl_measured * 1000, nccl_floor);
  return h;
}

std::vector<SupplierHistoryRule> default_history_rules() {
  return {{"failure_rate", 15, 10, 100},
          {"restore_time", 10, 120, 480},
          {"response_time", 5, 15, 120},
          {"fp16_attainment", 5, 1000, 800},
          {"nccl_attainment", 5, 1000, 800}};
}

SupplierItemResult supplier_score_internal::grade(const SupplierHistoryRule& r, const SupplierHistory& h) {
  HistoryFacts facts = history_facts(r.id);
  SupplierItemResult x;
  x.id = r.id;
  x.text = std::move(facts.name);
  x.history = true;
  x.weight = r.weight;
  x.source = "none";
  const auto v = history_value(r.id, h);
  if (!v) {
    x.evidence = Message("advisor.suppliers.evidence.no_record");
    return x;
  }
  // credit = 1000 × (bad − value) ÷ (bad − good), clamped to 0..1000 (the same formula for both directions).
  const int64_t num = (r.bad - *v) * 1000, den = r.bad - r.good;
  x.credit_permille = std::clamp<int64_t>(he_sat(den < 0 ? -num : num, den < 0 ? -den : den), 0, 1000);
  x.status = x.credit_permille == 1000 ? SupplierItemStatus::kPass
             : x.credit_permille == 0  ? SupplierItemStatus::kFail
                                       : SupplierItemStatus::kPartial;
  x.source = source_of(h, history_field(r.id));
  const std::string f = "1000 × (" + n2s(r.bad) + " − " + n2s(*v) + ") ÷ (" + n2s(r.bad) + " − " + n2s(r.good) + ")";
  x.evidence = Message("advisor.suppliers.evidence.graded")
                   .arg("value", n2s(*v))
                   .arg("unit", facts.unit)
                   .arg("formula", f)
                   .arg("credit", n2s(x.credit_permille));
  return x;
}

json to_json(const SupplierHistory& h) {
  json j = json::object();
  auto put = [&](const char* k, const std::optional<int64_t>& v) {
    if (v) j[k] = *v;
  };
  put("monthly_failure_rate_bp", h.monthly_failure_rate_bp);
  put("response_minutes", h.response_minutes);
  put("restore_minutes", h.restore_minutes);
  put("max_restore_minutes", h.max_restore_minutes);
  put("fp16_attainment_permille", h.fp16_attainment_permille);
  put("nccl_attainment_permille", h.nccl_attainment_permille);
  put("worst_nccl_busbw_gbps", h.worst_nccl_busbw_gbps);
  put("allreduce_8gpu_1gb_ms", h.allreduce_8gpu_1gb_ms);
  j["entered"] = h.entered;
  j["evidence"] = {{"fleet_gpus", h.fleet_gpus},
                   {"incidents", h.incidents},
                   {"benchmarks", h.benchmarks},
                   {"nccl_runs", h.nccl_runs}};
  return j;
}

}  // namespace gpurent
