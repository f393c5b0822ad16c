// Benchmark: the rating engine (billing/rating.h) on one tenant's month, single thread. The input
// is built in memory with a fixed seed: ALLOCATIONS allocations (default 2,000) requested over
// November 2026 on three offers — on-demand (60 s minimum increment, idle rule at 50% discount,
// storage I/O and egress fees), spot (market price changing every hour) and a reserved offer with
// a 16-GPU one-month commitment (so the coverage sweep runs) — each with a utilization sample every
// 15 s while it runs (DCGM exporter's default scrape interval) and a storage I/O / egress record
// every 5 minutes, plus three node outages for the SLA credit pass.
// Counted as samples: utilization samples + volume records (spot prices, commitments and
// incidents are not counted). The figure is samples / median wall time of RUNS calls of rate().
// Baseline in the same run: a plain pass over the same samples doing what any rater must — count
// each allocation's samples below its offer's idle threshold and sum the volume bytes — the
// memory-bandwidth floor the rating figure is read against.
// Usage: rating [ALLOCATIONS] [RUNS]   (default 2000 5)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "billing/rating.h"

using namespace gpurent;

namespace {

using Wall = std::chrono::steady_clock;

constexpr TimeMs kSecond = 1000, kMinute = 60 * kSecond, kHour = 60 * kMinute, kDay = 24 * kHour;
constexpr TimeMs kSampleEvery = 15 * kSecond;  // DCGM exporter's default
constexpr TimeMs kVolumeEvery = 5 * kMinute;
constexpr int kNodes = 64;  // 8 GPUs each
constexpr int64_t kCommittedGpus = 16;

Money usd(int64_t micros) { return Money(micros, Currency::kUSD); }

Offer make_offer(const std::string& name, int64_t on_demand_micros) {
  Offer o;
  o.name = name;
  o.supplier = "cloud";
  o.region = "us-east";
  o.currency = Currency::kUSD;
  o.prices.on_demand = usd(on_demand_micros);
  o.fees.storage_io = VolumeFee{usd(10'000), 1'000};  // $0.01/GB beyond 1 TB a month
  o.fees.egress = VolumeFee{usd(90'000), 100};        // $0.09/GB beyond 100 GB a month
  return o;
}

struct World {
  RatingInput in;
  int64_t util_samples = 0;
  int64_t volume_records = 0;
};

World build(int n_allocs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  World w;
  RatingInput& in = w.in;
  in.from = days_from_civil(2026, 11, 1) * kDay;
  in.to = days_from_civil(2026, 12, 1) * kDay;
  in.contract.name = "acme-cloud-2026";
  in.contract.tenant = "acme";
  in.contract.supplier = "cloud";
  in.contract.currency = Currency::kUSD;

  Offer od = make_offer("h100-ondemand", 3'200'000);
  od.min_increment_seconds = 60;
  od.fees.billing_starts = BillingStart::kRunning;
  od.fees.idle = IdleRule{5, 10, IdleAction::kDiscount, 50};
  Offer spot = make_offer("h100-spot", 3'200'000);
  spot.prices.spot = usd(1'600'000);
  spot.min_increment_seconds = 60;
  Offer rsv = make_offer("a100-reserved", 1'800'000);
  rsv.prices.reserved_1m = usd(1'300'000);
  rsv.fees.billing_starts = BillingStart::kApiCall;
  rsv.fees.idle = IdleRule{5, 10, IdleAction::kCharge, std::nullopt};
  in.contract.clauses = od.contract_template;
  for (Offer* o : {&od, &spot, &rsv}) in.offers[o->name] = *o;

  Commitment cm;
  cm.id = "commit-a100-16";
  cm.offer = rsv.name;
  cm.gpus = kCommittedGpus;
  cm.term_months = 1;
  cm.start = in.from;
  cm.end = add_months(cm.start, cm.term_months);
  in.commitments.push_back(cm);

  // Spot market: a random walk in whole cents, new price every hour, between $1.00 and $3.20.
  auto& series = in.spot_prices[spot.name];
  int64_t cents = 160;
  for (TimeMs t = in.from; t < in.to; t += kHour) {
    series.push_back({t, usd(cents * 10'000)});
    cents = std::clamp<int64_t>(cents + uni(-4, 4), 100, 320);
  }

  const double log_lo = std::log(10.0 * kMinute), log_hi = std::log(72.0 * kHour);
  in.allocations.reserve(n_allocs);
  for (int i = 0; i < n_allocs; ++i) {
    Allocation a;
    char id[32];
    std::snprintf(id, sizeof id, "alloc-%06d", i);
    a.id = id;
    std::snprintf(id, sizeof id, "job-%06d", i);
    a.job = id;
    a.project = "project-" + std::to_string(uni(0, 7));
    const int64_t pick = uni(0, 99);
    a.offer = pick < 40 ? od.name : pick < 70 ? spot.name : rsv.name;
    a.mode = pick < 40 ? BillingMode::kOnDemand : pick < 70 ? BillingMode::kSpot
             : pick < 94 ? BillingMode::kReserved : BillingMode::kOnDemand;
    const int64_t g = uni(0, 9);
    const int64_t gpus = g < 4 ? 1 : g < 6 ? 2 : g < 8 ? 4 : 8;
    a.gpu_milli = gpus * 1000;
    PlacementPart part;
    part.node = "node-" + std::to_string(i % kNodes);
    for (int64_t k = 0; k < gpus; ++k) part.gpus.push_back(k);
    a.placement.push_back(std::move(part));
    a.requested_at = in.from + uni(0, in.to - in.from - kHour);
    a.running_at = a.requested_at + uni(20, 180) * kSecond;
    a.ready_at = *a.running_at + uni(30, 300) * kSecond;
    const TimeMs life = static_cast<TimeMs>(std::exp(std::uniform_real_distribution<double>(log_lo, log_hi)(rng)));
    const TimeMs end = *a.running_at + life;
    if (end < in.to) a.ended_at = end;
    const TimeMs stop = std::min(end, in.to);
    // Utilization: busy stretches (mean 2 h, 30..100%) and low stretches (mean 20 min, 0..4%); a
    // low stretch longer than the 10-minute window is idle time.
    bool busy = true;
    for (TimeMs t = *a.running_at; t < stop; t += kSampleEvery) {
      if (busy ? chance(1.0 / 480) : chance(1.0 / 80)) busy = !busy;
      a.utilization.push_back({t, busy ? uni(30, 100) : uni(0, 4)});
    }
    w.util_samples += static_cast<int64_t>(a.utilization.size());
    for (TimeMs t = *a.running_at + kVolumeEvery; t <= stop; t += kVolumeEvery) {
      VolumeUsage v;
      v.at = t;
      v.allocation = a.id;
      v.storage_io_bytes = gpus * uni(0, 500'000'000);
      v.egress_bytes = chance(0.1) ? uni(0, 1'000'000'000) : 0;
      in.volume.push_back(std::move(v));
    }
    in.allocations.push_back(std::move(a));
  }
  std::sort(in.volume.begin(), in.volume.end(), [](const VolumeUsage& x, const VolumeUsage& y) { return x.at < y.at; });
  w.volume_records = static_cast<int64_t>(in.volume.size());
  for (int k = 0; k < 3; ++k) {
    Incident x;
    x.id = "outage-" + std::to_string(k);
    x.node = "node-" + std::to_string(7 + 19 * k);
    x.from = in.from + (5 + 9 * k) * kDay + 3 * kHour;
    x.to = x.from + 20 * kMinute;
    x.reason = "node lost power";
    in.incidents.push_back(std::move(x));
  }
  return w;
}

// The floor: one pass over every sample, as any rater must make.
int64_t plain_pass(const RatingInput& in) {
  int64_t low = 0, bytes = 0;
  for (const auto& a : in.allocations) {
    const Offer& o = in.offers.at(a.offer);
    const int64_t threshold = o.fees.idle ? o.fees.idle->utilization_below_pct : 0;
    int64_t n = 0;
    for (const auto& s : a.utilization) n += s.utilization_pct < threshold;
    low += n;
  }
  for (const auto& v : in.volume) bytes += v.storage_io_bytes + v.egress_bytes;
  return low ^ bytes;
}

template <class F>
std::vector<double> time_runs(int runs, F&& f) {
  std::vector<double> secs;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = Wall::now();
    f();
    secs.push_back(std::chrono::duration<double>(Wall::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  return secs;
}

}  // namespace

int main(int argc, char** argv) {
  const int n_allocs = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  if (n_allocs <= 0 || runs <= 0) {
    std::fprintf(stderr, "usage: rating [ALLOCATIONS>0] [RUNS>0]\n");
    return 2;
  }
  const auto tb = Wall::now();
  const World w = build(n_allocs, 20261101);
  const double build_s = std::chrono::duration<double>(Wall::now() - tb).count();
  const int64_t samples = w.util_samples + w.volume_records;
  std::printf("input: %d allocations, November 2026, 3 offers; %lld utilization samples (every 15 s) + %lld volume "
              "records (every 5 min) = %lld samples; %zu spot prices, 1 commitment of %lld GPUs, %zu incidents "
              "(built in %.2f s)\n",
              n_allocs, static_cast<long long>(w.util_samples), static_cast<long long>(w.volume_records),
              static_cast<long long>(samples), w.in.spot_prices.begin()->second.size(),
              static_cast<long long>(kCommittedGpus), w.in.incidents.size(), build_s);

  size_t lines = 0;
  std::string first_total;
  bool stable = true;
  const auto rate_secs = time_runs(runs, [&] {
    auto r = rate(w.in);
    if (!r) {
      std::fprintf(stderr, "rate: %s\n", r.error().message.c_str());
      std::exit(1);
    }
    if (first_total.empty()) {
      first_total = r->total.to_string();
      lines = r->lines.size();
      std::printf("result: %zu lines; charges %s, credits %s, total %s\n", lines, r->charges.to_string().c_str(),
                  r->credits.to_string().c_str(), first_total.c_str());
      std::map<std::string, int> by_rule;
      for (const auto& l : r->lines) ++by_rule[l.rule];
      std::printf("lines by rule:");
      for (const auto& [rule, n] : by_rule) std::printf(" %s %d", rule.c_str(), n);
      std::printf("\n");
    } else if (r->total.to_string() != first_total || r->lines.size() != lines) {
      stable = false;
    }
  });
  if (!stable) {
    std::fprintf(stderr, "rate() gave different results on the same input\n");
    return 1;
  }
  int64_t sink = 0;
  const auto base_secs = time_runs(runs, [&] { sink += plain_pass(w.in); });
  const double rate_med = rate_secs[rate_secs.size() / 2], base_med = base_secs[base_secs.size() / 2];
  std::printf("rate():     median %.3f s of %d (min %.3f, max %.3f): %.0f samples/s, %zu lines\n", rate_med, runs,
              rate_secs.front(), rate_secs.back(), samples / rate_med, lines);
  std::printf("plain pass: median %.4f s of %d (min %.4f, max %.4f): %.0f samples/s (checksum %lld)\n", base_med, runs,
              base_secs.front(), base_secs.back(), samples / base_med, static_cast<long long>(sink % 1000));
  std::printf("rating: %.0f samples/s (baseline: %.0f samples/s for a plain pass over the samples)\n",
              samples / rate_med, samples / base_med);
  return 0;
}
