// Money in reach, inside the real server: GET /api/v1/projects/{id}/quota shows this month's
// spending, what remains and the month-end projection against the budget; a budget change sets or
// lifts the budget hold in its own write, so the scheduler's next step already sees it (the
// firewall's passes here are an hour apart: only the one at start runs); a limit set below
// present use answers warnings saying what happens to running work.
#include <gtest/gtest.h>

#include <string>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

// A CNY tenant, so the offer's CNY charges count toward its budgets.
void world(const ServerProcess& s) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  json t = tenant_doc("acme");
  t["currency"] = "CNY";
  expect_2xx(s.admin("POST", "/api/v1/tenants", t), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
}

std::string submit(const ServerProcess& s, const std::string& name, int gpus, std::optional<int> seconds) {
  json j = job_doc("vision", name);
  j["gpus_per_worker"] = gpus;
  if (seconds)
    j["expected_duration_seconds"] = *seconds;
  else
    j.erase("expected_duration_seconds");
  return expect_2xx(s.admin("POST", "/api/v1/jobs", j), name).body.at("id");
}

auto state_is(const std::string& want) {
  return [want](const json& j) { return j.at("status").at("state") == want; };
}

// The message codes of an answer's warnings.
std::vector<std::string> warning_codes(const json& answer) {
  std::vector<std::string> out;
  for (const auto& w : answer.value("warnings", json::array())) out.push_back(w.at("text_message").at("code"));
  return out;
}

// "12.345678" from micro-units (a budget amount the API accepts).
std::string amount(int64_t micros) {
  std::string frac = std::to_string(1'000'000 + micros % 1'000'000).substr(1);
  return std::to_string(micros / 1'000'000) + "." + frac;
}

// A project that has spent money this month (one short run), with a budget far above it.
int64_t spend_something(const ServerProcess& s) {
  const std::string id = submit(s, "short", 1, 1);
  wait_for(s, "/api/v1/jobs/" + id, state_is("succeeded"));
  json q = s.admin("GET", "/api/v1/projects/vision/quota").body;
  q["monthly_budget"] = "1000000.00";
  q["budget_action"] = "hold";
  Resp r = expect_2xx(s.admin("PUT", "/api/v1/projects/vision/quota", q), "a budget far above spending");
  EXPECT_TRUE(warning_codes(r.body).empty()) << r.describe();
  return micros(r.body.at("budget").at("spent"));
}

TEST(ApiBudget, TheQuotaShowsSpendingRemainingAndProjectionAgainstTheBudget) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "3600"});
  world(s);
  const int64_t spent = spend_something(s);
  EXPECT_GT(spent, 0);
  json q = s.admin("GET", "/api/v1/projects/vision/quota").body;
  EXPECT_EQ(q.at("currency"), "CNY");
  const json& b = q.at("budget");
  EXPECT_EQ(micros(b.at("monthly")), 1'000'000'000'000);
  EXPECT_EQ(micros(b.at("spent")), spent);
  EXPECT_EQ(micros(b.at("remaining")), 1'000'000'000'000 - spent);  // exact, in micro-units
  EXPECT_GE(micros(b.at("projected_month_end")), spent);
  EXPECT_EQ(b.at("projected_over"), false);
  EXPECT_TRUE(q.at("budget_hold").is_null());

  // The costs dashboard draws the same figures (one computation).
  json d = s.admin("GET", "/api/v1/dashboard/costs?tenant=acme").body;
  for (const auto& t : d.at("tenants"))
    for (const auto& p : t.at("projects"))
      if (p.at("project") == "vision" && !p.at("budget").is_null()) {
        EXPECT_EQ(p["budget"]["spent"], b.at("spent"));
        EXPECT_EQ(p["budget"]["remaining"], b.at("remaining"));
      }

  // Without a budget there is nothing to burn down; the answer can be sent back as it came.
  q.erase("monthly_budget");
  Resp none = expect_2xx(s.admin("PUT", "/api/v1/projects/vision/quota", q), "no budget");
  EXPECT_TRUE(none.body.at("budget").is_null()) << none.describe();
  // The currency is the tenant's: another one is refused, not ignored.
  q["currency"] = "USD";
  Resp usd = s.admin("PUT", "/api/v1/projects/vision/quota", q);
  EXPECT_EQ(usd.status, 422) << usd.describe();
  EXPECT_EQ(usd.error_fields(), std::vector<std::string>{"currency"});
}

