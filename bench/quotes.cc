// bench/run quotes [LAUNCHES] [SEGMENTS] [OFFERS]: one POST /api/v1/advise/quotes computation
// (parse_quotes_input + compute_quotes, single thread) at the request's ceiling by default: 1,000
// launches a month of a 10-segment profile (launches × segments at the 10,000 the parser allows),
// 2-minute segments alternating 90% and 0% utilization, on 20 H100 offers that each state reserved
// 1/12/36-month prices and an idle rule with a 1-minute window (so every idle segment splits its
// launch and each offer is rated on-demand and once per term: the engine's reserved coverage sweep
// runs 60 times). The figure is the median wall time of 3 runs. Baseline in the same run: the same
// offers quoted for one launch of the same profile.
#include "advisor/quotes.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "io/files.h"

using namespace gpurent;
using json = nlohmann::json;

namespace {

json body_for(int64_t launches, int64_t segments, int64_t offers) {
  json profile = json::array();
  for (int64_t i = 0; i < segments; ++i) profile.push_back({{"minutes", 2}, {"utilization_pct", i % 2 ? 0 : 90}});
  json list = json::array();
  for (int64_t i = 0; i < offers; ++i)
    list.push_back({{"name", "h100-" + std::to_string(i)},
                    {"supplier", "bench"},
                    {"region", "cn-east"},
                    {"gpu_model", "h100-sxm5-80gb"},
                    {"currency", "USD"},
                    {"prices",
                     {{"on_demand", "2." + std::to_string(10 + i)},
                      {"reserved_1m", "1.90"},
                      {"reserved_12m", "1.60"},
                      {"reserved_36m", "1.30"}}},
                    {"min_increment_seconds", 60},
                    {"fees",
                     {{"billing_starts", "ready"},
                      {"idle", {{"utilization_below_pct", 5}, {"window_minutes", 1}, {"action", "charge"}}}}}});
  return {{"workload", {{"launches_per_month", launches}, {"gpus", 1}, {"profile", profile}}}, {"offers", list}};
}

// Median seconds of `runs` quotes of the body; exits on an error (a bench of a refusal is no bench).
double time_quotes(const json& body, const GpuCatalog& catalog, int runs, size_t* ranked) {
  std::vector<double> secs;
  for (int r = 0; r < runs; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    auto in = parse_quotes_input(body, catalog);
    if (!in) std::printf("input refused: %s\n", in.error().message.c_str()), std::exit(1);
    auto out = compute_quotes(*in);
    if (!out) std::printf("quotes failed: %s\n", out.error().message.c_str()), std::exit(1);
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    *ranked = out->offers.size();
  }
  std::sort(secs.begin(), secs.end());
  return secs[secs.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t launches = argc > 1 ? std::atoll(argv[1]) : 1000;
  const int64_t segments = argc > 2 ? std::atoll(argv[2]) : 10;
  const int64_t offers = argc > 3 ? std::atoll(argv[3]) : 20;
  auto catalog = load_catalog_file(default_catalog_path());
  if (!catalog) return std::printf("%s\n", catalog.error().message.c_str()), 1;
  size_t ranked = 0;
  const double base = time_quotes(body_for(1, segments, offers), *catalog, 3, &ranked);
  std::printf("baseline: 1 launch x %lld segments, %zu offers: %.3f s\n", static_cast<long long>(segments), ranked,
              base);
  const double full = time_quotes(body_for(launches, segments, offers), *catalog, 3, &ranked);
  std::printf("request: %lld launches x %lld segments, %zu offers: %.3f s\n", static_cast<long long>(launches),
              static_cast<long long>(segments), ranked, full);
  std::printf("quotes: %.3f s per request (baseline: %.3f s for one launch)\n", full, base);
  return 0;
}
