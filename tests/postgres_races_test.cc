// Writes that check other records before they write, through two servers on one PostgreSQL
// database at the same moment (docs/deployment.md#several-servers-on-one-postgresql-database): the
// check and the write of one are not interleaved with the other's, so the invariant holds as on
// one server. Global names (a tenant's scope is itself, so the store's per-scope unique index does
// not cover them) and an offer's spot-price timeline (each price after the latest) are driven
// here, and a budget written through a follower; the market's lanes in market_postgres_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
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

std::vector<std::string> races_args(const std::string& uri) {
  return {"--db", uri, "--no-rate-limits", "--firewall-interval-s", "0", "--leader-lease-ms", "3000"};
}

// Runs body(server, i) for i in [0, n) on two threads, one per server, both in the same order.
void at_once(const ServerProcess& a, const ServerProcess& b, int n, const std::function<void(const ServerProcess&, int)>& body) {
  std::thread ta([&] { for (int i = 0; i < n; ++i) body(a, i); });
  std::thread tb([&] { for (int i = 0; i < n; ++i) body(b, i); });
  ta.join();
  tb.join();
}

TEST(PostgresRaces, TwoServersNeverGiveTwoTenantsOneName) {
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  ServerProcess a(races_args((*db)->uri()));
  ServerProcess b(races_args((*db)->uri()));
  constexpr int kNames = 30;
  std::mutex mu;
  std::map<int, std::vector<int>> statuses;  // name -> the two answers
  at_once(a, b, kNames, [&](const ServerProcess& s, int i) {
    Resp r = s.admin("POST", "/api/v1/tenants", tenant_doc("race-" + std::to_string(i)));
    std::lock_guard lock(mu);
    statuses[i].push_back(r.status);
  });
  for (const auto& [i, got] : statuses) {
    std::multiset<int> m(got.begin(), got.end());
    EXPECT_EQ(m, (std::multiset<int>{201, 409})) << "race-" << i << ": one creates it, the other is told the name is taken";
  }
  std::map<std::string, int> names;
  const Resp listed = a.admin("GET", "/api/v1/tenants?limit=1000");
  ASSERT_EQ(listed.status, 200) << listed.describe();
  for (const json& t : listed.body["items"]) ++names[t["name"].get<std::string>()];
  for (int i = 0; i < kNames; ++i) EXPECT_EQ(names["race-" + std::to_string(i)], 1) << "race-" << i;
}

TEST(PostgresRaces, AnOffersSpotPricesStayOneTimeline) {
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  ServerProcess a(races_args((*db)->uri()));
  expect_2xx(a.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  const std::string offer = expect_2xx(a.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer").body["id"];
  ServerProcess b(races_args((*db)->uri()));
  // Both servers are sent the same 25 prices, each with its own start a minute after the last:
  // one of each pair is stored, the other refused as not after the latest.
  const TimeMs base = (SystemClock().now() / 60'000 + 10) * 60'000;
  std::mutex mu;
  std::map<int, std::multiset<int>> statuses;
  at_once(a, b, 25, [&](const ServerProcess& s, int i) {
    const json body = {{"offer", offer}, {"price", "5.00"}, {"from", format_rfc3339(base + i * 60'000LL)}};
    Resp r = s.admin("POST", "/api/v1/spot-prices", body);
    std::lock_guard lock(mu);
    statuses[i].insert(r.status);
  });
  for (const auto& [i, got] : statuses) EXPECT_EQ(got, (std::multiset<int>{201, 422})) << "price " << i;
  std::vector<TimeMs> from;
  const Resp listed = a.admin("GET", "/api/v1/spot-prices?offer=" + offer + "&limit=1000");
  ASSERT_EQ(listed.status, 200) << listed.describe();
  for (const json& p : listed.body["items"])
    from.push_back(parse_rfc3339(p["from"].get<std::string>(), "from").value());
  std::sort(from.begin(), from.end());
  EXPECT_EQ(from.size(), 25u);
  EXPECT_EQ(std::adjacent_find(from.begin(), from.end()), from.end()) << "two prices start at the same instant";
}

// A budget written through a follower holds at once, as through the leader: the write re-checks
// it (the leader runs the firewall's passes; here an hour apart, so only the one at start runs),
// and the follower delivers the alert to the webhooks.
TEST(PostgresRaces, ABudgetWrittenThroughAFollowerHoldsAtOnceAndIsDelivered) {
  HookSink sink;
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  const std::vector<std::string> args = {"--db", (*db)->uri(), "--no-rate-limits", "--firewall-interval-s", "3600",
                                         "--leader-lease-ms", "3000"};
  ServerProcess leader(args);
  expect_2xx(leader.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  expect_2xx(leader.admin("POST", "/api/v1/webhooks", json{{"name", "ops"}, {"type", "generic"}, {"url", sink.url()}}), "webhook");
  ServerProcess follower(args);
  json zero = project_doc("acme", "frozen");
  zero["quota"]["monthly_budget"] = "0.00";
  zero["quota"]["budget_action"] = "hold";
  Resp created = follower.admin("POST", "/api/v1/projects", zero);
  ASSERT_EQ(created.status, 201) << created.describe();
  bool warned = false;
  for (const json& w : created.body.value("warnings", json::array()))
    warned |= w.at("text_message").at("code") == "api.quota.warn.budget_hold";
  EXPECT_TRUE(warned) << created.describe();
  EXPECT_TRUE(leader.admin("GET", "/api/v1/projects/frozen/quota").body.at("budget_hold").is_object())
      << "the hold is in the store: the leader's scheduler sees it";
  for (int i = 0; i < 250 && sink.bodies().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(sink.bodies().size(), 1u) << "the follower delivers the alert its write raised, once";
  EXPECT_EQ(json::parse(sink.bodies()[0])["kind"], "budget_breach");
}

}  // namespace
}  // namespace gpurent::testing