TEST(ApiBudget, ABudgetHoldAppliesWithinOneControlLoopStepOfTheBudgetChange) {
  // Passes an hour apart: only the one at start runs, so whatever holds below is the change's own.
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "3600"});
  world(s);
  const int64_t spent = spend_something(s);
  ASSERT_GT(spent, 1);

  // A budget below this month's spending, with budget_action hold: the write itself holds.
  json q = s.admin("GET", "/api/v1/projects/vision/quota").body;
  q["monthly_budget"] = amount(spent / 2);
  Resp lowered = expect_2xx(s.admin("PUT", "/api/v1/projects/vision/quota", q), "budget below spending");
  EXPECT_EQ(warning_codes(lowered.body), std::vector<std::string>{"api.quota.warn.budget_hold"}) << lowered.describe();
  ASSERT_TRUE(lowered.body.at("budget_hold").is_object()) << lowered.describe();
  EXPECT_EQ(lowered.body["budget_hold"]["text_message"]["code"], "sched.hold.budget");
  json alerts = s.admin("GET", "/api/v1/alerts?state=active").body.at("items");
  ASSERT_EQ(alerts.size(), 1u) << alerts.dump();
  EXPECT_EQ(alerts[0]["kind"], "budget_breach");
  EXPECT_EQ(alerts[0]["hold_submissions"], true);

  // A job submitted at once never starts: the hold committed with the budget.
  const std::string id = submit(s, "held", 1, 60);
  json held = wait_for(s, "/api/v1/jobs/" + id,
                       [](const json& j) { return j["status"]["reason"].get<std::string>().rfind("budget:", 0) == 0; });
  EXPECT_EQ(held["status"]["state"], "pending") << held.dump();
  for (const auto& e : s.admin("GET", "/api/v1/jobs/" + id + "/events").body.at("items"))
    EXPECT_EQ(e.at("to"), "pending") << "a held job moved on: " << e.dump();

  // budget_action alert: still breached, nothing held any more.
  q["budget_action"] = "alert";
  Resp alert_only = expect_2xx(s.admin("PUT", "/api/v1/projects/vision/quota", q), "alert only");
  EXPECT_EQ(warning_codes(alert_only.body), std::vector<std::string>{"api.quota.warn.budget_alert"});
  EXPECT_TRUE(alert_only.body.at("budget_hold").is_null()) << alert_only.describe();
  wait_for(s, "/api/v1/jobs/" + id, state_is("running"));

  // Held again, then the budget raised above spending through a project update: the alert is
  // resolved by that write, and a job submitted meanwhile starts.
  q["budget_action"] = "hold";
  expect_2xx(s.admin("PUT", "/api/v1/projects/vision/quota", q), "hold again");
  const std::string waiting = submit(s, "waiting", 1, 60);
  wait_for(s, "/api/v1/jobs/" + waiting,
           [](const json& j) { return j["status"]["reason"].get<std::string>().rfind("budget:", 0) == 0; });
  json p = s.admin("GET", "/api/v1/projects/vision").body;
  p["quota"]["monthly_budget"] = "1000000.00";
  Resp raised = expect_2xx(s.admin("PUT", "/api/v1/projects/vision", p), "budget raised");
  EXPECT_TRUE(warning_codes(raised.body).empty()) << raised.describe();
  EXPECT_TRUE(s.admin("GET", "/api/v1/alerts?state=active").body.at("items").empty());
  EXPECT_TRUE(s.admin("GET", "/api/v1/projects/vision/quota").body.at("budget_hold").is_null());
  wait_for(s, "/api/v1/jobs/" + waiting, state_is("running"));
  // And lowered below spending again through a project update: the month rated before the write
  // (off the control loop) holds it in the write.
  p = s.admin("GET", "/api/v1/projects/vision").body;
  p["quota"]["monthly_budget"] = amount(spent / 2);
  Resp relowered = expect_2xx(s.admin("PUT", "/api/v1/projects/vision", p), "budget lowered");
  EXPECT_EQ(warning_codes(relowered.body), std::vector<std::string>{"api.quota.warn.budget_hold"})
      << relowered.describe();
  EXPECT_TRUE(s.admin("GET", "/api/v1/projects/vision/quota").body.at("budget_hold").is_object());

  // A new project whose budget is already reached (zero) is held from its creation.
  json zero = project_doc("acme", "frozen");
  zero["quota"]["monthly_budget"] = "0.00";
  Resp created = expect_2xx(s.admin("POST", "/api/v1/projects", zero), "zero budget");
  EXPECT_EQ(warning_codes(created.body), std::vector<std::string>{"api.quota.warn.budget_hold"}) << created.describe();
  EXPECT_TRUE(s.admin("GET", "/api/v1/projects/frozen/quota").body.at("budget_hold").is_object());
}

