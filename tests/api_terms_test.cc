// Terms of placement in the real server (docs/scheduler.md#terms): the offer is chosen with the
// placement and the run is billed under it and the contract naming it; a contract's data
// sovereignty keeps a tenant's work in its country; a price cap holds a job off dearer offers and
// the pending reason names it; a job runs in another currency only under an offer it names;
// references to suppliers and offers are checked and stored as ids; a procurement split steers a
// tenant's jobs between suppliers and its achieved shares are reported; a contract signed while a
// job waits applies to it at once.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
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


// Two suppliers, dc (n1, n2) and dc2 (m1), 8 GPUs each, nothing priced; tenant acme, project vision.
void split_world(const ServerProcess& s) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier dc");
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc2")), "supplier dc2");
  for (const char* n : {"n1", "n2"}) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", n)), n);
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc2", "m1")), "m1");
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", "CNY")), "tenant acme");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project vision");
}

json whole_node_job(const std::string& name) {
  json j = terms_job("vision", name);
  j["gpus_per_worker"] = 8;
  return j;
}

TEST(Terms, AProcurementSplitSteersJobsAndReportsItsAchievedShares) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  split_world(s);
  const std::string dc = s.admin("GET", "/api/v1/suppliers/dc").body.at("id");
  const std::string dc2 = s.admin("GET", "/api/v1/suppliers/dc2").body.at("id");

  // Bad splits are refused by field, and nothing is stored.
  auto put = [&](const json& split) {
    return s.admin("PUT", "/api/v1/tenants/acme/procurement", json{{"procurement_split", split}});
  };
  EXPECT_EQ(put(json::array({{{"supplier", "dc"}, {"share_permille", 700}}, {{"supplier", "dc2"}, {"share_permille", 400}}}))
                .error_fields(),
            std::vector<std::string>{"procurement_split"});
  EXPECT_EQ(put(json::array({{{"supplier", "nope"}, {"share_permille", 500}}})).error_fields(),
            std::vector<std::string>{"procurement_split[0].supplier"});
  EXPECT_EQ(put(json::array({{{"supplier", "dc"}, {"share_permille", 300}}, {{"supplier", dc}, {"share_permille", 300}}}))
                .error_fields(),
            std::vector<std::string>{"procurement_split[1].supplier"});
  EXPECT_EQ(put(json::array({{{"supplier", "dc"}, {"share_permille", 0}}})).error_fields(),
            std::vector<std::string>{"procurement_split[0].share_permille"});
  EXPECT_FALSE(s.admin("GET", "/api/v1/tenants/acme").body.contains("procurement_split"));

  // Half each. Without the split, bestfit would fill n1 then n2 (both dc).
  json set = expect_2xx(put(json::array({{{"supplier", "dc"}, {"share_permille", 500}},
                                         {{"supplier", "dc2"}, {"share_permille", 500}}})),
                        "split")
                 .body;
  EXPECT_EQ(set["split"], true) << set.dump();
  ASSERT_EQ(set["suppliers"].size(), 2u) << set.dump();
  EXPECT_EQ(set["suppliers"][0]["supplier"], dc) << "stored as the supplier's id";
  EXPECT_EQ(set["suppliers"][0]["target_permille"], 500);
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants/acme").body["procurement_split"][1]["supplier"], dc2);

  std::set<std::string> suppliers_used;
  for (const char* name : {"one", "two"}) {
    const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", whole_node_job(name)), name).body["id"];
    json running = wait_for(s, "/api/v1/jobs/" + id, terms_state_is("running"));
    const std::string node = running["status"]["placement"][0]["node"];
    suppliers_used.insert(s.admin("GET", "/api/v1/nodes/" + node).body["supplier"]);
  }
  EXPECT_EQ(suppliers_used, (std::set<std::string>{"dc", "dc2"})) << "one job at each supplier";

  json rep = s.admin("GET", "/api/v1/tenants/acme/procurement").body;
  ASSERT_EQ(rep["suppliers"].size(), 2u) << rep.dump();
  for (const auto& row : rep["suppliers"]) {
    EXPECT_EQ(row["held_gpus"], "8") << rep.dump();
    EXPECT_EQ(row["held_permille"], 500) << rep.dump();
  }
  EXPECT_EQ(rep["held_gpus"], "16");
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants/acme/procurement?from=2026-01-02&to=2026-01-01").error_fields(),
            std::vector<std::string>{"to"});
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants/acme/procurement?window=1").error_fields(),
            std::vector<std::string>{"window"});

  // The split is soft: with dc2 full the third job still runs, on dc.
  const std::string three = expect_2xx(s.admin("POST", "/api/v1/jobs", whole_node_job("three")), "three").body["id"];
  json third = wait_for(s, "/api/v1/jobs/" + three, terms_state_is("running"));
  EXPECT_EQ(s.admin("GET", "/api/v1/nodes/" + third["status"]["placement"][0]["node"].get<std::string>()).body["supplier"], "dc");

  // The tenant's admin may set it and every tenant user may read the report; a member may not set it.
  const std::string admin = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  const std::string member = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const json own = {{"procurement_split", json::array({{{"supplier", "dc2"}, {"share_permille", 1000}}})}};
  EXPECT_EQ(s.req("PUT", "/api/v1/tenants/acme/procurement", member, own).status, 403);
  Resp by_admin = s.req("PUT", "/api/v1/tenants/acme/procurement", admin, own);
  ASSERT_EQ(by_admin.status, 200) << by_admin.describe();
  EXPECT_EQ(by_admin.body["suppliers"][0]["target_permille"], 1000);
  EXPECT_EQ(s.req("GET", "/api/v1/tenants/acme/procurement", member).status, 200);

  // Cleared with an empty list.
  json cleared = expect_2xx(put(json::array()), "clear").body;
  EXPECT_EQ(cleared["split"], false);
  EXPECT_FALSE(s.admin("GET", "/api/v1/tenants/acme").body.contains("procurement_split"));
}

