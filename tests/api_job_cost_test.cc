// A job's whole story inside the real server: GET /api/v1/jobs/{ref}/cost rates what a job has
// cost so far with the billing engine (its total is exactly the sum of its lines, and its lines
// are that job's lines of GET /api/v1/invoices over the same period), shows SLA credits apart from
// the charges, names the offer, supplier, unit price and nodes each run was billed under, and is
// 404 for another tenant's job; a cancelled job's event names the user who cancelled it.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {


TimeMs at(const json& j) { return *parse_rfc3339(j.get<std::string>(), "t"); }

void world(const ServerProcess& s) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  for (const char* n : {"n1", "n2"}) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", n)), "node");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");  // CNY, 17.50/GPU-hour
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", "CNY")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
}

std::string submit(const ServerProcess& s, const std::string& name, int gpus, int seconds) {
  json j = job_doc("vision", name);
  j["gpus_per_worker"] = gpus;
  j["expected_duration_seconds"] = seconds;
  return expect_2xx(s.admin("POST", "/api/v1/jobs", j), name).body.at("id");
}

// Each currency's charges, credits and total are exactly the sums of its lines (credits: the
// credit lines; charges: the others), and every line is the job's.
void expect_sums_of_lines(const json& cost) {
  for (const auto& [cur, c] : cost.at("costs").items()) {
    SCOPED_TRACE(cur);
    int64_t charges = 0, credits = 0;
    for (const auto& l : c.at("lines")) {
      EXPECT_EQ(l["job"], cost["job"]) << l.dump();
      EXPECT_EQ(l["project"], cost["project"]) << l.dump();
      (l["kind"] == "credit" ? credits : charges) += micros(l["amount"]);
    }
    EXPECT_EQ(micros(c["charges"]), charges) << c.dump();
    EXPECT_EQ(micros(c["credits"]), credits) << c.dump();
    EXPECT_EQ(micros(c["total"]), charges + credits) << c.dump();
    EXPECT_EQ(c["line_count"], c["lines"].size());
  }
}

TEST(JobStory, CostIsTheSumOfItsLinesAndTheJobsLinesOfTheInvoice) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  const std::string id = submit(s, "short", 2, 1);
  const std::string other = submit(s, "other", 1, 1);  // same project: its lines are not this job's
  for (const auto& j : {id, other})
    wait_for(s, "/api/v1/jobs/" + j, [](const json& d) { return d["status"]["state"] == "succeeded"; });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the runs' last samples are in

  Resp r = s.admin("GET", "/api/v1/jobs/" + id + "/cost");
  ASSERT_EQ(r.status, 200) << r.describe();
  const json cost = r.body;
  EXPECT_EQ(cost["job_id"], id);
  EXPECT_EQ(cost["job"], "short");
  EXPECT_EQ(cost["project"], "vision");
  EXPECT_EQ(cost["tenant"], "acme");
  EXPECT_EQ(cost["period_capped"], false);
  EXPECT_EQ(cost["period"]["from"], cost["job_created_at"]);
  ASSERT_EQ(cost["costs"].size(), 1u) << cost.dump();
  ASSERT_TRUE(cost["costs"].contains("CNY")) << cost.dump();  // the offer's currency
  const json& cny = cost["costs"]["CNY"];
  ASSERT_FALSE(cny["lines"].empty()) << cost.dump();
  expect_sums_of_lines(cost);
  EXPECT_GT(micros(cny["charges"]), 0);
  EXPECT_EQ(micros(cny["credits"]), 0);              // list prices: no SLA
  EXPECT_EQ(cny["reserved_covered_value"], "0.00");  // no commitment

  // The run it was billed under: the offer, its supplier, the on-demand price and the node by name.
  ASSERT_EQ(cost["allocations"].size(), 1u) << cost.dump();
  const json& run = cost["allocations"][0];
  EXPECT_EQ(run["offer"], "h100");
  EXPECT_TRUE(run["offer_id"].is_string());
  EXPECT_EQ(run["supplier"], "dc");
  EXPECT_EQ(run["billing_mode"], "on_demand");
  EXPECT_EQ(run["price_basis"], "on_demand");
  EXPECT_EQ(run["unit_price"], "17.50");
  EXPECT_EQ(run["price_unit"], "GPU-hour");
  EXPECT_EQ(run["currency"], "CNY");
  EXPECT_TRUE(run["contract"].is_null());
  EXPECT_EQ(run["state"], "closed");
  EXPECT_EQ(run["gpu_milli"], 2000);
  ASSERT_EQ(run["nodes"].size(), 1u);
  const std::string node = run["nodes"][0]["node"];
  EXPECT_TRUE(node == "n1" || node == "n2") << node;
  EXPECT_EQ(run["nodes"][0]["gpus"].size(), 2u);
  EXPECT_TRUE(run["running_at"].is_string());
  EXPECT_TRUE(run["ended_at"].is_string());
  EXPECT_TRUE(cost["unpriced_allocations"].empty());
  for (const auto& l : cny["lines"]) EXPECT_EQ(l["allocation"], run["id"]) << l.dump();

  // The same lines as the tenant's invoice over the same period, narrowed to the job.
  Resp inv = s.admin("GET", "/api/v1/invoices?tenant=acme&from=" + cost["period"]["from"].get<std::string>() +
                                "&to=" + cost["period"]["to"].get<std::string>());
  ASSERT_EQ(inv.status, 200) << inv.describe();
  json lines = json::array(), others = json::array();
  for (const auto& sec : inv.body["sections"])
    for (const auto& l : sec["lines"]) (l["job"] == "short" && l["project"] == "vision" ? lines : others).push_back(l);
  EXPECT_EQ(lines, cny["lines"]);
  EXPECT_FALSE(others.empty()) << "the other job's lines should be on the invoice: " << inv.body.dump();
  int64_t sum = 0;
  for (const auto& l : lines) sum += micros(l["amount"]);
  EXPECT_EQ(sum, micros(cny["total"]));

  // By name, for a user of the tenant.
  const std::string viewer = make_user_token(s, "acme-viewer", "viewer", "acme");
  Resp by_name = s.req("GET", "/api/v1/jobs/short/cost", viewer);
  ASSERT_EQ(by_name.status, 200) << by_name.describe();
  EXPECT_EQ(by_name.body["costs"], cost["costs"]);
}

