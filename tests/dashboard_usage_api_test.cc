// The dashboard's utilization heatmap and supplier health through the real server: GPU samples
// POSTed to /api/v1/usage come back as hour × card means equal to the hand-computed ones; a tenant
// sees only the cards its jobs ran on and only while they ran; project and tenant filters; the idle
// flag; supplier users see only their own nodes; supplier health from measurements created through
// the API agrees with the advisor; bad input names the parameter.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

using namespace std::chrono_literals;

constexpr TimeMs kMin = 60'000;
constexpr TimeMs kHour = 60 * kMin;
constexpr TimeMs kDay = 24 * kHour;

TimeMs now_ms() { return SystemClock().now(); }
std::string t(TimeMs ms) { return format_rfc3339(ms); }
TimeMs parse_t(const json& v) { return parse_rfc3339(v.get<std::string>(), "t").value(); }

int64_t half_even(int64_t sum, int64_t n) {
  const int64_t q = sum / n, r = sum % n;
  return 2 * r > n || (2 * r == n && q % 2 != 0) ? q + 1 : q;
}

struct Card {
  std::string node_id;
  int64_t gpu = 0;
  bool operator<(const Card& o) const { return std::tie(node_id, gpu) < std::tie(o.node_id, o.gpu); }
};

struct Sample {
  Card card;
  TimeMs at = 0;
  int64_t util = 0;
};

// The cells a card should have: per UTC hour, the mean (half to even) and the count.
std::map<TimeMs, std::pair<int64_t, int64_t>> expected_cells(const std::vector<Sample>& samples, const Card& c) {
  std::map<TimeMs, std::pair<int64_t, int64_t>> sums;  // hour -> (sum, n)
  for (const Sample& s : samples)
    if (!(s.card < c) && !(c < s.card)) {
      auto& [sum, n] = sums[s.at - s.at % kHour];
      sum += s.util;
      ++n;
    }
  std::map<TimeMs, std::pair<int64_t, int64_t>> out;
  for (const auto& [h, sn] : sums) out[h] = {half_even(sn.first, sn.second), sn.second};
  return out;
}

// A heatmap's card (or null) and its cells, by hour.
struct Seen {
  json card;
  std::map<TimeMs, std::pair<int64_t, int64_t>> cells;
};
Seen seen(const json& heatmap, const Card& c) {
  Seen out;
  for (size_t i = 0; i < heatmap.at("cards").size(); ++i) {
    const json& k = heatmap["cards"][i];
    if (k["node_id"] != c.node_id || k["gpu"] != c.gpu) continue;
    out.card = k;
    for (const auto& cell : heatmap.at("cells"))
      if (cell[0] == i) out.cells[parse_t(heatmap["hours"][cell[1].get<size_t>()])] = {cell[2], cell[3]};
  }
  return out;
}

class DashboardUsage : public ::testing::Test {
 protected:
  void SetUp() override {
    expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
    expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("far")), "supplier");
    expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
    expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("far", "f1")), "node");
    expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
    for (const char* tenant : {"acme", "rival"})
      expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc(tenant)), "tenant");
    for (const auto& [tenant, project] : {std::pair{"acme", "vision"}, {"acme", "nlp"}, {"rival", "web"}})
      expect_2xx(s.admin("POST", "/api/v1/projects", project_doc(tenant, project)), project);
  }

  // Starts a one-GPU job in `project` and returns the card it runs on and when it started.
  std::pair<Card, TimeMs> run(const std::string& project, const std::string& name) {
    json j = job_doc(project, name);
    j["expected_duration_seconds"] = 3600;
    const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", j), name).body.at("id");
    wait_for(s, "/api/v1/jobs/" + id, [](const json& b) { return b["status"]["state"] == "running"; });
    json allocs = wait_for(s, "/api/v1/allocations?state=open", [&](const json& b) {
      for (const auto& a : b["items"])
        if (a["job_id"] == id) return true;
      return false;
    });
    for (const auto& a : allocs["items"])
      if (a["job_id"] == id)
        return {Card{a["placement"][0]["node_id"], a["placement"][0]["gpus"][0]}, parse_t(a["running_at"])};
    ADD_FAILURE() << "no allocation for " << name;
    return {};
  }

  void post(const std::string& key, const std::vector<Sample>& samples) {
    json gpu = json::array();
    for (const Sample& x : samples)
      gpu.push_back({{"at", t(x.at)}, {"node", x.card.node_id}, {"gpu", x.card.gpu}, {"utilization_pct", x.util}});
    expect_2xx(s.admin("POST", "/api/v1/usage", json{{"idempotency_key", key}, {"gpu_samples", gpu}}), key);
  }

  ServerProcess s{{"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"}};
};

