#include "advisor/supplier_score.h"

#include <gtest/gtest.h>

#include <random>

#include "core/message.h"
#include "model/model_test_util.h"

namespace gpurent {
namespace {

using testing_util::fails_only_on;

constexpr TimeMs kHour = 3'600'000;
constexpr TimeMs kT0 = 1'793'491'200'000;  // 2026-11-01T00:00:00Z

json supplier_json(const std::string& name, json certs) {
  return {{"name", name},
          {"region", "cn-east"},
          {"country", "CN"},
          {"certifications", std::move(certs)},
          {"due_diligence",
           {{"gpu_supply_days", 14},
            {"allreduce_8gpu_1gb_ms", 5},
            {"fault_locate_minutes", 20},
            {"restore_hours", 2},
            {"cuda_update_days", 5},
            {"exit_path_tested", true}}},
          {"contact_email", "noc@" + name + ".example"}};
}

json history(int64_t fail_bp, int64_t response, int64_t restore, int64_t fp16, int64_t nccl) {
  return {{"monthly_failure_rate_bp", fail_bp},
          {"response_minutes", response},
          {"restore_minutes", restore},
          {"fp16_attainment_permille", fp16},
          {"nccl_attainment_permille", nccl}};
}

// alpha: every checklist item passes (60 points); history 0.8% failures (80 bp), 10 min response,
//   60 min restore, 98.0% FP16 and 94.3% NCCL attainment:
//   failure 1000 × (100 − 80) ÷ 90 = 222.2 -> 222 × 15 = 3,330; restore (480 − 60) ÷ 360 -> capped
//   1000 × 10 = 10,000; response (120 − 10) ÷ 105 -> 1000 × 5 = 5,000; FP16 (800 − 980) ÷ (800 − 1000)
//   = 900 × 5 = 4,500; NCCL (800 − 943) ÷ −200 = 715 × 5 = 3,575. Points 60,000 + 26,405 = 86,405
//   ÷ 100 = 864.05 -> 86.4.
// beta: 0.12% failures (12 bp): 1000 × 88 ÷ 90 = 977.8 -> 978 × 15 = 14,670; restore 90 -> 10,000;
//   response 20: 1000 × 100 ÷ 105 = 952.4 -> 952 × 5 = 4,760; FP16 and NCCL at 100% -> 10,000.
//   Points 99,430 -> 99.4.
// gamma: no MLPS level 3 -> must-have iso27001_mlps3 fails -> blocked.
// delta: exit path not answered -> must-have unknown -> blocked.
json four_suppliers() {
  json delta = supplier_json("delta", json::array({"iso27001", "mlps3"}));
  delta["due_diligence"].erase("exit_path_tested");
  return {
      {"suppliers",
       {{{"supplier", supplier_json("alpha", json::array({"iso27001", "mlps3"}))},
         {"history", history(80, 10, 60, 980, 943)}},
        {{"supplier", supplier_json("beta", json::array({"iso27001", "mlps4", "soc2"}))},
         {"history", history(12, 20, 90, 1000, 1000)}},
        {{"supplier", supplier_json("gamma", json::array({"iso27001"}))}, {"history", history(5, 5, 30, 1000, 1000)}},
        {{"supplier", delta}, {"history", history(5, 5, 30, 1000, 1000)}}}}};
}

SupplierScoreResult score(const json& body) {
  auto in = parse_supplier_score_input(body);
  EXPECT_TRUE(in.ok()) << (in.ok() ? "" : in.error().message);
  if (!in.ok()) return {};
  auto r = compute_supplier_score(*in);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : SupplierScoreResult{};
}

const SupplierScore& by_name(const SupplierScoreResult& r, const std::string& n) {
  for (const auto& s : r.suppliers)
    if (s.name == n) return s;
  ADD_FAILURE() << "no supplier " << n;
  return r.suppliers.front();
}

const SupplierItemResult& item(const SupplierScore& s, const std::string& id) {
  for (const auto& x : s.items)
    if (x.id == id) return x;
  ADD_FAILURE() << "no item " << id;
  return s.items.front();
}

std::string zh(const Message& m) { return render(m, "zh"); }

// Every code in `m` (nested arguments included) is in every catalogue.
void expect_catalogued(const Message& m) {
  if (m.code != "join" && m.code != "text") {
    for (const auto& lang : message_languages()) EXPECT_TRUE(has_message(lang, m.code)) << lang << " " << m.code;
  }
  for (const auto& a : m.args)
    for (const auto& n : a.nested) expect_catalogued(n);
}

TEST(SupplierScore, HandCheckedScoresHardFailuresAndSplit) {
  SupplierScoreResult r = score(four_suppliers());
  ASSERT_EQ(r.suppliers.size(), 4u);
  const auto &a = by_name(r, "alpha"), &b = by_name(r, "beta"), &g = by_name(r, "gamma"), &d = by_name(r, "delta");
  EXPECT_EQ(a.score_x10, 864);
  EXPECT_EQ(b.score_x10, 994);
  EXPECT_EQ(item(a, "failure_rate").credit_permille, 222);
  EXPECT_EQ(item(a, "failure_rate").status, SupplierItemStatus::kPartial);
  EXPECT_EQ(item(a, "failure_rate").source, "entered");
  EXPECT_EQ(item(b, "failure_rate").credit_permille, 978);
  EXPECT_EQ(item(a, "nccl_attainment").credit_permille, 715);
  EXPECT_EQ(item(a, "fp16_attainment").credit_permille, 900);
  EXPECT_EQ(item(a, "restore_time").status, SupplierItemStatus::kPass);
  EXPECT_EQ(item(a, "allreduce_120ms").source, "declared");
  EXPECT_TRUE(g.blocked);
  EXPECT_EQ(g.hard_failures, std::vector<std::string>{"iso27001_mlps3"});
  EXPECT_EQ(item(g, "iso27001_mlps3").status, SupplierItemStatus::kFail);
  EXPECT_TRUE(d.blocked);
  EXPECT_EQ(item(d, "exit_path_tested").status, SupplierItemStatus::kUnknown);
  EXPECT_FALSE(g.eligible);
  // Gamma and delta score high yet get no share: a hard failure blocks whatever the score.
  EXPECT_GT(g.score_x10, a.score_x10);
  // Split above 60: weights 26.4 and 39.4 -> 1000 × 394 ÷ 658 = 598.78 and 401.22: floors 598 + 401,
  // the remaining per-mille to beta's larger fraction -> 599 / 401.
  EXPECT_EQ(b.share_permille, 599);
  EXPECT_EQ(a.share_permille, 401);
  EXPECT_EQ(g.share_permille + d.share_permille, 0);
  // Ordered by score: beta 99.4, delta and gamma 92.0 (8 checklist points lost each; by name), alpha 86.4.
  ASSERT_EQ(r.suppliers[1].name, "delta");
  EXPECT_EQ(r.suppliers[2].name, "gamma");
  EXPECT_EQ(g.score_x10, 920);
  json j = to_json(r);
  EXPECT_EQ(j["suppliers"][0]["score"], "99.4");
  EXPECT_EQ(j["suppliers"][0]["share_pct"], "59.9");
  EXPECT_EQ(j["split"]["effective_cap_pct"], "60.0");
  // Steps, items, evidence and the split are catalogued codes; the JSON carries the English text
  // beside each code (the server words it in the reader's language).
  ASSERT_EQ(j["steps"].size(), 6u);  // one score per supplier, the split weights, the shares
  for (const auto& s : j["steps"]) {
    ASSERT_TRUE(s.contains("text_message") && s.contains("formula") && s.contains("value")) << s.dump();
    EXPECT_FALSE(s.contains("en") || s.contains("zh")) << s.dump();
    auto m = message_from_json(s["text_message"]);
    ASSERT_TRUE(m.ok()) << s.dump();
    expect_catalogued(*m);
    EXPECT_EQ(s["text"], render_en(*m));
  }
  for (const auto& st : r.steps) expect_catalogued(st.text);
  for (const auto& sup : r.suppliers)
    for (const auto& x : sup.items) {
      expect_catalogued(x.text);
      expect_catalogued(x.evidence);
      EXPECT_FALSE(render_en(x.text).empty()) << x.id;
      EXPECT_FALSE(zh(x.evidence).empty()) << x.id;
    }
  expect_catalogued(r.split);
  const json& beta_json = j["suppliers"][0];
  EXPECT_EQ(beta_json["name"], "beta");
  EXPECT_EQ(beta_json["items"][0]["id"], "gpu_supply_30d");
  EXPECT_EQ(beta_json["items"][0]["text"], "Delivers additional GPUs within 30 days of an order");
  EXPECT_EQ(beta_json["items"][0]["text_message"]["code"], "advisor.suppliers.item.gpu_supply_30d");
  EXPECT_EQ(beta_json["items"][0]["evidence"], "delivery: declared 14 days ≤ 30");
  EXPECT_EQ(zh(b.items[0].evidence), "交付：申报 14 天 ≤ 30");
  EXPECT_EQ(zh(b.items[0].text), "下单后 30 天内可交付新增 GPU");
  // Two-part evidence is one message with both parts.
  EXPECT_EQ(render_en(item(a, "fault_30m_restore_2h").evidence),
            "locate: declared 20 min ≤ 30; restore: declared 120 min ≤ 120");
  EXPECT_EQ(zh(item(a, "fault_30m_restore_2h").evidence), "定位：申报 20 分钟 ≤ 30；恢复：申报 120 分钟 ≤ 120");
  EXPECT_EQ(render_en(item(g, "iso27001_mlps3").evidence), "ISO 27001: held; MLPS 3+: not held");
  EXPECT_EQ(zh(item(g, "iso27001_mlps3").evidence), "ISO 27001：已获得；等保三级及以上：未获得");
  EXPECT_EQ(render_en(item(d, "exit_path_tested").evidence), "exit test: not answered");
  EXPECT_EQ(zh(item(d, "exit_path_tested").evidence), "退出演练：未填写");
  EXPECT_EQ(render_en(item(a, "failure_rate").text), "Monthly GPU failure rate");
  EXPECT_EQ(render_en(item(a, "failure_rate").evidence), "80 bp: 1000 × (100 − 80) ÷ (100 − 10) -> 222‰");
  EXPECT_EQ(zh(item(a, "failure_rate").evidence), "80 bp：1000 × (100 − 80) ÷ (100 − 10) -> 222‰");
  // A step, in both languages.
  EXPECT_EQ(j["steps"][0]["text"], "alpha: score = Σ weight × credit‰ ÷ (Σ weight × 10)");
  EXPECT_EQ(zh(r.steps[0].text), "alpha：得分 = Σ 权重 × 得分率‰ ÷ (Σ 权重 × 10)");
  EXPECT_EQ(r.steps[0].value, "86.4");
  // The split, in both languages.
  const std::string split_en = render_en(r.split);
  EXPECT_EQ(j["split"]["text"], split_en);
  EXPECT_EQ(j["split"]["text_message"]["code"], "advisor.suppliers.split.shares");
  EXPECT_FALSE(j["split"].contains("en") || j["split"].contains("zh"));
  EXPECT_EQ(split_en,
            "Shares in proportion to each eligible supplier's score above 60.0, at most 600‰ each, in whole "
            "per-mille summing to 1000: beta 599‰, alpha 401‰.");
  EXPECT_EQ(zh(r.split),
            "按各合格供应商超出 60.0 分的部分成比例分配，每家不超过 600‰，以整数千分比合计 1000：beta 599‰, alpha "
            "401‰。");
}

// Floor 80: weights 6.4 and 19.4 -> beta's proportional 751.9‰ is over the 600‰ cap: beta 600, alpha 400.
// Floor 90: only beta qualifies; the cap cannot hold with one supplier, so it gets 1000‰ and a warning.
TEST(SupplierScore, CapAndTooFewSuppliers) {
  json body = four_suppliers();
  body["split"] = {{"floor", 80}, {"cap_pct", 60}};
  SupplierScoreResult r = score(body);
  EXPECT_EQ(by_name(r, "beta").share_permille, 600);
  EXPECT_EQ(by_name(r, "alpha").share_permille, 400);
  body["split"] = {{"floor", 90}};
  r = score(body);
  EXPECT_EQ(by_name(r, "beta").share_permille, 1000);
  EXPECT_EQ(by_name(r, "alpha").share_permille, 0);
  EXPECT_EQ(r.effective_cap_permille, 1000);
  EXPECT_NE(render_en(r.split).find("at most 1000‰ each, in whole per-mille summing to 1000: beta 1000‰. Only 1 "
                                    "supplier(s) qualify, so the 600‰ cap cannot hold"),
            std::string::npos)
      << render_en(r.split);
  EXPECT_NE(zh(r.split).find("beta 1000‰。仅 1 家供应商合格，无法满足每家不超过 600‰ 的上限"), std::string::npos)
      << zh(r.split);
  expect_catalogued(r.split);
  body["suppliers"].erase(1);  // without beta only alpha (86.4) is unblocked, and 86.4 is under 90
  r = score(body);
  for (const auto& s : r.suppliers) EXPECT_EQ(s.share_permille, 0);
  EXPECT_EQ(render_en(r.split),
            "No supplier qualifies (every one is blocked by a must-have item or scores at or below 90.0): no "
            "procurement split.");
  EXPECT_EQ(zh(r.split), "没有供应商达标（均因必备项被否决或得分不高于 90.0）：不做采购分配。");
  EXPECT_EQ(to_json(r)["split"]["text_message"]["code"], "advisor.suppliers.split.none");
}

// Operator items: a must-have yes/no item and an at_least figure, re-weighted defaults.
TEST(SupplierScore, OperatorItemsAndOverrides) {
  json body = four_suppliers();
  body["checklist"] = {{"overrides", {{"cuda_7d", {{"weight", 0}}}, {"iso27001_mlps3", {{"must_have", false}}}}},
                       {"items",
                        {{{"id", "onsite-engineers"}, {"name", "7×24 驻场工程师"}, {"weight", 10}, {"must_have", true}},
                         {{"id", "rack-kw"},  // the earlier form: en (the name) and zh (accepted, unused)
                          {"en", "Rack power"},
                          {"zh", "单机柜功率"},
                          {"weight", 8},
                          {"check", "at_least"},
                          {"threshold", 40},
                          {"unit", "kW"}}}}};
  body["suppliers"][0]["answers"] = {{"onsite-engineers", true}, {"rack-kw", 45}};
  body["suppliers"][1]["answers"] = {{"rack-kw", 30}};
  body["suppliers"][2]["answers"] = {{"onsite-engineers", true}};
  SupplierScoreResult r = score(body);
  const auto &a = by_name(r, "alpha"), &b = by_name(r, "beta"), &g = by_name(r, "gamma");
  EXPECT_EQ(item(a, "rack-kw").status, SupplierItemStatus::kPass);
  EXPECT_EQ(item(b, "rack-kw").status, SupplierItemStatus::kFail);
  EXPECT_EQ(render_en(item(b, "rack-kw").evidence), "answered 30 kW < 40");
  EXPECT_EQ(zh(item(b, "rack-kw").evidence), "回答 30 kW < 40");
  EXPECT_EQ(render_en(item(a, "rack-kw").evidence), "answered 45 kW ≥ 40");
  EXPECT_EQ(render_en(item(a, "onsite-engineers").evidence), "yes");
  EXPECT_EQ(zh(item(a, "onsite-engineers").evidence), "是");
  EXPECT_EQ(zh(item(b, "onsite-engineers").evidence), "未填写");
  // The operator's names are shown as written, in every language.
  EXPECT_EQ(item(a, "onsite-engineers").text, verbatim("7×24 驻场工程师"));
  EXPECT_EQ(render_en(item(a, "onsite-engineers").text), "7×24 驻场工程师");
  EXPECT_EQ(zh(item(a, "rack-kw").text), "Rack power");
  const json ja = to_json(r);
  for (const auto& s : ja["suppliers"])
    if (s["name"] == "beta")
      for (const auto& x : s["items"])
        if (x["id"] == "rack-kw") {
          EXPECT_EQ(x["text"], "Rack power");
          EXPECT_EQ(x["text_message"], message_to_json(verbatim("Rack power")));
          EXPECT_EQ(x["evidence"], "answered 30 kW < 40");
          EXPECT_EQ(x["evidence_message"]["code"], "advisor.suppliers.evidence.answered_unit");
        }
  EXPECT_TRUE(b.blocked);  // onsite-engineers unanswered
  EXPECT_EQ(b.hard_failures, std::vector<std::string>{"onsite-engineers"});
  EXPECT_FALSE(g.blocked);  // MLPS is no longer a must-have
  // alpha: checklist 60 − 8 (cuda weight 0) + 10 + 8 = 70 points at full credit, history 26,405 -> 96,405 ÷ 110 = 876.4
  // -> 87.6
  EXPECT_EQ(a.score_x10, 876);
  EXPECT_EQ(item(a, "cuda_7d").weight, 0);
}

// 250 nodes × 8 GPUs; offers promise 900 TFLOPS (and a second sheet 800) and 350 GB/s NCCL.
// Over one 730-hour window: two outages (95 and 25 minutes) on 8-GPU nodes -> 16 × 10,000 ÷ 2,000
// = 80 bp (0.8%); mean restore 60 min, longest 95; benchmarks 882.0 + 882.0 against 900 + 900 ->
// 980‰; NCCL 360 GB/s for 10 h and 315 for 20 h against 350 -> 9,900 ÷ 10,500 = 942.9 -> 943‰;
// the worst 315 GB/s gives an all-reduce of ceil(1750 ÷ 315) = 6 ms.
TEST(SupplierHistory, DerivedFromThePlatformRecords) {
  std::vector<SupplierNodeRecord> nodes;
  for (int i = 0; i < 250; ++i) {
    Node n;
    n.name = "n" + std::to_string(i);
    n.site = "s1";
    n.region = "cn-east";
    n.gpu_model = "sxm-test-80gb";
    for (int g = 0; g < 8; ++g) n.gpus.push_back({g, std::nullopt, std::nullopt, 0, 5});
    nodes.push_back({"nod_" + std::to_string(1000000000000000 + i), n});
  }
  Offer o;
  o.name = "pool";
  o.region = "cn-east";
  o.gpu_model = "sxm-test-80gb";
  o.contract_template.min_fp16_tflops_x10 = 9000;
  o.contract_template.min_nccl_busbw_gbps = 350;
  Offer weaker = o;
  weaker.name = "budget";
  weaker.contract_template.min_fp16_tflops_x10 = 8000;
  Offer elsewhere = o;  // another region: covers none of these nodes
  elsewhere.region = "us-west";
  elsewhere.contract_template.min_fp16_tflops_x10 = 9890;
  auto incident = [](std::string node, TimeMs from, TimeMs minutes) {
    Measurement m;
    m.kind = MeasurementKind::kIncident;
    m.node = std::move(node);
    m.from = from;
    m.to = from + minutes * 60'000;
    return m;
  };
  auto bench = [](std::string node, int64_t gpu, int64_t x10) {
    Measurement m;
    m.node = std::move(node);
    m.gpu = gpu;
    m.at = kT0 + 3 * kHour;
    m.tflops_x10 = x10;
    return m;
  };
  auto nccl = [](std::string node, TimeMs from, TimeMs to, int64_t bw) {
    Measurement m;
    m.kind = MeasurementKind::kNcclBusbw;
    m.node = std::move(node);
    m.from = from;
    m.to = to;
    m.busbw_gbps = bw;
    return m;
  };
  Measurement by_id = incident("whatever", kT0 + 2 * kHour, 25);
  by_id.node_id = nodes[7].id;
  std::vector<Measurement> ms = {incident("n3", kT0 + kHour, 95),
                                 by_id,
                                 incident("n4", kT0 - kHour, 30),  // before the window
                                 incident("zz", kT0 + kHour, 30),  // not this supplier's node
                                 bench("n0", 0, 8820),
                                 bench(nodes[0].id, 1, 8820),
                                 nccl("n1", kT0 - 5 * kHour, kT0 + 10 * kHour, 360),  // clipped to 10 h
                                 nccl("n2", kT0 + 10 * kHour, kT0 + 30 * kHour, 315)};
  auto backwards = derive_supplier_history(nodes, {o}, ms, kT0, kT0);
  ASSERT_FALSE(backwards.ok());
  EXPECT_EQ(backwards.error().message, "window: from must be before to");
  EXPECT_EQ(backwards.error().fields[0].coded.code, "advisor.suppliers.window_order");
  EXPECT_EQ(render(backwards.error().detail, "zh"), "window：from 必须早于 to");
  auto h = derive_supplier_history(nodes, {o, weaker, elsewhere}, ms, kT0, kT0 + 730 * kHour);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->fleet_gpus, 2000);
  EXPECT_EQ(h->incidents, 2);
  EXPECT_EQ(h->monthly_failure_rate_bp, 80);
  EXPECT_EQ(h->restore_minutes, 60);
  EXPECT_EQ(h->max_restore_minutes, 95);
  EXPECT_EQ(h->benchmarks, 2);
  EXPECT_EQ(h->fp16_attainment_permille, 980);
  EXPECT_EQ(h->nccl_runs, 2);
  EXPECT_EQ(h->nccl_attainment_permille, 943);
  EXPECT_EQ(h->worst_nccl_busbw_gbps, 315);
  EXPECT_FALSE(h->response_minutes.has_value());
  EXPECT_TRUE(h->entered.empty());
  // A two-month window halves the rate: 16 × 10,000 × 730 ÷ (2,000 × 1,460) = 40 bp.
  EXPECT_EQ(derive_supplier_history(nodes, {o}, ms, kT0, kT0 + 1460 * kHour)->monthly_failure_rate_bp, 40);
  EXPECT_FALSE(derive_supplier_history(nodes, {o}, ms, kT0, kT0).ok());

