#include "cli/views.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gpurent {
namespace {

const json kNode = json::parse(R"({
  "id": "nod_00000000000000a1", "name": "sh-a01", "supplier": "acme", "supplier_id": "sup_0000000000000001",
  "site": "sh-1", "region": "cn-east", "gpu_model": "h100-sxm5-80gb",
  "gpus": [
    {"index": 0, "nvlink_domain": "hgx0", "numa_node": 0, "pcie_gen": 5, "uuid": "GPU-0"},
    {"index": 1, "nvlink_domain": "hgx0", "numa_node": 0, "pcie_gen": 5},
    {"index": 2, "nvlink_domain": "hgx0", "numa_node": 1, "pcie_gen": 5},
    {"index": 3, "nvlink_domain": "hgx0", "numa_node": 1, "pcie_gen": 5}
  ],
  "cpu": {"model": "Intel Xeon Platinum 8480+", "cores": 112, "sockets": 2},
  "memory_gib": 2048, "numa_nodes": 2,
  "nics": [{"name": "mlx5_0", "rdma": "infiniband", "gbps": 400}, {"name": "mlx5_1", "rdma": "infiniband", "gbps": 400},
           {"name": "eth0", "rdma": "none", "gbps": 100}],
  "software": {"driver": "550.54.15", "cuda": "12.4", "nccl": "2.21.5"},
  "images": [{"name": "nvcr.io/nvidia/pytorch:24.03-py3", "cve_patched_at": "2024-03-01T00:00:00.000Z"}],
  "state": "available", "future_field": "kept",
  "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-02T00:00:00.000Z", "version": 3
})");

const json kOffer = json::parse(R"({
  "id": "off_00000000000000b2", "name": "h100-od", "supplier": "acme", "region": "cn-east",
  "gpu_model": "h100-sxm5-80gb", "node_selector": {"site": "sh-1"}, "currency": "CNY",
  "prices": {"on_demand": "16.00", "reserved_12m": "12.00", "spot": "6.40"},
  "served_models": [{"model": "qwen2.5-72b-instruct", "per_million_input_tokens": "4.00"}],
  "min_increment_seconds": 60,
  "fees": {"billing_starts": "ready",
           "idle": {"utilization_below_pct": 5, "window_minutes": 10, "action": "discount", "discount_pct": 50},
           "egress": {"per_gb": "0.50", "free_gb": 100},
           "image_storage": {"per_gb_month": "0.70", "free_gb": 20}},
  "contract_template": {"model_lock": true, "min_fp16_tflops": "900", "outage_compensation_pct": 200,
                        "exit_notice_days": 30, "exit_refund_prepaid": true, "audit_rights": false,
                        "penalty": {"fee_pct_per_step": 5, "step_pct_below_promise": 10}},
  "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z", "version": 1
})");

TEST(Summaries, NvlinkDomains) {
  EXPECT_EQ(nvlink_summary(kNode["gpus"]), "1x4");
  json two = json::array();
  for (int i = 0; i < 8; ++i) two.push_back({{"index", i}, {"nvlink_domain", i < 4 ? "a" : "b"}});
  EXPECT_EQ(nvlink_summary(two), "2x4");
  json uneven = {{{"nvlink_domain", "a"}}, {{"nvlink_domain", "a"}}, {{"nvlink_domain", "b"}}, {{"index", 3}}};
  EXPECT_EQ(nvlink_summary(uneven), "2+1 +1 pcie");
  EXPECT_EQ(nvlink_summary(json::array({json::object(), json::object()})), "pcie");
  EXPECT_EQ(nvlink_summary(json()), "");
}

TEST(Summaries, Rdma) {
  EXPECT_EQ(rdma_summary(kNode["nics"]), "infiniband 2x400G");
  EXPECT_EQ(rdma_summary(json::parse(R"([{"rdma":"none","gbps":25}])")), "none");
  EXPECT_EQ(rdma_summary(json::parse(R"([{"rdma":"roce_v2","gbps":200},{"rdma":"infiniband","gbps":400}])")),
            "infiniband 1x400G, roce_v2 1x200G");
}

TEST(Summaries, IndexRanges) {
  EXPECT_EQ(index_ranges({0, 1, 2, 3, 6, 8, 9}), "0-3,6,8-9");
  EXPECT_EQ(index_ranges({}), "");
  EXPECT_EQ(index_ranges({5}), "5");
}

