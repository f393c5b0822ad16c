// bench/run market_rematch [NODES] [--gpurent BUILD/gpurent]   (NODES at most 125: 1,000 open orders)
// One buy against a book of sells its seller cannot all deliver: a trade takes whole nodes, so a
// seller of NODES 8-GPU nodes (default 125) may rest NODES × 8 one-GPU sells (what it counts as
// deliverable is GPUs, and 1,000 is also the open-order limit), and a buy of all of them trades
// the first NODES before the seller has no node left. The rest leave the book (cancelled: "its
// seller can no longer deliver it"). Timed: that one buy (POST /api/v1/market-orders, through
// HTTP, the single writer and SQLite with fsync). Baseline in the same run, another window: the
// same seller's NODES one-node sells (8 GPUs each) bought by the same buy, nothing left out.
// Last line: market_rematch: <figure> s (baseline: <figure> s)
#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "bench_server.h"
#include "core/clock.h"

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int nodes = 125;
  const std::string bin = bench::parse_args(argc, argv, nodes);
  if (nodes < 1 || nodes > 125) {  // NODES × 8 sells must fit the seller's 1,000 open orders
    std::cerr << "market_rematch: NODES must be 1..125\n";
    return 2;
  }
  auto started = bench::start_server("market_rematch", bin, {"--sched-interval-ms", "1000"});
  if (!started) return 1;
  bench::ServerChild& server = *started;
  auto client = server.client();
  httplib::Client& c = *client;
  c.set_read_timeout(600, 0);  // the engine before 2026-12-07 took about a minute over the one-GPU sells
  auto post = [&](const std::string& path, const json& body) { return server.post(c, path, body); };
  server.supplier_with_two_nodes(c, nodes);
  server.offer_for_the_nodes(c);
  post("/api/v1/tenants", json{{"name", "acme"}, {"currency", "CNY"}, {"contact_email", "ops@acme.example.com"}});

  const int64_t hour = 3'600'000, day = 24 * hour;
  const int64_t tomorrow = (gpurent::SystemClock().now() / day + 1) * day;
  auto order = [&](int64_t start, const char* side, int gpus, const std::string& price) {
    json o = {{"side", side},
              {"gpu_model", "h100-sxm5-80gb"},
              {"region", "cn-east"},
              {"currency", "CNY"},
              {"starts_at", gpurent::format_rfc3339(start)},
              {"ends_at", gpurent::format_rfc3339(start + hour)},
              {"gpus", gpus},
              {"price_per_gpu_hour", price}};
    o[std::string(side) == "sell" ? "supplier" : "tenant"] = std::string(side) == "sell" ? "sup-a" : "acme";
    return o;
  };
  // One buy of every GPU offered in the window at `start`; returns its seconds and what it filled.
  auto buy_all = [&](int64_t start, double* secs) {
    const auto t0 = SteadyClock::now();
    json b = post("/api/v1/market-orders", order(start, "buy", nodes * 8, "30.00"));
    *secs = std::chrono::duration<double>(SteadyClock::now() - t0).count();
    return b.value("filled_gpus", int64_t{-1});
  };

  // Baseline: one sell per node.
  for (int i = 0; i < nodes; ++i) post("/api/v1/market-orders", order(tomorrow, "sell", 8, "20.00"));
  double base_s = 0;
  const int64_t base_filled = buy_all(tomorrow, &base_s);
  // One-GPU sells: only the first `nodes` can be delivered.
  const int64_t later = tomorrow + 2 * hour;
  for (int i = 0; i < nodes * 8; ++i) post("/api/v1/market-orders", order(later, "sell", 1, "20.00"));
  double small_s = 0;
  const int64_t small_filled = buy_all(later, &small_s);

  std::printf("the real server (%s; SQLite with fsync), a seller of %d 8-GPU nodes\n", server.url().c_str(), nodes);
  std::printf("  baseline: %d one-node sells, one buy of %d GPUs: filled %lld in %.3f s\n", nodes, nodes * 8,
              static_cast<long long>(base_filled), base_s);
  std::printf("  %d one-GPU sells, one buy of %d GPUs: filled %lld in %.3f s (the other %d sells left the book)\n",
              nodes * 8, nodes * 8, static_cast<long long>(small_filled), small_s, nodes * 7);
  std::printf("market_rematch: %.3f s (baseline: %.3f s)\n", small_s, base_s);
  return (base_filled == nodes * 8 && small_filled == nodes) ? 0 : 1;
}
