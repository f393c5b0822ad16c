// bench/run market_api [ORDERS] [--gpurent BUILD/gpurent]
// The order API end to end: what an order costs through HTTP, the single writer and SQLite (with
// fsync), against a plain API write in the same run. Starts the real server (rate limits off) with
// a supplier of two 8-GPU H100 nodes and a tenant; the operator's token places every order (naming
// the supplier or the tenant), one at a time on one kept-alive connection, as fast as answered:
//  * baseline: 500 plain writes (PUT /api/v1/tenants/acme/billing);
//  * a realistic mix over one-hour books of the next days: per book the supplier offers its two
//    nodes (8 GPUs each; a trade holds whole nodes) and the tenant buys each of them (marketable:
//    they trade and are settled into a reservation and a commitment), then rests 8-GPU bids below
//    the ask, every fourth of them cancelled (ORDERS requests, default 1,000);
//  * a deep book: another tenant's 800 resting bids in one book first, then 200 more bids measured
//    there (each order rebuilds its book from the store: this is what that costs).
// Last line: market_api: <figure> orders/s (baseline: <figure> writes/s)
#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_server.h"
#include "core/clock.h"

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

double seconds_since(SteadyClock::time_point t0) { return std::chrono::duration<double>(SteadyClock::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv) {
  int orders = 1000;
  const std::string bin = bench::parse_args(argc, argv, orders);
  bench::ServerChild server("market_api", bin, {"--sched-interval-ms", "1000"});
  if (!server.started()) {
    std::cerr << "market_api: the server (" << bin << ") did not start\n";
    return 1;
  }
  const std::string url = server.url();
  auto client = server.client();
  httplib::Client& c = *client;
  const httplib::Headers auth = server.auth();
  auto post = [&](const std::string& path, const json& body) { return server.post(c, path, body); };
  server.supplier_with_two_nodes(c);
  server.offer_for_the_nodes(c);
  post("/api/v1/tenants", json{{"name", "acme"}, {"currency", "CNY"}, {"contact_email", "ops@acme.example.com"}});
  post("/api/v1/tenants", json{{"name", "deep"}, {"currency", "CNY"}, {"contact_email", "ops@deep.example.com"}});

  // Baseline: plain writes.
  auto t0 = SteadyClock::now();
  for (int i = 0; i < 500; ++i) {
    auto r = c.Put("/api/v1/tenants/acme/billing", auth, R"({"payment":"postpaid"})", "application/json");
    if (!r || r->status != 200) {
      std::cerr << "market_api: a write failed: " << (r ? r->body : "no answer") << "\n";
      return 1;
    }
  }
  const double writes_per_s = 500 / seconds_since(t0);

  const int64_t hour = 3'600'000, day = 24 * hour;
  const int64_t tomorrow = (gpurent::SystemClock().now() / day + 1) * day;
  auto order = [&](int64_t start, const char* side, const std::string& price, const char* tenant = "acme", int gpus = 8) {
    json o = {{"side", side}, {"gpu_model", "h100-sxm5-80gb"}, {"region", "cn-east"}, {"currency", "CNY"},
              {"starts_at", gpurent::format_rfc3339(start)}, {"ends_at", gpurent::format_rfc3339(start + hour)},
              {"gpus", gpus}, {"price_per_gpu_hour", price}};
    o[std::string(side) == "sell" ? "supplier" : "tenant"] = std::string(side) == "sell" ? "sup-a" : tenant;
    return o;
  };
  // The mix: per one-hour book, two sells of a node (8 GPUs, 20.00 and 21.00) each bought at once
  // (30.00), and 16 resting bids (10.xx), every fourth cancelled. Books are used in turn until ORDERS.
  int placed = 0, traded = 0, cancelled = 0, rested = 0;
  t0 = SteadyClock::now();
  for (int book = 0; placed < orders && book < 48; ++book) {
    const int64_t start = tomorrow + book * hour;
    for (int i = 0; i < 16 && placed < orders; ++i) {
      if (i < 2) {
        post("/api/v1/market-orders", order(start, "sell", std::to_string(20 + i) + ".00"));
        ++placed;
        if (placed >= orders) break;
        json buy = post("/api/v1/market-orders", order(start, "buy", "30.00"));
        traded += buy["filled_gpus"].get<int>();
        ++placed;
        if (placed >= orders) break;
      }
      json bid = post("/api/v1/market-orders", order(start, "buy", "10." + std::to_string(10 + i)));
      ++placed, ++rested;
      if (i % 4 == 3 && placed < orders) {
        post("/api/v1/market-orders/" + bid["id"].get<std::string>() + "/cancel", json::object());
        ++placed, ++cancelled;
      }
    }
  }
  const double mix_s = seconds_since(t0);
  const double mix_per_s = placed / mix_s;

  // The deep book: another tenant's 800 resting bids (its open orders stay within the limit of
  // 1,000), then 200 more measured.
  const int64_t deep_start = tomorrow + 3 * day;
  for (int i = 0; i < 800; ++i) post("/api/v1/market-orders", order(deep_start, "buy", "1." + std::to_string(100 + i), "deep", 1));
  t0 = SteadyClock::now();
  for (int i = 0; i < 200; ++i) post("/api/v1/market-orders", order(deep_start, "buy", "2." + std::to_string(100 + i), "deep", 1));
  const double deep_per_s = 200 / seconds_since(t0);

  std::printf("the real server (%s; SQLite with fsync; one client, one kept-alive connection)\n", url.c_str());
  std::printf("  500 plain writes (PUT tenant billing):                %.0f writes/s\n", writes_per_s);
  std::printf("  %d market requests (mix: %d GPUs traded, %d bids rested, %d cancels): %.1f s, %.0f orders/s\n", placed,
              traded, rested, cancelled, mix_s, mix_per_s);
  std::printf("  200 bids into a book of 800 resting orders:          %.0f orders/s\n", deep_per_s);
  std::printf("market_api: %.0f orders/s (baseline: %.0f writes/s)\n", mix_per_s, writes_per_s);
  return 0;
}
