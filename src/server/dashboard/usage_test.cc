// The dashboard's utilization heatmap and supplier health computed over a store written directly
// (records with chosen times, usage batches, a rollup), so every figure can be worked out by hand:
// allocation intervals merged and clipped, raw and rolled-up samples, rounding half to even,
// node time from each node's creation, outages split across UTC days, faults an incident covers,
// and the advisor's score and split exactly as POST /api/v1/advise/suppliers computes them.
#include "server/dashboard/usage.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "advisor/supplier_score.h"
#include "core/yaml_json.h"
#include "io/files.h"
#include "model/fault.h"
#include "model/measurement.h"
#include "server/services/advisor_live.h"
#include "server/dashboard/suppliers.h"
#include "store/store_test_util.h"

namespace gpurent {

using json = nlohmann::json;

namespace {

constexpr TimeMs kT0 = 1'793'491'200'000;  // 2026-11-01T00:00:00Z
constexpr TimeMs kMin = 60'000;
constexpr TimeMs kHour = 60 * kMin;
constexpr TimeMs kDay = 24 * kHour;
const std::string kSup = "sup_00000000000000a1";
const std::string kBeta = "sup_00000000000000b2";
const std::string kN1 = "nod_00000000000000a1";
const std::string kN2 = "nod_00000000000000a2";

json example(const std::string& file) {
  std::ifstream in(std::string(GPURENT_SOURCE_DIR) + "/examples/" + file);
  std::stringstream ss;
  ss << in.rdbuf();
  return yaml_to_json(ss.str()).value();
}

Record rec(std::string kind, std::string id, std::string name, json body, TimeMs created = kT0 - 30 * kDay) {
  Record r;
  r.kind = std::move(kind);
  r.id = std::move(id);
  r.name = std::move(name);
  r.created_at = r.updated_at = created;
  r.body = std::move(body);
  return r;
}

class DashboardStore : public ::testing::Test {
 protected:
  void insert(const std::vector<Record>& rs) { ASSERT_TRUE(insert_all(*store, rs).ok()); }

  // Supplier huadong-compute: n1 (created long ago) and n2 (created at kT0 + 12 h), 8 GPUs each,
  // an offer promising 900 TFLOPS FP16. Supplier beta: no nodes.
  void supply() {
    json sup = example("supplier.yaml");
    json beta = sup;
    beta["name"] = "beta";
    Record s = rec("suppliers", kSup, "huadong-compute", sup), b = rec("suppliers", kBeta, "beta", beta);
    s.supplier_id = kSup;
    b.supplier_id = kBeta;
    std::vector<Record> rs = {s, b};
    for (const auto& [id, name, created] : {std::tuple{kN1, "n1", kT0 - 30 * kDay}, {kN2, "n2", kT0 + 12 * kHour}}) {
      json n = example("node.yaml");
      n["name"] = name;
      Record r = rec("nodes", id, name, n, created);
      r.supplier_id = kSup;
      r.gpu_model = "h100-sxm5-80gb";
      r.region = "cn-east";
      rs.push_back(r);
    }
    Record o = rec("offers", "off_00000000000000a1", "h100-sh-standard", example("offer.yaml"));
    o.supplier_id = kSup;
    rs.push_back(o);
    insert(rs);
  }

  void measure(const std::string& id, const std::string& node_id, const json& body) {
    auto m = parse_measurement(body);
    ASSERT_TRUE(m.ok()) << m.error().message;
    json j = to_json(*m);
    j["node_id"] = node_id;
    Record r = rec("measurements", id, "", j);
    r.supplier_id = kSup;
    r.state = j["kind"];
    insert({r});
  }

  void fault(const std::string& id, const std::string& node_id, TimeMs at) {
    Fault f{id, "job_" + id.substr(4), node_id, "ten_00000000000000a1", "", kSup, at, verbatim("Xid 79")};
    Record r = rec("faults", id, id, to_json(f));
    r.supplier_id = kSup;
    r.tenant_id = "ten_00000000000000a1";
    insert({r});
  }

  void allocation(const std::string& id, const std::string& tenant, const std::string& project, int64_t gpu,
                  TimeMs from, std::optional<TimeMs> to) {
    Record r = rec("allocations", id, "",
                   {{"job_id", "job_" + id.substr(4)},
                    {"placement", {{{"node_id", kN1}, {"node", "n1"}, {"gpus", {gpu}}}}},
                    {"running_at", format_rfc3339(from)},
                    {"ended_at", to ? json(format_rfc3339(*to)) : json(nullptr)}});
    r.tenant_id = tenant;
    r.project_id = project;
    r.supplier_id = kSup;
    insert({r});
  }

