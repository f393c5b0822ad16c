// Volumes as records (docs/resources/volumes.md) in the real server on the simulated executor:
// created with a size by those who may submit the tenant's jobs, named by jobs, grown never shrunk,
// not deleted while an unfinished job mounts them, invisible to other tenants; and billed per
// GB-month at their provisioned size under the offer's volume_storage fee from the first run that
// mounts them until deleted (a line per size once grown).
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <map>
#include <thread>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

std::string volumes_month() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[8];
  std::strftime(buf, sizeof buf, "%Y-%m", &tm);
  return buf;
}

// Acme's invoice lines of this month whose rule is volume_storage.
json volume_lines(const ServerProcess& s) {
  json out = json::array();
  const json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + volumes_month()).body;
  for (const auto& sec : inv["sections"])
    for (const auto& l : sec["lines"])
      if (l["rule"] == "volume_storage") out.push_back(l);
  return out;
}

// Supplier dc with node n1 and offer h100, whose volume storage is 0.08 a GB-month with `free_gb`
// free; tenant acme (CNY) with project vision; the token of acme's admin.
std::string volume_world(const ServerProcess& s, int64_t free_gb) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  json offer = offer_doc("dc", "h100");
  offer["fees"]["volume_storage"] = {{"per_gb_month", "0.08"}, {"free_gb", free_gb}};
  expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer");
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", "CNY")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  return make_user_token(s, "acme-dev", "tenant_admin", "acme");
}

TEST(Volumes, AreTenantRecordsWithASizeThatJobsMustName) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  acme_and_beta(s);
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const std::string viewer = make_user_token(s, "acme-viewer", "viewer", "acme");
  const std::string other = make_user_token(s, "beta-dev", "tenant_admin", "beta");
  auto post = [&](const std::string& token, json body) { return s.req("POST", "/api/v1/volumes", token, body); };
  EXPECT_EQ(post(dev, {{"name", "data"}}).error_fields(), std::vector<std::string>{"size_gb"});
  EXPECT_EQ(post(dev, {{"name", "data"}, {"size_gb", 0}}).error_fields(), std::vector<std::string>{"size_gb"});
  EXPECT_EQ(post(dev, {{"name", "Data!"}, {"size_gb", 10}}).error_fields(), std::vector<std::string>{"name"});
  EXPECT_EQ(post(dev, {{"name", "data"}, {"size_gb", 10}, {"tenant", "beta"}}).error_fields(),
            std::vector<std::string>{"tenant"})
      << "a tenant user names only its own tenant";
  EXPECT_EQ(s.admin("POST", "/api/v1/volumes", json{{"name", "data"}, {"size_gb", 10}}).error_fields(),
            std::vector<std::string>{"tenant"})
      << "operators name the tenant";
  EXPECT_EQ(post(viewer, {{"name", "data"}, {"size_gb", 10}}).status, 403);
  const json vol = expect_2xx(post(dev, {{"name", "data"}, {"size_gb", 100}, {"description", "training shards"}}), "volume").body;
  EXPECT_EQ(vol["size_gb"], 100);
  EXPECT_EQ(vol["id"].get<std::string>().rfind("vol_", 0), 0u);
  EXPECT_EQ(post(dev, {{"name", "data"}, {"size_gb", 5}}).status, 409);
  expect_2xx(post(other, {{"name", "data"}, {"size_gb", 5}}), "beta's own volume of the same name");
  EXPECT_EQ(s.req("GET", "/api/v1/volumes/" + vol["id"].get<std::string>(), other).status, 404);
  EXPECT_EQ(list_ids(s, "/api/v1/volumes", other).size(), 1u) << "beta sees its own volume only";
  EXPECT_EQ(s.req("GET", "/api/v1/volumes/data", viewer).body["size_gb"], 100);

  // Grow, never shrink; the name and tenant stay.
  auto put = [&](json body) { return s.req("PUT", "/api/v1/volumes/data", dev, body); };
  EXPECT_EQ(put({{"name", "data"}, {"size_gb", 50}}).error_fields(), std::vector<std::string>{"size_gb"});
  EXPECT_EQ(put({{"name", "other"}, {"size_gb", 100}}).error_fields(), std::vector<std::string>{"name"});
  EXPECT_EQ(expect_2xx(put({{"name", "data"}, {"size_gb", 150}}), "grow").body["size_gb"], 150);

  // Jobs name the tenant's volumes.
  json j = job_doc("vision", "reads-data");
  j["volumes"] = {{{"name", "missing"}, {"mount", "/data"}}};
  Resp unknown = s.req("POST", "/api/v1/jobs", dev, j);
  EXPECT_EQ(unknown.error_fields(), std::vector<std::string>{"volumes[0].name"}) << unknown.describe();
  j["volumes"] = {{{"name", "data"}, {"mount", "/data"}}};
  j["expected_duration_seconds"] = 2;
  const std::string id = expect_2xx(s.req("POST", "/api/v1/jobs", dev, j), "job").body.at("id");
  Resp busy = s.req("DELETE", "/api/v1/volumes/data", dev);
  EXPECT_EQ(busy.status, 409) << busy.describe();
  EXPECT_NE(busy.body.dump().find("reads-data"), std::string::npos) << "names the job: " << busy.body.dump();
  expect_2xx(s.req("POST", "/api/v1/jobs/" + id + "/cancel", dev), "cancel");  // finished: the volume is free
  EXPECT_EQ(s.req("DELETE", "/api/v1/volumes/data", viewer).status, 403);
  EXPECT_EQ(s.req("DELETE", "/api/v1/volumes/data", dev).status, 204);
  EXPECT_EQ(s.req("GET", "/api/v1/volumes/data", dev).status, 404);
}