TEST(Summaries, FeeRules) {
  EXPECT_EQ(idle_rule_summary(kOffer["fees"]["idle"]), "<5%/10m -> 50% off");
  EXPECT_EQ(idle_rule_summary(json::parse(R"({"utilization_below_pct":3,"window_minutes":30,"action":"stop"})")),
            "<3%/30m -> stop");
  EXPECT_EQ(idle_rule_summary(json()), "none (charged)");
  EXPECT_EQ(volume_fee_summary(kOffer["fees"]["egress"]), "0.50/GB, 100 GB free");
  EXPECT_EQ(volume_fee_summary(json::parse(R"({"per_gb":"0.09","free_gb":0})")), "0.09/GB");
  EXPECT_EQ(volume_fee_summary(json()), "free");
  EXPECT_EQ(volume_fee_summary(json::parse(R"({"per_gb":"0.00","free_gb":0})")), "free");
}

TEST(Formats, AgeAndSeconds) {
  TimeMs t0 = *parse_rfc3339("2026-01-01T00:00:00Z", "t");
  json at = "2026-01-01T00:00:00.000Z";
  EXPECT_EQ(format_age(at, t0 + 5000), "5s");
  EXPECT_EQ(format_age(at, t0 + 30 * 60 * 1000), "30m");
  EXPECT_EQ(format_age(at, t0 + 5 * 3600 * 1000), "5h");
  EXPECT_EQ(format_age(at, t0 + int64_t{9} * 86400 * 1000), "9d");
  EXPECT_EQ(format_age(at, t0 - 1000), "0s");  // clock skew
  EXPECT_EQ(format_age(json("garbage"), t0), "");
  EXPECT_EQ(format_seconds(1), "1s");
  EXPECT_EQ(format_seconds(90), "90s");
  EXPECT_EQ(format_seconds(60), "1m");
  EXPECT_EQ(format_seconds(3600), "1h");
  EXPECT_EQ(format_seconds(86400), "1d");
}

TEST(ListTables, NodesAndOffers) {
  std::ostringstream out;
  print_list(out, view_of("nodes"), {kNode}, 0);
  EXPECT_EQ(out.str(),
            "NAME     SUPPLIER   REGION    GPU_MODEL        GPUS   NVLINK_DOMAINS   RDMA                STATE\n"
            "sh-a01   acme       cn-east   h100-sxm5-80gb      4   1x4              infiniband 2x400G   available\n");
  out.str("");
  print_list(out, view_of("offers"), {kOffer}, 0);
  EXPECT_EQ(out.str(),
            "NAME      SUPPLIER   REGION    GPU_MODEL        CURRENCY   ON_DEMAND   SPOT   MIN_INCR   BILLING_STARTS   "
            "IDLE_RULE            EGRESS\n"
            "h100-od   acme       cn-east   h100-sxm5-80gb   CNY            16.00   6.40         1m   ready            "
            "<5%/10m -> 50% off   0.50/GB, 100 GB free\n");
}

TEST(ListTables, JobsShowTheGangShape) {
  json jobs = json::parse(R"([
    {"name":"llm-pretrain","project":"vision","kind":"training","workers":4,"gpus_per_worker":8,
     "priority_class":"normal","billing":{"mode":"on_demand"},"status":{"state":"running","reason":""},
     "created_at":"2026-01-01T00:00:00.000Z"},
    {"name":"chat","project":"vision","kind":"inference","workers":1,"gpus_per_worker":0,"gpu_milli":250,
     "priority_class":"high","billing":{"mode":"spot"},"status":{"state":"pending","reason":"no capacity"},
     "created_at":"2026-01-01T00:00:00.000Z"}])");
  std::ostringstream out;
  print_list(out, view_of("jobs"), {jobs[0], jobs[1]}, *parse_rfc3339("2026-01-01T00:10:00Z", "t"));
  EXPECT_EQ(out.str(),
            "NAME           PROJECT   KIND        WORKERSxGPUS   PRIORITY   BILLING     STATE     AGE   REASON\n"
            "llm-pretrain   vision    training             4x8   normal     on_demand   running   10m   -\n"
            "chat           vision    inference         1x250m   high       spot        pending   10m   no capacity\n");
}