  void samples(const std::string& key, const std::vector<std::tuple<int64_t, TimeMs, int64_t>>& gpu_at_util) {
    UsageBatchRows b{key, "digest-" + key, kT0, "usr_1", {}, {}};
    for (const auto& [gpu, at, util] : gpu_at_util) {
      GpuUsageRow r;
      r.node_id = kN1;
      r.gpu = gpu;
      r.at = at;
      r.utilization_pct = util;
      b.gpu.push_back(r);
    }
    ASSERT_TRUE(store
                    ->write([&](StoreTx& tx) -> Status {
                      auto out = tx.insert_usage_batch(b);
                      return out ? ok_status() : Status(out.error());
                    })
                    .ok());
  }

  TempDir dir;
  std::unique_ptr<Store> store = open_or_die(dir.file("d.db"), false);
  GpuCatalog catalog = load_catalog_file(default_catalog_path()).value();
};

const std::string kTen1 = "ten_00000000000000a1", kTen2 = "ten_00000000000000a2";
const std::string kVision = "prj_00000000000000a1", kNlp = "prj_00000000000000a2", kWeb = "prj_00000000000000a3";

// GPU 0 ran vision [0:10, 0:40) and nlp [0:30, 1:10) (overlapping: merged to [0:10, 1:10)); GPU 1 runs
// the other tenant's web since 0:00, still open; GPU 2 ran nothing. Samples (minutes after kT0):
// GPU 0: 5 → 60, 15 → 20 (both rolled up), 35 → 40, 65 → 90, 80 → 10; GPU 1: 20 → 3, 50 → 6;
// GPU 2: 1 → 100.
class Utilization : public DashboardStore {
 protected:
  void SetUp() override {
    supply();
    insert({rec("projects", kVision, "vision", json::object()), rec("projects", kNlp, "nlp", json::object()),
            rec("projects", kWeb, "web", json::object())});
    allocation("alc_00000000000000a1", kTen1, kVision, 0, kT0 + 10 * kMin, kT0 + 40 * kMin);
    allocation("alc_00000000000000a2", kTen1, kNlp, 0, kT0 + 30 * kMin, kT0 + 70 * kMin);
    allocation("alc_00000000000000a3", kTen2, kWeb, 1, kT0, std::nullopt);
    samples("a", {{0, kT0 + 5 * kMin, 60},
                  {0, kT0 + 15 * kMin, 20},
                  {0, kT0 + 35 * kMin, 40},
                  {0, kT0 + 65 * kMin, 90},
                  {0, kT0 + 80 * kMin, 10},
                  {1, kT0 + 20 * kMin, 3},
                  {1, kT0 + 50 * kMin, 6},
                  {2, kT0 + kMin, 100}});
    ASSERT_TRUE(store
                    ->write([](StoreTx& tx) -> Status {
                      auto st = tx.roll_up_usage(kT0 + 16 * kMin, 0);
                      return st ? ok_status() : Status(st.error());
                    })
                    .ok());
  }
  json report(UtilizationScope s) {
    s.from = kT0;
    s.to = kT0 + 2 * kHour;
    s.now = kT0 + 2 * kHour;
    auto r = utilization_report(*store, s);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r ? *r : json();
  }
};

TEST_F(Utilization, OperatorsSeeEveryCardWithSamples) {
  json r = report({});
  EXPECT_EQ(r["hours"], json({"2026-11-01T00:00:00.000Z", "2026-11-01T01:00:00.000Z"}));
  EXPECT_EQ(r["bucket_seconds"], 3600);
  EXPECT_EQ(r["idle_threshold_pct"], 10);
  ASSERT_EQ(r["cards"].size(), 3u) << r.dump();
  const json& c0 = r["cards"][0];
  EXPECT_EQ(c0["node_id"], kN1);
  EXPECT_EQ(c0["node"], "n1");
  EXPECT_EQ(c0["gpu"], 0);
  EXPECT_EQ(c0["label"], "n1 #0");
  EXPECT_EQ(c0["supplier"], "huadong-compute");
  EXPECT_EQ(c0["supplier_id"], kSup);
  EXPECT_EQ(c0["gpu_model"], "h100-sxm5-80gb");
  EXPECT_EQ(c0["projects"], json({"nlp", "vision"}));
  EXPECT_EQ(c0["samples"], 5);
  EXPECT_EQ(c0["mean_pct"], 44);  // 220 / 5
  EXPECT_EQ(c0["idle"], false);
  EXPECT_EQ(r["cards"][1]["gpu"], 1);
  EXPECT_EQ(r["cards"][1]["mean_pct"], 4);  // 9 / 2 = 4.5 -> 4, half to even
  EXPECT_EQ(r["cards"][1]["idle"], true);
  EXPECT_EQ(r["cards"][1]["projects"], json({"web"}));
  EXPECT_EQ(r["cards"][2]["projects"], json::array());
  EXPECT_EQ(r["cards"][2]["mean_pct"], 100);
  // GPU 0 hour 0: 60, 20, 40 -> 40; hour 1: 90, 10 -> 50.
  EXPECT_EQ(r["cells"], json({{0, 0, 40, 3}, {0, 1, 50, 2}, {1, 0, 4, 2}, {2, 0, 100, 1}}));
}

TEST_F(Utilization, ATenantSeesItsCardsOnlyWhileItsAllocationsRan) {
  json r = report({.tenant_id = kTen1});
  ASSERT_EQ(r["cards"].size(), 1u) << r.dump();
  EXPECT_EQ(r["cards"][0]["gpu"], 0);
  // [0:10, 1:10): 20 (rolled up), 40 (in both allocations, counted once), 90.
  EXPECT_EQ(r["cards"][0]["samples"], 3);
  EXPECT_EQ(r["cards"][0]["mean_pct"], 50);
  EXPECT_EQ(r["cards"][0]["projects"], json({"nlp", "vision"}));
  EXPECT_EQ(r["cells"], json({{0, 0, 30, 2}, {0, 1, 90, 1}}));

  json other = report({.tenant_id = kTen2});  // open allocation: up to now
  ASSERT_EQ(other["cards"].size(), 1u);
  EXPECT_EQ(other["cards"][0]["gpu"], 1);
  EXPECT_EQ(other["cards"][0]["projects"], json({"web"}));
  EXPECT_EQ(other["cells"], json({{0, 0, 4, 2}}));
}

TEST_F(Utilization, AProjectSeesItsOwnAllocationsOnly) {
  json r = report({.project_id = kVision});
  ASSERT_EQ(r["cards"].size(), 1u);
  EXPECT_EQ(r["cards"][0]["projects"], json({"vision"}));
  EXPECT_EQ(r["cells"], json({{0, 0, 30, 2}}));  // [0:10, 0:40): 20, 40
  // A range cut inside an allocation clips it: from 0:20 only the 40 remains.
  UtilizationScope s{.from = kT0 + 20 * kMin, .to = kT0 + 2 * kHour, .now = kT0 + 2 * kHour, .project_id = kVision};
  auto clipped = utilization_report(*store, s);
  ASSERT_TRUE(clipped.ok());
  EXPECT_EQ((*clipped)["cells"], json({{0, 0, 40, 1}}));
}

TEST_F(Utilization, NarrowsBySupplierAndNodeAndHidesProjectsFromSuppliers) {
  json r = report({.supplier_id = kSup, .show_projects = false});
  ASSERT_EQ(r["cards"].size(), 3u);
  for (const auto& c : r["cards"]) EXPECT_EQ(c["projects"], json::array());
  EXPECT_TRUE(report({.supplier_id = kBeta})["cards"].empty());
  EXPECT_EQ(report({.node_id = kN1})["cards"].size(), 3u);
  EXPECT_TRUE(report({.node_id = kN2})["cards"].empty());
  EXPECT_TRUE(report({.supplier_id = kBeta, .node_id = kN1})["cards"].empty());
  auto bad = utilization_report(*store, {.from = kT0, .to = kT0});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().fields.at(0).field, "to");
}

// Over [kT0, kT0 + 3 d) seen at kT0 + 2 d 12 h: n1 down [2:00, 3:30) on day 0 (responded after 12
// min), n2 down [1 d 23:00, 2 d 01:00) across midnight (responded after 6 min); the scheduler's
// faults: two jobs hit on n1 at 2:30 (covered by the incident), two on n2 at 1 d 03:00 (one node
// failure, no incident).
class SupplierHealth : public DashboardStore {
 protected:
  void SetUp() override {
    supply();
    auto incident = [](const char* node, TimeMs from, TimeMs to, TimeMs responded) {
      return json{{"kind", "incident"},
                  {"node", node},
                  {"from", format_rfc3339(from)},
                  {"to", format_rfc3339(to)},
                  {"responded_at", format_rfc3339(responded)}};
    };
    measure("msr_00000000000000a1", kN1, incident("n1", kT0 + 2 * kHour, kT0 + 210 * kMin, kT0 + 132 * kMin));
    measure("msr_00000000000000a2", kN2,
            incident("n2", kT0 + kDay + 23 * kHour, kT0 + 2 * kDay + kHour, kT0 + kDay + 23 * kHour + 6 * kMin));
    measure("msr_00000000000000a3", kN1,
            {{"kind", "fp16_tflops"},
             {"node", "n1"},
             {"gpu", 0},
             {"at", format_rfc3339(kT0 + 5 * kHour)},
             {"fp16_tflops", "882.0"}});
    fault("flt_00000000000000a1", kN1, kT0 + 150 * kMin);
    fault("flt_00000000000000a2", kN1, kT0 + 150 * kMin);
    fault("flt_00000000000000a3", kN2, kT0 + kDay + 3 * kHour);
    fault("flt_00000000000000a4", kN2, kT0 + kDay + 3 * kHour);
  }
  static constexpr TimeMs kNow = kT0 + 2 * kDay + 12 * kHour;
};

TEST_F(SupplierHealth, FiguresPerSupplierAndDay) {
  auto r = supplier_health_report(*store, catalog, {.from = kT0, .to = kT0 + 3 * kDay, .now = kNow});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ((*r)["suppliers"].size(), 2u);
  const json& beta = (*r)["suppliers"][0];  // by name
  EXPECT_EQ(beta["supplier"], "beta");
  EXPECT_EQ(beta["nodes"], 0);
  EXPECT_EQ(beta["node_hours"], "0.000");
  EXPECT_TRUE(beta["availability_pct"].is_null());
  EXPECT_TRUE(beta["failure_rate_bp"].is_null());
  const json& s = (*r)["suppliers"][1];
  EXPECT_EQ(s["supplier_id"], kSup);
  EXPECT_EQ(s["nodes"], 2);
  EXPECT_EQ(s["gpus"], 16);
  EXPECT_EQ(s["node_hours"], "108.000");  // n1 60 h + n2 48 h (since its creation)
  EXPECT_EQ(s["incidents"], 3);           // two incidents and the n2 node failure
  EXPECT_EQ(s["daily"], json({{{"date", "2026-11-01"}, {"incidents", 1}, {"outage_minutes", 90}},
                              {{"date", "2026-11-02"}, {"incidents", 2}, {"outage_minutes", 60}},
                              {{"date", "2026-11-03"}, {"incidents", 0}, {"outage_minutes", 60}}}));
  EXPECT_EQ(s["availability_pct"], "96.76");  // (108 h − 3.5 h) ÷ 108 h = 96.759…%
  // The advisor's history over [kT0, now) = 60 h: 2 incidents × 8 GPUs × 10,000 × 730 h ÷ (16 × 60 h).
  EXPECT_EQ(s["failure_rate_bp"], 121667);
  EXPECT_EQ(s["restore_minutes"], 105);           // (90 + 120) ÷ 2
  EXPECT_EQ(s["response_minutes"], 9);            // (12 + 6) ÷ 2
  EXPECT_EQ(s["fp16_attainment_permille"], 980);  // 882.0 ÷ 900
  EXPECT_TRUE(s["nccl_attainment_permille"].is_null());

  // Score, block and share are the advisor's, as POST /api/v1/advise/suppliers with {} gives them.
  auto known = load_supplier_candidates(*store, catalog, kT0, kNow);
  ASSERT_TRUE(known.ok());
  auto in =
      parse_supplier_score_input({{"suppliers", {{{"supplier", "beta"}}, {{"supplier", "huadong-compute"}}}}}, *known);
  ASSERT_TRUE(in.ok()) << in.error().message;
  json advised = to_json(compute_supplier_score(*in).value());
  for (const auto& a : advised["suppliers"]) {
    const json& d = a["name"] == "beta" ? beta : s;
    EXPECT_EQ(d["score"], a["score"]) << a.dump();
    EXPECT_EQ(d["share_pct"], a["share_pct"]);
    EXPECT_EQ(d["blocked"], a["blocked"]);
  }
}

TEST_F(SupplierHealth, OneSupplierAndBadRanges) {
  auto one = supplier_health_report(*store, catalog, {.from = kT0, .to = kT0 + kDay, .now = kNow, .supplier_id = kSup});
  ASSERT_TRUE(one.ok());
  ASSERT_EQ((*one)["suppliers"].size(), 1u);
  EXPECT_EQ((*one)["suppliers"][0]["daily"].size(), 1u);
  EXPECT_EQ((*one)["suppliers"][0]["incidents"], 1);
  auto future = supplier_health_report(*store, catalog, {.from = kNow, .to = kNow + kDay, .now = kNow});
  ASSERT_FALSE(future.ok());
  EXPECT_EQ(future.error().fields.at(0).field, "from");
  auto backwards = supplier_health_report(*store, catalog, {.from = kT0, .to = kT0, .now = kNow});
  ASSERT_FALSE(backwards.ok());
  EXPECT_EQ(backwards.error().fields.at(0).field, "to");
}

}  // namespace
}  // namespace gpurent
