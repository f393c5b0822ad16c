// Terms of placement in the real server (docs/scheduler.md#terms): the offer is chosen with the
// placement and the run is billed under it and the contract naming it; a contract's data
// sovereignty keeps a tenant's work in its country; a price cap holds a job off dearer offers and
// the pending reason names it; a job runs in another currency only under an offer it names;
// references to suppliers and offers are checked and stored as ids.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

auto terms_state_is(const std::string& want) {
  return [want](const json& j) { return j.at("status").at("state") == want; };
}

// A pending job's reason: its code and the code of its `why` (terms), once it has one.
json terms_pending(const ServerProcess& s, const std::string& id) {
  return wait_for(s, "/api/v1/jobs/" + id, [](const json& j) {
    return j["status"]["state"] == "pending" && j["status"].contains("reason_message") &&
           j["status"]["reason_message"].value("code", "") == "sched.terms.blocked";
  });
}

std::string terms_why(const json& job) {
  return job["status"]["reason_message"]["args"]["why"].value("code", "");
}

// Supplier dc (CN, CNY offer h100 at 17.50) with node n1; supplier us (US, USD offer us-h100 at
// 2.99 on demand, 1.20 spot) with node u1. Tenant acme (CNY) has a contract with dc whose clauses
// keep its data in CN; tenant zeta (USD) has none.
void terms_world(const ServerProcess& s) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier dc");
  json us = supplier_doc("us");
  us["region"] = "us-east-1";
  us["country"] = "US";
  us["sites"] = json::array({{{"name", "us-a"}, {"region", "us-east-1"}, {"city", "Ashburn"}}});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", us), "supplier us");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node n1");
  json u1 = node_doc("us", "u1");
  u1["site"] = "us-a";
  u1["region"] = "us-east-1";
  expect_2xx(s.admin("POST", "/api/v1/nodes", u1), "node u1");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer h100");
  json o = offer_doc("us", "us-h100");
  o["region"] = "us-east-1";
  o["node_selector"] = {{"site", "us-a"}};
  o["currency"] = "USD";
  o["prices"] = {{"on_demand", "2.99"}, {"spot", "1.20"}};
  o.erase("served_models");
  o["contract_template"].erase("data_sovereignty");
  for (const char* fee : {"storage_io", "egress"}) o["fees"].erase(fee);
  expect_2xx(s.admin("POST", "/api/v1/offers", o), "offer us-h100");
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", "CNY")), "tenant acme");
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("zeta", "USD")), "tenant zeta");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project vision");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("zeta", "lab")), "project lab");
  json contract = {{"name", "acme-dc"}, {"tenant", "acme"}, {"supplier", "dc"}, {"offers", {"h100"}},
                   {"currency", "CNY"}, {"starts_at", "2020-01-01T00:00:00Z"}};
  contract["clauses"] = {{"data_sovereignty", "CN"}};
  expect_2xx(s.admin("POST", "/api/v1/contracts", contract), "contract");
}

json terms_job(const std::string& project, const std::string& name) {
  json j = job_doc(project, name);
  j["constraints"] = {{"gpu_models", {"h100-sxm5-80gb"}}};
  j["expected_duration_seconds"] = 3600;
  return j;
}