TEST(JobStory, AnSlaCreditIsShownApartFromTheCharges) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  // Under a contract the offer's template applies: outages are compensated at 200%.
  expect_2xx(s.admin("POST", "/api/v1/contracts",
                     json{{"name", "acme-dc"},
                          {"tenant", "acme"},
                          {"supplier", "dc"},
                          {"offers", {"h100"}},
                          {"currency", "CNY"},
                          {"starts_at", "2020-01-01T00:00:00Z"}}),
             "contract");
  // A four-second run: its minimum increment (60 s) is billed when it ends, so its charges stand
  // well above the credit and the contract's credit cap stays out of the way.
  const std::string id = submit(s, "blip", 2, 4);
  wait_for(s, "/api/v1/jobs/" + id, [](const json& d) { return d["status"]["state"] == "succeeded"; });
  json closed = wait_for(s, "/api/v1/allocations?state=closed", [](const json& d) { return d["items"].size() == 1; });
  const json run = closed["items"][0];
  const TimeMs running = at(run["running_at"]);
  ASSERT_GE(at(run["ended_at"]), running + 2200) << run.dump();
  // The supplier records a two-second outage of the job's node while it ran.
  expect_2xx(s.admin("POST", "/api/v1/measurements",
                     json{{"kind", "incident"},
                          {"node", run["placement"][0]["node"]},
                          {"from", format_rfc3339(running + 200)},
                          {"to", format_rfc3339(running + 2200)},
                          {"note", "PSU failure"}}),
             "incident");

  Resp r = s.admin("GET", "/api/v1/jobs/" + id + "/cost");
  ASSERT_EQ(r.status, 200) << r.describe();
  const json& cny = r.body["costs"]["CNY"];
  expect_sums_of_lines(r.body);
  bool credited = false;
  for (const auto& l : cny["lines"])
    if (l["rule"] == "sla_outage") {
      credited = true;
      EXPECT_EQ(l["kind"], "credit");
      // 2 GPUs x 2 s x 17.50 CNY/GPU-hour x 200% = 0.038889 CNY.
      EXPECT_EQ(l["amount"], "-0.04") << l.dump();
    }
  EXPECT_TRUE(credited) << r.body.dump();
  EXPECT_EQ(cny["credits"], "-0.04") << cny.dump();
  EXPECT_GT(micros(cny["charges"]), 0);  // never netted: the charges stand on their own
  EXPECT_EQ(micros(cny["total"]), micros(cny["charges"]) + micros(cny["credits"]));
  ASSERT_EQ(r.body["allocations"].size(), 1u);
  EXPECT_EQ(r.body["allocations"][0]["contract"], "acme-dc");
  EXPECT_EQ(r.body["allocations"][0]["unit_price"], "17.50");
  EXPECT_EQ(r.body["allocations"][0]["ended_at"], run["ended_at"]);
}

TEST(JobStory, AnotherTenantsJobCostIsNotFound) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  const std::string id = submit(s, "short", 1, 1);
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("rival")), "tenant");
  const std::string rival = make_user_token(s, "rival-admin", "tenant_admin", "rival");
  EXPECT_EQ(s.req("GET", "/api/v1/jobs/" + id + "/cost", rival).status, 404);
  EXPECT_EQ(s.req("GET", "/api/v1/jobs/short/cost", rival).status, 404);
  EXPECT_EQ(s.req("GET", "/api/v1/jobs/" + id + "/cost", "").status, 401);
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/no-such-job/cost").status, 404);
  const std::string own = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  EXPECT_EQ(s.req("GET", "/api/v1/jobs/" + id + "/cost", own).status, 200);
}

TEST(JobStory, ACancelledJobsEventNamesTheUserWhoCancelledIt) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  const std::string alice = make_user_token(s, "alice", "tenant_admin", "acme");
  const std::string a = submit(s, "first", 1, 3600), b = submit(s, "second", 1, 3600);
  ASSERT_EQ(s.req("POST", "/api/v1/jobs/" + a + "/cancel", alice).status, 200);
  ASSERT_EQ(s.req("POST", "/api/v1/jobs/" + b + "/cancel", alice, json{{"reason", "wrong data"}}).status, 200);
  for (const auto& [job, want] :
       {std::pair{a, std::string("cancelled by alice")}, std::pair{b, std::string("cancelled by alice: wrong data")}}) {
    Resp ev = s.req("GET", "/api/v1/jobs/" + job + "/events", alice);
    ASSERT_EQ(ev.status, 200) << ev.describe();
    const json& last = ev.body["items"].back();
    EXPECT_EQ(last["to"], "cancelled");
    EXPECT_EQ(last["reason"], want) << ev.body.dump();
  }
}

}  // namespace
}  // namespace gpurent::testing
