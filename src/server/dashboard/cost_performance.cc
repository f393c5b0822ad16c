#include "server/dashboard/cost_performance.h"

#include <algorithm>

#include "billing/firewall.h"
#include "model/job.h"
#include "model/tenant.h"
#include "server/services/allocation_ledger.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

using json = nlohmann::json;

// One job's metric in the range: its first and last point (the same when it has one).
struct Series {
  const JobMetricRow* first = nullptr;
  const JobMetricRow* last = nullptr;
  size_t points = 0;
};

// The cost of each job's runs over the range from the day invoices: every line of an allocation
// of the job, per currency, charges, credits and reserved-covered time apart; `latest` is the
// currency of its latest line.
struct JobCosts {
  std::map<Currency, JobCostParts> parts;
  std::optional<Currency> latest;
  TimeMs latest_from = 0;
};

class TenantJobs {
 public:
  TenantJobs(StoreReader& store, const GpuCatalog& catalog, const Record& tenant, const DayRange& range, TimeMs now)
      : store_(store), catalog_(catalog), tenant_(tenant), range_(range), now_(now) {}

  Status add(const std::string& project_id, CostPerformance& out) {
    // Only each series' first and last point: the database aggregates, this holds no more.
    auto rows = store_.job_metrics(
        {.job_id = "", .tenant_id = tenant_.id, .from = range_.from, .to = range_.to, .ends_only = true});
    if (!rows) return rows.error();
    std::vector<Series> series;
    for (const JobMetricRow& r : *rows) {
      if (!project_id.empty() && r.project_id != project_id) continue;
      if (series.empty() || series.back().first->job_id != r.job_id || series.back().first->name != r.name)
        series.push_back({&r, &r, 0});
      series.back().last = &r;
      ++series.back().points;
    }
    std::erase_if(series, [](const Series& s) { return s.points < 2; });
    if (series.empty()) return ok_status();

    auto allocs = list_runs(store_, {{"tenant_id", tenant_.id}}, "the tenant's cost performance cannot be shown without it");
    if (!allocs) return allocs.error();
    allocs_ = std::move(*allocs);
    std::map<std::string, std::string> job_of_alloc;
    for (const Series& s : series) runs_[s.first->job_id];
    for (const StoredRun& a : allocs_) {
      const std::string& job = a.run.job_id;
      if (auto it = runs_.find(job); it != runs_.end()) it->second.push_back(&a.run), job_of_alloc[a.record.id] = job;
    }
    if (auto st = add_costs(job_of_alloc); !st) return st;

    const auto tenant_currency = stored_tenant_currency(tenant_.body);
    const Currency home = tenant_currency ? *tenant_currency : Currency::kUSD;
    for (const Series& s : series) {
      JobEfficiency e;
      e.job_id = s.first->job_id;
      e.metric = s.first->name;
      e.higher_is_better = s.last->higher_is_better;
      e.first = s.first->value;
      e.last = s.last->value;
      e.gain = e.higher_is_better ? e.last - e.first : e.first - e.last;
      e.job = e.job_id;
      if (auto job = store_.get("jobs", e.job_id)) {
        e.job = job->name;
        auto j = decode_record(*job, [&](const json& b) { return parse_job(b, home); }, "the cost-performance view cannot show it");
        if (!j) return j.error();
        e.kind = enum_name(kJobKindNames, j->kind);
      }
      e.project = project_name(s.first->project_id);
      const JobCosts& c = costs_[e.job_id];
      const Currency cur = c.latest.value_or(home);
      auto& parts = out.costs[e.job_id];
      parts = c.parts;
      const JobCostParts& p = parts[cur];
      e.cost = Money(p.charges + p.credits, cur);
      for (const auto& [other, m] : c.parts)
        if (other != cur) e.other_costs.push_back(Money(m.charges + m.credits, other));
      auto st = add_gpu_time(e, s.first->at, s.last->at);
      if (!st) return st;
      out.jobs.push_back(std::move(e));
    }
    return ok_status();
  }

 private:
  Status add_costs(const std::map<std::string, std::string>& job_of_alloc) {
    DayInvoices invoices(store_, catalog_, tenant_.id, now_);
    for (TimeMs day : range_.days) {
      auto inv = invoices.day(day);
      if (!inv) return inv.error();
      for (const InvoiceSection& s : (*inv)->sections)
        for (const ChargeLine& l : s.rated.lines) {
          // Credit lines name "<measurement>/<allocation>": the run is what follows the last '/'.
          const auto slash = l.allocation.rfind('/');
          auto it = job_of_alloc.find(slash == std::string::npos ? l.allocation : l.allocation.substr(slash + 1));
          if (it == job_of_alloc.end()) continue;
          JobCosts& c = costs_[it->second];
          JobCostParts& p = c.parts[s.rated.currency];
          (l.kind == LineKind::kCredit ? p.credits : p.charges) += l.amount.micros();
          p.reserved_covered += l.covered_value.micros();
          if (!c.latest || l.from >= c.latest_from) c.latest = s.rated.currency, c.latest_from = l.from;
        }
    }
    return ok_status();
  }