TEST(ApiBudget, ALimitBelowPresentUseWarnsWhatHappensToRunningWork) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  const std::string big = submit(s, "big", 4, std::nullopt);
  wait_for(s, "/api/v1/jobs/" + big, state_is("running"));

  json q = s.admin("GET", "/api/v1/projects/vision/quota").body;
  q["gpus_per_model"] = {{"h100-sxm5-80gb", 2}};
  q["max_gpus_per_job"] = 2;
  q["max_concurrent_jobs"] = 0;
  q["monthly_budget"] = "0.00";
  Resp r = expect_2xx(s.admin("PUT", "/api/v1/projects/vision/quota", q), "limits below use");
  EXPECT_EQ(warning_codes(r.body), (std::vector<std::string>{"api.quota.warn.gpus", "api.quota.warn.jobs_frozen",
                                                             "api.quota.warn.per_job", "api.quota.warn.budget_off"}))
      << r.describe();
  const json gpus = r.body["warnings"][0]["text_message"]["args"];
  EXPECT_EQ(gpus["used"], "4");
  EXPECT_EQ(gpus["limit"], "2");
  EXPECT_EQ(gpus["project"], "vision");
  EXPECT_EQ(r.body["warnings"][1]["text_message"]["args"]["running"], "1");
  // The firewall is off: nothing is held.
  EXPECT_TRUE(r.body.at("budget_hold").is_null());
  EXPECT_TRUE(s.admin("GET", "/api/v1/alerts").body.at("items").empty());

  // What the warnings say: the running job keeps running, a new one waits on the quota.
  const std::string next = submit(s, "next", 1, 60);
  json waiting = wait_for(s, "/api/v1/jobs/" + next, [](const json& j) {
    return j["status"]["reason"].get<std::string>().rfind("quota:", 0) == 0;
  });
  EXPECT_EQ(waiting["status"]["state"], "pending");
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/" + big).body["status"]["state"], "running");

  // Limits back above use: no warning.
  q["gpus_per_model"] = {{"h100-sxm5-80gb", 8}};
  q["max_gpus_per_job"] = 8;
  q["max_concurrent_jobs"] = 4;
  q.erase("monthly_budget");
  Resp fine = expect_2xx(s.admin("PUT", "/api/v1/projects/vision/quota", q), "limits above use");
  EXPECT_TRUE(warning_codes(fine.body).empty()) << fine.describe();
}

}  // namespace
}  // namespace gpurent::testing
