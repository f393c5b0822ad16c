// The market on several servers sharing one PostgreSQL database (docs/market.md#several-servers):
// orders for one book placed at the same time through two servers are matched one after another,
// as one server would — no order rests against one that crosses it, a seller never sells more than
// its nodes can deliver, and no node is reserved twice for the same window (by two trades, or by a
// trade and an operator's reservation).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "server_fixture.h"
#include "store/pg_test_cluster.h"

namespace gpurent::testing {
namespace {

std::vector<json> market_all(const ServerProcess& s, const std::string& path) {
  std::vector<json> out;
  std::string after;
  for (;;) {
    Resp r = expect_2xx(s.admin("GET", path + "?limit=1000" + (after.empty() ? "" : "&after=" + after)), path);
    for (const json& x : r.body.at("items")) out.push_back(x);
    if (r.body.at("next_after").is_null()) return out;
    after = r.body["next_after"].get<std::string>();
  }
}


// Two servers on one new database; through the first, supplier dc with `nodes` 8-GPU H100 nodes
// (gpn1…, cn-east) and the offer selling them, tenants acme and beta; tomorrow's 00:00–04:00 CNY book.
struct TwoServers {
  std::unique_ptr<PgTestDatabase> db;
  std::unique_ptr<ServerProcess> a, b;
  std::string dc, acme, beta;
  TimeMs start = 0;
  json book;