TEST(Terms, TheOfferIsChosenWithThePlacementAndTheTenantsTermsHold) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  terms_world(s);
  const std::string h100 = s.admin("GET", "/api/v1/offers/h100").body.at("id");
  const std::string us_h100 = s.admin("GET", "/api/v1/offers/us-h100").body.at("id");
  const std::string contract = s.admin("GET", "/api/v1/contracts/acme-dc").body.at("id");

  // acme's job lands in CN under its contract's offer; the run is billed under both.
  const std::string cn = expect_2xx(s.admin("POST", "/api/v1/jobs", terms_job("vision", "cn")), "cn").body["id"];
  json running = wait_for(s, "/api/v1/jobs/" + cn, terms_state_is("running"));
  EXPECT_EQ(running["status"]["placement"][0]["offer_id"], h100) << running.dump();
  json runs = s.admin("GET", "/api/v1/allocations?limit=100").body;
  ASSERT_EQ(runs["items"].size(), 1u) << runs.dump();
  EXPECT_EQ(runs["items"][0]["offer_id"], h100);
  EXPECT_EQ(runs["items"][0]["contract_id"], contract);

  // Pinned to the US node, acme's job waits: its contract keeps its data in CN.
  json abroad = terms_job("vision", "abroad");
  abroad["constraints"]["nodes"] = {"u1"};
  const std::string ab = expect_2xx(s.admin("POST", "/api/v1/jobs", abroad), "abroad").body["id"];
  json held = terms_pending(s, ab);
  EXPECT_EQ(terms_why(held), "sched.terms.sovereignty") << held.dump();
  EXPECT_NE(held["status"]["reason"].get<std::string>().find("keep its data in CN"), std::string::npos) << held.dump();

  // zeta (USD): a cap below the on-demand price holds it, naming the price; spot within the cap runs.
  json capped = terms_job("lab", "capped");
  capped["billing"] = {{"max_price_per_gpu_hour", "1.50"}};
  const std::string cp = expect_2xx(s.admin("POST", "/api/v1/jobs", capped), "capped").body["id"];
  json price = terms_pending(s, cp);
  EXPECT_EQ(terms_why(price), "sched.terms.price") << price.dump();
  EXPECT_NE(price["status"]["reason"].get<std::string>().find("2.99 USD (us-h100)"), std::string::npos) << price.dump();
  json spot = terms_job("lab", "spot");
  spot["billing"] = {{"mode", "spot"}, {"max_price_per_gpu_hour", "1.50"}};
  const std::string sp = expect_2xx(s.admin("POST", "/api/v1/jobs", spot), "spot").body["id"];
  json spot_running = wait_for(s, "/api/v1/jobs/" + sp, terms_state_is("running"));
  EXPECT_EQ(spot_running["status"]["placement"][0]["offer_id"], us_h100) << spot_running.dump();

  // zeta runs in CNY only under an offer it names; without naming it the currency holds it.
  json cny = terms_job("lab", "cny");
  cny["constraints"]["nodes"] = {"n1"};
  const std::string cy = expect_2xx(s.admin("POST", "/api/v1/jobs", cny), "cny").body["id"];
  EXPECT_EQ(terms_why(terms_pending(s, cy)), "sched.terms.currency");
  json named = terms_job("lab", "named");
  named["billing"] = {{"offer", "h100"}};
  json stored = expect_2xx(s.admin("POST", "/api/v1/jobs", named), "named").body;
  EXPECT_EQ(stored["billing"]["offer"], h100) << "stored as the offer's id";
  json named_running = wait_for(s, "/api/v1/jobs/" + stored["id"].get<std::string>(), terms_state_is("running"));
  EXPECT_EQ(named_running["status"]["placement"][0]["offer_id"], h100);
  EXPECT_EQ(named_running["status"]["placement"][0]["node"], s.admin("GET", "/api/v1/nodes/n1").body["id"]);

  // References are checked: an unknown supplier or offer is refused by name.
  json bad = terms_job("lab", "bad");
  bad["constraints"]["suppliers"] = {"nope"};
  EXPECT_EQ(s.admin("POST", "/api/v1/jobs", bad).error_fields(), std::vector<std::string>{"constraints.suppliers[0]"});
  bad = terms_job("lab", "bad");
  bad["billing"] = {{"offer", "nope"}};
  EXPECT_EQ(s.admin("POST", "/api/v1/jobs", bad).error_fields(), std::vector<std::string>{"billing.offer"});
  bad = terms_job("lab", "bad");
  bad["constraints"]["regions"] = {"Not A Region"};
  EXPECT_EQ(s.admin("POST", "/api/v1/jobs", bad).error_fields(), std::vector<std::string>{"constraints.regions[0]"});
  json by_supplier = terms_job("lab", "by-supplier");
  by_supplier["constraints"]["suppliers"] = {"us"};
  by_supplier["constraints"]["regions"] = {"us-east-1"};
  json bs = expect_2xx(s.admin("POST", "/api/v1/jobs", by_supplier), "by-supplier").body;
  EXPECT_EQ(bs["constraints"]["suppliers"][0], s.admin("GET", "/api/v1/suppliers/us").body["id"]);
  json bs_running = wait_for(s, "/api/v1/jobs/" + bs["id"].get<std::string>(), terms_state_is("running"));
  EXPECT_EQ(bs_running["status"]["placement"][0]["node"], s.admin("GET", "/api/v1/nodes/u1").body["id"]);

  // kill -9: the engine is rebuilt from the store with each running job under its offer.
  const size_t runs_before = s.admin("GET", "/api/v1/allocations?limit=100").body["items"].size();
  s.kill9();
  s.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  json after = s.admin("GET", "/api/v1/jobs/" + cn).body;
  EXPECT_EQ(after["status"]["state"], "running") << after.dump();
  EXPECT_EQ(after["status"]["placement"][0]["offer_id"], h100) << after.dump();
  EXPECT_EQ(s.admin("GET", "/api/v1/allocations?limit=100").body["items"].size(), runs_before);
  EXPECT_EQ(terms_why(terms_pending(s, ab)), "sched.terms.sovereignty") << "still held after the restart";
}

}  // namespace
}  // namespace gpurent::testing