TEST_F(DashboardUsage, HeatmapMeansScopesAndIdleCards) {
  const auto [a, a_start] = run("vision", "train");
  const auto [b, b_start] = run("web", "serve");
  Card idle;
  for (const std::string& node : {a.node_id, b.node_id})
    for (int64_t g = 0; g < 8 && idle.node_id.empty(); ++g)
      if (Card{node, g} < a || a < Card{node, g})
        if (Card{node, g} < b || b < Card{node, g}) idle = {node, g};
  std::this_thread::sleep_for(1200ms);  // the samples below lie inside the runs, before now
  const TimeMs now = now_ms();
  const std::vector<Sample> before = {{a, a_start - 20 * kMin, 95}};
  const std::vector<Sample> during_a = {{a, a_start + 100, 30}, {a, a_start + 400, 50}, {a, a_start + 800, 71}};
  const std::vector<Sample> during_b = {{b, b_start + 200, 80}};
  const std::vector<Sample> idle_samples = {{idle, now - 30 * kMin, 2}, {idle, now - 29 * kMin, 5}};
  std::vector<Sample> all = before;
  for (const auto* v : {&during_a, &during_b, &idle_samples}) all.insert(all.end(), v->begin(), v->end());
  post("dash-1", all);

  // Operators: every card with samples, all of them counted.
  Resp op = s.admin("GET", "/api/v1/dashboard/utilization");
  ASSERT_EQ(op.status, 200) << op.describe();
  EXPECT_EQ(op.body["bucket_seconds"], 3600);
  EXPECT_EQ(op.body["cards"].size(), 3u) << op.describe();
  Seen sa = seen(op.body, a);
  ASSERT_FALSE(sa.card.is_null()) << op.describe();
  EXPECT_EQ(sa.card["samples"], 4);
  EXPECT_EQ(sa.card["mean_pct"], 62);  // (95 + 30 + 50 + 71) ÷ 4 = 61.5 -> 62, half to even
  EXPECT_EQ(sa.card["projects"], json({"vision"}));
  EXPECT_EQ(sa.cells, expected_cells(all, a));
  Seen sb = seen(op.body, b);
  EXPECT_EQ(sb.card["mean_pct"], 80);
  EXPECT_EQ(sb.card["projects"], json({"web"}));
  Seen si = seen(op.body, idle);
  ASSERT_FALSE(si.card.is_null()) << op.describe();
  EXPECT_EQ(si.card["mean_pct"], 4);  // 3.5 -> 4
  EXPECT_EQ(si.card["idle"], true);
  EXPECT_EQ(sa.card["idle"], false);
  EXPECT_EQ(si.card["projects"], json::array());
  EXPECT_EQ(si.cells, expected_cells(all, idle));

  // A tenant sees only its card, and only the samples inside its run.
  const std::string acme = make_user_token(s, "acme-dev", "tenant_member", "acme");
  Resp mine = s.req("GET", "/api/v1/dashboard/utilization", acme);
  ASSERT_EQ(mine.status, 200) << mine.describe();
  ASSERT_EQ(mine.body["cards"].size(), 1u) << mine.describe();
  Seen ma = seen(mine.body, a);
  EXPECT_EQ(ma.card["samples"], 3);
  EXPECT_EQ(ma.card["mean_pct"], 50);  // (30 + 50 + 71) ÷ 3 = 50.33
  EXPECT_EQ(ma.cells, expected_cells(during_a, a));
  // Operators asking for the tenant or its project see the same; another project of it nothing.
  for (const std::string& q : std::vector<std::string>{"?tenant=acme", "?project=vision"}) {
    Resp r = s.admin("GET", "/api/v1/dashboard/utilization" + q);
    ASSERT_EQ(r.body["cards"].size(), 1u) << q << " " << r.describe();
    EXPECT_EQ(seen(r.body, a).cells, expected_cells(during_a, a)) << q;
  }
  EXPECT_TRUE(s.admin("GET", "/api/v1/dashboard/utilization?project=nlp").body["cards"].empty());
  EXPECT_TRUE(s.req("GET", "/api/v1/dashboard/utilization?project=nlp", acme).body["cards"].empty());
  Resp rival = s.admin("GET", "/api/v1/dashboard/utilization?tenant=rival");
  ASSERT_EQ(rival.body["cards"].size(), 1u) << rival.describe();
  EXPECT_EQ(seen(rival.body, b).cells, expected_cells(during_b, b));
  // Another tenant's tenant or project is not found for a tenant user.
  EXPECT_EQ(s.req("GET", "/api/v1/dashboard/utilization?tenant=rival", acme).status, 404);
  EXPECT_EQ(s.req("GET", "/api/v1/dashboard/utilization?project=web", acme).status, 404);
  // A project outside the tenant asked for names the project.
  EXPECT_EQ(s.admin("GET", "/api/v1/dashboard/utilization?tenant=acme&project=web").error_fields(),
            std::vector<std::string>{"project"});

  // Supplier users: their own nodes only, without the tenants' project names.
  const std::string node_a = s.admin("GET", "/api/v1/nodes/" + a.node_id).body["supplier"];
  const std::string other = node_a == "dc" ? "far" : "dc";
  EXPECT_EQ(sa.card["supplier"], node_a);
  const std::string ops = make_user_token(s, "sup-ops", "supplier", "", node_a);
  Resp own = s.req("GET", "/api/v1/dashboard/utilization", ops);
  ASSERT_EQ(own.status, 200) << own.describe();
  ASSERT_FALSE(seen(own.body, a).card.is_null());
  for (const auto& c : own.body["cards"]) {
    EXPECT_EQ(c["supplier"], node_a);
    EXPECT_EQ(c["projects"], json::array());
  }
  EXPECT_EQ(s.req("GET", "/api/v1/dashboard/utilization?supplier=" + other, ops).status, 403);
  EXPECT_EQ(s.req("GET", "/api/v1/dashboard/utilization?tenant=acme", ops).status, 404);
  // Operators narrow by supplier and node.
  Resp by_sup = s.admin("GET", "/api/v1/dashboard/utilization?supplier=" + other);
  for (const auto& c : by_sup.body["cards"]) EXPECT_EQ(c["supplier"], other);
  Resp by_node = s.admin("GET", "/api/v1/dashboard/utilization?node=" + a.node_id);
  for (const auto& c : by_node.body["cards"]) EXPECT_EQ(c["node_id"], a.node_id);
  EXPECT_FALSE(seen(by_node.body, a).card.is_null());

  // An explicit range: hours from the one holding `from`; samples before it are left out.
  const TimeMs from = a_start - 5 * kMin;
  Resp ranged = s.admin("GET", "/api/v1/dashboard/utilization?from=" + t(from) + "&to=" + t(now + kMin));
  ASSERT_EQ(ranged.status, 200) << ranged.describe();
  EXPECT_EQ(parse_t(ranged.body["hours"][0]), from - from % kHour);
  EXPECT_EQ(parse_t(ranged.body["from"]), from);
  EXPECT_EQ(seen(ranged.body, a).cells, expected_cells(during_a, a));
}