  // The server scores the supplier live: measured figures win over entered ones; entered fill gaps.
  SupplierCandidate known{parse_supplier(supplier_json("alpha", json::array({"iso27001", "mlps3"}))).value(), {}, *h};
  json body = {{"suppliers",
                {{{"supplier", "alpha"}, {"history", {{"monthly_failure_rate_bp", 5}, {"response_minutes", 10}}}}}}};
  auto in = parse_supplier_score_input(body, {known});
  ASSERT_TRUE(in.ok()) << in.error().message;
  const SupplierHistory& merged = in->suppliers[0].history;
  EXPECT_EQ(merged.monthly_failure_rate_bp, 80);
  EXPECT_EQ(merged.response_minutes, 10);
  EXPECT_EQ(merged.entered, std::vector<std::string>{"response_minutes"});
  auto r = compute_supplier_score(*in);
  ASSERT_TRUE(r.ok());
  const SupplierScore& s = r->suppliers[0];
  EXPECT_EQ(item(s, "allreduce_120ms").source, "measured");
  EXPECT_EQ(item(s, "allreduce_120ms").status, SupplierItemStatus::kPass);
  EXPECT_EQ(render_en(item(s, "allreduce_120ms").evidence),
            "measured: worst NCCL bus bandwidth 315 GB/s -> 1.75 GB ÷ 315 GB/s = 6 ms < 120");
  EXPECT_EQ(zh(item(s, "allreduce_120ms").evidence),
            "实测：最低 NCCL 总线带宽 315 GB/s -> 1.75 GB ÷ 315 GB/s = 6 毫秒 < 120");
  EXPECT_EQ(render_en(item(s, "fault_30m_restore_2h").evidence),
            "locate: declared 20 min ≤ 30; restore: measured 95 min (longest outage) ≤ 120");
  EXPECT_EQ(zh(item(s, "fault_30m_restore_2h").evidence),
            "定位：申报 20 分钟 ≤ 30；恢复：实测 95 分钟（最长故障） ≤ 120");
  EXPECT_EQ(item(s, "fault_30m_restore_2h").source, "declared+measured");
  EXPECT_EQ(item(s, "failure_rate").source, "measured");
  EXPECT_EQ(item(s, "response_time").source, "entered");
  EXPECT_EQ(s.score_x10, 864);  // the same figures as alpha above
  EXPECT_EQ(s.share_permille, 1000);
}

// Incidents that record when the supplier first responded give the mean response time: (12 + 5) ÷ 2
// = 8.5 -> 8 minutes (half to even); incidents without it, or outside the window, do not count.
TEST(SupplierHistory, ResponseTimeIsTheMeanOverIncidentsThatRecordIt) {
  Node n;
  n.name = "n0";
  n.region = "cn-east";
  n.gpu_model = "sxm-test-80gb";
  for (int g = 0; g < 8; ++g) n.gpus.push_back({g, std::nullopt, std::nullopt, 0, 5});
  const std::vector<SupplierNodeRecord> nodes = {{"nod_1000000000000000", n}};
  auto incident = [](TimeMs from, int64_t minutes, std::optional<int64_t> responded_after_min) {
    Measurement m;
    m.kind = MeasurementKind::kIncident;
    m.node = "n0";
    m.from = from;
    m.to = from + minutes * 60'000;
    if (responded_after_min) m.responded_at = from + *responded_after_min * 60'000;
    return m;
  };
  const std::vector<Measurement> ms = {incident(kT0 + kHour, 60, 12), incident(kT0 + 5 * kHour, 30, 5),
                                       incident(kT0 + 9 * kHour, 30, std::nullopt),
                                       incident(kT0 - 2 * kHour, 60, 50)};  // before the window
  auto h = derive_supplier_history(nodes, {}, ms, kT0, kT0 + 730 * kHour);
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(h->incidents, 3);
  EXPECT_EQ(h->response_minutes, 8);
  EXPECT_EQ(h->restore_minutes, 40);
  // No incident with a response: no figure, so an entered one fills the gap; a measured one wins.
  auto none = derive_supplier_history(nodes, {}, {incident(kT0 + kHour, 60, std::nullopt)}, kT0, kT0 + kHour * 730);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->response_minutes.has_value());
  SupplierHistory entered;
  entered.response_minutes = 30;
  EXPECT_EQ(merge_history(*none, entered).response_minutes, 30);
  EXPECT_EQ(merge_history(*h, entered).response_minutes, 8);
  EXPECT_TRUE(merge_history(*h, entered).entered.empty());
  // Scored live, the default rule (good 15, bad 120) gives 8 minutes full credit, from measurement.
  SupplierCandidate known{parse_supplier(supplier_json("alpha", json::array({"iso27001"}))).value(), {}, *h};
  auto in = parse_supplier_score_input({{"suppliers", {{{"supplier", "alpha"}}}}}, {known});
  ASSERT_TRUE(in.ok()) << in.error().message;
  auto r = compute_supplier_score(*in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(item(r->suppliers[0], "response_time").credit_permille, 1000);
  EXPECT_EQ(item(r->suppliers[0], "response_time").source, "measured");
  EXPECT_NE(render_en(item(r->suppliers[0], "response_time").evidence).find("8 min"), std::string::npos);
}

TEST(SupplierScore, AllReduceAndRestoreLimitsAreStrict) {
  json body = four_suppliers();
  body["suppliers"] = json::array({body["suppliers"][0]});
  body["suppliers"][0]["history"]["worst_nccl_busbw_gbps"] = 15;  // ceil(1750 ÷ 15) = 117 ms: passes
  body["suppliers"][0]["history"]["max_restore_minutes"] = 121;   // over 2 hours: fails
  SupplierScoreResult r = score(body);
  EXPECT_EQ(item(r.suppliers[0], "allreduce_120ms").status, SupplierItemStatus::kPass);
  EXPECT_EQ(item(r.suppliers[0], "allreduce_120ms").source, "entered");
  EXPECT_EQ(item(r.suppliers[0], "fault_30m_restore_2h").status, SupplierItemStatus::kFail);
  EXPECT_EQ(render_en(item(r.suppliers[0], "allreduce_120ms").evidence),
            "entered: worst NCCL bus bandwidth 15 GB/s -> 1.75 GB ÷ 15 GB/s = 117 ms < 120");
  EXPECT_EQ(zh(item(r.suppliers[0], "fault_30m_restore_2h").evidence),
            "定位：申报 20 分钟 ≤ 30；恢复：录入 121 分钟（最长故障） > 120");
  body["suppliers"][0]["history"]["worst_nccl_busbw_gbps"] = 14;  // ceil(1750 ÷ 14) = 125 ms: fails
  r = score(body);
  EXPECT_EQ(item(r.suppliers[0], "allreduce_120ms").status, SupplierItemStatus::kFail);
  EXPECT_EQ(zh(item(r.suppliers[0], "allreduce_120ms").evidence),
            "录入：最低 NCCL 总线带宽 14 GB/s -> 1.75 GB ÷ 14 GB/s = 125 毫秒 ≥ 120");
  body["suppliers"][0]["history"]["worst_nccl_busbw_gbps"] = 0;
  EXPECT_EQ(render_en(item(score(body).suppliers[0], "allreduce_120ms").evidence),
            "entered: NCCL bus bandwidth 0 GB/s");
  body["suppliers"][0]["history"].erase("worst_nccl_busbw_gbps");
  body["suppliers"][0]["history"]["allreduce_8gpu_1gb_ms"] = 130;
  r = score(body);
  EXPECT_EQ(render_en(item(r.suppliers[0], "allreduce_120ms").evidence), "entered 130 ms ≥ 120");
  EXPECT_EQ(zh(item(r.suppliers[0], "allreduce_120ms").evidence), "录入 130 毫秒 ≥ 120");
}

TEST(SupplierScoreInput, RejectsBadInputsNamingTheField) {
  const json valid = four_suppliers();
  ASSERT_TRUE(parse_supplier_score_input(valid).ok());
  testing_util::expect_each_case_fails(
      valid,
      {
          {"no suppliers", [](json& b) { b["suppliers"] = json::array(); }, "suppliers", "at least one"},
          {"bad supplier", [](json& b) { b["suppliers"][0]["supplier"]["country"] = "china"; },
           "suppliers[0].supplier.country", ""},
          {"duplicate", [](json& b) { b["suppliers"][1]["supplier"]["name"] = "alpha"; }, "suppliers[1].supplier",
           "twice"},
          {"unknown reference", [](json& b) { b["suppliers"][0]["supplier"] = "nobody"; }, "suppliers[0].supplier",
           "no known"},
          {"weight over 100",
           [](json& b) {
             b["checklist"] = {{"overrides", {{"cuda_7d", {{"weight", 101}}}}}};
           },
           "checklist.overrides.cuda_7d.weight", "at most 100"},
          {"unknown override",
           [](json& b) {
             b["checklist"] = {{"overrides", {{"cuda_8d", {{"weight", 1}}}}}};
           },
           "checklist.overrides.cuda_8d", "unknown field"},
          {"duplicate item id",
           [](json& b) {
             b["checklist"] = {{"items", {{{"id", "cuda_7d"}, {"name", "x"}, {"weight", 1}}}}};
           },
           "checklist.items[0].id", "already on the checklist"},
          {"threshold on yes/no",
           [](json& b) {
             b["checklist"] = {{"items", {{{"id", "x"}, {"name", "x"}, {"weight", 1}, {"threshold", 3}}}}};
           },
           "checklist.items[0].threshold", "only used by"},
          {"item without a name",
           [](json& b) {
             b["checklist"] = {{"items", {{{"id", "x"}, {"weight", 1}}}}};
           },
           "checklist.items[0].name", "required"},
          {"empty name",
           [](json& b) {
             b["checklist"] = {{"items", {{{"id", "x"}, {"name", ""}, {"weight", 1}}}}};
           },
           "checklist.items[0].name", ""},
          {"name over 200 characters",
           [](json& b) {
             std::string name;
             for (int i = 0; i < 201; ++i) name += "驻";
             b["checklist"] = {{"items", {{{"id", "x"}, {"name", name}, {"weight", 1}}}}};
           },
           "checklist.items[0].name", "200"},
          {"legacy en over 200 characters",
           [](json& b) {
             b["checklist"] = {{"items", {{{"id", "x"}, {"en", std::string(201, 'a')}, {"weight", 1}}}}};
           },
           "checklist.items[0].en", "200"},
          {"good equals bad",
           [](json& b) {
             b["history_rules"] = {{"failure_rate", {{"good", 50}, {"bad", 50}}}};
           },
           "history_rules.failure_rate.bad", "must differ"},
          {"attainment backwards",
           [](json& b) {
             b["history_rules"] = {{"fp16_attainment", {{"good", 800}, {"bad", 1000}}}};
           },
           "history_rules.fp16_attainment.good", "higher attainment"},
          {"negative history", [](json& b) { b["suppliers"][0]["history"]["response_minutes"] = -1; },
           "suppliers[0].history.response_minutes", "at least 0"},
          {"answer for a built-in item",
           [](json& b) {
             b["suppliers"][0]["answers"] = {{"cuda_7d", true}};
           },
           "suppliers[0].answers.cuda_7d", "built-in"},
          {"answer past int64 (it would wrap to a negative that passes at_most)",
           [](json& b) {
             b["checklist"] = {{"items",
                                {{{"id", "latency-ms"},
                                  {"name", "Latency"},
                                  {"weight", 5},
                                  {"check", "at_most"},
                                  {"threshold", 10}}}}};
             b["suppliers"][0]["answers"] = {{"latency-ms", json(uint64_t{18'446'744'073'709'551'615u})}};
           },
           "suppliers[0].answers.latency-ms", "at most 9223372036854775807"},
          {"answer for no item",
           [](json& b) {
             b["suppliers"][0]["answers"] = {{"nope", true}};
           },
           "suppliers[0].answers.nope", "unknown field"},
          {"cap out of range",
           [](json& b) {
             b["split"] = {{"cap_pct", 0}};
           },
           "split.cap_pct", "at least 1"},
          {"floor out of range",
           [](json& b) {
             b["split"] = {{"floor", 100}};
           },
           "split.floor", "at most 99"},
          {"all weights zero",
           [](json& b) {
             b["checklist"] = {{"use_defaults", false}};
             json zero = json::object();
             for (const char* id :
                  {"failure_rate", "restore_time", "response_time", "fp16_attainment", "nccl_attainment"})
               zero[id] = {{"weight", 0}};
             b["history_rules"] = zero;
           },
           "checklist", "every weight is zero"},
      },
      [](const json& b) { return parse_supplier_score_input(b); });
  json typed = valid;
  typed["checklist"] = {
      {"items", {{{"id", "kw"}, {"name", "x"}, {"weight", 1}, {"check", "at_most"}, {"threshold", 3}}}}};
  typed["suppliers"][0]["answers"] = {{"kw", "three"}};
  EXPECT_TRUE(fails_only_on(parse_supplier_score_input(typed), "suppliers[0].answers.kw", "must be an integer"));
  // The reasons are message codes, worded in the reader's language; the unit is the operator's text.
  typed["checklist"]["items"][0]["unit"] = "kW";
  auto with_unit = parse_supplier_score_input(typed);
  ASSERT_FALSE(with_unit.ok());
  ASSERT_EQ(with_unit.error().fields.size(), 1u);
  EXPECT_EQ(with_unit.error().fields[0].coded.code, "advisor.suppliers.answer_integer_unit");
  EXPECT_EQ(with_unit.error().fields[0].reason, "must be an integer (kW)");
  EXPECT_EQ(render(with_unit.error().fields[0].coded, "zh"), "必须是整数（kW）");
  json bad_id = valid;
  bad_id["checklist"] = {{"items", {{{"id", "Rack_"}, {"name", "x"}, {"weight", 1}}}}};
  auto id_err = parse_supplier_score_input(bad_id);
  ASSERT_FALSE(id_err.ok());
  ASSERT_EQ(id_err.error().fields.size(), 1u);
  EXPECT_EQ(id_err.error().fields[0].reason,
            "'Rack_' is not valid: lowercase letters, digits, '_' and '-', starting and ending alphanumeric");
  EXPECT_EQ(render(id_err.error().fields[0].coded, "zh"), "“Rack_”无效：小写字母、数字、“_”和“-”，首尾为字母或数字");
  // 200 characters is the most, counted as characters (600 bytes of Chinese).
  json long_name = valid;
  std::string name;
  for (int i = 0; i < 200; ++i) name += "驻";
  long_name["checklist"] = {{"items", {{{"id", "x"}, {"name", name}, {"weight", 1}}}}};
  auto parsed = parse_supplier_score_input(long_name);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->checklist.back().text, verbatim(name));
  // Only zh (neither name nor en): zh is the name.
  json only_zh = valid;
  only_zh["checklist"] = {{"items", {{{"id", "x"}, {"zh", "单机柜功率"}, {"weight", 1}}}}};
  parsed = parse_supplier_score_input(only_zh);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->checklist.back().text, verbatim("单机柜功率"));
  // name wins over en when both are given.
  json both_names = valid;
  both_names["checklist"] = {{"items", {{{"id", "x"}, {"name", "Rack power"}, {"en", "old"}, {"weight", 1}}}}};
  parsed = parse_supplier_score_input(both_names);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->checklist.back().text, verbatim("Rack power"));
}