TEST(Detail, NodeShowsTopologyAndKeepsUnknownFields) {
  std::ostringstream out;
  print_detail(out, view_of("nodes"), kNode, 0);
  std::string s = out.str();
  EXPECT_EQ(s.substr(0, s.find("\n\n") + 1),
            "name:         sh-a01\n"
            "id:           nod_00000000000000a1\n"
            "supplier:     acme (sup_0000000000000001)\n"
            "site:         sh-1\n"
            "region:       cn-east\n"
            "gpu_model:    h100-sxm5-80gb\n"
            "state:        available\n"
            "cpu:          2 x Intel Xeon Platinum 8480+, 112 cores\n"
            "memory:       2048 GiB, 2 NUMA nodes\n"
            "software:     driver 550.54.15, CUDA 12.4, NCCL 2.21.5\n"
            "future_field: kept\n"
            "created_at:   2026-01-01T00:00:00.000Z\n"
            "updated_at:   2026-01-02T00:00:00.000Z\n"
            "version:      3\n");
  EXPECT_NE(s.find("GPU topology (4 GPUs, NVLink 1x4):\n"
                   "  GPU   NVLINK_DOMAIN   NUMA   PCIE   UUID\n"
                   "    0   hgx0               0   gen5   GPU-0\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  NVLink domains: hgx0: GPUs 0-3\n  NUMA affinity:  node 0: GPUs 0-1; node 1: GPUs 2-3\n"),
            std::string::npos)
      << s;
  EXPECT_NE(
      s.find("Network (3 NICs, RDMA infiniband 2x400G):\n  NAME     RDMA         GBPS\n  mlx5_0   infiniband    400\n"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find("  nvcr.io/nvidia/pytorch:24.03-py3   2024-03-01T00:00:00.000Z\n"), std::string::npos) << s;
}

TEST(Detail, OfferShowsPricesFeesAndContract) {
  std::ostringstream out;
  print_detail(out, view_of("offers"), kOffer, 0);
  std::string s = out.str();
  EXPECT_NE(s.find("nodes:             site sh-1\n"), std::string::npos) << s;
  EXPECT_NE(s.find("billing_increment: 1m (usage is billed in whole increments)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("Prices (CNY per GPU-hour):\n"
                   "  MODE           PRICE   VS_ON_DEMAND\n"
                   "  on_demand      16.00              -\n"
                   "  reserved_12m   12.00           -25%\n"
                   "  spot            6.40           -60%\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("Fee rules:\n"
                   "  billing starts: ready: when the instance is ready (its health check passed or it reported ready; a job that reports neither is ready when it runs)\n"
                   "  idle GPU:       below 5% utilization for 10 min: charged at 50% off\n"
                   "  storage I/O:    not charged\n"
                   "  egress:         0.50 CNY/GB, first 100 GB per month free\n"
                   "  image storage:  0.70 CNY/GB-month of the tenant's own images kept, first 20 GB free\n"
                   "  artifact store: not charged\n"
                   "  volume store:   not charged\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  model lock:          yes (no substitution of h100-sxm5-80gb)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  min FP16 per card:   900 TFLOPS (shortfall refunded in proportion)\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  exit:                30 days' notice, prepaid unused fees refunded\n"), std::string::npos) << s;
  EXPECT_NE(s.find("  penalty:             5% of the month's fee of the cards measured short per 10% below the promise\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("  qwen2.5-72b-instruct                  4.00"), std::string::npos) << s;
}

TEST(Detail, PricesAreComparedWithOnDemandExactly) {
  json offer = {
      {"name", "o"},
      {"currency", "USD"},
      {"prices", {{"on_demand", "3.20"}, {"reserved_1m", "2.80"}, {"spot", "3.30"}, {"future_mode", "3.20"}}}};
  std::ostringstream out;
  print_detail(out, view_of("offers"), offer, 0);
  EXPECT_NE(out.str().find("  MODE          PRICE   VS_ON_DEMAND\n"
                           "  on_demand      3.20              -\n"
                           "  reserved_1m    2.80         -12.5%\n"
                           "  spot           3.30          +3.1%\n"
                           "  future_mode    3.20             0%\n"),
            std::string::npos)
      << out.str();
}

TEST(Detail, JobShowsItsShapeAndStatusFirst) {
  json job = json::parse(R"({"name":"train","id":"job_1","project":"vision","project_id":"prj_1","kind":"training",
      "workers":2,"gpus_per_worker":8,"image":"img","status":{"state":"running","reason":"placed"},
      "tenant_id":"ten_1","version":3})");
  std::ostringstream out;
  print_detail(out, view_of("jobs"), job, 0);
  EXPECT_EQ(out.str(),
            "name:            train\n"
            "id:              job_1\n"
            "project:         vision (prj_1)\n"
            "kind:            training\n"
            "status:\n"
            "  reason: placed\n"
            "  state:  running\n"
            "workers:         2\n"
            "gpus_per_worker: 8\n"
            "image:           img\n"
            "tenant_id:       ten_1\n"
            "version:         3\n");
}

TEST(Detail, GenericOrdersIdentityFirstAndTimestampsLast) {
  json t = json::parse(R"({"version":2,"updated_at":"u","created_at":"c","currency":"CNY","name":"acme",
                           "id":"ten_1","display_name":"艾克米","contact_email":"ops@acme.cn"})");
  std::ostringstream out;
  print_detail(out, view_of("tenants"), t, 0);
  EXPECT_EQ(out.str(),
            "name:          acme\n"
            "id:            ten_1\n"
            "display_name:  艾克米\n"
            "contact_email: ops@acme.cn\n"
            "currency:      CNY\n"
            "created_at:    c\n"
            "updated_at:    u\n"
            "version:       2\n");
}

TEST(Views, EveryKindHasColumnsAndTheCatalogIsReadOnly) {
  for (const auto& v : resource_views()) {
    EXPECT_FALSE(v.columns.empty()) << v.kind;
    EXPECT_EQ(&view_of(v.kind), &v);
  }
  EXPECT_FALSE(view_of("gpu-models").creatable);
  EXPECT_FALSE(view_of("gpu-models").updatable);
  EXPECT_FALSE(view_of("jobs").updatable);
  EXPECT_FALSE(view_of("jobs").deletable);
  EXPECT_TRUE(view_of("jobs").creatable);
  EXPECT_TRUE(view_of("nodes").updatable);
  EXPECT_EQ(view_of("no-such-kind").columns.size(), 3u);
}

}  // namespace
}  // namespace gpurent