TEST_F(DashboardUsage, BadInputNamesTheParameter) {
  const std::string u = "/api/v1/dashboard/utilization";
  EXPECT_EQ(s.admin("GET", u + "?from=yesterday").error_fields(), std::vector<std::string>{"from"});
  EXPECT_EQ(s.admin("GET", u + "?from=yesterday&to=2026-13-01").error_fields(),
            (std::vector<std::string>{"from", "to"}));
  EXPECT_EQ(s.admin("GET", u + "?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z").error_fields(),
            std::vector<std::string>{"to"});
  Resp too_long = s.admin("GET", u + "?from=2026-10-01T00:00:00Z&to=2026-11-02T00:00:00Z");
  EXPECT_EQ(too_long.status, 422);
  EXPECT_EQ(too_long.error_fields(), std::vector<std::string>{"range"});
  for (const std::string& p : std::vector<std::string>{"node", "supplier", "project", "tenant"}) {
    Resp r = s.admin("GET", u + "?" + p + "=no-such-" + p);
    EXPECT_EQ(r.status, 404) << p;
    EXPECT_NE(r.body.value("detail", "").find("no-such-" + p), std::string::npos) << r.describe();
  }
  EXPECT_EQ(s.admin("GET", u + "?node=").error_fields(), std::vector<std::string>{"node"});
  const std::string h = "/api/v1/dashboard/suppliers";
  EXPECT_EQ(s.admin("GET", h + "?to=tomorrow").error_fields(), std::vector<std::string>{"to"});
  EXPECT_EQ(s.admin("GET", h + "?from=" + t(now_ms() + kHour) + "&to=" + t(now_ms() + kDay)).error_fields(),
            std::vector<std::string>{"from"});
  EXPECT_EQ(s.admin("GET", h + "?supplier=no-such-supplier").status, 404);
  EXPECT_EQ(s.req("GET", u, "").status, 401);
}

