// Balances through the real server (docs/billing.md#balances): a prepaid tenant's balance runs out
// while its job runs — the runway alert goes out first, then the job stops with the reason, and
// the final invoice is exact to the cent; a top-up lets it run again. Top-ups and the signed
// payment webhook; who may set what.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <thread>

#include "billing/webhook_format.h"
#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

int64_t amount_cents(const std::string& amount) {  // "-12.34" -> -1234
  const bool neg = !amount.empty() && amount[0] == '-';
  const std::string a = neg ? amount.substr(1) : amount;
  const size_t dot = a.find('.');
  int64_t v = std::stoll(a.substr(0, dot)) * 100;
  if (dot != std::string::npos) v += std::stoll((a.substr(dot + 1) + "00").substr(0, 2));
  return neg ? -v : v;
}

// A CNY tenant "acme" (prepaid, alerted under 1 minute of runway, stopped when nothing is left)
// and an offer at 3600.00 CNY per GPU-hour — 1.00 a second — billed per started second from the
// start of the run, without other fees.
void prepaid_world(const ServerProcess& s) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  json o = offer_doc("dc", "dear");
  o["prices"] = {{"on_demand", "3600.00"}};
  o.erase("served_models");
  o["min_increment_seconds"] = 1;
  o["fees"] = {{"billing_starts", "running"}};
  expect_2xx(s.admin("POST", "/api/v1/offers", o), "offer");
  json t = tenant_doc("acme");
  t["currency"] = "CNY";
  t["billing"] = {{"payment", "prepaid"}, {"runway_alert_minutes", 1}, {"stop_minutes", 0}};
  expect_2xx(s.admin("POST", "/api/v1/tenants", t), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
}

std::string run_long_job(const ServerProcess& s, const std::string& name, int seconds) {
  json j = job_doc("vision", name);
  j["expected_duration_seconds"] = seconds;
  return expect_2xx(s.admin("POST", "/api/v1/jobs", j), name).body.at("id");
}

