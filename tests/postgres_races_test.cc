// Writes that check other records before they write, through two servers on one PostgreSQL
// database at the same moment (docs/deployment.md#several-servers-on-one-postgresql-database): the
// check and the write of one are not interleaved with the other's, so the invariant holds as on
// one server. Global names (a tenant's scope is itself, so the store's per-scope unique index does
// not cover them) and an offer's spot-price timeline (each price after the latest) are driven
// here, a tenant deleted while a project is created in it, the tenant's storage share, instances
// created with and without disks (no deadlock), and a
// budget written through a follower; the market's lanes in market_postgres_test.cc.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/ids.h"
#include "server_fixture.h"
#include "store/pg_test_cluster.h"

namespace gpurent::testing {
namespace {

std::vector<std::string> races_args(const std::string& uri) {
  return {"--db", uri, "--no-rate-limits", "--firewall-interval-s", "0", "--leader-lease-ms", "3000"};
}

// Runs one(a) and two(b) at the same moment, each on its own thread.
void pair_at_once(const std::function<void()>& one, const std::function<void()>& two) {
  std::thread ta(one), tb(two);
  ta.join();
  tb.join();
}

// Runs body(server, i) for i in [0, n) on two threads, one per server, both in the same order.
void at_once(const ServerProcess& a, const ServerProcess& b, int n, const std::function<void(const ServerProcess&, int)>& body) {
  pair_at_once([&] { for (int i = 0; i < n; ++i) body(a, i); }, [&] { for (int i = 0; i < n; ++i) body(b, i); });
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

// A tenant deleted through one server while a project is created in it through the other: the
// delete is refused because the project is there (409), or the create because the tenant is gone
// (422, or 409 when it went while the create was under way) — never a project left in a tenant
// that no longer exists (before: the delete counted no project while the create had read the
// tenant, and both committed).
TEST(PostgresRaces, ATenantDeletedWhileAProjectIsCreatedInItLeavesNoOrphan) {
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  ServerProcess a(races_args((*db)->uri()));
  ServerProcess b(races_args((*db)->uri()));
  constexpr int kTries = 60;
  int deleted = 0, kept = 0;
  for (int i = 0; i < kTries; ++i) {
    const std::string t = "gone-" + std::to_string(i);
    expect_2xx(a.admin("POST", "/api/v1/tenants", tenant_doc(t)), t);
    Resp del, made;
    pair_at_once([&] { del = a.admin("DELETE", "/api/v1/tenants/" + t); },
                 [&] { made = b.admin("POST", "/api/v1/projects", project_doc(t, "p-" + std::to_string(i))); });
    if (del.status == 204) {
      ++deleted;
      EXPECT_TRUE(made.status == 422 || made.status == 409) << t << ": " << made.describe();
    } else {
      ++kept;
      EXPECT_EQ(del.status, 409) << t << ": " << del.describe();
      EXPECT_EQ(made.status, 201) << t << ": " << made.describe();
    }
  }
  std::set<std::string> tenants;
  const Resp ts = a.admin("GET", "/api/v1/tenants?limit=1000");
  for (const json& t : ts.body["items"]) tenants.insert(t["id"].get<std::string>());
  const Resp ps = a.admin("GET", "/api/v1/projects?limit=1000");
  ASSERT_EQ(ps.status, 200) << ps.describe();
  EXPECT_EQ(ps.body["items"].size(), static_cast<size_t>(kept));
  for (const json& p : ps.body["items"])
    EXPECT_TRUE(tenants.count(p["tenant_id"].get<std::string>())) << "a project in a deleted tenant: " << p.dump();
  std::cout << "tenants deleted " << deleted << ", kept with their project " << kept << "\n";
}

// Two artifacts that fit the tenant's storage share alone but not together, declared through two
// servers at once: one is stored, the other refused naming size_bytes (before, both could pass
// the sum, each not seeing the other's).
TEST(PostgresRaces, TheTenantsStorageShareHoldsAcrossServers) {
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  std::vector<std::string> args = races_args((*db)->uri());
  for (const char* x : {"--artifact-tenant-gib", "1", "--artifact-max-gib", "1"}) args.push_back(x);
  ServerProcess a(args);
  ServerProcess b(args);
  expect_2xx(a.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  expect_2xx(a.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  const std::string path = "/api/v1/projects/vision/artifacts";
  constexpr int kTries = 12;
  for (int i = 0; i < kTries; ++i) {
    auto declare = [&](const ServerProcess& s, const std::string& name) {
      return s.admin("POST", path, json{{"name", name}, {"sha256", sha256_hex(name)}, {"size_bytes", int64_t{600} << 20}});
    };
    Resp one, two;
    pair_at_once([&] { one = declare(a, "a" + std::to_string(i)); }, [&] { two = declare(b, "b" + std::to_string(i)); });
    std::multiset<int> got{one.status, two.status};
    EXPECT_EQ(got, (std::multiset<int>{201, 422})) << i << ": " << one.describe() << " / " << two.describe();
    const Resp kept = a.admin("GET", path);
    ASSERT_EQ(kept.body["items"].size(), 1u) << kept.describe();
    ASSERT_EQ(a.admin("DELETE", path + "/" + kept.body["items"][0]["name"].get<std::string>()).status, 204);
  }
}

// Instances of one tenant created through two servers at once — with a new data disk through one
// (its tenant locked, then the ports' lock row), with SSH keys but no disk through the other
// (which took the ports' lock row, then its tenant for the job it starts, before the fix): every
// create answers 201; none is failed by PostgreSQL's deadlock check (503).
TEST(PostgresRaces, InstancesWithAndWithoutDisksThroughTwoServersNeverDeadlock) {
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  std::vector<std::string> args = races_args((*db)->uri());
  for (const char* x : {"--instance-ports", "30100-30300", "--sched-interval-ms", "50"}) args.push_back(x);
  ServerProcess a(args);
  ServerProcess b(args);
  expect_2xx(a.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(a.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  expect_2xx(a.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  expect_2xx(a.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  const std::string key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMmoR98h6zcgRAJsBTuFmr2APBlJQ6nJyM70vXl+nPx dev@laptop";
  auto box = [&](const std::string& name, bool disk) {
    json j = {{"name", name}, {"project", "vision"}, {"image", "docker.io/library/debian:12"},
              {"resources", {{"cpu_cores", 1}, {"memory_gib", 1}}}, {"gpus", 0}, {"ssh_keys", {key}}};
    if (disk) j["volume"] = {{"name", "disk-" + name}, {"size_gb", 1}};
    return j;
  };
  std::mutex mu;
  std::vector<std::string> failures;
  at_once(a, b, 12, [&](const ServerProcess& s, int i) {
    const bool disk = &s == &a;
    const std::string name = std::string(disk ? "d" : "k") + std::to_string(i);
    Resp r = s.admin("POST", "/api/v1/instances", box(name, disk));
    std::lock_guard lock(mu);
    // A deadlock is answered 503 once PostgreSQL's check picks this transaction as its victim
    // (no time bound here: a loaded machine is slow without any deadlock).
    if (r.status != 201) failures.push_back(name + ": " + r.describe());
  });
  for (const std::string& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(a.admin("GET", "/api/v1/instances?limit=1000").body["items"].size(), 24u);
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
  for (int i = 0; i < 1500 && sink.bodies().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(sink.bodies().size(), 1u) << "the follower delivers the alert its write raised, once";
  EXPECT_EQ(json::parse(sink.bodies()[0])["kind"], "budget_breach");
}

}  // namespace
}  // namespace gpurent::testing