// Incidents with responded_at, a benchmark and an NCCL run on dc's node through the API: the
// supplier's health matches hand arithmetic and the advisor's own scoring of the same period.
TEST_F(DashboardUsage, SupplierHealthFromMeasurements) {
  const TimeMs base = now_ms() / kMin * kMin;
  const TimeMs i1 = base - 30 * kHour, i2 = base - 6 * kHour;
  auto incident = [](TimeMs from, int64_t minutes, int64_t responded_after) {
    return json{{"kind", "incident"},
                {"node", "n1"},
                {"from", t(from)},
                {"to", t(from + minutes * kMin)},
                {"responded_at", t(from + responded_after * kMin)},
                {"note", "PSU"}};
  };
  Resp early = s.admin("POST", "/api/v1/measurements", incident(i1, 90, 91));
  EXPECT_EQ(early.error_fields(), std::vector<std::string>{"responded_at"}) << early.describe();
  expect_2xx(s.admin("POST", "/api/v1/measurements", incident(i1, 90, 12)), "incident 1");
  Resp m2 = expect_2xx(s.admin("POST", "/api/v1/measurements", incident(i2, 60, 6)), "incident 2");
  EXPECT_EQ(m2.body["responded_at"], t(i2 + 6 * kMin));
  const json bench = {
      {"kind", "fp16_tflops"}, {"node", "n1"}, {"gpu", 0}, {"at", t(base - 5 * kHour)}, {"fp16_tflops", "882.0"}};
  expect_2xx(s.admin("POST", "/api/v1/measurements", bench), "benchmark");
  expect_2xx(s.admin("POST", "/api/v1/measurements",
                     json{{"kind", "nccl_busbw"},
                          {"node", "n1"},
                          {"from", t(base - 4 * kHour)},
                          {"to", t(base - 3 * kHour)},
                          {"busbw_gbps", 315}}),
             "nccl");
  const TimeMs from = base - 2 * kDay, to = base - kHour;  // 47 h, all in the past
  const std::string range = "?from=" + t(from) + "&to=" + t(to);
  Resp r = s.admin("GET", "/api/v1/dashboard/suppliers" + range);
  ASSERT_EQ(r.status, 200) << r.describe();
  ASSERT_EQ(r.body["suppliers"].size(), 2u) << r.describe();
  const json& dc = r.body["suppliers"][0];  // by name
  const json& far = r.body["suppliers"][1];
  ASSERT_EQ(dc["supplier"], "dc");
  EXPECT_EQ(dc["nodes"], 1);
  EXPECT_EQ(dc["gpus"], 8);
  EXPECT_EQ(dc["incidents"], 2);
  EXPECT_EQ(dc["response_minutes"], 9);            // (12 + 6) ÷ 2
  EXPECT_EQ(dc["restore_minutes"], 75);            // (90 + 60) ÷ 2
  EXPECT_EQ(dc["failure_rate_bp"], 310638);        // 2 × 8 GPUs × 10,000 × 730 h ÷ (8 × 47 h) = 310,638.3
  EXPECT_EQ(dc["fp16_attainment_permille"], 980);  // 882.0 ÷ 900
  EXPECT_EQ(dc["nccl_attainment_permille"], 900);  // 315 ÷ 350
  // The nodes were registered after the range: no node time in it, so no availability figure.
  EXPECT_EQ(dc["node_hours"], "0.000");
  EXPECT_TRUE(dc["availability_pct"].is_null());
  int64_t incidents = 0;
  for (const auto& d : dc["daily"]) incidents += d["incidents"].get<int64_t>();
  EXPECT_EQ(incidents, 2);
  const TimeMs first_day = from - from % kDay;
  EXPECT_EQ(dc["daily"].size(), static_cast<size_t>((to - first_day + kDay - 1) / kDay));
  EXPECT_EQ(dc["daily"][(i1 - i1 % kDay - first_day) / kDay]["incidents"], 1);  // i2 is 24 h later: another day
  EXPECT_EQ(far["incidents"], 0);
  EXPECT_EQ(far["failure_rate_bp"], 0);
  EXPECT_TRUE(far["response_minutes"].is_null());

  // Score, block and split are the advisor's for the same period.
  Resp advised = s.admin("POST", "/api/v1/advise/suppliers" + range, json::object());
  ASSERT_EQ(advised.status, 200) << advised.describe();
  ASSERT_EQ(advised.body["suppliers"].size(), 2u);
  for (const auto& a : advised.body["suppliers"]) {
    const json& d = a["name"] == "dc" ? dc : far;
    EXPECT_EQ(d["score"], a["score"]) << a.dump();
    EXPECT_EQ(d["share_pct"], a["share_pct"]);
    EXPECT_EQ(d["blocked"], a["blocked"]);
    EXPECT_EQ(d["response_minutes"], a["history"].value("response_minutes", json()));
  }
  // A `to` ahead is read as now by both (a future month has no failures to dilute the rate with).
  const std::string ahead = "?from=" + t(from) + "&to=" + t(SystemClock().now() + 30 * kDay);
  Resp dash_ahead = s.admin("GET", "/api/v1/dashboard/suppliers" + ahead);
  Resp adv_ahead = s.admin("POST", "/api/v1/advise/suppliers" + ahead, json::object());
  ASSERT_EQ(adv_ahead.status, 200) << adv_ahead.describe();
  for (const auto& a : adv_ahead.body["suppliers"])
    for (const auto& d : dash_ahead.body["suppliers"])
      if (d["supplier"] == a["name"]) {
        EXPECT_EQ(d["failure_rate_bp"], a["history"].value("monthly_failure_rate_bp", json())) << a.dump();
        EXPECT_EQ(d["score"], a["score"]) << a.dump();
      }

  // Supplier users see only themselves; tenants see the market.
  const std::string ops = make_user_token(s, "dc-ops", "supplier", "", "dc");
  Resp own = s.req("GET", "/api/v1/dashboard/suppliers" + range, ops);
  ASSERT_EQ(own.body["suppliers"].size(), 1u) << own.describe();
  EXPECT_EQ(own.body["suppliers"][0]["supplier"], "dc");
  EXPECT_EQ(s.req("GET", "/api/v1/dashboard/suppliers?supplier=far", ops).status, 403);
  const std::string member = make_user_token(s, "acme-dev", "tenant_member", "acme");
  EXPECT_EQ(s.req("GET", "/api/v1/dashboard/suppliers" + range, member).body["suppliers"].size(), 2u);
  Resp one = s.admin("GET", "/api/v1/dashboard/suppliers" + range + "&supplier=far");
  ASSERT_EQ(one.body["suppliers"].size(), 1u);
  EXPECT_EQ(one.body["suppliers"][0]["supplier"], "far");
}