namespace gpurent {
namespace {

TEST(Detail, JobShowsWhereEachWorkerRuns) {
  const json job = json::parse(R"({"name": "sft", "project": "vision", "kind": "training", "workers": 2,
    "gpus_per_worker": 4, "status": {"state": "admitted", "reason": "placed by the scheduler",
    "updated_at": "2026-11-29T19:00:00.000Z", "placement": [
      {"replica": 0, "worker": 0, "node": "nod_00000000000000a1", "gpus": [0, 1, 2, 3], "nvlink_domain": "nvswitch-0"},
      {"replica": 0, "worker": 1, "node": "nod_00000000000000a2", "gpus": [4, 5, 6, 7], "nvlink_domain": "nvswitch-0"}]}})");
  std::ostringstream out;
  print_detail(out, view_of("jobs"), job, 0);
  const std::string s = out.str();
  EXPECT_NE(s.find("placed by the scheduler"), std::string::npos) << s;
  EXPECT_NE(s.find("Placement (2 workers):"), std::string::npos) << s;
  EXPECT_NE(s.find("nod_00000000000000a2   4-7"), std::string::npos) << s;
  EXPECT_NE(s.find("nvswitch-0"), std::string::npos) << s;
}

}  // namespace
}  // namespace gpurent

namespace gpurent {
namespace {

// Alerts: an amount in a currency reads at the currency's precision (the API keeps it exact);
// a share or a count as it is. The detail view shows texts, not their message codes.
TEST(Views, AlertAmountsAtTheCurrencysPrecisionAndTextsWithoutCodes) {
  std::ostringstream out;
  json money = {{"id", "alr_1"}, {"kind", "egress_daily_cost"}, {"measured", "935.38895"}, {"threshold", "500.00"},
                {"unit", "USD"}, {"state", "active"}};
  json share = {{"id", "alr_2"}, {"kind", "storage_io_share"}, {"measured", "42.5"}, {"threshold", "30"},
                {"unit", "%"}, {"state", "active"}};
  print_list(out, view_of("alerts"), {money, share}, 0);
  EXPECT_NE(out.str().find("935.39 / 500.00 USD"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("42.5 / 30 %"), std::string::npos) << out.str();
  std::ostringstream detail;
  print_generic_detail(detail, json{{"name", "j"}, {"status", {{"reason", "queued"}, {"reason_message", {{"code", "x"}}}}}});
  EXPECT_NE(detail.str().find("queued"), std::string::npos) << detail.str();
  EXPECT_EQ(detail.str().find("reason_message"), std::string::npos) << detail.str();
}

}  // namespace
}  // namespace gpurent