// Over random histories: shares sum to exactly 1000 when anyone qualifies, none exceeds the
// effective cap, blocked or below-floor suppliers get nothing, and a higher score never gets less.
TEST(SupplierScore, SplitPropertiesOverRandomHistories) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 200; ++iter) {
    json sups = json::array();
    const int n = pick(1, 8);
    for (int i = 0; i < n; ++i)
      sups.push_back(
          {{"supplier", supplier_json("s" + std::to_string(i),
                                      pick(0, 4) ? json::array({"iso27001", "mlps3"}) : json::array({"soc2"}))},
           {"history", history(pick(0, 150), pick(0, 200), pick(0, 600), pick(700, 1100), pick(700, 1100))}});
    json body = {{"suppliers", sups}, {"split", {{"floor", pick(0, 95)}, {"cap_pct", pick(1, 100)}}}};
    SupplierScoreResult r = score(body);
    int64_t total = 0, eligible = 0;
    for (const auto& s : r.suppliers) {
      total += s.share_permille;
      eligible += s.eligible;
      EXPECT_LE(s.share_permille, r.effective_cap_permille);
      if (!s.eligible) {
        EXPECT_EQ(s.share_permille, 0);
      }
      EXPECT_EQ(s.blocked, !s.hard_failures.empty());
    }
    EXPECT_EQ(total, eligible > 0 ? 1000 : 0);
    for (size_t i = 1; i < r.suppliers.size(); ++i) {
      if (r.suppliers[i].eligible && r.suppliers[i - 1].eligible) {
        EXPECT_GE(r.suppliers[i - 1].share_permille, r.suppliers[i].share_permille);
      }
    }
  }
}

}  // namespace
}  // namespace gpurent
