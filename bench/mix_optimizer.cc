// bench/run mix_optimizer [PHILLY_CSV]: the reserved / on-demand / spot mix for the Philly trace's
// hourly GPU demand (every job running from its submission), priced with the demo world's RunPod
// H100 SXM offer (on-demand and spot from the public list, reserved 1/12/36 months at 95/80/65% of
// on-demand), spot risk 50‰ re-run on on-demand, spot at most 25% of each hour, reservations in
// whole 8-GPU nodes. Four scenarios: the hourly peak or the hourly average as the demand, and the
// commitment's months past the ~4-month trace either left out (the curve is taken to go on) or
// billed in full. Prints each plan against pure on-demand and the best single reservation level.
// Last line: the optimizer's run time (compute_mix with GLPK, peak demand, curve going on) and,
// as the baseline, the exhaustive single-level scan over every hour (each reserved option at each
// node count, on-demand above it: what a spreadsheet does), timed in the same run; its answer is
// checked against the optimizer's own best single level.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "advisor/mix.h"
#include "catalog/gpu_catalog.h"
#include "demo/demo_world.h"
#include "io/files.h"

using namespace gpurent;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string pct(const std::optional<int64_t>& bp) {
  if (!bp) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", static_cast<double>(*bp) / 100);  // display only
  return buf;
}