TEST(Terms, AContractSignedWhileAJobWaitsAppliesToItAtOnce) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  terms_world(s);
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("kappa", "CNY")), "tenant kappa");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("kappa", "k")), "project k");
  // kappa (no contract yet) fills the US node with one job; a second one pinned there waits for room.
  json first = terms_job("k", "first");
  first["gpus_per_worker"] = 8;
  first["constraints"]["nodes"] = {"u1"};
  first["billing"] = {{"offer", "us-h100"}};
  const std::string a = expect_2xx(s.admin("POST", "/api/v1/jobs", first), "first").body["id"];
  wait_for(s, "/api/v1/jobs/" + a, terms_state_is("running"));
  json second = first;
  second["name"] = "second";
  const std::string b = expect_2xx(s.admin("POST", "/api/v1/jobs", second), "second").body["id"];
  json waiting = wait_for(s, "/api/v1/jobs/" + b, [](const json& j) {
    return j["status"]["state"] == "pending" && j["status"].contains("reason_message") &&
           j["status"]["reason_message"].value("code", "") != "job.submitted";
  });
  EXPECT_NE(waiting["status"]["reason_message"].value("code", ""), "sched.terms.blocked") << waiting.dump();
  // kappa signs with dc, whose clauses keep its data in CN: the waiting job now names that term.
  json contract = {{"name", "kappa-dc"}, {"tenant", "kappa"}, {"supplier", "dc"}, {"offers", {"h100"}},
                   {"currency", "CNY"}, {"starts_at", "2020-01-01T00:00:00Z"}};
  contract["clauses"] = {{"data_sovereignty", "CN"}};
  expect_2xx(s.admin("POST", "/api/v1/contracts", contract), "contract");
  EXPECT_EQ(terms_why(terms_pending(s, b)), "sched.terms.sovereignty");
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/" + a).body["status"]["state"], "running") << "running work stays";
}

}  // namespace
}  // namespace gpurent::testing