// Two 8-GPU nodes, each running a 6-GPU job: 4 GPUs are free, 2 on each, so a waiting 4-GPU job
// is blocked by fragmentation, not by capacity, and every 4- and 8-GPU shape finds its GPUs stranded.
TEST(DashboardFragmentation, FreeGpusThatNoShapeCanUseTogetherAreStranded) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "0", "--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a")), "supplier");
  for (const char* n : {"node-1", "node-2"}) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("sup-a", n)), n);
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("sup-a", "offer-a")), "offer");
  acme_and_beta(s);
  auto submit = [&](const std::string& name, int gpus) {
    json j = job_doc("vision", name);
    j["gpus_per_worker"] = gpus;
    return expect_2xx(s.admin("POST", "/api/v1/jobs", j), name).body.at("id").get<std::string>();
  };
  for (const char* name : {"six-a", "six-b"})
    wait_for(s, "/api/v1/jobs/" + submit(name, 6), [](const json& j) { return j["status"]["state"] == "running"; });
  const std::string four = submit("four", 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // ticks pass; it stays pending
  ASSERT_EQ(s.admin("GET", "/api/v1/jobs/" + four).body["status"].value("state", ""), "pending");
  Resp r = expect_2xx(s.admin("GET", "/api/v1/dashboard/fragmentation"), "fragmentation");
  EXPECT_EQ(r.body["nodes"], 2);
  EXPECT_EQ(r.body["gpus"], 16);
  EXPECT_EQ(r.body["free_gpus"], 4);
  EXPECT_EQ(r.body["waiting_jobs"], 1);
  ASSERT_EQ(r.body["models"].size(), 1u) << r.describe();
  std::map<int, json> shape;
  for (const json& x : r.body["models"][0]["shapes"]) shape[x["gpus_per_worker"].get<int>()] = x;
  EXPECT_EQ(shape[2]["usable_gpus"], 4);
  EXPECT_EQ(shape[2]["stranded_gpus"], 0);
  EXPECT_EQ(shape[4]["usable_gpus"], 0);
  EXPECT_EQ(shape[4]["stranded_gpus"], 4);
  EXPECT_EQ(shape[4]["waiting_jobs"], 1);
  EXPECT_EQ(shape[4]["blocked_by_fragmentation"], 1);
  EXPECT_EQ(shape[8]["stranded_gpus"], 4);
  EXPECT_EQ(shape[8]["nodes_that_fit"], 0);
  // Only operators see every supplier's nodes.
  const std::string member = make_user_token(s, "acme-dev", "tenant_member", "acme");
  EXPECT_EQ(s.req("GET", "/api/v1/dashboard/fragmentation", member).status, 403);
}

}  // namespace
}  // namespace gpurent::testing