// The baseline: every reserved option at every multiple of the unit up to the peak, on-demand
// (the cheapest option, unlimited) above it, summed hour by hour. Micro-units.
__int128 single_level_scan(const MixInput& in) {
  int64_t peak = 0, on_demand = INT64_MAX;
  for (int64_t g : in.demand.gpus) peak = std::max(peak, g);
  for (const CapacityOption& o : in.options)
    if (o.mode == CapacityMode::kOnDemand) on_demand = std::min(on_demand, o.price_per_gpu_hour.micros());
  const auto hours = static_cast<int64_t>(in.demand.gpus.size());
  __int128 best = -1;
  for (const CapacityOption& o : in.options) {
    if (!is_reserved(o.mode)) continue;
    const int64_t term = term_hours(o.mode), billed = in.count_whole_terms ? (hours + term - 1) / term * term : hours;
    for (int64_t q = 0; q < peak + in.reservation_unit_gpus; q += in.reservation_unit_gpus) {
      __int128 cost = static_cast<__int128>(q) * billed * o.price_per_gpu_hour.micros();
      for (int64_t d : in.demand.gpus) cost += static_cast<__int128>(std::max<int64_t>(0, d - q)) * on_demand;
      if (best < 0 || cost < best) best = cost;
    }
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "../shared/data/traces/philly/philly.csv";
  if (!std::filesystem::exists(path)) {
    std::printf("skipping: %s not found (the Philly trace; see ../shared/data/traces/philly/SOURCE.md)\n",
                path.c_str());
    return 0;
  }
  auto jobs = read_philly_file(path);
  if (!jobs) return std::printf("%s\n", jobs.error().message.c_str()), 1;

  auto catalog = load_catalog_file(default_catalog_path());
  if (!catalog) return std::printf("%s\n", catalog.error().message.c_str()), 1;
  auto prices = read_demo_price_files(default_data_dir());
  if (!prices) return std::printf("%s\n", prices.error().message.c_str()), 1;
  auto world = build_demo_world(*prices, *catalog);
  if (!world) return std::printf("%s\n", world.error().message.c_str()), 1;
  std::optional<Offer> offer;
  for (const DemoObject& o : world->objects)
    if (o.kind == "offers" && o.body.value("supplier", "") == "runpod" &&
        o.body.value("gpu_model", "") == "h100-sxm5-80gb") {
      auto parsed = parse_offer(o.body, *catalog);
      if (!parsed) return std::printf("%s\n", parsed.error().message.c_str()), 1;
      offer = *parsed;
      break;
    }
  if (!offer) return std::printf("the demo world has no RunPod H100 offer\n"), 1;

  MixInput base;
  base.currency = offer->currency;
  base.options = options_from_offer(*offer);
  base.spot_interruption_permille = 50;
  base.max_spot_share_pct = 25;
  base.reservation_unit_gpus = 8;
  std::printf("%zu Philly jobs; demo offer %s:", jobs->size(), offer->name.c_str());
  for (const CapacityOption& o : base.options)
    std::printf(" %s %s", capacity_mode_name(o.mode), o.price_per_gpu_hour.amount_string().c_str());
  std::printf(" %s per GPU-hour; spot risk 50 permille, spot <= 25%% of each hour, 8-GPU units\n",
              currency_code(base.currency));
  std::printf("%-26s %6s %7s %9s %13s %13s %13s %8s %8s %6s %6s %6s %8s\n", "scenario", "hours", "peak", "GPU-h",
              "plan", "on-demand", "best single", "vs OD", "vs single", "resv", "util", "spot", "solve ms");

  double main_ms = 0, baseline_ms = 0;
  for (HourlyMeasure measure : {HourlyMeasure::kPeak, HourlyMeasure::kAverageCeil}) {
    auto demand = demand_from_philly(*jobs, measure);
    if (!demand) return std::printf("%s\n", demand.error().message.c_str()), 1;
    for (bool whole_terms : {false, true}) {
      MixInput in = base;
      in.demand = *demand;
      in.count_whole_terms = whole_terms;
      const auto t0 = std::chrono::steady_clock::now();
      auto r = compute_mix(in);
      const double took = ms_since(t0);
      if (!r) return std::printf("%s\n", r.error().message.c_str()), 1;
      const auto t1 = std::chrono::steady_clock::now();
      const __int128 scan = single_level_scan(in);
      const double scan_ms = ms_since(t1);
      if (!r->best_single || scan != r->best_single->cost.micros())
        return std::printf("single-level scan disagrees with the optimizer's best single level\n"), 1;
      std::string reserved;
      for (const ReservedLine& l : r->reserved)
        reserved += (reserved.empty() ? "" : "+") + std::to_string(l.gpus) + "x" +
                    std::string(capacity_mode_name(l.mode)).substr(9);
      const std::string name =
          std::string(hourly_measure_name(measure)) + (whole_terms ? ", whole terms" : ", curve goes on");
      std::printf("%-26s %6lld %7lld %9lld %13s %13s %13s %8s %8s %6s %6s %6s %8.1f\n", name.c_str(),
                  static_cast<long long>(r->hours), static_cast<long long>(r->peak_gpus),
                  static_cast<long long>(r->gpu_hours), r->expected_cost.amount_string().c_str(),
                  r->on_demand_cost->amount_string().c_str(), r->best_single->cost.amount_string().c_str(),
                  pct(r->saving_vs_on_demand_bp).c_str(), pct(r->saving_vs_single_bp).c_str(),
                  reserved.empty() ? "0" : reserved.c_str(), pct(r->reserved_utilization_bp).c_str(),
                  pct(r->spot_share_bp).c_str(), took);
      if (measure == HourlyMeasure::kPeak && !whole_terms) {
        main_ms = took, baseline_ms = scan_ms;
        auto model = prepare_mix(in);
        auto t2 = std::chrono::steady_clock::now();
        auto exact = compute_mix(in, MixSolver::kExact);
        const double exact_ms = ms_since(t2);
        t2 = std::chrono::steady_clock::now();
        auto glpk = solve_mix_milp(in, *model);  // the MILP alone, one row per demand level
        const double glpk_ms = ms_since(t2);
        t2 = std::chrono::steady_clock::now();
        auto hourly = solve_mix_milp(in, *model, false);
        const double hourly_ms = ms_since(t2);
        if (!exact || !glpk || !hourly || exact->expected_cost != r->expected_cost)
          return std::printf("the exact search or the per-hour MILP failed or disagrees\n"), 1;
        std::printf(
            "  (%lld demand levels; GLPK solve %.1f ms%s; exact convex search %.1f ms; the MILP with one row per hour "
            "instead of per level %.1f ms)\n",
            static_cast<long long>(r->levels), glpk_ms,
            r->milp_corrected ? ", corrected by the exact check" : "", exact_ms, hourly_ms);
      }
    }
  }
  std::printf("mix_optimizer: %.1f ms (baseline: %.1f ms)\n", main_ms, baseline_ms);
  return 0;
}