  explicit TwoServers(int nodes) {
    auto made = PgTestDatabase::create();
    if (!made) throw std::runtime_error(made.error().message);
    db = std::move(*made);
    const std::vector<std::string> args = {"--db", db->uri(), "--no-rate-limits", "--firewall-interval-s", "0",
                                           "--leader-lease-ms", "3000"};
    a = std::make_unique<ServerProcess>(args);
    expect_2xx(a->admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
    for (int i = 1; i <= nodes; ++i) {
      const std::string n = "gpn" + std::to_string(i);
      expect_2xx(a->admin("POST", "/api/v1/nodes", node_doc("dc", n)), n);
    }
    expect_2xx(a->admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
    acme_and_beta(*a);
    dc = make_user_token(*a, "dc-ops", "supplier", "", "dc");
    acme = make_user_token(*a, "acme-admin", "tenant_admin", "acme");
    beta = make_user_token(*a, "beta-admin", "tenant_admin", "beta");
    b = std::make_unique<ServerProcess>(args);
    const TimeMs day = 24 * 3'600'000LL;
    start = (SystemClock().now() / day + 1) * day;
    book = {{"gpu_model", "h100-sxm5-80gb"}, {"region", "cn-east"}, {"starts_at", format_rfc3339(start)},
            {"ends_at", format_rfc3339(start + 4 * 3'600'000LL)}, {"currency", "CNY"}};
  }
};

TEST(PostgresMarket, TwoServersTakingOrdersForOneBookAtOnceNeitherCrossNorOversell) {
  constexpr int kNodes = 24;
  TwoServers w(kNodes);
  const ServerProcess &a = *w.a, &b = *w.b;
  const std::string &dc = w.dc, &acme = w.acme, &beta = w.beta;
  const json& book = w.book;

  // Four clients at once: the supplier through both servers, acme through a, beta through b; every
  // order is a whole node (8 GPUs), prices spread so that about half of them cross.
  std::mutex mu;
  std::vector<std::string> failures;
  int placed = 0;
  auto client = [&](const ServerProcess& s, const std::string& token, const char* side, int seed) {
    for (int i = 0; i < 40; ++i) {
      json o = book;
      o["side"] = side;
      o["gpus"] = 8;
      const int cents = std::string(side) == "sell" ? 1900 + (i * 37 + seed) % 500 : 1800 + (i * 53 + seed) % 500;
      o["price_per_gpu_hour"] = std::to_string(cents / 100) + "." + std::to_string(cents % 100 / 10) + std::to_string(cents % 10);
      Resp r = s.req("POST", "/api/v1/market-orders", token, o);
      std::lock_guard lock(mu);
      if (r.status == 201) ++placed;
      else if (!(r.status == 422 && r.reason_for("gpus").find("can deliver") != std::string::npos))
        failures.push_back(std::string(side) + " " + o["price_per_gpu_hour"].get<std::string>() + ": " + r.describe());
    }
  };
  {
    std::vector<std::thread> threads;
    threads.emplace_back(client, std::cref(a), dc, "sell", 0);
    threads.emplace_back(client, std::cref(b), dc, "sell", 11);
    threads.emplace_back(client, std::cref(a), acme, "buy", 5);
    threads.emplace_back(client, std::cref(b), beta, "buy", 23);
    for (std::thread& t : threads) t.join();
  }
  for (const std::string& f : failures) ADD_FAILURE() << "an order was refused: " << f;
  EXPECT_GT(placed, 50);

  const std::vector<json> orders = market_all(a, "/api/v1/market-orders");
  const std::vector<json> trades = market_all(a, "/api/v1/market-trades");
  ASSERT_FALSE(trades.empty());

  // The book left is not crossed: its best bid is below its best ask.
  int64_t best_bid = 0, best_ask = INT64_MAX, open_sell_gpus = 0;
  std::map<std::string, int64_t> filled;  // order id -> filled GPUs
  for (const json& o : orders) {
    filled[o["id"].get<std::string>()] = o["filled_gpus"].get<int64_t>();
    if (o["state"] != "open") continue;
    const int64_t p = micros(o["price_per_gpu_hour"]);
    if (o["side"] == "buy") best_bid = std::max(best_bid, p);
    else best_ask = std::min(best_ask, p), open_sell_gpus += o["remaining_gpus"].get<int64_t>();
  }
  EXPECT_LT(best_bid, best_ask) << "a bid rests at or above an ask: two servers matched the book at once";

  // Every trade settled on nodes of its own, none twice; an order's fills are its trades.
  int64_t traded = 0;
  std::set<std::string> nodes;
  std::map<std::string, int64_t> from_trades;
  for (const json& t : trades) {
    EXPECT_EQ(t["state"], "settled") << t.dump();
    traded += t["gpus"].get<int64_t>();
    for (const json& n : t.value("settlement", json::object()).value("node_ids", json::array()))
      EXPECT_TRUE(nodes.insert(n.get<std::string>()).second) << "node " << n << " reserved twice: " << t.dump();
    from_trades[t["buy_order"].get<std::string>()] += t["gpus"].get<int64_t>();
    from_trades[t["sell_order"].get<std::string>()] += t["gpus"].get<int64_t>();
  }
  for (const auto& [id, gpus] : filled)
    EXPECT_EQ(gpus, from_trades.count(id) ? from_trades[id] : 0) << "order " << id;
  // The supplier never offered more than its nodes: what it sold and what it still offers.
  EXPECT_LE(traded + open_sell_gpus, kNodes * 8) << traded << " GPUs sold, " << open_sell_gpus << " still offered";
}

// Nodes are reserved by market trades (inside their lane) and by operators (POST
// /api/v1/reservations): through two servers at once, still no node is held twice in one window.
TEST(PostgresMarket, ReservationsAndTradesThroughTwoServersNeverHoldANodeTwice) {
  constexpr int kNodes = 8;
  TwoServers w(kNodes);
  const ServerProcess &a = *w.a, &b = *w.b;
  const std::string &dc = w.dc, &acme = w.acme;
  const json& book = w.book;
  const TimeMs start = w.start;
  std::mutex mu;
  std::vector<std::string> failures;
  auto note = [&](const std::string& what, const Resp& r, std::initializer_list<int> fine) {
    std::lock_guard lock(mu);
    if (std::find(fine.begin(), fine.end(), r.status) == fine.end()) failures.push_back(what + ": " + r.describe());
  };
  std::thread market([&] {  // through b: the supplier sells a node, acme buys it, again and again
    for (int i = 0; i < 12; ++i) {
      json o = book;
      o["side"] = "sell", o["gpus"] = 8, o["price_per_gpu_hour"] = "20.00";
      note("sell", b.req("POST", "/api/v1/market-orders", dc, o), {201, 422});
      o["side"] = "buy";
      note("buy", b.req("POST", "/api/v1/market-orders", acme, o), {201});
    }
  });
  std::thread operators([&] {  // through a: beta's reservations of each node, overlapping the window
    for (int i = 0; i < 24; ++i) {
      const json rsv = {{"name", "beta-" + std::to_string(i)}, {"tenant", "beta"},
                        {"nodes", json::array({"gpn" + std::to_string(i % kNodes + 1)})},
                        {"starts_at", format_rfc3339(start + (i % 3) * 3'600'000LL)},
                        {"ends_at", format_rfc3339(start + (i % 3 + 2) * 3'600'000LL)}};
      note("reservation", a.admin("POST", "/api/v1/reservations", rsv), {201, 409});
    }
  });
  market.join();
  operators.join();
  for (const std::string& f : failures) ADD_FAILURE() << f;

  // Every pair of reservations that overlap in time shares no node.
  const std::vector<json> all = market_all(a, "/api/v1/reservations");
  ASSERT_GT(all.size(), 2u);
  auto ms = [](const json& v) { return parse_rfc3339(v.get<std::string>(), "t").value(); };
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = i + 1; j < all.size(); ++j) {
      if (!(ms(all[i]["starts_at"]) < ms(all[j]["ends_at"]) && ms(all[j]["starts_at"]) < ms(all[i]["ends_at"]))) continue;
      for (const json& n : all[i]["node_ids"])
        for (const json& m : all[j]["node_ids"])
          EXPECT_NE(n, m) << "node " << n << " held twice:\n" << all[i].dump() << "\n" << all[j].dump();
    }
}

}  // namespace
}  // namespace gpurent::testing