  // GPU time of the job's runs inside [from, to] and its cards' mean utilization there.
  Status add_gpu_time(JobEfficiency& e, TimeMs from, TimeMs to) {
    int64_t samples = 0, util_sum = 0;
    for (const JobRun* a : runs_[e.job_id]) {
      const auto& running = a->running_at;
      if (!running) continue;
      const TimeMs t0 = std::max(*running, from);
      const TimeMs t1 = std::min(a->ended_at.value_or(now_), to);
      if (t1 <= t0) continue;
      e.gpu_milli_ms += static_cast<__int128>(a->gpu_milli) * (t1 - t0);
      for (const auto& part : a->placement)
        for (int64_t gpu : part.gpus) {
          auto buckets = store_.gpu_usage_buckets({part.node_id, gpu, t0, t1, kMsPerDay});
          if (!buckets) return buckets.error();
          for (const GpuBucket& b : *buckets) samples += b.samples, util_sum += b.util_sum;
        }
    }
    if (samples > 0) {
      e.mean_util_pct = div_half_even_sat(util_sum, samples);  // a mean of 0..100
    }
    return ok_status();
  }

  std::string project_name(const std::string& id) {
    if (auto it = project_names_.find(id); it != project_names_.end()) return it->second;
    auto p = store_.get("projects", id);
    return project_names_[id] = p ? p->name : id;
  }

  StoreReader& store_;
  const GpuCatalog& catalog_;
  const Record& tenant_;
  const DayRange& range_;
  TimeMs now_;
  std::vector<StoredRun> allocs_;
  std::map<std::string, std::vector<const JobRun*>> runs_;  // by job id
  std::map<std::string, JobCosts> costs_;                  // by job id
  std::map<std::string, std::string> project_names_;
};

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// A job's cost parts in one currency (zero when it has no line in it).
JobCostParts parts_of(const CostPerformance& c, const std::string& job_id, Currency cur) {
  if (auto it = c.costs.find(job_id); it != c.costs.end())
    if (auto p = it->second.find(cur); p != it->second.end()) return p->second;
  return {};
}

// A job's charges, credits and reserved-covered value in one currency, as decimal strings.
void put_parts(json& out, const JobCostParts& p, Currency c) {
  out["charges"] = Money(p.charges, c).amount_string();
  out["credits"] = Money(p.credits, c).amount_string();
  out["reserved_covered_value"] = Money(p.reserved_covered, c).amount_string();
}

}  // namespace

Result<CostPerformance> build_cost_performance(StoreReader& store, const GpuCatalog& catalog,
                                               const std::vector<Record>& tenants, const std::string& project_id,
                                               const DayRange& range, TimeMs now) {
  CostPerformance out;
  out.range = range;
  for (const Record& t : tenants)
    if (auto st = TenantJobs(store, catalog, t, range, now).add(project_id, out); !st) return st.error();
  out.medians = rank_jobs(out.jobs);
  return out;
}

json to_json(const CostPerformance& c) {
  json jobs = json::array();
  for (const JobEfficiency& j : c.jobs) {
    json flags = json::array();
    for (const auto& f : j.flags) {
      json flag = text_json(f.text);
      flag["key"] = f.key;
      flags.push_back(std::move(flag));
    }
    // Per unit of gain: what the job's work cost before credits (an SLA refund is not a cheaper
    // run), its reserved-covered GPU time counted at the commitment's price.
    const Currency cur = j.cost.currency();
    const JobCostParts parts = parts_of(c, j.job_id, cur);
    const auto per_gain = cost_per_unit_gain(Money(parts.charges + parts.reserved_covered, cur), j.gain);
    json row = {{"job_id", j.job_id},
                {"job", j.job},
                {"project", j.project},
                {"kind", j.kind},
                {"metric", j.metric},
                {"higher_is_better", j.higher_is_better},
                {"first", j.first},
                {"last", j.last},
                {"gain", j.gain},
                {"gpu_hours", gpu_hours_text(j.gpu_milli_ms)},
                {"gain_per_gpu_hour", optional_number(j.gain_per_gpu_hour)},
                {"cost", j.cost.amount_string()},
                {"currency", currency_code(j.cost.currency())},
                {"cost_per_unit_gain", per_gain ? json(per_gain->amount_string()) : json(nullptr)},
                {"mean_util_pct", j.mean_util_pct ? json(*j.mean_util_pct) : json(nullptr)},
                {"rank", j.rank},
                {"inefficient", !j.flags.empty()},
                {"flags", std::move(flags)}};
    put_parts(row, parts, cur);
    if (!j.other_costs.empty()) {
      json others = json::array();
      for (const Money& m : j.other_costs) {
        json other = {{"cost", m.amount_string()}, {"currency", currency_code(m.currency())}};
        put_parts(other, parts_of(c, j.job_id, m.currency()), m.currency());
        others.push_back(std::move(other));
      }
      row["other_costs"] = std::move(others);
    }
    jobs.push_back(std::move(row));
  }
  json medians = json::object();
  for (const auto& [metric, m] : c.medians) medians[metric] = optional_number(m);
  return {{"from", format_rfc3339(c.range.from)},
          {"to", format_rfc3339(c.range.to)},
          {"jobs", std::move(jobs)},
          {"median_gain_per_gpu_hour", std::move(medians)}};
}

}  // namespace gpurent
