// advisor_api: POST /api/v1/advise/{fingerprint,tco,mix,quotes,suppliers,poc} through the real
// server: each calculator answers with its arithmetic; the platform's own offers, suppliers,
// metered demand and job samples fill in where a body points at them; bad input is a 422 naming
// the field; a tenant cannot read another tenant's demand or jobs.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <map>
#include <set>
#include <utility>

#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

void world(const ServerProcess& s) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  for (const char* n : {"n1", "n2"}) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", n)), "node");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  for (const char* t : {"acme", "other"}) {
    expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc(t, "CNY")), t);
    expect_2xx(s.admin("POST", "/api/v1/projects", project_doc(t, "vision")), "project");
  }
}

Resp advise(const ServerProcess& s, const std::string& calc, const json& body, const std::string& token = "") {
  return token.empty() ? s.admin("POST", "/api/v1/advise/" + calc, body)
                       : s.req("POST", "/api/v1/advise/" + calc, token, body);
}

json ok(const Resp& r, const std::string& what) {
  EXPECT_EQ(r.status, 200) << what << ": " << r.describe();
  EXPECT_FALSE(r.body.value("steps", json::array()).empty()) << what << " shows no arithmetic";
  return r.body;
}

// Every sentence of an answer comes in the reader's language with its code beside it: the same
// answer read with ?lang=zh has the same codes and figures, and Chinese texts.
TEST(Advisor, AnswersInTheReadersLanguage) {
  ServerProcess s({"--sched-interval-ms", "20", "--firewall-interval-s", "0"});
  const json body = json::parse(
      R"({"gpu_model": "h100-sxm5-80gb", "gpu_count": 64, "price_per_gpu": "25000", "server_overhead": "60000", "interest_bp": 800, "electricity_per_kwh": "0.10", "space_per_kw_month": "150", "staff_fte_cost_per_month": "15000", "utilization_pct": 80, "offers": [{"name": "neocloud", "on_demand_per_gpu_hour": "2.99"}]})");
  const json en = ok(advise(s, "tco", body), "tco");
  const json zh = ok(s.admin("POST", "/api/v1/advise/tco?lang=zh", body), "tco in zh");
  EXPECT_EQ(en["summary_message"], zh["summary_message"]);
  EXPECT_EQ(en["total"], zh["total"]);
  EXPECT_EQ(en["summary"].get<std::string>().rfind("Building 64 x h100-sxm5-80gb costs ", 0), 0u) << en["summary"];
  EXPECT_EQ(zh["summary"].get<std::string>().rfind("自建 64 x h100-sxm5-80gb 在 18 个月窗口期内总成本 ", 0), 0u)
      << zh["summary"];
  ASSERT_EQ(en["steps"].size(), zh["steps"].size());
  for (size_t i = 0; i < en["steps"].size(); ++i) {
    EXPECT_EQ(en["steps"][i]["text_message"], zh["steps"][i]["text_message"]);
    EXPECT_EQ(en["steps"][i]["formula"], zh["steps"][i]["formula"]);
    EXPECT_NE(en["steps"][i]["text"], zh["steps"][i]["text"]) << i;
  }
  EXPECT_EQ(zh["steps"][0]["text"], "服务器数 = ceil(GPU 数 / 每台 GPU 数)");
  EXPECT_EQ(zh["lines"][0]["text"], "窗口期硬件折旧 = 资本支出 - 残值");
}