TEST(Volumes, AreBilledAtTheirProvisionedSizePerGbMonthFromTheFirstRunUntilDeleted) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  const std::string dev = volume_world(s, 0);
  EXPECT_EQ(s.admin("GET", "/api/v1/offers/h100").body["fees"]["volume_storage"],
            (json{{"per_gb_month", "0.08"}, {"free_gb", 0}}));
  expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", "home"}, {"size_gb", 40}}), "volume");
  EXPECT_TRUE(volume_lines(s).empty()) << "kept nowhere before a run mounts it";
  std::vector<std::string> ids;
  json first_run;
  for (int i = 0; i < 2; ++i) {
    json j = job_doc("vision", "uses-home-" + std::to_string(i));
    j["volumes"] = {{{"name", "home"}, {"mount", "/home/dev"}}};
    j["expected_duration_seconds"] = 1;
    ids.push_back(expect_2xx(s.req("POST", "/api/v1/jobs", dev, j), "job").body.at("id"));
    wait_for(s, "/api/v1/jobs/" + ids.back(), [](const json& x) { return x["status"]["state"] == "succeeded"; });
    if (i > 0) continue;
    const json runs = s.admin("GET", "/api/v1/allocations?state=closed").body.at("items");
    for (const json& a : runs)
      if (a["job_id"] == ids[0]) first_run = a;
  }
  ASSERT_FALSE(first_run.is_null());
  json lines = volume_lines(s);
  ASSERT_EQ(lines.size(), 1u) << "one line for the volume (two runs): " << lines.dump();
  EXPECT_EQ(lines[0]["unit_price"], "0.08");
  EXPECT_EQ(lines[0]["from"], first_run["running_at"]) << "kept from the first run's start";
  EXPECT_NE(lines[0]["description"].get<std::string>().find("Volume home (40000000000 bytes) kept on offer h100"),
            std::string::npos)
      << lines[0].dump();
  // Grown: billed at the new size from then on, a line per size.
  expect_2xx(s.req("PUT", "/api/v1/volumes/home", dev, json{{"name", "home"}, {"size_gb", 60}}), "grow");
  // The invoice runs to now, in milliseconds: read in the grow's own millisecond, the new size has
  // been kept for no time yet and rightly has no line.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  lines = volume_lines(s);
  ASSERT_EQ(lines.size(), 2u) << lines.dump();
  std::string sizes;
  for (const auto& l : lines) sizes += l["description"].get<std::string>().substr(0, 32) + ";";
  EXPECT_NE(sizes.find("(40000000000 bytes)"), std::string::npos) << sizes;
  EXPECT_NE(sizes.find("(60000000000 bytes)"), std::string::npos) << sizes;
  // Deleted: the storage stops then, and the lines no longer grow.
  ASSERT_EQ(s.req("DELETE", "/api/v1/volumes/home", dev).status, 204);
  const json closed = volume_lines(s);
  ASSERT_EQ(closed.size(), 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(volume_lines(s), closed) << "a deleted volume is no longer billed";
}

// An offer's free_gb is the tenant's at any moment, not each invoice section's: a volume first kept
// at list prices and one first kept under a contract on the same offer share its 40 GB. Each is
// 40 GB: the one kept first is free, the other billed whole (before, each section gave 40 GB free
// and nothing was billed).
TEST(Volumes, AnOffersFreeAllowanceIsTheTenantsAcrossItsSections) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  const std::string dev = volume_world(s, 40);
  auto run_with = [&](const std::string& volume) {
    expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", volume}, {"size_gb", 40}}), "volume");
    json j = job_doc("vision", "uses-" + volume);
    j["volumes"] = {{{"name", volume}, {"mount", "/mnt/" + volume}}};
    j["expected_duration_seconds"] = 1;
    const std::string id = expect_2xx(s.req("POST", "/api/v1/jobs", dev, j), "job").body.at("id");
    wait_for(s, "/api/v1/jobs/" + id, [](const json& x) { return x["status"]["state"] == "succeeded"; });
  };
  run_with("home");  // at list prices
  expect_2xx(s.admin("POST", "/api/v1/contracts", acme_dc_contract()), "contract");
  run_with("data");  // under the contract
  const json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + volumes_month()).body;
  std::map<std::string, std::vector<std::string>> rules;  // section's contract -> its volume lines
  for (const auto& sec : inv["sections"])
    for (const auto& l : sec["lines"])
      if (l["rule"].get<std::string>().rfind("volume_storage", 0) == 0)
        rules[sec.value("contract", "")].push_back(l["rule"].get<std::string>() + " " +
                                                   l["description"].get<std::string>().substr(0, 11));
  ASSERT_EQ(rules.size(), 2u) << inv.dump();
  EXPECT_EQ(rules["list prices"], std::vector<std::string>{"volume_storage_free Volume home"}) << inv.dump();
  EXPECT_EQ(rules["acme-dc"], std::vector<std::string>{"volume_storage Volume data"}) << inv.dump();
}

}  // namespace
}  // namespace gpurent::testing