TEST(Balance, APrepaidTenantsJobStopsWhenItsBalanceRunsOutAfterTheAlertWithAnExactFinalBill) {
  HookSink sink;
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "1"});
  prepaid_world(s);
  expect_2xx(s.admin("POST", "/api/v1/webhooks", json{{"name", "ops"}, {"type", "generic"}, {"url", sink.url()}}), "hook");
  expect_2xx(s.admin("POST", "/api/v1/top-ups",
                     json{{"tenant", "acme"}, {"amount", "6.00"}, {"reference", "pay-001"}, {"note", "first"}}),
             "top-up");
  json b = s.admin("GET", "/api/v1/tenants/acme/balance").body;
  ASSERT_EQ(b["balances"].size(), 1u) << b.dump();
  EXPECT_EQ(b["payment"], "prepaid");
  EXPECT_EQ(b["watched"], true);
  EXPECT_EQ(b["balances"][0]["available"], "6.00") << b.dump();
  EXPECT_FALSE(b["balances"][0].contains("runway_minutes")) << "nothing burns yet";

  // 6.00 at 1.00 a second: about 6 s of work.
  const std::string id = run_long_job(s, "long", 3600);
  json stopped = wait_for(
      s, "/api/v1/jobs/" + id,
      [](const json& j) {
        return j["status"]["state"] == "pending" && j["status"]["reason"].get<std::string>().find("balance") != std::string::npos;
      },
      30);
  ASSERT_EQ(stopped["status"]["state"], "pending") << stopped.dump();

  // The alerts, as delivered: the runway warning before the stop.
  std::vector<std::string> kinds;
  for (int i = 0; i < 1500; ++i) {
    kinds.clear();
    for (const auto& body : sink.bodies()) kinds.push_back(json::parse(body)["kind"]);
    if (std::find(kinds.begin(), kinds.end(), "balance_exhausted") != kinds.end()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto low = std::find(kinds.begin(), kinds.end(), "balance_low"), out = std::find(kinds.begin(), kinds.end(), "balance_exhausted");
  ASSERT_NE(low, kinds.end());
  ASSERT_NE(out, kinds.end());
  EXPECT_LT(low - kinds.begin(), out - kinds.begin()) << "the warning goes out before the stop";
  json delivered = json::parse(sink.bodies()[static_cast<size_t>(out - kinds.begin())]);
  EXPECT_EQ(delivered["event"], "balance.alert");
  EXPECT_EQ(delivered["stop_work"], true);
  EXPECT_EQ(delivered["subject"], "acme");

  // The final bill: one run, closed at the stop, billed per started second at 1.00 (a whole number of cents).
  json allocs = s.admin("GET", "/api/v1/allocations?tenant=acme").body["items"];
  ASSERT_EQ(allocs.size(), 1u) << allocs.dump();
  const json& run = allocs[0];
  ASSERT_TRUE(run["ended_at"].is_string()) << run.dump();
  auto ms = [](const json& t) {
    return *parse_rfc3339(t.get<std::string>(), "t");
  };
  const int64_t ran = ms(run["ended_at"]) - ms(run["running_at"]);
  const int64_t billed_ms = (ran + 999) / 1000 * 1000;  // the 1 s minimum increment, rounded up
  json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + format_rfc3339(ms(run["running_at"])).substr(0, 7)).body;
  EXPECT_EQ(amount_cents(inv["totals"]["CNY"]["total"]), billed_ms / 10) << inv.dump();
  EXPECT_GE(billed_ms, 6000 - 1000) << "it ran until the money was (about) used up";

  // The balance now: the top-up less that bill, to the cent; nothing burns.
  b = s.admin("GET", "/api/v1/tenants/acme/balance").body;
  EXPECT_EQ(amount_cents(b["balances"][0]["available"]), 600 - billed_ms / 10) << b.dump();
  EXPECT_EQ(amount_cents(b["balances"][0]["accruing"]), billed_ms / 10);
  EXPECT_EQ(b["balances"][0]["burn_per_hour"], "0.00");

  // The job stays held while nothing is paid in: no second run.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(s.admin("GET", "/api/v1/allocations?tenant=acme").body["items"].size(), 1u);
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/" + id).body["status"]["state"], "pending");

  // A top-up resolves the stop on the next pass and the job runs again.
  expect_2xx(s.admin("POST", "/api/v1/top-ups", json{{"tenant", "acme"}, {"amount", "100000.00"}, {"reference", "pay-002"}}),
             "second top-up");
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; }, 20);
  json active = s.admin("GET", "/api/v1/alerts?state=active").body;
  for (const auto& a : active["items"]) EXPECT_NE(a["kind"], "balance_exhausted") << a.dump();
}

// An instance of a prepaid tenant stops when the money runs out, saying why, its run billed to that
// moment; it stays stopped after a top-up until a user starts it again.
TEST(Balance, AnInstanceStopsWhenItsTenantsMoneyRunsOutAndStaysStopped) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "1"});
  prepaid_world(s);
  expect_2xx(s.admin("POST", "/api/v1/top-ups", json{{"tenant", "acme"}, {"amount", "4.00"}, {"reference", "pay-i1"}}), "top-up");
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  expect_2xx(s.req("POST", "/api/v1/instances", dev,
                   json{{"name", "box"}, {"project", "vision"}, {"gpus", 1}, {"gpu_model", "h100-sxm5-80gb"},
                        {"image", "nvcr.io/nvidia/pytorch:24.05-py3"}}),
             "instance");
  // 4.00 at 1.00 a second: about 4 s, then stopped by the balance guard.
  json stopped = wait_for(
      s, "/api/v1/instances/box",
      [](const json& j) { return j["state"] == "stopped" && j.contains("stop_reason"); }, 30);
  ASSERT_EQ(stopped["state"], "stopped") << stopped.dump();
  EXPECT_EQ(stopped["want_running"], false);
  EXPECT_NE(stopped["stop_reason"].get<std::string>().find("balance guard"), std::string::npos) << stopped.dump();
  EXPECT_NE(s.req("GET", "/api/v1/instances/box?lang=zh", dev).body["stop_reason"].get<std::string>().find("余额不足"),
            std::string::npos);
  const json job = s.admin("GET", "/api/v1/jobs/" + stopped["current_job"]["id"].get<std::string>()).body;
  EXPECT_EQ(job["status"]["state"], "cancelled") << job.dump();
  // Money paid in: the stop is lifted, the instance stays stopped until started.
  expect_2xx(s.admin("POST", "/api/v1/top-ups", json{{"tenant", "acme"}, {"amount", "100000.00"}, {"reference", "pay-i2"}}), "top-up");
  for (int i = 0; i < 50; ++i) {
    bool active = false;
    const json alerts = s.admin("GET", "/api/v1/alerts?state=active").body;  // kept: the loop reads into it
    for (const auto& a : alerts["items"]) active = active || a["kind"] == "balance_exhausted";
    if (!active) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(s.req("GET", "/api/v1/instances/box", dev).body["state"], "stopped") << "no start by itself";
  expect_2xx(s.req("POST", "/api/v1/instances/box/start", dev, json::object()), "start");
  EXPECT_EQ(wait_for(s, "/api/v1/instances/box", [](const json& j) { return j["state"] == "running"; })["state"], "running");
}