TEST(Advisor, EveryCalculatorAnswersWithItsArithmetic) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "0", "--firewall-interval-s", "0"});
  world(s);
  // The issue's example: 16 A100s at 35% with 70% of the step waiting on data -> fewer GPUs and
  // faster storage, cheaper and faster.
  json fp = ok(
      advise(
          s, "fingerprint",
          json::parse(
              R"({"gpu_model": "a100-sxm4-80gb", "gpu_count": 16, "gpu_utilization_pct": 35, "data_wait_share_pct": 70, "nccl_share_pct": 0, "step_time_ms": 1000, "storage_io_mb_per_s": 500, "price_per_gpu_hour": "2.00"})")),
      "fingerprint");
  EXPECT_EQ(fp["bottleneck"], "io");
  EXPECT_LT(fp["recommendation"]["gpu_count"].get<int>(), 16);
  EXPECT_TRUE(fp["recommendation"]["faster_storage"].get<bool>());
  EXPECT_GT(fp["speedup_permille"].get<int>(), 1000);
  EXPECT_LT(fp["cost_change_bp"].get<int>(), 0);
  json tco = ok(
      advise(
          s, "tco",
          json::parse(
              R"({"gpu_model": "h100-sxm5-80gb", "gpu_count": 64, "price_per_gpu": "25000", "server_overhead": "60000", "interest_bp": 800, "electricity_per_kwh": "0.10", "space_per_kw_month": "150", "staff_fte_cost_per_month": "15000", "demand_curve": [64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32], "offers": [{"name": "hyperscaler", "on_demand_per_gpu_hour": "6.98", "reserved_per_gpu_hour": "4.10"}, {"name": "neocloud", "on_demand_per_gpu_hour": "2.99", "reserved_per_gpu_hour": "2.20"}]})")),
      "tco");
  EXPECT_EQ(tco["offers_from"], "request");
  // Demand 4,4,4,2 GPUs; spot at most half of each hour at 1.00 + 10% rework at 3.00 = 1.30 a
  // GPU-hour; reserved 2.00 billed all 4 hours; on-demand 3.00. Reserving R GPUs costs 8R plus the
  // rest: R=0 30.10, R=1 26.10, R=2 16.00 + 6 spot GPU-hours (7.80) = 23.80, R=3 27.90, R=4 32.00.
  json mix = ok(
      advise(
          s, "mix",
          json::parse(
              R"({"demand": {"gpus_per_hour": [4, 4, 4, 2]}, "options": [{"offer": "gpu-a", "mode": "on_demand", "price_per_gpu_hour": "3.00"}, {"offer": "gpu-a", "mode": "reserved_1m", "price_per_gpu_hour": "2.00"}, {"offer": "gpu-a", "mode": "spot", "price_per_gpu_hour": "1.00"}], "spot_interruption_permille": 100, "max_spot_share_pct": 50})")),
      "mix");
  EXPECT_EQ(mix["demand"]["gpu_hours"], 14);
  EXPECT_EQ(mix["expected_cost"], "23.80") << mix.dump();
  EXPECT_EQ(mix["plan"]["reserved_gpus"], 2);
  ASSERT_EQ(mix["plan"]["reserved"].size(), 1u);
  EXPECT_EQ(mix["plan"]["reserved"][0]["cost"], "16.00");
  ASSERT_EQ(mix["plan"]["hourly"].size(), 1u);
  EXPECT_EQ(mix["plan"]["hourly"][0]["mode"], "spot");
  EXPECT_EQ(mix["plan"]["hourly"][0]["gpu_hours"], 6);
  EXPECT_EQ(mix["plan"]["hourly"][0]["rework_cost"], "1.80");
  EXPECT_EQ(mix["plan"]["spot_share_bp"], 4286);  // 6 / 14, half-even
  EXPECT_EQ(mix["pure_on_demand_cost"], "42.00");
  EXPECT_EQ(mix["best_single_level"]["cost"], "32.00");
  EXPECT_EQ(mix["best_single_level"]["gpus"], 4);
  EXPECT_EQ(mix["savings"]["vs_on_demand"]["amount"], "18.20");
  EXPECT_EQ(mix["savings"]["vs_on_demand"]["bp"], 4333);
  EXPECT_EQ(mix["savings"]["vs_best_single_level"]["bp"], 2562);  // 8.20 / 32.00 = 2562.5, half-even
  // POC: the pass mark is 41200 × (100 − 10) / 100 = 37080 tokens/s; exactly at it passes, one below
  // rejects whatever else passed (the slowdown shown rounded up, 10.01%).
  json poc = ok(
      advise(
          s, "poc",
          json::parse(
              R"({"start": "2026-12-01T09:00:00+08:00", "model": {"name": "qwen2.5-72b-sft", "metric": "tokens/s", "baseline_throughput": "41200", "baseline": "16×A100 80GB, in-house cluster"}, "max_slowdown_pct": 10, "thresholds": {"storage_gbps": "20", "nccl_busbw_gbps": 350}, "must_pass": {"ops_monitoring": true}, "suppliers": [{"name": "huadong-compute", "gpu_model": "h100-sxm5-80gb", "gpus": 16, "driver": "550.54.15", "cuda": "12.4", "image": "nvcr.io/nvidia/pytorch:24.03-py3", "fp16_tflops": "900", "results": {"env_rdma": {"passed": true}, "bench_fp16_gemm": {"value": "905.2", "note": "lowest of 16 cards"}, "model_throughput": {"value": "37080"}}}, {"name": "slow-dc", "gpu_model": "h100-sxm5-80gb", "gpus": 16, "driver": "550.54.15", "cuda": "12.4", "image": "nvcr.io/nvidia/pytorch:24.03-py3", "fp16_tflops": "900", "results": {"model_throughput": {"value": "37079"}}}]})")),
      "poc");
  EXPECT_EQ(poc["start"], "2026-12-01T01:00:00.000Z");
  EXPECT_EQ(poc["hours"], 48);
  EXPECT_EQ(poc["summary"]["pending"], json::array({"huadong-compute"})) << poc["summary"].dump();
  EXPECT_EQ(poc["summary"]["reject"], json::array({"slow-dc"}));
  const json& hd = poc["suppliers"][0];
  EXPECT_EQ(hd["slowdown_pct"], "10.00");
  EXPECT_TRUE(hd["failed"].empty());
  std::map<std::string, std::pair<std::string, std::string>> items;  // id -> status, threshold
  for (const auto& item : hd["items"]) items[item["id"]] = {item["status"], item.value("threshold", "")};
  EXPECT_EQ(items["model_throughput"], std::make_pair(std::string("pass"), std::string("37080")));
  EXPECT_EQ(items["bench_fp16_gemm"], std::make_pair(std::string("pass"), std::string("900")));
  EXPECT_EQ(items["bench_nccl"], std::make_pair(std::string("pending"), std::string("350")));
  EXPECT_EQ(items["env_rdma"].first, "pass");
  EXPECT_EQ(poc["suppliers"][1]["verdict"], "reject");
  EXPECT_EQ(poc["suppliers"][1]["failed"], json::array({"model_throughput"}));
  EXPECT_EQ(poc["suppliers"][1]["slowdown_pct"], "10.01");
  // Offers the platform sells, by name: quotes rate them with the invoice engine.
  // A second offer of the same pool at a lower on-demand price ranks first.
  json cheap = offer_doc("dc", "h100-cheap");
  cheap["prices"]["on_demand"] = "12.00";
  cheap["prices"]["reserved_1m"] = "11.00";
  cheap["prices"]["reserved_12m"] = "10.00";
  expect_2xx(s.admin("POST", "/api/v1/offers", cheap), "cheaper offer");
  json q = ok(advise(s, "quotes",
                     {{"workload", {{"launches_per_month", 30}, {"gpus", 8}, {"run_minutes", 120}, {"egress_gb", 100}}},
                      {"offers", {"dc/h100", "dc/h100-cheap"}}}),
              "quotes");
  ASSERT_EQ(q["ranking"].size(), 2u) << q.dump();
  EXPECT_EQ(q["ranking"][0]["offer"], "dc/h100-cheap") << q.dump();
  EXPECT_EQ(q["ranking"][1]["offer"], "dc/h100");
  EXPECT_EQ(q["workload"]["useful_gpu_hours"], "480") << q["workload"].dump();  // 30 × 8 GPUs × 2 h
  // Ranked by compute at FP16: the cards' own benchmarks (the latest per card that counts, a
  // corrected one left out) are the measured figure of both offers of the pool (n1 and n2).
  json b1 = {{"kind", "fp16_tflops"}, {"node", "n1"}, {"gpu", 0}, {"at", "2026-11-01T00:00:00Z"}, {"fp16_tflops", "700"}};
  const std::string first = expect_2xx(s.admin("POST", "/api/v1/measurements", b1), "benchmark").body.at("id");
  b1["corrects"] = first;
  b1["fp16_tflops"] = "800";  // the correction replaces the first
  expect_2xx(s.admin("POST", "/api/v1/measurements", b1), "correction");
  json b2 = {{"kind", "fp16_tflops"}, {"node", "n2"}, {"gpu", 3}, {"at", "2026-11-02T00:00:00Z"}, {"fp16_tflops", "900.5"}};
  expect_2xx(s.admin("POST", "/api/v1/measurements", b2), "benchmark");
  json fp16 = ok(advise(s, "quotes",
                        {{"workload",
                          {{"launches_per_month", 30}, {"gpus", 8}, {"run_minutes", 120}, {"precision", "fp16"}}},
                         {"offers", {"dc/h100", "dc/h100-cheap"}},
                         {"measured_tflops", {{"dc/h100-cheap", "500"}}}}),
                 "quotes by compute");
  EXPECT_EQ(fp16["ranked_by"], "per_useful_pflop_hour");
  std::map<std::string, json> compute;
  for (const auto& e : fp16["ranking"]) compute[e["offer"]] = e["compute"];
  // (800 + 900.5) / 2 = 850.25 -> 850.3 (x10, half up); the request's own figure wins for the other.
  EXPECT_EQ(compute["dc/h100"], (json{{"tflops", "850.3"}, {"source", "measured"}, {"measured_cards", 2},
                                      {"per_useful_pflop_hour", compute["dc/h100"]["per_useful_pflop_hour"]}}))
      << fp16.dump();
  EXPECT_EQ(compute["dc/h100-cheap"]["tflops"], "500");
  EXPECT_FALSE(compute["dc/h100-cheap"].contains("measured_cards"));
  EXPECT_EQ(fp16["ranking"][0]["offer"], "dc/h100") << "17.50 at 850.3 TFLOPS beats 12.00 at 500 per PFLOP-hour";
  // The platform's suppliers with their recorded due diligence, when the body names none.
  json sup = ok(advise(s, "suppliers", json::object()), "suppliers");
  ASSERT_EQ(sup["suppliers"].size(), 1u);
  EXPECT_EQ(sup["suppliers"][0]["name"], "dc");
  // {"gpu_model": "h100-sxm5-80gb", "gpu_count": 64, "price_per_gpu": "25000", "server_overhead": "60000",
  // "interest_bp": 800, "electricity_per_kwh": "0.10", "space_per_kw_month": "150", "staff_fte_cost_per_month":
  // "15000", "demand_curve": [64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32,
  // 32, 32], "offers": [{"name": "hyperscaler", "on_demand_per_gpu_hour": "6.98", "reserved_per_gpu_hour": "4.10"},
  // {"name": "neocloud", "on_demand_per_gpu_hour": "2.99", "reserved_per_gpu_hour": "2.20"}]} without offers compares
  // with the platform's offers of that model and currency.
  json t2 = json::parse(
      R"({"gpu_model": "h100-sxm5-80gb", "gpu_count": 64, "price_per_gpu": "25000", "server_overhead": "60000", "interest_bp": 800, "electricity_per_kwh": "0.10", "space_per_kw_month": "150", "staff_fte_cost_per_month": "15000", "demand_curve": [64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32, 32], "offers": [{"name": "hyperscaler", "on_demand_per_gpu_hour": "6.98", "reserved_per_gpu_hour": "4.10"}, {"name": "neocloud", "on_demand_per_gpu_hour": "2.99", "reserved_per_gpu_hour": "2.20"}]})");
  t2.erase("offers");
  t2["currency"] = "CNY";
  t2["gpu_model"] = "h100-sxm5-80gb";
  json tco2 = ok(advise(s, "tco", t2), "tco from the platform's offers");
  EXPECT_EQ(tco2["offers_from"], "platform");
  ASSERT_EQ(tco2["comparisons"].size(), 2u) << tco2.dump();
  std::set<std::string> compared;
  for (const auto& c : tco2["comparisons"]) compared.insert(c["name"].get<std::string>());
  EXPECT_EQ(compared, (std::set<std::string>{"dc/h100", "dc/h100-cheap"}));
}

