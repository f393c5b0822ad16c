// An instance's month on a live server, phase by phase, invoiced exactly as the hand-computed
// scenario tests/scenarios/billing/instance_lifecycle.yaml says: the server's clock is pinned to
// each phase's start and end (--demo-clock, restarting the server on the same database), the
// instance is started (on its host, CPU-only, anywhere) and stopped through the API, and the
// month's invoice has one line per run and one for the volume, the scenario's amounts, 212.18 CNY.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

TEST(InstanceInvoice, AnInstancesMonthIsInvoicedAsTheHandComputedScenario) {
  auto at = [](const std::string& t) {
    return std::vector<std::string>{"--sched-interval-ms", "20", "--firewall-interval-s", "0", "--cold-start-ms", "0",
                                    "--demo-clock", t};
  };
  ServerProcess s(at("2026-10-20T00:00:00Z"));
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  // The scenario's offer: 17.50 per GPU-hour, CPU-only work at 0.30 per core-hour and 0.05 per
  // GiB-hour, volumes at 0.073 per GB-month, billing from running, per second.
  json offer = offer_doc("dc", "h100");
  offer["prices"] = {{"on_demand", "17.50"}, {"cpu_core_hour", "0.30"}, {"memory_gib_hour", "0.05"}};
  offer["fees"] = {{"billing_starts", "running"}, {"volume_storage", {{"per_gb_month", "0.073"}, {"free_gb", 0}}}};
  offer["min_increment_seconds"] = 1;
  offer.erase("served_models");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer");
  json tenant = tenant_doc("acme");
  tenant["currency"] = "CNY";
  const std::string tenant_id = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant), "tenant").body["id"];
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  expect_2xx(s.req("POST", "/api/v1/volumes", dev, json{{"name", "home"}, {"size_gb", 50}}), "volume");

  const std::string path = "/api/v1/instances/dev-box";
  auto in = [](const std::string& state) { return [state](const json& j) { return j["state"] == state; }; };
  // October 20: created, its first run mounts the volume (kept, and billed, from then on) and is
  // stopped at once.
  expect_2xx(s.req("POST", "/api/v1/instances", dev,
                   json{{"name", "dev-box"}, {"project", "vision"}, {"gpus", 1}, {"gpu_model", "h100-sxm5-80gb"},
                        {"image", "nvcr.io/nvidia/pytorch:24.05-py3"}, {"volume", {{"name", "home"}}}}),
             "instance");
  ASSERT_EQ(wait_for(s, path, in("running"))["state"], "running");
  expect_2xx(s.req("POST", path + "/stop", dev, json::object()), "stop");
  // November: each phase starts and stops at the scenario's times.
  const std::tuple<const char*, const char*, json> phases[] = {
      {"2026-11-03T09:00:00Z", "2026-11-03T17:00:00Z", json::object()},           // back on its host
      {"2026-11-04T10:00:00Z", "2026-11-04T12:30:00Z", json::object()},
      {"2026-11-04T13:00:00Z", "2026-11-04T14:30:00Z", json{{"on", "cpu_only"}}},  // 2 cores, 8 GiB
      {"2026-11-05T08:00:00Z", "2026-11-05T09:20:00Z", json{{"on", "any_host"}}}};
  for (const auto& [from, to, how] : phases) {
    s.set_extra_args(at(from));
    s.restart();
    expect_2xx(s.req("POST", path + "/start", dev, how), std::string("start at ") + from);
    ASSERT_EQ(wait_for(s, path, in("running"))["state"], "running") << from;
    s.set_extra_args(at(to));
    s.restart();
    expect_2xx(s.req("POST", path + "/stop", dev, json::object()), std::string("stop at ") + to);
    ASSERT_EQ(wait_for(s, path, in("stopped"))["state"], "stopped") << to;
  }

  s.set_extra_args(at("2026-12-01T01:00:00Z"));
  s.restart();
  const json inv = expect_2xx(s.admin("GET", "/api/v1/invoices?month=2026-11&tenant=" + tenant_id), "invoice").body;
  std::multimap<std::string, std::pair<std::string, std::string>> got;  // rule -> (quantity, amount)
  for (const json& section : inv["sections"])
    for (const json& line : section["lines"])
      got.insert({line["rule"].get<std::string>(), {line["quantity"].get<std::string>(), line["amount"].get<std::string>()}});
  const std::multimap<std::string, std::pair<std::string, std::string>> want = {
      {"on_demand", {"28800", "140.00"}},   {"on_demand", {"9000", "43.75"}},  {"cpu_time", {"10800", "0.90"}},
      {"memory_time", {"43200", "0.60"}},   {"on_demand", {"4800", "23.33"}},  {"volume_storage", {"129600000", "3.60"}}};
  EXPECT_EQ(got, want) << inv.dump(1);
  ASSERT_TRUE(inv.contains("totals") && inv.at("totals").contains("CNY")) << inv.dump(1);
  EXPECT_EQ(inv.at("totals").at("CNY").at("total"), "212.18") << inv.at("totals").dump();
  EXPECT_EQ(inv.at("totals").size(), 1u) << "one currency, the offer's and the tenant's";
}

}  // namespace
}  // namespace gpurent::testing