TEST(Balance, TopUpsAndBillingSettingsValidateAndRespectRoles) {
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "0"});
  prepaid_world(s);
  json post = tenant_doc("beta");  // postpaid (the default)
  expect_2xx(s.admin("POST", "/api/v1/tenants", post), "beta");
  EXPECT_EQ(s.admin("POST", "/api/v1/top-ups", json{{"tenant", "beta"}, {"amount", "10.00"}, {"reference", "r1"}}).error_fields(),
            std::vector<std::string>{"tenant"});
  EXPECT_EQ(s.admin("POST", "/api/v1/top-ups", json{{"tenant", "acme"}, {"amount", "-10.00"}, {"reference", "r1"}}).error_fields(),
            std::vector<std::string>{"note"});
  EXPECT_EQ(s.admin("POST", "/api/v1/top-ups", json{{"tenant", "acme"}, {"amount", "0"}, {"reference", "r1"}}).error_fields(),
            std::vector<std::string>{"amount"});
  EXPECT_EQ(s.admin("POST", "/api/v1/top-ups", json{{"tenant", "acme"}, {"amount", "1.00"}, {"reference", "bad ref"}}).error_fields(),
            std::vector<std::string>{"reference"});
  expect_2xx(s.admin("POST", "/api/v1/top-ups", json{{"tenant", "acme"}, {"amount", "10.00"}, {"reference", "r1"}}), "r1");
  Resp dup = s.admin("POST", "/api/v1/top-ups", json{{"tenant", "acme"}, {"amount", "10.00"}, {"reference", "r1"}});
  EXPECT_EQ(dup.status, 409) << dup.describe();
  // A correction: negative, with a note.
  expect_2xx(s.admin("POST", "/api/v1/top-ups",
                     json{{"tenant", "acme"}, {"amount", "-2.50"}, {"reference", "r1-fix"}, {"note", "bank fee"}}),
             "correction");
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants/acme/balance").body["balances"][0]["top_ups"], "7.50");
  // Never changed or deleted.
  const std::string tu = s.admin("GET", "/api/v1/top-ups?tenant=acme").body["items"][0]["id"];
  EXPECT_EQ(s.admin("DELETE", "/api/v1/top-ups/" + tu).status, 405);

  // Credit limits are postpaid; a tenant's admin sets its runway alert only; others nothing.
  EXPECT_EQ(s.admin("PUT", "/api/v1/tenants/acme/billing", json{{"payment", "prepaid"}, {"credit_limit", "5.00"}}).error_fields(),
            std::vector<std::string>{"credit_limit"});
  // A limit near int64's end ("unlimited") would wrap the sums: bounded like a top-up.
  EXPECT_EQ(s.admin("PUT", "/api/v1/tenants/acme/billing", json{{"credit_limit", "9223372036854"}}).error_fields(),
            std::vector<std::string>{"credit_limit"});
  const std::string admin = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  const std::string member = make_user_token(s, "acme-dev", "tenant_member", "acme");
  Resp own = s.req("PUT", "/api/v1/tenants/acme/billing", admin,
                   json{{"payment", "prepaid"}, {"runway_alert_minutes", 90}, {"stop_minutes", 0}});
  ASSERT_EQ(own.status, 200) << own.describe();
  EXPECT_EQ(own.body["runway_alert_minutes"], 90);
  Resp more = s.req("PUT", "/api/v1/tenants/acme/billing", admin, json{{"payment", "prepaid"}, {"stop_minutes", 30}});
  EXPECT_EQ(more.status, 403);
  EXPECT_EQ(more.error_fields(), std::vector<std::string>{"stop_minutes"});
  EXPECT_EQ(s.req("PUT", "/api/v1/tenants/acme/billing", member, json{{"payment", "prepaid"}}).status, 403);
  EXPECT_EQ(s.req("POST", "/api/v1/top-ups", admin, json{{"tenant", "acme"}, {"amount", "1.00"}, {"reference", "x"}}).status,
            403);
  EXPECT_EQ(s.req("GET", "/api/v1/tenants/acme/balance", member).status, 200);
  EXPECT_EQ(s.req("GET", "/api/v1/top-ups", member).body["items"].size(), 2u);
  // Postpaid with a limit: what is owed counts against it.
  Resp lim = s.admin("PUT", "/api/v1/tenants/beta/billing", json{{"credit_limit", "500.00"}});
  ASSERT_EQ(lim.status, 200) << lim.describe();
  json bb = s.admin("GET", "/api/v1/tenants/beta/balance").body;
  EXPECT_EQ(bb["payment"], "postpaid");
  EXPECT_EQ(bb["balances"][0]["credit_limit"], "500.00");
  EXPECT_EQ(bb["balances"][0]["available"], "500.00");
}

