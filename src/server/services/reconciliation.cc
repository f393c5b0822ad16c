#include "server/services/reconciliation.h"

#include <algorithm>
#include <map>

#include "server/services/allocation_ledger.h"

namespace gpurent {

using json = nlohmann::json;
namespace {

std::string gpu_seconds(int64_t milli_s) {
  const bool neg = milli_s < 0;
  const int64_t v = neg ? -milli_s : milli_s;
  std::string frac = std::to_string(v % 1000);
  frac.insert(0, 3 - frac.size(), '0');
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  return (neg ? "-" : "") + std::to_string(v / 1000) + (frac.empty() ? "" : "." + frac);
}

}  // namespace

Result<std::vector<ReconciliationRow>> reconcile(StoreReader& store, const std::string& tenant_id, TimeMs from, TimeMs to,
                                                 TimeMs now, const ReconciliationOptions& opt, const SlurmTimes* slurm) {
  std::vector<ReconciliationRow> out;
  auto runs = list_runs(store, {{"tenant_id", tenant_id}}, "the tenant's runs cannot be reconciled without it");
  if (!runs) return runs.error();
  for (const auto& [a, run] : *runs) {
    const auto& running = run.running_at;
    const auto& ended = run.ended_at;
    if (!running) continue;
    // A run that started and ended within the same second (Slurm's clock) still has a row.
    const TimeMs t0 = std::max(*running, from), t1 = std::min(ended.value_or(now), to);
    if (*running >= to || ended.value_or(now) < from || t0 > t1) continue;
    ReconciliationRow r;
    r.allocation = a.id;
    r.job_id = run.job_id;
    r.job = run.job;
    r.project_id = a.project_id;
    r.from = t0;
    r.to = t1;
    const int64_t milli = run.gpu_milli;
    if (milli == 0) continue;  // CPU-only: no GPU time to reconcile
    r.allocated_milli_s = milli * (t1 - t0) / 1000;
    int64_t cards = 0;
    __int128 covered_card_ms = 0;  // summed over cards
    for (const auto& p : run.placement)
      for (int64_t g : p.gpus) {
        ++cards;
        auto pts = store.gpu_usage(p.node_id, g, t0 - opt.max_sample_gap, t1, 1'000'000);
        if (!pts) return pts.error();
        for (size_t i = 0; i < pts->size(); ++i) {
          const auto& pt = (*pts)[i];
          TimeMs s = pt.at, e;
          if (pt.minute) {
            e = s + kMsPerMinute;
          } else {
            const TimeMs next = i + 1 < pts->size() ? (*pts)[i + 1].at : t1;
            e = std::min(next, s + opt.max_sample_gap);
          }
          s = std::max(s, t0);
          e = std::min(e, t1);
          if (s < e) covered_card_ms += e - s;
        }
      }
    if (cards > 0) r.metered_milli_s = static_cast<int64_t>(covered_card_ms * milli / cards / 1000);
    r.slurm_job_id = run.slurm_job_id.value_or(0);
    if (slurm && r.slurm_job_id) {
      auto it = slurm->find(r.slurm_job_id);
      if (it != slurm->end() && !it->second.empty()) {
        // A job Slurm requeued has a record per run: the one that started nearest this run.
        const SlurmRun* best = &it->second.front();
        for (const auto& sr : it->second)
          if (std::llabs(sr.start - *running) < std::llabs(best->start - *running)) best = &sr;
        // Elapsed × GPUs, clipped to the period like the allocation (elapsed is whole seconds).
        const TimeMs s0 = std::max(best->start, from), s1 = std::min(best->start + best->elapsed_s * 1000, to);
        r.slurm_milli_s = s1 > s0 ? best->gpus * (s1 - s0) : 0;
      }
    }
    const int64_t gap = r.allocated_milli_s - r.metered_milli_s;
    const int64_t agap = gap < 0 ? -gap : gap;
    r.flagged = agap * 100 > r.allocated_milli_s * 5 || agap > 300'000;
    if (r.metered_milli_s == 0)
      r.note = Message("reconciliation.no_samples");
    else if (r.flagged)
      r.note = gap > 0 ? Message("reconciliation.metered_less") : Message("reconciliation.metered_more");
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return std::tie(a.job_id, a.from) < std::tie(b.job_id, b.from); });
  return out;
}

json to_json(const std::vector<ReconciliationRow>& rows, TimeMs from, TimeMs to) {
  json items = json::array(), jobs = json::array();
  std::map<std::string, std::pair<int64_t, int64_t>> per_job;
  std::map<std::string, std::string> job_name;
  int64_t alloc = 0, metered = 0, flagged = 0;
  for (const auto& r : rows) {
    items.push_back({{"allocation", r.allocation},
                     {"job_id", r.job_id},
                     {"job", r.job},
                     {"project_id", r.project_id},
                     {"from", format_rfc3339(r.from)},
                     {"to", format_rfc3339(r.to)},
                     {"allocated_gpu_seconds", gpu_seconds(r.allocated_milli_s)},
                     {"metered_gpu_seconds", gpu_seconds(r.metered_milli_s)},
                     {"gap_gpu_seconds", gpu_seconds(r.allocated_milli_s - r.metered_milli_s)},
                     {"flagged", r.flagged},
                     {"note", render_en(r.note)},
                     {"slurm_job_id", r.slurm_job_id ? json(r.slurm_job_id) : json(nullptr)},
                     {"slurm_gpu_seconds", r.slurm_milli_s ? json(gpu_seconds(*r.slurm_milli_s)) : json(nullptr)},
                     {"slurm_gap_gpu_seconds",
                      r.slurm_milli_s ? json(gpu_seconds(r.allocated_milli_s - *r.slurm_milli_s)) : json(nullptr)}});
    if (!r.note.empty()) items.back()["note_message"] = message_to_json(r.note);
    per_job[r.job_id].first += r.allocated_milli_s;
    per_job[r.job_id].second += r.metered_milli_s;
    job_name[r.job_id] = r.job;
    alloc += r.allocated_milli_s;
    metered += r.metered_milli_s;
    flagged += r.flagged;
  }
  for (const auto& [id, am] : per_job)
    jobs.push_back({{"job_id", id},
                    {"job", job_name[id]},
                    {"allocated_gpu_seconds", gpu_seconds(am.first)},
                    {"metered_gpu_seconds", gpu_seconds(am.second)},
                    {"gap_gpu_seconds", gpu_seconds(am.first - am.second)}});
  return {{"period", {{"from", format_rfc3339(from)}, {"to", format_rfc3339(to)}}},
          {"rows", std::move(items)},
          {"jobs", std::move(jobs)},
          {"totals",
           {{"allocated_gpu_seconds", gpu_seconds(alloc)},
            {"metered_gpu_seconds", gpu_seconds(metered)},
            {"gap_gpu_seconds", gpu_seconds(alloc - metered)},
            {"flagged_runs", flagged}}}};
}

}  // namespace gpurent
