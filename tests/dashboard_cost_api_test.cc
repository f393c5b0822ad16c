// The cost dashboards inside the real server: GET /api/v1/dashboard/costs adds up to the day
// invoices exactly (a day's total is GET /api/v1/invoices for that day; projects, storage I/O,
// egress and cards are that day's lines), budgets burn down from the month's 1st, the period's
// alerts show egress freezes until lifted; GET /api/v1/dashboard/cost-performance ranks jobs by
// metric gain per GPU-hour (hand-computed from the allocation ledger), with cost from their lines
// and flags; tenants see only their own; bad input names the parameter.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "billing/rating_input.h"
#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

constexpr int64_t kDayMs = 86'400'000;


TimeMs at(const json& j) { return *parse_rfc3339(j.get<std::string>(), "t"); }
std::string date(TimeMs t) { return format_rfc3339(t).substr(0, 10); }

struct JobRun {
  std::string job_id, alloc_id, node;
  std::vector<int64_t> gpus;
  int64_t milli = 0;
  TimeMs running = 0;
};

class DashboardCost : public ::testing::Test {
 protected:
  // The cost firewall's pass starts once the world is made (SetUp): it closes last month at once,
  // and a commitment may not start in a closed month.
  static std::vector<std::string> args(const char* firewall_interval_s) {
    return {"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", firewall_interval_s};
  }
  DashboardCost() : s_(args("0")) {}

