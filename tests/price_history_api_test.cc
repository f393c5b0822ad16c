// Offer price history through the real server: a change to an offer's prices keeps the sheet it
// replaces (GET /api/v1/offers/{id}/history), usage before the change stays at the old price and
// usage after it pays the new one, a change that touches no price starts no version, and an
// offer's currency never changes, nor is an offer with billed usage deleted.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <map>
#include <set>
#include <thread>

#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

std::string month_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[8];
  std::strftime(buf, sizeof buf, "%Y-%m", &tm);
  return buf;
}

TEST(PriceHistory, UsageIsRatedByTheSheetInForceWhenItHappened) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  json offer = offer_doc("dc", "h100");
  offer["prices"]["on_demand"] = "20.00";
  const std::string offer_id = expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer").body.at("id");
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", "CNY")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");

  const std::string path = "/api/v1/offers/" + offer_id;
  json moved = offer;
  moved["currency"] = "USD";
  moved["prices"]["on_demand"] = "3.00";
  moved["prices"].erase("reserved_1m"), moved["prices"].erase("reserved_12m"), moved["prices"].erase("reserved_36m");
  moved["prices"].erase("spot");
  Resp refused = s.admin("PUT", path, moved);
  EXPECT_EQ(refused.error_fields(), std::vector<std::string>{"currency"}) << refused.describe();

  json relabel = offer;
  relabel["contract_template"]["exit_notice_days"] = 45;  // not a price: no new version
  expect_2xx(s.admin("PUT", path, relabel), "contract template change");
  EXPECT_EQ(s.admin("GET", path + "/history").body["items"].size(), 1u);

  json j = job_doc("vision", "train");
  j["expected_duration_seconds"] = 3600;  // ended by a cancel once the price has changed under it
  const std::string job = expect_2xx(s.admin("POST", "/api/v1/jobs", j), "job").body.at("id");
  wait_for(s, "/api/v1/jobs/" + job, [](const json& x) { return x["status"]["state"] == "running"; });
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  json dearer = relabel;
  dearer["prices"]["on_demand"] = "25.00";
  expect_2xx(s.admin("PUT", path, dearer), "price change");
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  expect_2xx(s.admin("POST", "/api/v1/jobs/" + job + "/cancel", json::object()), "cancel");
  wait_for(s, "/api/v1/jobs/" + job, [](const json& x) { return x["status"]["state"] == "cancelled"; });

  const json hist = s.admin("GET", path + "/history").body;
  ASSERT_EQ(hist["items"].size(), 2u) << hist.dump();
  const json& old_sheet = hist["items"][0];
  const json& now_sheet = hist["items"][1];
  EXPECT_EQ(old_sheet["prices"]["on_demand"], "20.00");
  EXPECT_EQ(now_sheet["prices"]["on_demand"], "25.00");
  EXPECT_EQ(old_sheet["until"], now_sheet["from"]);
  EXPECT_TRUE(now_sheet["until"].is_null());
  EXPECT_EQ(old_sheet["version"], 2) << "the sheet the second write left in force";
  EXPECT_EQ(s.admin("GET", "/api/v1/offers/nope/history").status, 404);

  std::map<std::string, json> lines;  // unit price -> on-demand line
  const json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + month_now()).body;
  for (const auto& sec : inv["sections"])
    for (const auto& l : sec["lines"])
      if (l["rule"] == "on_demand") lines[l["unit_price"]] = l;
  ASSERT_EQ(lines.size(), 2u) << "one line per price in force: " << inv.dump();
  EXPECT_EQ(lines["20.00"]["to"], now_sheet["from"]);
  EXPECT_EQ(lines["25.00"]["from"], now_sheet["from"]);

  // Changing the price again never reprices what was already rated at 20.00 or 25.00 (the job has ended).
  json cheaper = dearer;
  cheaper["prices"]["on_demand"] = "18.00";
  expect_2xx(s.admin("PUT", path, cheaper), "price cut");
  const json again = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + month_now()).body;
  EXPECT_EQ(again["totals"], inv["totals"]) << again.dump();
  EXPECT_EQ(s.admin("GET", path + "/history").body["items"].size(), 3u);
  // The job's cost shows the price its run started at, not today's sheet.
  const json cost = s.admin("GET", "/api/v1/jobs/" + job + "/cost").body;
  ASSERT_EQ(cost["allocations"].size(), 1u) << cost.dump();
  EXPECT_EQ(cost["allocations"][0]["unit_price"], "20.00") << cost.dump();

  // Billed usage keeps the offer: deleting it would leave the invoice without its sheets.
  Resp del = s.admin("DELETE", path);
  EXPECT_EQ(del.status, 409) << del.describe();
  EXPECT_NE(del.body.value("detail", "").find("allocations"), std::string::npos) << del.describe();
}