TEST(Balance, SignedPaymentsRecordTopUpsOnce) {
  const std::string secret = "whsec-0123456789abcdef";
  const std::string file = ::testing::TempDir() + "/payment-secret";
  std::ofstream(file) << secret << "\n";
  ServerProcess s({"--firewall-interval-s", "0", "--payment-webhook-secret-file", file});
  prepaid_world(s);
  auto send = [&](const std::string& body, int64_t ts, const std::string& key) {
    httplib::Headers h = {{"X-Gpurent-Timestamp", std::to_string(ts)},
                          {"X-Gpurent-Signature", generic_signature(key, ts, body)}};
    auto r = s.client().Post("/api/v1/payments/webhook", h, body, "application/json");
    return r ? r->status : -1;
  };
  const int64_t now =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string body = json{{"tenant", "acme"}, {"amount", "88.00"}, {"reference", "alipay-7"}}.dump();
  EXPECT_EQ(send(body, now, "wrong-secret-0123456789"), 401);
  EXPECT_EQ(send(body, now - 10 * 60 * 1000, secret), 401) << "stale";
  EXPECT_EQ(s.client().Post("/api/v1/payments/webhook", body, "application/json")->status, 401) << "unsigned";
  // Timestamps at the ends of the integer range, correctly signed: stale, never an overflow that
  // passes the window (LLONG_MIN + now did, with the signature right).
  for (const std::string& ts : {std::string("-99999999999999999999"), std::string("99999999999999999999"),
                               std::to_string(std::numeric_limits<int64_t>::min() + now)}) {
    const int64_t t = std::strtoll(ts.c_str(), nullptr, 10);
    httplib::Headers h = {{"X-Gpurent-Timestamp", ts}, {"X-Gpurent-Signature", generic_signature(secret, t, body)}};
    auto r = s.client().Post("/api/v1/payments/webhook", h, body, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << ts << ": " << r->body;
  }
  EXPECT_EQ(send(body, now, secret), 201);
  EXPECT_EQ(send(body, now, secret), 200) << "delivered twice, recorded once";
  EXPECT_EQ(send(json{{"tenant", "acme"}, {"amount", "99.00"}, {"reference", "alipay-7"}}.dump(), now, secret), 409);
  EXPECT_EQ(send(json{{"tenant", "acme"}, {"amount", "-1.00"}, {"reference", "alipay-8"}, {"note", "x"}}.dump(), now, secret), 422);
  json tops = s.admin("GET", "/api/v1/top-ups?tenant=acme").body["items"];
  ASSERT_EQ(tops.size(), 1u);
  EXPECT_EQ(tops[0]["source"], "payment_webhook");
  EXPECT_EQ(tops[0]["by"], "payment-webhook");
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants/acme/balance").body["balances"][0]["available"], "88.00");
}

}  // namespace
}  // namespace gpurent::testing