TEST(Advisor, HedgeShowsTheCostAndItsSwingsAtEachShare) {
  ServerProcess s;
  Resp r = s.admin("POST", "/api/v1/advise/hedge?lang=zh",
                   json::parse(R"({"currency":"USD","demand_gpu_hours":[10,30,20,40],"prices":["2.00","4.00","3.00","5.00"],
                                   "forward_price":"3.00"})"));
  ASSERT_EQ(r.status, 200) << r.describe();
  EXPECT_EQ(r.body["chosen"]["share_pct"], 20);
  EXPECT_EQ(r.body["chosen"]["mean_cost"], "97.50");
  EXPECT_EQ(r.body["unhedged"]["stdev_cost"], "67.823299");
  EXPECT_EQ(r.body["curve"].size(), 11u);
  EXPECT_NE(r.body["steps"][0]["text"].get<std::string>().find("周期"), std::string::npos) << r.body["steps"].dump();
  Resp bad = s.admin("POST", "/api/v1/advise/hedge", json::parse(R"({"demand_gpu_hours":[1,2],"prices":["1.00"]})"));
  EXPECT_EQ(bad.status, 422);
  EXPECT_NE(bad.reason_for("prices"), "") << bad.describe();
}

TEST(Advisor, BadInputsNameTheField) {
  ServerProcess s({"--firewall-interval-s", "0"});
  world(s);
  json fp = json::parse(
      R"({"gpu_model": "a100-sxm4-80gb", "gpu_count": 16, "gpu_utilization_pct": 35, "data_wait_share_pct": 70, "nccl_share_pct": 0, "step_time_ms": 1000, "storage_io_mb_per_s": 500, "price_per_gpu_hour": "2.00"})");
  fp["price_per_gpu_hour"] = "-2.00";
  Resp r = advise(s, "fingerprint", fp);
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_FALSE(r.reason_for("price_per_gpu_hour").empty()) << r.describe();
  json mix = json::parse(
      R"({"demand": {"gpus_per_hour": [4, 4, 4, 2]}, "options": [{"offer": "gpu-a", "mode": "on_demand", "price_per_gpu_hour": "3.00"}, {"offer": "gpu-a", "mode": "reserved_1m", "price_per_gpu_hour": "2.00"}, {"offer": "gpu-a", "mode": "spot", "price_per_gpu_hour": "1.00"}], "spot_interruption_permille": 100, "max_spot_share_pct": 50})");
  mix["demand"] = {{"gpus_per_hour", json::array()}};
  r = advise(s, "mix", mix);
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_FALSE(r.reason_for("demand.gpus_per_hour").empty()) << r.describe();
  mix = json::parse(
      R"({"demand": {"gpus_per_hour": [4, 4, 4, 2]}, "options": [{"offer": "gpu-a", "mode": "on_demand", "price_per_gpu_hour": "3.00"}, {"offer": "gpu-a", "mode": "reserved_1m", "price_per_gpu_hour": "2.00"}, {"offer": "gpu-a", "mode": "spot", "price_per_gpu_hour": "1.00"}], "spot_interruption_permille": 100, "max_spot_share_pct": 50})");
  mix["budget"] = "0.01";
  r = advise(s, "mix", mix);
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_FALSE(r.reason_for("budget").empty()) << r.describe();
  // Two suppliers' offers of one name: their options are named by id, not refused as repeats.
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc2")), "second supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc2", "m1")), "its node");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc2", "h100")), "its offer of the same name");
  r = advise(s, "mix", {{"offers", {"dc/h100", "dc2/h100"}}, {"demand", {{"gpus_per_hour", {1, 2}}}}});
  EXPECT_EQ(r.status, 200) << r.describe();
  r = advise(s, "mix", {{"offers", {"dc/nope"}}, {"demand", {{"gpus_per_hour", {1, 2}}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.reason_for("offers[0]").find("no offer 'dc/nope'"), std::string::npos) << r.describe();
  // The offers' prices are in their currency: naming another is refused, not a relabelling.
  r = advise(s, "mix", {{"offers", {"dc/h100"}}, {"currency", "USD"}, {"demand", {{"gpus_per_hour", {1, 2}}}}});
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_NE(r.reason_for("currency").find("must be the offers' currency, CNY"), std::string::npos) << r.describe();
  r = advise(s, "mix", {{"offers", {"dc/h100"}}, {"currency", "CNY"}, {"demand", {{"gpus_per_hour", {1, 2}}}}});
  EXPECT_EQ(r.status, 200) << r.describe();
  // Errors about the options an offer stands for name the offer's own fields, and an offer listed
  // twice is refused where it is listed again (both named options[k], which the body never had).
  r = advise(s, "mix", {{"offers", {"dc/h100", "dc/h100"}}, {"demand", {{"gpus_per_hour", {1, 2}}}}});
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_NE(r.reason_for("offers[1]").find("lists offer dc/h100 twice"), std::string::npos) << r.describe();
  json free_reserved = offer_doc("dc", "h100-free-1m");
  free_reserved["prices"]["reserved_1m"] = "0";
  expect_2xx(s.admin("POST", "/api/v1/offers", free_reserved), "an offer whose 1-month price is 0");
  r = advise(s, "mix", {{"offers", {"dc/h100", "dc/h100-free-1m"}}, {"demand", {{"gpus_per_hour", {1, 2}}}}});
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_EQ(r.error_fields(), std::vector<std::string>{"offers[1].prices.reserved_1m"}) << r.describe();
  r = advise(s, "quotes",
             {{"workload", {{"launches_per_month", 1}, {"gpus", 1}, {"run_minutes", 1}}}, {"offers", {"dc/nope"}}});
  EXPECT_EQ(r.status, 422) << r.describe();
  r = advise(s, "fingerprint", {{"job", "nope"}});
  EXPECT_EQ(r.status, 422);
  EXPECT_FALSE(r.reason_for("job").empty()) << r.describe();
  r = advise(s, "tco", {{"gpu_model", "h100-sxm5-80gb"}});
  EXPECT_EQ(r.status, 422);
  EXPECT_FALSE(r.reason_for("gpu_count").empty()) << r.describe();
}

// A job's profile from its metered samples, and a tenant's demand from the allocation ledger;
// another tenant can read neither.
TEST(Advisor, MeteredJobsAndDemandFeedTheAdvisorOfTheirOwnTenantOnly) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "0", "--firewall-interval-s", "0"});
  world(s);
  json j = job_doc("vision", "train");
  j["project"] = "vision";
  j["gpus_per_worker"] = 2;
  j.erase("expected_duration_seconds");
  const std::string id =
      expect_2xx(s.req("POST", "/api/v1/jobs", make_user_token(s, "alice", "tenant_admin", "acme"), j), "job")
          .body.at("id");
  json running = wait_for(s, "/api/v1/jobs/" + id, [](const json& x) { return x["status"]["state"] == "running"; });
  json run = wait_for(s, "/api/v1/allocations", [](const json& x) { return !x["items"].empty(); })["items"][0];
  json samples = json::array();
  for (int g : {0, 1})
    samples.push_back({{"at", run["running_at"]},
                       {"node", run["placement"][0]["node"]},
                       {"gpu", run["placement"][0]["gpus"][g]},
                       {"utilization_pct", 30 + 10 * g},
                       {"memory_used_mib", 20000}});
  expect_2xx(s.admin("POST", "/api/v1/usage", json{{"idempotency_key", "adv-1"}, {"gpu_samples", samples}}), "usage");
  const std::string alice = make_user_token(s, "alice2", "tenant_admin", "acme");
  const std::string bob = make_user_token(s, "bob", "tenant_admin", "other");
  json fp = ok(advise(s, "fingerprint", {{"job", id}}, alice), "metered fingerprint");
  EXPECT_EQ(fp["source"]["job"], id);
  EXPECT_EQ(fp["profile"]["gpu_count"], 2) << fp["profile"].dump();
  EXPECT_FALSE(fp["source"].contains("storage_read")) << "no acceptance run measured the node yet";
  // Once an acceptance run measured the node's disk (fio, recorded output), the job's storage reads
  // are judged against it.
  std::ifstream fio_in(std::string(GPURENT_SOURCE_DIR) + "/src/meter/testdata/acceptance/fio_write_then_read.json");
  std::stringstream fio;
  fio << fio_in.rdbuf();
  const json report = {{"format", "gpurent-acceptance/1"},
                       {"node", run["placement"][0]["node"]},
                       {"started_at", "2026-12-01T00:00:00Z"},
                       {"finished_at", "2026-12-01T00:01:00Z"},
                       {"stages",
                        {{{"stage", "storage"}, {"tool", "fio"}, {"tool_version", "fio-3.33"}, {"status", "ok"},
                          {"started_at", "2026-12-01T00:00:00Z"}, {"finished_at", "2026-12-01T00:01:00Z"},
                          {"output", fio.str()}}}}};
  const json acc = expect_2xx(s.admin("POST", "/api/v1/acceptance-runs", json{{"report", report}}), "acceptance run").body;
  expect_2xx(s.admin("POST", "/api/v1/usage",
                     json{{"idempotency_key", "adv-2"},
                          {"job_samples", {{{"at", format_rfc3339(SystemClock().now())}, {"job", id}, {"storage_io_bytes", 1000},
                                            {"output_tokens", 90'000}}}}}),
             "job usage");
  fp = ok(advise(s, "fingerprint", {{"job", id}}, alice), "fingerprint with the measured disk");
  EXPECT_EQ(fp["source"]["storage_read"]["acceptance_run"], acc["id"]) << fp["source"].dump();
  EXPECT_EQ(fp["source"]["storage_read"]["read_mbps"], 642);
  EXPECT_EQ(fp["profile"]["storage_read_bytes_per_s"], 642'000'000) << fp["profile"].dump();
  // The quotes advisor prices the job's own work on each offer: an hour of its current work takes
  // an hour on the model it runs on.
  const json work_quote = {{"workload", {{"job", id}, {"launches_per_month", 1}, {"run_minutes", 60}, {"busy_utilization_pct", 90}}},
                           {"offers", {"dc/h100"}},
                           {"commit_terms_months", json::array()}};
  json q = ok(advise(s, "quotes", work_quote, alice), "quotes by the job's work");
  EXPECT_EQ(q["ranked_by"], "per_unit_of_work") << q.dump();
  EXPECT_EQ(q["work_from"]["unit"], "hour_of_current_work");
  EXPECT_EQ(q["work_from"]["job"], id);
  EXPECT_EQ(q["ranking"][0]["work"]["us_per_unit"], 3'600'000'000LL) << q["ranking"][0].dump();
  EXPECT_FALSE(q["ranking"][0]["work"]["per_unit"].is_null());
  // Its metered output tokens make the hour's cost a cost per million tokens as well.
  EXPECT_GT(q["work_from"].value("tokens_per_unit", int64_t{0}), 0) << q["work_from"].dump();
  EXPECT_TRUE(q["ranking"][0]["work"]["per_million_tokens"].is_string()) << q["ranking"][0].dump();
  json wrong_gpus = work_quote;
  wrong_gpus["workload"]["gpus"] = 3;
  Resp bad = advise(s, "quotes", wrong_gpus, alice);
  EXPECT_EQ(bad.status, 422) << bad.describe();
  EXPECT_NE(bad.reason_for("workload.gpus"), "") << bad.describe();
  EXPECT_EQ(advise(s, "quotes", work_quote, bob).status, 422) << "another tenant's job";
  Resp hidden = advise(s, "fingerprint", {{"job", id}}, bob);
  EXPECT_EQ(hidden.status, 422) << hidden.describe();
  // The tenant's own metered demand (2 GPUs held) plans a mix on the platform's offer.
  json mix = ok(advise(s, "mix", {{"offers", {"dc/h100"}}, {"demand", {{"history", json::object()}}}}, alice), "mix");
  EXPECT_EQ(mix["demand"]["peak_gpus"], 2) << mix["demand"].dump();
  Resp none = advise(s, "mix", {{"offers", {"dc/h100"}}, {"demand", {{"history", json::object()}}}}, bob);
  EXPECT_EQ(none.status, 422) << none.describe();
  EXPECT_NE(none.reason_for("demand.history").find("ran no GPU jobs"), std::string::npos) << none.describe();
  // Operators name the tenant.
  Resp op = advise(s, "mix", {{"offers", {"dc/h100"}}, {"demand", {{"history", json::object()}}}});
  EXPECT_EQ(op.status, 422);
  EXPECT_FALSE(op.reason_for("demand.history.tenant").empty()) << op.describe();
  ok(advise(s, "mix", {{"offers", {"dc/h100"}}, {"demand", {{"history", {{"tenant", "acme"}}}}}}), "operator mix");
}

}  // namespace
}  // namespace gpurent::testing