// What a run is billed as follows the sheet in force when it ran: a spot run stays spot after the
// supplier stops selling spot (it was re-rated at the on-demand price, all of it).
TEST(PriceHistory, ASheetChangedAfterARunDoesNotChangeWhatItIsBilledAs) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  const json offer = offer_doc("dc", "h100");
  ASSERT_TRUE(offer["prices"].contains("spot")) << offer.dump();
  const std::string offer_id = expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer").body.at("id");
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", "CNY")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  json j = job_doc("vision", "cheap");
  j["billing"]["mode"] = "spot";
  j["expected_duration_seconds"] = 2;
  const std::string job = expect_2xx(s.admin("POST", "/api/v1/jobs", j), "job").body.at("id");
  wait_for(s, "/api/v1/jobs/" + job, [](const json& x) { return x["status"]["state"] == "succeeded"; });
  const std::string invoice = "/api/v1/invoices?tenant=acme&month=" + month_now();
  const json before = s.admin("GET", invoice).body;
  json no_spot = offer;
  no_spot["prices"].erase("spot");
  expect_2xx(s.admin("PUT", "/api/v1/offers/" + offer_id, no_spot), "spot no longer sold");
  const json after = s.admin("GET", invoice).body;
  EXPECT_EQ(after["totals"], before["totals"]) << after.dump();
  std::set<std::string> rules;
  for (const auto& sec : after["sections"])
    for (const auto& l : sec["lines"]) rules.insert(l["rule"]);
  EXPECT_TRUE(rules.count("spot")) << after.dump();
  EXPECT_FALSE(rules.count("on_demand")) << after.dump();
}

// A commitment that starts later is priced from the sheet in force when it starts: a sheet that
// drops its term's reserved price is refused naming that price (it left the tenant's invoices
// unrated), and taken once the commitment has started.
TEST(PriceHistory, ASheetKeepsTheReservedPriceAStartingCommitmentNeeds) {
  ServerProcess s({"--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  const json offer = offer_doc("dc", "h100");
  ASSERT_TRUE(offer["prices"].contains("reserved_12m")) << offer.dump();
  const std::string offer_id = expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer").body.at("id");
  acme_and_beta(s);
  const std::string later = format_rfc3339((SystemClock().now() / kMsPerDay + 30) * kMsPerDay);
  const json next_year = {
      {"name", "next-year"}, {"offer", "h100"}, {"gpus", 8}, {"term_months", 12}, {"starts_at", later}};
  expect_2xx(s.admin("POST", "/api/v1/contracts", acme_dc_contract(json::array({next_year}))), "contract");
  json dropped = offer;
  dropped["prices"].erase("reserved_12m");
  Resp r = s.admin("PUT", "/api/v1/offers/" + offer_id, dropped);
  EXPECT_EQ(r.status, 409) << r.describe();
  EXPECT_EQ(r.error_fields(), std::vector<std::string>{"prices.reserved_12m"}) << r.describe();
  EXPECT_NE(r.body.value("detail", "").find("next-year"), std::string::npos) << r.describe();
  json other = offer;
  other["prices"].erase("reserved_1m");  // no commitment needs it
  expect_2xx(s.admin("PUT", "/api/v1/offers/" + offer_id, other), "another term's price may go");
}

}  // namespace
}  // namespace gpurent::testing