  void SetUp() override {
    expect_2xx(s_.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
    for (const char* n : {"n1", "n2"}) expect_2xx(s_.admin("POST", "/api/v1/nodes", node_doc("dc", n)), "node");
    expect_2xx(s_.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");  // CNY, 17.50/GPU-hour
    for (const char* t : {"acme", "rival"}) {
      json doc = tenant_doc(t);
      doc["currency"] = "CNY";
      expect_2xx(s_.admin("POST", "/api/v1/tenants", doc), t);
    }
    json vision = project_doc("acme", "vision");
    vision["quota"]["monthly_budget"] = "1.00";  // egress alone breaches it
    vision["quota"]["budget_action"] = "alert";  // tell, do not hold
    projects_["vision"] = expect_2xx(s_.admin("POST", "/api/v1/projects", vision), "vision").body.at("id");
    json nlp = project_doc("acme", "nlp");
    nlp["quota"].erase("monthly_budget");
    projects_["nlp"] = expect_2xx(s_.admin("POST", "/api/v1/projects", nlp), "nlp").body.at("id");
    expect_2xx(s_.admin("POST", "/api/v1/projects", project_doc("rival", "vision")), "rival vision");
    // A one-month commitment that ended at today's midnight: the days before today carry its
    // line (no project), today none, so today's invoice stops changing once the runs end.
    today_ = (SystemClock().now() / kDayMs) * kDayMs;
    commit_from_ = add_months(today_, -1);
    commit_to_ = add_months(commit_from_, 1);
    json contract = {{"name", "acme-dc"},       {"tenant", "acme"},          {"supplier", "dc"},
                     {"offers", {"h100"}},      {"currency", "CNY"},         {"starts_at", "2020-01-01T00:00:00Z"},
                     {"commitments", {{{"name", "one-gpu"}, {"offer", "h100"}, {"gpus", 1}, {"term_months", 1},
                                       {"starts_at", format_rfc3339(commit_from_)}}}}};
    expect_2xx(s_.admin("POST", "/api/v1/contracts", contract), "contract");
    s_.set_extra_args(args("1"));
    s_.restart();
  }

  std::string submit(const std::string& project, const std::string& name, int gpus) {
    json j = job_doc(projects_.at(project), name);  // by id: rival has a "vision" too
    j["gpus_per_worker"] = gpus;
    j["expected_duration_seconds"] = 3600;
    return expect_2xx(s_.admin("POST", "/api/v1/jobs", j), name).body.at("id");
  }

  JobRun run_of(const std::string& job_id) {
    json items = s_.admin("GET", "/api/v1/allocations?limit=1000").body.at("items");
    for (const auto& a : items)
      if (a["job_id"] == job_id)
        return {job_id, a["id"].get<std::string>(), a["placement"][0]["node"].get<std::string>(),
                a["placement"][0]["gpus"].get<std::vector<int64_t>>(), a["gpu_milli"].get<int64_t>(), at(a["running_at"])};
    ADD_FAILURE() << "no allocation of " << job_id;
    return {};
  }

  void metric(const JobRun& r, const std::string& name, double first, double last, bool higher_is_better = true) {
    json body = {{"points",
                  {{{"name", name}, {"value", first}, {"at", format_rfc3339(r.running)}, {"higher_is_better", higher_is_better}},
                   {{"name", name}, {"value", last}, {"at", format_rfc3339(r.running + 1000)}, {"higher_is_better", higher_is_better}}}}};
    Resp res = s_.admin("POST", "/api/v1/jobs/" + r.job_id + "/metrics", body);
    ASSERT_EQ(res.status, 201) << res.describe();
  }

  json invoice(TimeMs day) {
    return s_.admin("GET", "/api/v1/invoices?tenant=acme&from=" + date(day) + "&to=" + date(day + kDayMs)).body;
  }

  ServerProcess s_;
  TimeMs today_ = 0, commit_from_ = 0, commit_to_ = 0;
  std::map<std::string, std::string> projects_;  // acme's, name -> id
};

TEST_F(DashboardCost, CostsAddUpToTheDayInvoicesAndJobsRankByGainPerGpuHour) {
  // Four runs: train-a (2 GPUs) and train-b in vision, train-c and train-d in nlp.
  const std::string a = submit("vision", "train-a", 2), b = submit("vision", "train-b", 1),
                    c = submit("nlp", "train-c", 1), d = submit("nlp", "train-d", 1);
  for (const auto& id : {a, b, c, d})
    wait_for(s_, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
  const JobRun ra = run_of(a), rb = run_of(b), rc = run_of(c), rd = run_of(d);
  metric(ra, "val_accuracy", 0.5, 0.7);
  metric(rb, "val_accuracy", 0.5, 0.9);
  metric(rc, "val_accuracy", 0.6, 0.61);
  metric(rd, "val_loss", 2.0, 2.5, false);  // lower is better: a loss going up is no gain
  // Utilization inside each metric span; train-a also moves 1200 GB out and 3000 GB through storage.
  json gpu = json::array();
  for (const JobRun* r : {&ra, &rb, &rc, &rd})
    for (int64_t g : r->gpus)
      gpu.push_back({{"at", format_rfc3339(r->running + 500)}, {"node", r->node}, {"gpu", g},
                     {"utilization_pct", r == &rd ? 10 : 90}});
  json batch = {{"idempotency_key", "dash-1"},
                {"gpu_samples", gpu},
                {"job_samples",
                 {{{"at", format_rfc3339(ra.running + 500)}, {"job", a}, {"egress_bytes", 1'200'000'000'000},
                   {"storage_io_bytes", 3'000'000'000'000}}}}};
  Resp in = s_.admin("POST", "/api/v1/usage", batch);
  ASSERT_EQ(in.status, 201) << in.describe();
  for (const JobRun* r : {&ra, &rb, &rc, &rd})
    while (SystemClock().now() < r->running + 1500) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (const auto& id : {a, b, c, d}) expect_2xx(s_.admin("POST", "/api/v1/jobs/" + id + "/cancel"), "cancel");
  wait_for(s_, "/api/v1/allocations?state=closed", [](const json& j) { return j["items"].size() == 4; });
  wait_for(s_, "/api/v1/alerts?tenant=acme", [](const json& j) {
    int kinds = 0;
    for (const auto& x : j["items"]) kinds += x["kind"] == "egress_daily_cost" || x["kind"] == "budget_breach";
    return kinds == 2;
  });

  // --- costs ---
  Resp r = s_.admin("GET", "/api/v1/dashboard/costs?tenant=acme");
  ASSERT_EQ(r.status, 200) << r.describe();
  const json& dash = r.body;
  ASSERT_EQ(dash["days"].size(), 7u);
  EXPECT_EQ(dash["days"].back(), date(today_));
  EXPECT_EQ(at(dash["to"]), today_ + kDayMs);
  ASSERT_EQ(dash["tenants"].size(), 1u) << dash.dump();
  const json& t = dash["tenants"][0];
  EXPECT_EQ(t["tenant"], "acme");
  EXPECT_EQ(t["currency"], "CNY");
  EXPECT_EQ(t["card_threshold"], "100.00");
  EXPECT_EQ(t["egress_threshold"], "500.00");
  EXPECT_EQ(t["storage_io_share_threshold_pct"], 20);
  // Fewer than 50 cards: every card is listed, so the count is theirs.
  int64_t over = 0;
  for (const auto& k : t["cards"]) over += k["over_threshold_days"].get<int64_t>() > 0;
  EXPECT_LT(t["cards"].size(), 50u);
  EXPECT_EQ(t["cards_over_threshold"], over);
  for (const auto& p : t["projects"]) {
    const double share = std::stod(p["storage_io_share_pct"].get<std::string>());
    if (share != 20.0) {
      EXPECT_EQ(p["storage_io_over_threshold"], share > 20.0) << p.dump();
    }
  }
  const size_t today = 6, yesterday = 5;
  auto total_of = [](const json& inv) {
    return inv["totals"].contains("CNY") ? micros(inv["totals"]["CNY"]["total"]) : 0;
  };
  // Each day is its invoice, to the cent; yesterday is a whole day of the one-GPU commitment.
  const json inv_today = invoice(today_), inv_yesterday = invoice(today_ - kDayMs);
  EXPECT_EQ(micros(t["daily_total"][today]), total_of(inv_today)) << inv_today.dump();
  EXPECT_EQ(micros(t["daily_total"][yesterday]), total_of(inv_yesterday));
  if (commit_from_ <= today_ - kDayMs && commit_to_ >= today_) {
    EXPECT_EQ(t["daily_total"][yesterday], "360.00");  // 24 h × 15.00
  }

  // Projects and cards are today's lines.
  std::map<std::string, int64_t> project_sum, project_charges, storage_io, egress;
  int64_t gpu_exact = 0, pieces = 0, unassigned = 0;
  for (const auto& sec : inv_today["sections"])
    for (const auto& l : sec["lines"]) {
      const std::string p = l["project"];
      (p.empty() ? unassigned : project_sum[p]) += micros(l["amount"]);
      if (l["kind"] != "credit") project_charges[p] += micros(l["amount"]);
      if (l["rule"] == "storage_io") storage_io[p] += micros(l["amount"]);
      if (l["rule"] == "egress") egress[p] += micros(l["amount"]);
      if (l["kind"] == "usage" && l["unit"] == "GPU-second") gpu_exact += micros(l["amount_exact"]), pieces += 2;
    }
  ASSERT_EQ(t["projects"].size(), 2u);
  int64_t all_projects = 0;
  for (const auto& p : t["projects"]) {
    const std::string name = p["project"];
    EXPECT_FALSE(p["project_id"].get<std::string>().empty());
    EXPECT_EQ(micros(p["daily"][today]), project_sum[name]) << name;
    EXPECT_EQ(micros(p["total"]), project_sum[name]) << name;  // nothing on the days before
    EXPECT_EQ(micros(p["storage_io_daily"][today]), storage_io[name]);
    EXPECT_EQ(micros(p["egress_daily"][today]), egress[name]);
    for (size_t i = 0; i < today; ++i) EXPECT_EQ(p["daily"][i], "0.00");
    all_projects += micros(p["daily"][today]);
  }
  EXPECT_EQ(all_projects + unassigned, micros(t["daily_total"][today]));
  const json& vision = t["projects"][1]["project"] == "vision" ? t["projects"][1] : t["projects"][0];
  const json& nlp = t["projects"][1]["project"] == "vision" ? t["projects"][0] : t["projects"][1];
  EXPECT_EQ(vision["egress_daily"][today], "550.00");      // (1200 − 100 free) GB × 0.50
  EXPECT_EQ(vision["storage_io_daily"][today], "20.00");   // (3000 − 2000 free) GB × 0.02
  // Share = storage I/O ÷ (charges + reserved-covered value), one decimal, half to even. Today runs
  // after the commitment ended: nothing is covered.
  EXPECT_EQ(vision["reserved_covered_value"], "0.00");
  EXPECT_EQ(nlp["reserved_covered_value"], "0.00");
  const int64_t tenths_x2 = storage_io["vision"] * 2000 / project_charges["vision"];
  const int64_t tenths = tenths_x2 / 2 + (tenths_x2 % 2);  // no exact halves here: round half up is the same
  EXPECT_EQ(vision["storage_io_share_pct"], std::to_string(tenths / 10) + "." + std::to_string(tenths % 10));
  EXPECT_EQ(nlp["storage_io_share_pct"], "0.0");
  EXPECT_EQ(vision["storage_io_over_threshold"], storage_io["vision"] * 100 > 20 * project_charges["vision"]);
  EXPECT_EQ(nlp["storage_io_over_threshold"], false);
  // Cards: five GPUs ran; their day costs share the GPU-time lines (half a micro-unit per piece).
  ASSERT_EQ(t["cards"].size(), 5u) << t["cards"].dump();
  int64_t cards_sum = 0;
  for (const auto& k : t["cards"]) {
    EXPECT_FALSE(k["node_id"].get<std::string>().empty());
    EXPECT_FALSE(k["supplier"].get<std::string>().empty());
    // One supplier here: no node name is shared, so no card names its supplier.
    EXPECT_EQ(k["label"], k["node"].get<std::string>() + " #" + std::to_string(k["gpu"].get<int64_t>()));
    EXPECT_EQ(micros(k["max_daily"]), micros(k["daily"][today]));
    EXPECT_EQ(k["over_threshold_days"], 0);
    cards_sum += micros(k["daily"][today]);
  }
  EXPECT_LE(std::llabs(cards_sum - gpu_exact), pieces) << cards_sum << " vs " << gpu_exact;
  for (size_t i = 1; i < t["cards"].size(); ++i)
    EXPECT_GE(micros(t["cards"][i - 1]["daily"][today]), micros(t["cards"][i]["daily"][today]));

  // Budget: vision's month burns down from the 1st; nlp has none.
  EXPECT_TRUE(nlp["budget"].is_null());
  const json& budget = vision["budget"];
  EXPECT_EQ(budget["monthly"], "1.00");
  EXPECT_EQ(budget["month"], date(today_).substr(0, 7));
  const auto& burn = budget["burn"];
  ASSERT_EQ(burn.size(), std::stoul(date(today_).substr(8, 2)));
  EXPECT_EQ(burn[0]["date"], date(today_).substr(0, 8) + "01");
  EXPECT_EQ(burn.back()["date"], date(today_));
  int64_t spent_today = 0;  // charges before credits, exact: what the budget rule counts
  for (const auto& sec : inv_today["sections"])
    for (const auto& l : sec["lines"])
      if (l["project"] == "vision" && l["kind"] != "credit") spent_today += micros(l["amount_exact"]);
  EXPECT_EQ(micros(budget["spent"]), spent_today);
  EXPECT_EQ(micros(burn.back()["spent"]), spent_today);
  for (const auto& day : burn) EXPECT_EQ(micros(day["remaining"]), 1'000'000 - micros(day["spent"])) << day.dump();
  EXPECT_EQ(micros(budget["remaining"]), 1'000'000 - spent_today);
  EXPECT_GE(micros(budget["projected_month_end"]), spent_today);
  EXPECT_EQ(budget["projected_over"], true);

  // Alerts of the period: the egress freeze holds until an admin lifts it.
  std::string egress_alert;
  for (const auto& x : t["alerts"])
    if (x["kind"] == "egress_daily_cost") {
      egress_alert = x["id"];
      EXPECT_EQ(x["project"], "vision");
      EXPECT_EQ(x["state"], "active");
      EXPECT_EQ(x["frozen"], true);
      EXPECT_FALSE(x["message_zh"].get<std::string>().empty());
    }
  ASSERT_FALSE(egress_alert.empty()) << t["alerts"].dump();
  expect_2xx(s_.admin("POST", "/api/v1/alerts/" + egress_alert + "/lift"), "lift");
  json lifted = s_.admin("GET", "/api/v1/dashboard/costs?tenant=acme").body;
  for (const auto& x : lifted["tenants"][0]["alerts"])
    if (x["id"] == egress_alert) {
      EXPECT_EQ(x["frozen"], false);
      EXPECT_EQ(x["state"], "lifted");
    }

  // --- cost-performance ---
  Resp cp = s_.admin("GET", "/api/v1/dashboard/cost-performance?tenant=acme");
  ASSERT_EQ(cp.status, 200) << cp.describe();
  const json& jobs = cp.body["jobs"];
  ASSERT_EQ(jobs.size(), 4u) << cp.body.dump();
  // val_accuracy: b 0.4 / (1 GPU × 1 s), a 0.2 / (2 GPUs × 1 s), c 0.01 / (1 GPU × 1 s).
  const double hour = 3'600'000.0;
  EXPECT_EQ(jobs[0]["metric"], "val_accuracy");
  EXPECT_EQ(jobs[0]["job"], "train-b");
  EXPECT_EQ(jobs[1]["job"], "train-a");
  EXPECT_EQ(jobs[2]["job"], "train-c");
  EXPECT_EQ(jobs[3]["job"], "train-d");
  EXPECT_DOUBLE_EQ(jobs[0]["gain_per_gpu_hour"].get<double>(), (0.9 - 0.5) / (1000.0 / hour));
  EXPECT_DOUBLE_EQ(jobs[1]["gain_per_gpu_hour"].get<double>(), (0.7 - 0.5) / (2000.0 / hour));
  EXPECT_DOUBLE_EQ(jobs[2]["gain_per_gpu_hour"].get<double>(), (0.61 - 0.6) / (1000.0 / hour));
  EXPECT_DOUBLE_EQ(cp.body["median_gain_per_gpu_hour"]["val_accuracy"].get<double>(), (0.7 - 0.5) / (2000.0 / hour));
  EXPECT_EQ(jobs[1]["gpu_hours"], "0.001");  // 2 GPU-seconds = 0.000556 GPU-hours
  EXPECT_EQ(jobs[0]["gpu_hours"], "0.000");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(jobs[i]["rank"], i + 1);
  EXPECT_EQ(jobs[3]["rank"], 1);
  EXPECT_EQ(jobs[1]["kind"], "training");
  EXPECT_EQ(jobs[1]["project"], "vision");
  EXPECT_EQ(jobs[1]["mean_util_pct"], 90);
  EXPECT_EQ(jobs[3]["mean_util_pct"], 10);
  EXPECT_FALSE(jobs[0]["inefficient"].get<bool>());
  EXPECT_FALSE(jobs[1]["inefficient"].get<bool>());
  ASSERT_EQ(jobs[2]["flags"].size(), 1u);  // 36 < 360 / 4
  EXPECT_EQ(jobs[2]["flags"][0]["key"], "low_gain");
  EXPECT_TRUE(jobs[2]["inefficient"].get<bool>());
  ASSERT_EQ(jobs[3]["flags"].size(), 2u);
  EXPECT_EQ(jobs[3]["flags"][0]["key"], "no_gain");
  EXPECT_EQ(jobs[3]["flags"][1]["key"], "low_utilization");
  EXPECT_EQ(jobs[3]["flags"][1]["text"], "Mean GPU utilization 10% is below 40%");
  EXPECT_EQ(jobs[3]["flags"][1]["text_message"]["code"], "dashboard.flag.low_utilization");
  EXPECT_DOUBLE_EQ(jobs[3]["gain"].get<double>(), -0.5);
  EXPECT_EQ(jobs[3]["higher_is_better"], false);
  EXPECT_TRUE(jobs[3]["cost_per_unit_gain"].is_null());
  // Cost: every line of the job's run over the range, exactly.
  for (const auto& j : jobs) {
    const std::string alloc = run_of(j["job_id"]).alloc_id;
    int64_t cost = 0;
    for (const auto& sec : inv_today["sections"])
      for (const auto& l : sec["lines"])
        if (l["allocation"] == alloc) cost += micros(l["amount"]);
    EXPECT_EQ(micros(j["cost"]), cost) << j.dump();
    EXPECT_EQ(j["currency"], "CNY");
  }
  const int64_t per_gain = micros(jobs[1]["cost_per_unit_gain"]);
  EXPECT_LE(std::llabs(per_gain - std::llround(micros(jobs[1]["cost"]) / (0.7 - 0.5))), 1);
  // One project: its jobs only, ranked among themselves.
  json nlp_only = s_.admin("GET", "/api/v1/dashboard/cost-performance?tenant=acme&project=nlp").body;
  ASSERT_EQ(nlp_only["jobs"].size(), 2u) << nlp_only.dump();
  EXPECT_EQ(nlp_only["jobs"][0]["job"], "train-c");
  EXPECT_TRUE(nlp_only["jobs"][0]["flags"].empty());  // one job of the metric: nothing to compare with

  // --- isolation ---
  const std::string own = make_user_token(s_, "acme-dev", "tenant_member", "acme");
  const std::string rival = make_user_token(s_, "rival-admin", "tenant_admin", "rival");
  const std::string supplier = make_user_token(s_, "dc-ops", "supplier", "", "dc");
  json mine = s_.req("GET", "/api/v1/dashboard/costs", own).body;
  ASSERT_EQ(mine["tenants"].size(), 1u);
  EXPECT_EQ(mine["tenants"][0]["daily_total"], t["daily_total"]);
  EXPECT_EQ(s_.req("GET", "/api/v1/dashboard/cost-performance?project=vision", own).body["jobs"].size(), 2u);
  json theirs = s_.req("GET", "/api/v1/dashboard/costs", rival).body;
  ASSERT_EQ(theirs["tenants"].size(), 1u);
  EXPECT_EQ(theirs["tenants"][0]["tenant"], "rival");
  for (const auto& v : theirs["tenants"][0]["daily_total"]) EXPECT_EQ(v, "0.00");
  EXPECT_TRUE(theirs["tenants"][0]["alerts"].empty());
  EXPECT_EQ(s_.req("GET", "/api/v1/dashboard/costs?tenant=acme", rival).status, 404);
  EXPECT_EQ(s_.req("GET", "/api/v1/dashboard/cost-performance?tenant=acme", rival).status, 404);
  EXPECT_TRUE(s_.req("GET", "/api/v1/dashboard/cost-performance", rival).body["jobs"].empty());
  EXPECT_EQ(s_.req("GET", "/api/v1/dashboard/cost-performance?project=" + vision["project_id"].get<std::string>(), rival).status,
            404);
  EXPECT_EQ(s_.req("GET", "/api/v1/dashboard/costs", supplier).status, 403);
  EXPECT_EQ(s_.req("GET", "/api/v1/dashboard/costs", "").status, 401);
  json everyone = s_.admin("GET", "/api/v1/dashboard/costs").body;
  EXPECT_EQ(everyone["tenants"].size(), 2u);
  // The lines drawn are the tenant's own firewall thresholds (unset ones stay the defaults).
  json tenant = s_.admin("GET", "/api/v1/tenants/acme").body;
  tenant["cost_firewall"] = {{"card_daily_cost", "800.00"}, {"storage_io_share_pct", 35}};
  expect_2xx(s_.admin("PUT", "/api/v1/tenants/acme", tenant), "thresholds");
  const json own_lines = s_.admin("GET", "/api/v1/dashboard/costs?tenant=acme").body["tenants"][0];
  EXPECT_EQ(own_lines["card_threshold"], "800.00");
  EXPECT_EQ(own_lines["egress_threshold"], "500.00");
  EXPECT_EQ(own_lines["storage_io_share_threshold_pct"], 35);
  int64_t over_800 = 0;
  for (const auto& k : own_lines["cards"]) over_800 += micros(k["max_daily"]) > 800'000'000;
  EXPECT_EQ(own_lines["cards_over_threshold"], over_800);
  // An operator naming a project two tenants share must say which.
  EXPECT_EQ(s_.admin("GET", "/api/v1/dashboard/cost-performance?project=vision").error_fields(),
            std::vector<std::string>{"project"});
}

TEST_F(DashboardCost, BadInputNamesTheParameter) {
  const std::string costs = "/api/v1/dashboard/costs", cp = "/api/v1/dashboard/cost-performance";
  for (const std::string& path : {costs, cp}) {
    EXPECT_EQ(s_.admin("GET", path + "?from=yesterday").error_fields(), std::vector<std::string>{"from"});
    EXPECT_EQ(s_.admin("GET", path + "?from=2026-11-02&to=2026-11-01").error_fields(), std::vector<std::string>{"to"});
    Resp long_range = s_.admin("GET", path + "?from=2026-10-01&to=2026-11-15");
    EXPECT_EQ(long_range.status, 422);
    EXPECT_EQ(long_range.error_fields(), std::vector<std::string>{"range"});
    EXPECT_EQ(s_.admin("GET", path + "?colour=red").error_fields(), std::vector<std::string>{"colour"});
    EXPECT_EQ(s_.admin("GET", path + "?tenant=nobody").status, 404);
  }
  EXPECT_EQ(s_.admin("GET", costs + "?project=nlp").error_fields(), std::vector<std::string>{"project"});
  EXPECT_EQ(s_.admin("GET", cp + "?tenant=acme&project=nobody").status, 404);
  // A range in whole days, widened: from 08:00 and to 00:00:01 cover two whole days.
  json two = s_.admin("GET", costs + "?tenant=acme&from=2026-11-01T08:00:00Z&to=2026-11-02T00:00:01Z").body;
  EXPECT_EQ(two["days"], json({"2026-11-01", "2026-11-02"}));
  EXPECT_EQ(two["from"], "2026-11-01T00:00:00.000Z");
  EXPECT_EQ(two["to"], "2026-11-03T00:00:00.000Z");
}

}  // namespace
}  // namespace gpurent::testing
