#include "advisor/poc.h"

#include <gtest/gtest.h>

#include <set>

#include "core/message.h"
#include "model/model_test_util.h"

namespace gpurent {
namespace {

using testing_util::fails_only_on;

// Baseline 1000 tokens/s, 10% allowed: the pass mark is 900 tokens/s.
json plan_body() {
  return {{"start", "2026-12-01T09:00:00+08:00"},
          {"model",
           {{"name", "llama3-70b-sft"},
            {"metric", "tokens/s"},
            {"baseline_throughput", 1000},
            {"baseline", "8×A100 80GB in our data centre"}}},
          {"thresholds", {{"storage_gbps", "10"}}},
          {"suppliers",
           {{{"name", "huadong"},
             {"gpu_model", "h100-sxm5-80gb"},
             {"gpus", 8},
             {"driver", "550.54.15"},
             {"cuda", "12.4"},
             {"fp16_tflops", "900"},
             {"nccl_busbw_gbps", 350}}}}};
}

// Every must-pass item passing, with the model at `throughput`.
json all_pass(const std::string& throughput) {
  return {{"env_driver_cuda", {{"passed", true}}},
          {"env_rdma", {{"passed", true}}},
          {"bench_fp16_gemm", {{"value", "905.2"}, {"note", "lowest of 8 cards"}}},
          {"bench_nccl", {{"value", 350}}},
          {"bench_storage", {{"value", "12.5"}}},
          {"model_throughput", {{"value", throughput}}},
          {"fault_detect", {{"value", 30}}},
          {"fault_restore", {{"value", 95}}},
          {"ops_ticket_response", {{"value", 12}}},
          {"ops_monitoring", {{"passed", true}}},
          {"ops_export_exit", {{"passed", true}}}};
}

std::string zh(const Message& m) { return render(m, "zh"); }

// The code of a JSON `X_message` is in every catalogue, and `X` is its English text.
void expect_catalogued(const json& obj, const std::string& key) {
  ASSERT_TRUE(obj.contains(key + "_message")) << key << " in " << obj.dump();
  const auto m = message_from_json(obj[key + "_message"]);
  ASSERT_TRUE(m.ok()) << obj.dump();
  for (const auto& lang : message_languages()) EXPECT_TRUE(has_message(lang, m->code)) << lang << " " << m->code;
  EXPECT_EQ(obj[key], render_en(*m)) << key;
  EXPECT_FALSE(obj[key].get<std::string>().empty()) << key;
}

PocSupplierPlan judge(json body) {
  auto in = parse_poc_input(body);
  EXPECT_TRUE(in.ok()) << (in.ok() ? "" : in.error().message);
  if (!in.ok()) return {};
  auto r = compute_poc(*in);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r->suppliers.at(0) : PocSupplierPlan{};
}

PocSupplierPlan judge_with(const json& results) {
  json b = plan_body();
  b["suppliers"][0]["results"] = results;
  return judge(b);
}

const PocOutcome& outcome(const PocSupplierPlan& p, const std::string& id) {
  for (const auto& o : p.items)
    if (o.item.id == id) return o;
  ADD_FAILURE() << "no item " << id;
  return p.items.front();
}

TEST(PocPlan, FortyEightHourChecklistFromTheInput) {
  auto in = parse_poc_input(plan_body());
  ASSERT_TRUE(in.ok()) << in.error().message;
  const auto items = poc_plan_items(*in, in->suppliers[0]);
  ASSERT_EQ(items.size(), 11u);
  EXPECT_EQ(items.front().id, "env_driver_cuda");
  EXPECT_EQ(items.back().id, "ops_export_exit");
  EXPECT_EQ(items.back().hour_to, 48);
  for (size_t i = 1; i < items.size(); ++i) EXPECT_LE(items[i - 1].hour_from, items[i].hour_from);
  const std::set<std::string> categories = {"environment", "benchmarks", "model", "fault_injection", "operations"};
  for (const auto& it : items) EXPECT_TRUE(categories.count(it.category)) << it.category;
  EXPECT_EQ(render_en(items[0].criterion), "driver 550.54.15, CUDA 12.4 as promised; every GPU visible");
  EXPECT_EQ(zh(items[0].criterion), "符合承诺：driver 550.54.15, CUDA 12.4；所有 GPU 可见");
  EXPECT_EQ(items[2].threshold_micro, 900'000'000);  // FP16 from the supplier's promise
  EXPECT_EQ(items[4].threshold_micro, 10'000'000);   // storage from the plan-wide threshold
  EXPECT_EQ(items[5].threshold_micro, 900'000'000);  // 1000 × 90%
  EXPECT_EQ(render_en(items[5].criterion),
            "at least 900 tokens/s (baseline 1000 less 10%); more than 10% slower rejects the supplier whatever the "
            "price");
  EXPECT_EQ(zh(items[5].criterion), "不低于 900 tokens/s（基线 1000 减 10%）；慢 10% 以上则无论价格一律否决");
  EXPECT_EQ(render_en(items[5].text),
            "Run llama3-70b-sft on 8 GPUs with the baseline's configuration; record the steady-state tokens/s");
  EXPECT_EQ(zh(items[5].text), "以基线相同配置在 8 张 GPU 上运行 llama3-70b-sft；记录稳定状态的 tokens/s");
  EXPECT_EQ(zh(items[2].criterion), "最低一张卡不低于 900 TFLOPS");
  EXPECT_EQ(render_en(items[6].criterion), "detected and located within 30 min");
  EXPECT_FALSE(items[8].must_pass);  // ticket response is followed up, not blocking, by default

  auto r = compute_poc(*in);
  ASSERT_TRUE(r.ok());
  json j = to_json(*r);
  const json& s = j["suppliers"][0];
  EXPECT_EQ(s["verdict"], "pending");  // nothing recorded yet
  EXPECT_EQ(s["items"][0]["at"]["from"], "2026-12-01T01:00:00.000Z");
  EXPECT_EQ(s["items"][10]["at"]["to"], "2026-12-03T01:00:00.000Z");
  EXPECT_EQ(s["items"][5]["threshold"], "900");
  EXPECT_EQ(j["summary"]["pending"][0], "huadong");
  EXPECT_EQ(s["reason"],
            "Waiting for results of must-pass items: env_driver_cuda, env_rdma, bench_fp16_gemm, "
            "bench_nccl, bench_storage, model_throughput, fault_detect, fault_restore, ops_export_exit.");
  EXPECT_EQ(s["reason_message"]["code"], "advisor.poc.reason.pending");
  expect_catalogued(s, "reason");
  for (const auto& item : s["items"]) {
    EXPECT_FALSE(item.contains("en") || item.contains("zh")) << item.dump();
    expect_catalogued(item, "text");
    expect_catalogued(item, "criterion");
  }
  EXPECT_EQ(s["items"][3]["criterion"], "at least 350 GB/s bus bandwidth");
  // Every step is a catalogued code with its formula and value.
  ASSERT_EQ(j["steps"].size(), 2u);  // the pass mark, the verdict (no model result: no slowdown step)
  for (const auto& st : j["steps"]) {
    EXPECT_TRUE(st.contains("formula") && st.contains("value")) << st.dump();
    expect_catalogued(st, "text");
  }
  const Message pass_mark = *message_from_json(j["steps"][0]["text_message"]);
  EXPECT_EQ(render_en(pass_mark),
            "Throughput pass mark = baseline × (100 − max slowdown) ÷ 100; exactly at the mark passes");
  EXPECT_EQ(zh(pass_mark), "吞吐及格线 = 基线 × (100 − 最大降速) ÷ 100；恰好等于及格线视为通过");
  EXPECT_EQ(j["steps"][0]["formula"], "1000 × 90 ÷ 100");
  EXPECT_EQ(j["steps"][0]["value"], "900");
  const Message verdict = *message_from_json(j["steps"][1]["text_message"]);
  EXPECT_EQ(render_en(verdict),
            "huadong: verdict — reject if the model is more than 10% slower or a must-pass item failed; pending while "
            "a must-pass item has no result; else accept");
  EXPECT_EQ(zh(verdict), "huadong：结论——模型慢 10% 以上或必过项失败则否决；必过项缺结果则待定；否则接受");
}

// Without promised versions the criterion names what the tenant requires, in the reader's language.
TEST(PocPlan, UnpromisedVersionsAreWordedPerLanguage) {
  json body = plan_body();
  for (const char* k : {"driver", "cuda", "image"}) body["suppliers"][0].erase(k);
  auto in = parse_poc_input(body);
  ASSERT_TRUE(in.ok()) << in.error().message;
  const auto items = poc_plan_items(*in, in->suppliers[0]);
  EXPECT_EQ(render_en(items[0].criterion),
            "the driver, CUDA and image the tenant requires as promised; every GPU visible");
  EXPECT_EQ(zh(items[0].criterion), "符合承诺：租户要求的驱动、CUDA 和镜像；所有 GPU 可见");
}

// Exactly 10% slower (900 of 1000) is not "more than 10% slower": accepted.
TEST(PocVerdict, ExactlyTenPercentSlowerIsAccepted) {
  PocSupplierPlan p = judge_with(all_pass("900"));
  EXPECT_EQ(p.verdict, PocVerdict::kAccept);
  EXPECT_EQ(p.slowdown_bp, 1000);
  EXPECT_EQ(outcome(p, "model_throughput").status, PocStatus::kPass);
  EXPECT_TRUE(p.caveats.empty());
  EXPECT_EQ(render_en(p.reason), "Every must-pass item passed (throughput 10.00% below the baseline).");
  EXPECT_EQ(zh(p.reason), "所有必过项均通过（吞吐低于基线 10.00%）。");
}

// 899 of 1000 is 10.1% slower: rejected, even with every other result still missing.
TEST(PocVerdict, TenPointOnePercentSlowerIsRejectedWhateverElse) {
  PocSupplierPlan p = judge_with(all_pass("899"));
  EXPECT_EQ(p.verdict, PocVerdict::kReject);
  EXPECT_EQ(p.slowdown_bp, 1010);
  EXPECT_EQ(render_en(p.reason),
            "huadong runs llama3-70b-sft 10.10% slower than the baseline, more than 10%: rejected whatever the price.");
  EXPECT_EQ(zh(p.reason), "huadong 运行 llama3-70b-sft 比基线慢 10.10%，超过 10%：无论价格一律否决。");

  PocSupplierPlan only_model = judge_with({{"model_throughput", {{"value", "899"}}}});
  EXPECT_EQ(only_model.verdict, PocVerdict::kReject);
  EXPECT_FALSE(only_model.pending.empty());

  // 899.999 is 10.0001% slower: rejected, and the slowdown is shown rounded up (10.01%), never as 10.00%.
  PocSupplierPlan hair = judge_with(all_pass("899.999"));
  EXPECT_EQ(hair.verdict, PocVerdict::kReject);
  EXPECT_EQ(hair.slowdown_bp, 1001);
}

TEST(PocVerdict, MissingResultsArePendingAndFailuresReject) {
  json results = all_pass("1100");
  results.erase("fault_restore");
  PocSupplierPlan p = judge_with(results);
  EXPECT_EQ(p.verdict, PocVerdict::kPending);
  EXPECT_EQ(p.pending, std::vector<std::string>{"fault_restore"});
  EXPECT_EQ(p.slowdown_bp, -1000);  // 10% faster
  EXPECT_EQ(render_en(p.reason), "Waiting for results of must-pass items: fault_restore.");
  EXPECT_EQ(zh(p.reason), "等待必过项结果：fault_restore。");

  results = all_pass("1000");
  results["bench_nccl"]["value"] = "349.999";  // below the 350 GB/s promise
  results.erase("fault_restore");              // a failure rejects even with results missing
  p = judge_with(results);
  EXPECT_EQ(p.verdict, PocVerdict::kReject);
  EXPECT_EQ(p.failed, std::vector<std::string>{"bench_nccl"});
  EXPECT_EQ(render_en(p.reason), "Must-pass items failed: bench_nccl.");
  EXPECT_EQ(zh(p.reason), "必过项未通过：bench_nccl。");

  results = all_pass("1000");
  results["fault_detect"]["value"] = 31;  // the limit is 30 minutes, inclusive
  EXPECT_EQ(judge_with(results).verdict, PocVerdict::kReject);

  // Optional items (ticket response, monitoring) do not block: accept with caveats.
  results = all_pass("1000");
  results["ops_ticket_response"]["value"] = 45;
  results.erase("ops_monitoring");
  p = judge_with(results);
  EXPECT_EQ(p.verdict, PocVerdict::kAccept);
  EXPECT_EQ(p.caveats, (std::vector<std::string>{"ops_ticket_response", "ops_monitoring"}));
  EXPECT_EQ(render_en(p.reason),
            "Every must-pass item passed (throughput equal to the baseline); to follow up: ops_ticket_response, "
            "ops_monitoring.");
  EXPECT_EQ(zh(p.reason), "所有必过项均通过（吞吐与基线持平）；待跟进：ops_ticket_response, ops_monitoring。");

  // ...unless the plan makes them must-pass.
  json body = plan_body();
  body["must_pass"] = {{"ops_monitoring", true}};
  body["suppliers"][0]["results"] = results;
  p = judge(body);
  EXPECT_EQ(p.verdict, PocVerdict::kPending);
  EXPECT_EQ(p.pending, std::vector<std::string>{"ops_monitoring"});
}

TEST(PocVerdict, SeveralSuppliersJudgedIndependently) {
  json body = plan_body();
  json second = body["suppliers"][0];
  second["name"] = "xibei";
  second["results"] = all_pass("950.5");
  body["suppliers"][0]["results"] = all_pass("850");
  body["suppliers"].push_back(second);
  auto in = parse_poc_input(body);
  ASSERT_TRUE(in.ok()) << in.error().message;
  auto r = compute_poc(*in);
  ASSERT_TRUE(r.ok());
  json j = to_json(*r);
  EXPECT_EQ(j["summary"]["reject"], json::array({"huadong"}));
  EXPECT_EQ(j["summary"]["accept"], json::array({"xibei"}));
  EXPECT_EQ(j["suppliers"][1]["slowdown_pct"], "4.95");
  EXPECT_EQ(j["suppliers"][1]["items"][5]["result"]["value"], "950.5");
  // One slowdown step per supplier with a model result, one verdict step per supplier.
  ASSERT_EQ(j["steps"].size(), 5u);
  for (const auto& st : j["steps"]) expect_catalogued(st, "text");
  const json& slow = j["steps"][3];
  EXPECT_EQ(slow["text"], "xibei: slowdown = (baseline − measured) ÷ baseline");
  EXPECT_EQ(zh(*message_from_json(slow["text_message"])), "xibei：降速 = (基线 − 实测) ÷ 基线");
  EXPECT_EQ(slow["formula"], "(1000 − 950.5) ÷ 1000");
  EXPECT_EQ(slow["value"], "4.95%");
  EXPECT_EQ(j["suppliers"][0]["reason"],
            "huadong runs llama3-70b-sft 15.00% slower than the baseline, more than 10%: rejected whatever the price.");
  EXPECT_EQ(zh(*message_from_json(j["suppliers"][1]["reason_message"])), "所有必过项均通过（吞吐低于基线 4.95%）。");
}

TEST(PocInput, RejectsBadInputsNamingTheField) {
  const json valid = plan_body();
  ASSERT_TRUE(parse_poc_input(valid).ok());
  testing_util::expect_each_case_fails(
      valid,
      {
          {"no model", [](json& b) { b.erase("model"); }, "model", "is required"},
          {"no baseline", [](json& b) { b["model"].erase("baseline_throughput"); }, "model.baseline_throughput",
           "is required"},
          {"zero baseline", [](json& b) { b["model"]["baseline_throughput"] = 0; }, "model.baseline_throughput",
           "greater than 0"},
          {"float baseline", [](json& b) { b["model"]["baseline_throughput"] = 1000.5; }, "model.baseline_throughput",
           "floating-point"},
          {"four decimals", [](json& b) { b["model"]["baseline_throughput"] = "1000.1234"; },
           "model.baseline_throughput", "at most 3 decimals"},
          {"negative", [](json& b) { b["model"]["baseline_throughput"] = -5; }, "model.baseline_throughput",
           "non-negative"},
          {"slowdown 100", [](json& b) { b["max_slowdown_pct"] = 100; }, "max_slowdown_pct", "at most 99"},
          {"no fp16 mark", [](json& b) { b["suppliers"][0].erase("fp16_tflops"); }, "suppliers[0].fp16_tflops",
           "thresholds.fp16_tflops"},
          {"no gpus", [](json& b) { b["suppliers"][0].erase("gpus"); }, "suppliers[0].gpus", "is required"},
          {"zero plan-wide mark", [](json& b) { b["thresholds"]["nccl_busbw_gbps"] = 0; },
           "thresholds.nccl_busbw_gbps", "greater than 0"},
          {"duplicate supplier", [](json& b) { b["suppliers"].push_back(b["suppliers"][0]); }, "suppliers[1].name",
           "twice"},
          {"no suppliers", [](json& b) { b["suppliers"] = json::array(); }, "suppliers", "at least one"},
          {"unknown result",
           [](json& b) {
             b["suppliers"][0]["results"] = {{"bench_fp32", {{"value", 1}}}};
           },
           "suppliers[0].results.bench_fp32", "unknown field"},
          {"value on a pass/fail item",
           [](json& b) {
             b["suppliers"][0]["results"] = {{"env_rdma", {{"passed", true}, {"value", 1}}}};
           },
           "suppliers[0].results.env_rdma.value", "not used"},
          {"passed on a figure",
           [](json& b) {
             b["suppliers"][0]["results"] = {{"bench_nccl", {{"value", 1}, {"passed", true}}}};
           },
           "suppliers[0].results.bench_nccl.passed", "computed"},
          {"figure without value",
           [](json& b) {
             b["suppliers"][0]["results"] = {{"bench_nccl", {{"note", "x"}}}};
           },
           "suppliers[0].results.bench_nccl.value", "is required"},
          {"model rule is fixed",
           [](json& b) {
             b["must_pass"] = {{"model_throughput", false}};
           },
           "must_pass.model_throughput", "cannot be changed"},
          {"unknown must_pass",
           [](json& b) {
             b["must_pass"] = {{"bench_fp32", false}};
           },
           "must_pass.bench_fp32", "unknown field"},
          {"bad start", [](json& b) { b["start"] = "tomorrow"; }, "start", ""},
      },
      [](const json& b) { return parse_poc_input(b); });

  // The reasons are message codes, worded in the reader's language.
  json decimals = valid;
  decimals["model"]["baseline_throughput"] = "12.3456";
  auto bad = parse_poc_input(decimals);
  ASSERT_FALSE(bad.ok());
  ASSERT_EQ(bad.error().fields.size(), 1u);
  EXPECT_EQ(bad.error().fields[0].coded.code, "advisor.poc.figure_got");
  EXPECT_EQ(bad.error().fields[0].reason,
            "must be a non-negative integer or decimal string with at most 3 decimals, such as \"905.2\" (got "
            "'12.3456')");
  EXPECT_EQ(render(bad.error().fields[0].coded, "zh"),
            "必须是非负整数或最多 3 位小数的十进制字符串，例如 \"905.2\"（实际为“12.3456”）");
  // A string reads as the same integer would: leading zeros allowed, at most 1,000,000,000.
  for (const json& ok : {json("1000000000"), json("0000000012"), json("999999999.999"), json(1000000000)}) {
    json b = valid;
    b["model"]["baseline_throughput"] = ok;
    EXPECT_TRUE(parse_poc_input(b).ok()) << ok.dump();
  }
  for (const json& big :
       {json("1000000000.001"), json("1000000001"), json("123456789012345678901234"), json(1000000001)}) {
    json b = valid;
    b["model"]["baseline_throughput"] = big;
    auto r = parse_poc_input(b);
    ASSERT_FALSE(r.ok()) << big.dump();
    EXPECT_EQ(r.error().fields.at(0).reason, "must be at most 1000000000") << big.dump();
  }
  auto in = parse_poc_input(valid);
  ASSERT_TRUE(in.ok());
  PocInput slow = *in;
  slow.max_slowdown_pct = 100;
  auto r = compute_poc(slow);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields[0].coded.code, "advisor.poc.range");
  EXPECT_EQ(r.error().message, "max_slowdown_pct: must be 0..99");
  EXPECT_EQ(render(r.error().detail, "zh"), "max_slowdown_pct：必须在 0 到 99 之间");
}

}  // namespace
}  // namespace gpurent
