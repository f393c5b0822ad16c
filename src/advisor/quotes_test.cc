#include "advisor/quotes.h"

#include <gtest/gtest.h>

#include <random>

#include "core/message.h"
#include "model/model_test_util.h"

namespace gpurent {
namespace {

using testing_util::fails_only_on;
using testing_util::test_catalog;

json offer_json(const std::string& supplier, const std::string& name, const std::string& price,
                const std::string& starts, int64_t min_inc) {
  return {{"name", name},
          {"supplier", supplier},
          {"region", "cn-east"},
          {"gpu_model", "sxm-test-80gb"},
          {"currency", "USD"},
          {"prices", {{"on_demand", price}}},
          {"min_increment_seconds", min_inc},
          {"fees", {{"billing_starts", starts}}}};
}

QuotesResult run(const json& body) {
  auto in = parse_quotes_input(body, test_catalog());
  EXPECT_TRUE(in.ok()) << (in.ok() ? "" : in.error().message);
  if (!in.ok()) return {};
  auto r = compute_quotes(*in);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : QuotesResult{};
}

const QuoteComponent& comp(const QuotePlan& p, const std::string& key) {
  for (const auto& c : p.components)
    if (c.key == key) return c;
  ADD_FAILURE() << "no component " << key;
  return p.components.front();
}

std::string zh(const Message& m) { return render(m, "zh"); }

// Every message in the JSON (an "X_message" beside "X", and the messages nested in its
// arguments) is a code every catalogue words; "X" is its English text.
void expect_catalogued(const json& m) {
  ASSERT_TRUE(m.is_object() && m.contains("code")) << m.dump();
  const std::string code = m["code"];
  for (const auto& lang : message_languages()) EXPECT_TRUE(has_message(lang, code)) << lang << " " << code;
  if (m.contains("args"))
    for (const auto& [name, a] : m["args"].items())
      if (a.is_object()) expect_catalogued(a);
}
size_t expect_messages_catalogued(const json& j) {
  size_t n = 0;
  if (j.is_array())
    for (const auto& x : j) n += expect_messages_catalogued(x);
  if (!j.is_object()) return n;
  for (const auto& [key, v] : j.items()) {
    if (key.size() > 8 && key.ends_with("_message")) {
      expect_catalogued(v);
      const std::string base = key.substr(0, key.size() - 8);
      EXPECT_TRUE(j.contains(base)) << key;
      auto m = message_from_json(v);
      EXPECT_TRUE(m.ok()) << v.dump();
      if (m.ok() && j.contains(base)) {
        EXPECT_EQ(j[base], render_en(*m)) << key;
      }
      ++n;
    } else {
      n += expect_messages_catalogued(v);
    }
  }
  return n;
}

const OfferQuote& offer(const QuotesResult& r, const std::string& label) {
  for (const auto& q : r.offers)
    if (q.label == label) return q;
  ADD_FAILURE() << "no offer " << label;
  return r.offers.front();
}

// Short jobs: 100 launches a month of 1 GPU for 20 minutes, each with a 10-minute cold start
// (5 min to running + 5 min to ready).
//   A (2.00/h, billing from api_call, 1-hour increment): a launch bills 10 + 20 = 30 min, rounded
//     up to 60 min -> 1 GPU-hour × 2.00 = 2.00; lines: on_demand 20 min = 0.666667 -> 0.67,
//     cold_start 10 min = 0.333333 -> 0.33, min_increment 30 min = 1.00. Month: 100 × 2.00 = 200.00.
//   B (3.00/h, billing from ready, 60 s increment): 20 min × 3.00 = 1.00 a launch -> 100.00.
// Useful GPU-hours: 100 × 1 × 20/60 = 33.333; per useful GPU-hour: A 200 / 33.333 = 6.00, B 3.00.
TEST(QuoteCompare, ColdStartAndHourIncrementMakeTheCheaperStickerLose) {
  json body = {
      {"workload",
       {{"launches_per_month", 100},
        {"gpus", 1},
        {"run_minutes", 20},
        {"cold_start", {{"to_running_seconds", 300}, {"to_ready_seconds", 300}}}}},
      {"offers", {offer_json("alpha", "a", "2.00", "api_call", 3600), offer_json("beta", "b", "3.00", "ready", 60)}}};
  QuotesResult r = run(body);
  ASSERT_EQ(r.offers.size(), 2u);
  EXPECT_EQ(r.useful_milli_gpu_ms, 100LL * 1000 * 20 * 60'000);
  EXPECT_EQ(r.offers[0].label, "beta/b");
  EXPECT_EQ(r.offers[1].label, "alpha/a");
  const OfferQuote &a = offer(r, "alpha/a"), &b = offer(r, "beta/b");
  EXPECT_EQ(a.list_rank, 1);
  EXPECT_EQ(a.rank, 2);
  EXPECT_TRUE(r.sticker_misleads);
  const QuotePlan &pa = a.plans[a.best], &pb = b.plans[b.best];
  EXPECT_EQ(pa.total.amount_string(), "200.00");
  EXPECT_EQ(pb.total.amount_string(), "100.00");
  EXPECT_EQ(pa.per_useful_gpu_hour.amount_string(), "6.00");
  EXPECT_EQ(pb.per_useful_gpu_hour.amount_string(), "3.00");
  EXPECT_EQ(comp(pa, "list_price").amount.amount_string(), "66.6667");  // 100 × 0.666667
  EXPECT_EQ(comp(pa, "cold_start").amount.amount_string(), "33.3333");  // 100 × 0.333333
  EXPECT_EQ(comp(pa, "cold_start").quantity, "16.667");                 // 100 × 10 min
  EXPECT_EQ(comp(pa, "min_increment").amount.amount_string(), "100.00");
  EXPECT_EQ(comp(pa, "min_increment").quantity, "50");  // 100 × 30 min
  EXPECT_EQ(comp(pa, "idle").amount.micros(), 0);
  EXPECT_EQ(comp(pa, "rounding").amount.micros(), 0);
  EXPECT_EQ(a.sticker.amount_string(), "66.6667");
  EXPECT_EQ(a.billed_cold_seconds, 600);
  EXPECT_EQ(b.billed_cold_seconds, 0);
  EXPECT_EQ(comp(pb, "list_price").amount.amount_string(), "100.00");
  EXPECT_EQ(comp(pb, "cold_start").amount.micros(), 0);
  // Differences against B, largest first: min increment +100.00, list price -33.33, cold start +33.33.
  ASSERT_EQ(a.vs_cheapest.size(), 3u);
  EXPECT_EQ(a.vs_cheapest[0].component, "min_increment");
  EXPECT_EQ(a.vs_cheapest[0].diff.amount_string(), "100.00");
  EXPECT_EQ(a.vs_cheapest[1].component, "list_price");
  EXPECT_EQ(a.vs_cheapest[1].diff.amount_string(), "-33.3333");
  EXPECT_EQ(a.vs_cheapest[2].component, "cold_start");
  EXPECT_EQ(render_en(a.vs_cheapest[2].text),
            "Cold start billed: +33.33 USD (billing from api_call bills 600 s of each launch's start-up (16.667 "
            "GPU-hours) vs 0 s from ready (0))");
  EXPECT_EQ(zh(a.vs_cheapest[2].text),
            "冷启动计费：+33.33 USD（自API 调用起计费，每次启动计 600 秒（16.667 GPU 小时），对比自就绪起计 0 秒（0））");
  EXPECT_EQ(render_en(r.misleads),
            "By list price alpha/a looks cheapest (2.00 USD/GPU-hour), but for this workload beta/b is cheapest at "
            "3.00 USD per useful GPU-hour; alpha/a comes to 6.00 (rank 2).");
  EXPECT_EQ(zh(r.misleads),
            "按标价 alpha/a 看起来最便宜（每 GPU 小时 2.00 USD），但对这一负载 beta/b 才最便宜，每有效 GPU 小时 3.00 "
            "USD；alpha/a 实为 6.00（第 2 名）。");
  EXPECT_EQ(render_en(b.summary),
            "Cheapest per useful GPU-hour: 3.00 USD (on-demand at 3.00 USD/GPU-hour); the month costs 100.00 USD "
            "against a sticker of 100.00.");
  EXPECT_EQ(zh(b.summary),
            "每有效 GPU 小时最便宜：3.00 USD（按需，每 GPU 小时 3.00 USD）；当月费用 100.00 USD，按标价估算为 100.00。");
  EXPECT_EQ(render_en(a.summary),
            "alpha/a costs 100.00 USD more a month than beta/b: 6.00 vs 3.00 USD per useful GPU-hour (+100.0%).");
  EXPECT_EQ(zh(a.summary), "alpha/a 每月比 beta/b 多 100.00 USD：每有效 GPU 小时 6.00 对 3.00 USD（高 100.0%）。");
  EXPECT_TRUE(b.vs_cheapest.empty());

  json j = to_json(r);
  EXPECT_EQ(j["ranking"][0]["offer"], "beta/b");
  EXPECT_EQ(j["ranking"][1]["overhead"], "133.3333");   // 200.00 - 66.6667
  EXPECT_EQ(j["ranking"][1]["overhead_pct"], "200.0");  // 133.3333 / 66.6667
  EXPECT_EQ(j["list_price_ranking"][0]["offer"], "alpha/a");
  EXPECT_EQ(j["list_price_ranking"][0]["rank"], 2);
  EXPECT_EQ(j["workload"]["useful_gpu_hours"], "33.333");
  EXPECT_GE(j["steps"].size(), 5u);
  for (const auto& s : j["steps"]) {
    EXPECT_TRUE(s.contains("text") && s.contains("text_message") && s.contains("formula") && s.contains("value"))
        << s.dump();
    EXPECT_FALSE(s.contains("en") || s.contains("zh")) << s.dump();
  }
  // Every text of the answer (steps, summaries, differences, components, plans, idle rules,
  // misleads) is English beside a code every catalogue words.
  EXPECT_GE(expect_messages_catalogued(j), 30u);
  EXPECT_EQ(j["steps"][0]["text"], "Useful GPU-hours a month = launches × GPUs × computing minutes per launch ÷ 60");
  EXPECT_EQ(j["steps"][0]["formula"], "100 × 1 × 1200 s ÷ 3600");
  const Message charges = *message_from_json(j["steps"][2]["text_message"]);
  EXPECT_EQ(charges.code, "advisor.quotes.step.charges");
  EXPECT_EQ(render_en(charges),
            "beta/b: the month's charges from the billing engine (on-demand at 3.00 USD/GPU-hour) = list price + cold "
            "start + idle + min increment + commitment + storage I/O + egress + rounding");
  EXPECT_EQ(zh(charges),
            "beta/b：计费引擎算出的当月费用（按需，每 GPU 小时 3.00 USD）= 标价部分 + 冷启动 + 闲置 + 最小计费单位取整 + "
            "预留承诺 + 存储 I/O + 出网 + 舍入");
  EXPECT_EQ(j["steps"][2]["value"], "100.00");
  EXPECT_EQ(j["misleads"], render_en(r.misleads));
  EXPECT_EQ(j["misleads_message"]["code"], "advisor.quotes.misleads.list_cheapest");
  EXPECT_EQ(j["ranking"][1]["summary"], render_en(a.summary));
  EXPECT_EQ(j["ranking"][0]["idle_rule"], "no idle rule (idle GPUs are billed as busy)");
  EXPECT_EQ(zh(*message_from_json(j["ranking"][0]["idle_rule_message"])), "无闲置规则（闲置 GPU 照常计费）");
  EXPECT_EQ(j["ranking"][1]["vs_cheapest"]["differences"][2]["text"], render_en(a.vs_cheapest[2].text));
  EXPECT_EQ(j["ranking"][1]["components"][0]["text"], "Useful GPU time at the list price");
  EXPECT_EQ(zh(*message_from_json(j["ranking"][1]["components"][0]["text_message"])), "有效 GPU 时间（按标价）");
  EXPECT_EQ(j["ranking"][1]["plans"][0]["text"], "on-demand at 2.00 USD/GPU-hour");
}

// Long steady runs: 30 launches of 8 GPUs × 10 h = 2400 useful GPU-hours.
//   C: 2.00/h, egress 0.09/GB beyond 100 GB free; D: 2.20/h, egress not charged.
//   No egress: C 4800.00 < D 5280.00. 10,000 GB egress: C adds (10,000 - 100) × 0.09 = 891.00 ->
//   5691.00 > 5280.00, D wins.
TEST(QuoteCompare, EgressHeavyWorkloadFlipsTheRanking) {
  json c = offer_json("gamma", "c", "2.00", "ready", 1);
  c["fees"]["egress"] = {{"per_gb", "0.09"}, {"free_gb", 100}};
  json d = offer_json("delta", "d", "2.20", "ready", 1);
  json body = {{"workload", {{"launches_per_month", 30}, {"gpus", 8}, {"run_minutes", 600}}}, {"offers", {c, d}}};
  QuotesResult quiet = run(body);
  ASSERT_EQ(quiet.offers.size(), 2u);
  EXPECT_EQ(quiet.offers[0].label, "gamma/c");
  EXPECT_EQ(quiet.offers[0].plans[0].total.amount_string(), "4800.00");
  EXPECT_EQ(quiet.offers[1].plans[0].total.amount_string(), "5280.00");
  EXPECT_FALSE(quiet.sticker_misleads);
  EXPECT_EQ(render_en(quiet.misleads), "The list-price order holds for this workload.");
  EXPECT_EQ(zh(quiet.misleads), "对这一负载，标价排序与真实成本排序一致。");

  body["workload"]["egress_gb"] = 10000;
  QuotesResult heavy = run(body);
  ASSERT_EQ(heavy.offers.size(), 2u);
  EXPECT_EQ(heavy.offers[0].label, "delta/d");
  const OfferQuote& qc = offer(heavy, "gamma/c");
  EXPECT_EQ(qc.plans[0].total.amount_string(), "5691.00");
  EXPECT_EQ(comp(qc.plans[0], "egress").amount.amount_string(), "891.00");
  EXPECT_EQ(comp(qc.plans[0], "egress").quantity, "9900");
  EXPECT_EQ(qc.plans[0].per_useful_gpu_hour.amount_string(), "2.37125");  // 5691 / 2400
  EXPECT_TRUE(heavy.sticker_misleads);
  ASSERT_FALSE(qc.vs_cheapest.empty());
  EXPECT_EQ(qc.vs_cheapest[0].component, "egress");
  EXPECT_EQ(qc.vs_cheapest[0].diff.amount_string(), "891.00");
  EXPECT_EQ(qc.vs_cheapest[1].component, "list_price");
  EXPECT_EQ(qc.vs_cheapest[1].diff.amount_string(), "-480.00");
  EXPECT_EQ(render_en(qc.vs_cheapest[0].text),
            "Egress beyond the free allowance: +891.00 USD (egress: 9900 GB beyond 100 GB free at 0.09 USD/GB vs not "
            "charged)");
  EXPECT_EQ(zh(qc.vs_cheapest[0].text),
            "超出免费额度的出网流量：+891.00 USD（出网流量：超出免费 100 GB 后 9900 GB，每 GB 0.09 USD，对比 不收费）");
  EXPECT_EQ(render_en(qc.vs_cheapest[1].text),
            "Useful GPU time at the list price: -480.00 USD (list price 2.00 vs 2.20 USD/GPU-hour over 2400 useful "
            "GPU-hours)");
}

// A sticker that rounds to nothing (a minute at 0.00001 per GPU-hour) divided the overhead by zero,
// which the hardware answers with SIGFPE: the whole server ended. Percentages over 0 are "∞" now.
// And fees that dwarf the useful time leave int64 per useful GPU-hour: a 422 naming offers, not a 500.
TEST(QuoteCompare, AStickerOfNothingAndHugeFeesAreAnswered) {
  json tiny = offer_json("alpha", "tiny", "0.00001", "ready", 1);
  json other = offer_json("beta", "other", "0.00002", "ready", 3600);
  json body = {{"workload", {{"launches_per_month", 1}, {"gpus", 1}, {"run_minutes", 1}}}, {"offers", {tiny, other}}};
  QuotesResult r = run(body);
  ASSERT_EQ(r.offers.size(), 2u);
  EXPECT_EQ(r.offers[0].sticker.micros(), 0);
  const json out = to_json(r);
  for (const json& o : out.at("ranking")) {
    const std::string pct = o.at("overhead_pct");
    EXPECT_TRUE(pct == "0.0" || pct == "∞") << o.dump();
  }

  json fat = offer_json("gamma", "fat", "2.00", "ready", 1);
  fat["fees"]["egress"] = {{"per_gb", "1000"}};
  json huge = {{"workload", {{"launches_per_month", 1}, {"gpus", 1}, {"run_minutes", 1}, {"egress_gb", 1'000'000'000}}},
               {"offers", {fat}}};
  auto in = parse_quotes_input(huge, test_catalog());
  ASSERT_TRUE(in.ok()) << in.error().message;
  auto q = compute_quotes(*in);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.error().code, Code::kInvalid);
  ASSERT_EQ(q.error().fields.size(), 1u);
  EXPECT_EQ(q.error().fields[0].field, "offers");
  EXPECT_NE(q.error().message.find("gamma"), std::string::npos) << q.error().message;
}

// One launch of 60 minutes, 30 computing at 90% then 30 idle at 0%, 1 GPU at 2.00/h.
//   discount (below 5% for 10 min, 50% off): on_demand 40 min = 1.333333 -> 1.33, idle_discount
//     20 min × 1.00 = 0.333333 -> 0.33; total 1.66. Components: list 1.00, idle 0.333333 + 0.333333
//     = 0.666666, rounding 1.66 - 1.666666 = -0.006666.
//   stop: on_demand 40 min -> 1.33, 20 min stopped (0). idle 0.333333, rounding -0.003333.
//   no idle rule: 60 min × 2.00 = 2.00; idle 1.00.
TEST(QuoteCompare, IdleRulesAreRatedByTheEngine) {
  json disc = offer_json("s", "disc", "2.00", "ready", 1);
  disc["fees"]["idle"] = {
      {"utilization_below_pct", 5}, {"window_minutes", 10}, {"action", "discount"}, {"discount_pct", 50}};
  json stop = offer_json("s", "stop", "2.00", "ready", 1);
  stop["fees"]["idle"] = {{"utilization_below_pct", 5}, {"window_minutes", 10}, {"action", "stop"}};
  json none = offer_json("s", "none", "2.00", "ready", 1);
  json body = {{"workload", {{"launches_per_month", 1}, {"gpus", 1}, {"run_minutes", 60}, {"idle_pct", 50}}},
               {"offers", {disc, stop, none}}};
  QuotesResult r = run(body);
  ASSERT_EQ(r.offers.size(), 3u);
  EXPECT_EQ(r.offers[0].label, "s/stop");
  EXPECT_EQ(r.offers[1].label, "s/disc");
  EXPECT_EQ(r.offers[2].label, "s/none");
  const QuotePlan &ps = r.offers[0].plans[0], &pd = r.offers[1].plans[0], &pn = r.offers[2].plans[0];
  EXPECT_EQ(pd.total.amount_string(), "1.66");
  EXPECT_EQ(comp(pd, "list_price").amount.amount_string(), "1.00");
  EXPECT_EQ(comp(pd, "idle").amount.amount_string(), "0.666666");
  EXPECT_EQ(comp(pd, "idle").quantity, "0.5");  // 10 min at list + 20 min discounted
  EXPECT_EQ(comp(pd, "rounding").amount.amount_string(), "-0.006666");
  EXPECT_EQ(ps.total.amount_string(), "1.33");
  EXPECT_EQ(comp(ps, "idle").amount.amount_string(), "0.333333");
  EXPECT_EQ(comp(ps, "rounding").amount.amount_string(), "-0.003333");
  EXPECT_EQ(pn.total.amount_string(), "2.00");
  EXPECT_EQ(comp(pn, "idle").amount.amount_string(), "1.00");
  EXPECT_EQ(r.offers[0].sticker.amount_string(), "1.00");
  EXPECT_FALSE(r.sticker_misleads);  // one list price: no lower sticker hides a higher cost
  json j = to_json(r);
  EXPECT_EQ(j["ranking"][0]["idle_rule"],
            "below 5% the first 10 min are billed as usual, then billing stops (not charged; the job is not stopped)");
  EXPECT_EQ(j["ranking"][1]["idle_rule"], "below 5% the first 10 min are billed as usual, then 50% off");
  EXPECT_EQ(zh(*message_from_json(j["ranking"][1]["idle_rule_message"])),
            "利用率低于 5% 时前 10 分钟照常计费，之后优惠 50%");
  // The idle difference words both offers' rules, nested inside the difference.
  const OfferQuote& none_q = r.offers[2];
  ASSERT_FALSE(none_q.vs_cheapest.empty());
  EXPECT_EQ(none_q.vs_cheapest[0].component, "idle");
  EXPECT_EQ(render_en(none_q.vs_cheapest[0].text),
            "Idle GPU time billed: +0.67 USD (no idle rule (idle GPUs are billed as busy) (0.5 idle GPU-hours billed) "
            "vs below 5% the first 10 min are billed as usual, then billing stops (not charged; the job is not "
            "stopped) (0.167))");
  EXPECT_GE(expect_messages_catalogued(j), 10u);
}

// A month-long steady job on 8 GPUs: on-demand 8 × 720 h × 3.00 = 17,280.00; a 1-month
// commitment of 8 GPUs at 2.00 = 11,520.00 covers every hour. The commitment component is
// 11,520.00 - 17,280.00 (list) = -5,760.00. A 12-month price of 1.50 gives 8,640.00.
TEST(QuoteCompare, SteadyWorkloadTakesTheReservedPrice) {
  json e = offer_json("eps", "e", "3.00", "ready", 1);
  e["prices"]["reserved_1m"] = "2.00";
  e["prices"]["reserved_12m"] = "1.50";
  json body = {{"workload", {{"launches_per_month", 1}, {"gpus", 8}, {"run_minutes", 43200}}},
               {"offers", {e}},
               {"commit_terms_months", {1}}};
  QuotesResult r = run(body);
  ASSERT_EQ(r.offers.size(), 1u);
  const OfferQuote& q = r.offers[0];
  ASSERT_EQ(q.plans.size(), 2u);
  EXPECT_EQ(q.plans[0].total.amount_string(), "17280.00");
  EXPECT_EQ(q.plans[1].name, "reserved_1m");
  EXPECT_EQ(q.plans[1].committed_gpus, 8);
  EXPECT_EQ(q.plans[1].total.amount_string(), "11520.00");
  EXPECT_EQ(q.best, 1u);
  EXPECT_EQ(comp(q.plans[1], "commitment").amount.amount_string(), "-5760.00");
  EXPECT_EQ(comp(q.plans[1], "commitment").quantity, "5760");
  EXPECT_EQ(q.plans[1].per_useful_gpu_hour.amount_string(), "2.00");

  body["commit_terms_months"] = {1, 12};
  QuotesResult r12 = run(body);
  ASSERT_EQ(r12.offers[0].plans.size(), 3u);
  EXPECT_EQ(r12.offers[0].plans[2].total.amount_string(), "8640.00");
  EXPECT_EQ(r12.offers[0].best, 2u);
  ASSERT_EQ(r12.offers[0].warnings.size(), 1u);  // a 12-month term assumes the workload repeats
  EXPECT_EQ(render_en(r12.offers[0].warnings[0]),
            "The 12-month commitment assumes this workload runs every month of the term");
  EXPECT_EQ(zh(r12.offers[0].warnings[0]), "12 个月的预留承诺假设该负载在整个期限内每月都如此运行");
  json j = to_json(r12);
  EXPECT_EQ(j["ranking"][0]["warnings"][0]["text"], render_en(r12.offers[0].warnings[0]));
  EXPECT_EQ(j["ranking"][0]["warnings"][0]["text_message"]["code"], "advisor.quotes.warning.term");
  EXPECT_EQ(j["ranking"][0]["plans"][2]["text"],
            "8 GPUs reserved for 12 months at 1.50 USD/GPU-hour (billed whether used or not), the rest on-demand");
  // The commitment steps come last, one per term.
  ASSERT_GE(r.steps.size(), 1u);
  EXPECT_EQ(r.steps.back().text.code, "advisor.quotes.step.commitment");
  EXPECT_EQ(render_en(r.steps.back().text),
            "eps/e: a 1-month commitment of 8 GPUs pays when they are billed more than reserved ÷ on-demand of the "
            "month; best commitment rated: 8 GPUs");
  EXPECT_EQ(zh(r.steps.back().text),
            "eps/e：1 个月预留 8 张 GPU 的前提是这些 GPU 的计费时间超过当月的 预留价 ÷ 按需价；计费引擎比较后的最佳预留：8 张");
  EXPECT_GE(expect_messages_catalogued(j), 10u);
}

// Ten 1-hour launches of 1 GPU: on-demand 10 × 3.00 = 30.00; the cheapest commitment (1 GPU for
// the month at 2.00) costs 720 × 2.00 = 1,440.00, so on-demand stays best: not steady enough.
TEST(QuoteCompare, BurstyWorkloadStaysOnDemand) {
  json e = offer_json("eps", "e", "3.00", "ready", 1);
  e["prices"]["reserved_1m"] = "2.00";
  QuotesResult r = run({{"workload", {{"launches_per_month", 10}, {"gpus", 1}, {"run_minutes", 60}}}, {"offers", {e}}});
  ASSERT_EQ(r.offers.size(), 1u);
  const OfferQuote& q = r.offers[0];
  ASSERT_EQ(q.plans.size(), 2u);
  EXPECT_EQ(q.best, 0u);
  EXPECT_EQ(q.plans[0].total.amount_string(), "30.00");
  EXPECT_EQ(q.plans[1].committed_gpus, 1);
  EXPECT_EQ(q.plans[1].total.amount_string(), "1440.00");
}

// A profile: 15 min at 80%, 5 min at 2%, 10 min at 95% -> 25 computing minutes (idle below 5%).
// Offer idle rule below 10%: the 80% and 95% segments are busy; the 2% segment is shorter than the
// 10-minute window, so it is billed as usual: 30 min × 2.00 = 1.00 per launch, idle 5 min.
TEST(QuoteCompare, ProfileSegmentsAndIdleWindow) {
  json o = offer_json("s", "w", "2.00", "ready", 1);
  o["fees"]["idle"] = {{"utilization_below_pct", 10}, {"window_minutes", 10}, {"action", "stop"}};
  json body = {{"workload",
                {{"launches_per_month", 2},
                 {"gpus", 1},
                 {"profile",
                  {{{"minutes", 15}, {"utilization_pct", 80}},
                   {{"minutes", 5}, {"utilization_pct", 2}},
                   {{"minutes", 10}, {"utilization_pct", 95}}}}}},
               {"offers", {o}}};
  QuotesResult r = run(body);
  ASSERT_EQ(r.offers.size(), 1u);
  EXPECT_EQ(r.busy_ms_per_launch, 25 * 60'000);
  const QuotePlan& p = r.offers[0].plans[0];
  EXPECT_EQ(p.total.amount_string(), "2.00");
  EXPECT_EQ(comp(p, "idle").quantity, "0.167");                   // 2 × 5 min
  EXPECT_EQ(comp(p, "idle").amount.amount_string(), "0.333334");  // 2.00 - 2 × 0.833333
  EXPECT_EQ(p.per_useful_gpu_hour.amount_string(), "2.40");       // 2.00 / (50/60)
}

TEST(QuoteCompare, OffersHeldByTheServerAndColdStartOverrides) {
  auto a = parse_offer(offer_json("alpha", "gpu", "2.00", "api_call", 1), test_catalog()).value();
  auto b = parse_offer(offer_json("beta", "gpu", "2.00", "running", 1), test_catalog()).value();
  std::vector<Offer> known = {a, b};
  json body = {{"workload",
                {{"launches_per_month", 10},
                 {"gpus", 1},
                 {"run_minutes", 60},
                 {"cold_start", {{"to_running_seconds", 60}, {"to_ready_seconds", 60}}}}},
               {"offers", {"alpha/gpu", "beta/gpu"}},
               {"cold_starts", {{"beta/gpu", {{"to_running_seconds", 600}, {"to_ready_seconds", 1200}}}}}};
  auto in = parse_quotes_input(body, test_catalog(), known);
  ASSERT_TRUE(in.ok()) << in.error().message;
  auto r = compute_quotes(*in);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // alpha bills 120 s a launch from the API call; beta bills its 1200 s from running to ready.
  EXPECT_EQ(offer(*r, "alpha/gpu").billed_cold_seconds, 120);
  EXPECT_EQ(offer(*r, "beta/gpu").billed_cold_seconds, 1200);
  EXPECT_EQ(r->offers[0].label, "alpha/gpu");
  // 10 × (60 min + 2 min) × 2.00 = 20.666... -> per launch 2.066667 -> 2.07 a line pair (2.00 + 0.07)
  EXPECT_EQ(r->offers[0].plans[0].total.amount_string(), "20.70");

  // A bare name that two suppliers share is ambiguous.
  body["offers"] = {"gpu"};
  body.erase("cold_starts");
  EXPECT_TRUE(fails_only_on(parse_quotes_input(body, test_catalog(), known), "offers[0]", "write supplier/name"));
  body["offers"] = {"nobody/gpu"};
  EXPECT_TRUE(fails_only_on(parse_quotes_input(body, test_catalog(), known), "offers[0]", "names no known offer"));
}

TEST(QuoteInput, RejectsBadInputsNamingTheField) {
  const json valid = {{"workload", {{"launches_per_month", 10}, {"gpus", 1}, {"run_minutes", 60}}},
                      {"offers", {offer_json("s", "a", "2.00", "ready", 1)}}};
  ASSERT_TRUE(parse_quotes_input(valid, test_catalog()).ok());
  testing_util::expect_each_case_fails(
      valid,
      {
          {"no launches", [](json& b) { b["workload"].erase("launches_per_month"); }, "workload.launches_per_month",
           "is required"},
          {"negative gpus", [](json& b) { b["workload"]["gpus"] = -1; }, "workload.gpus", "at least 1"},
          {"all idle", [](json& b) { b["workload"]["idle_pct"] = 100; }, "workload.idle_pct", "must be below 100"},
          {"idle pct out of range", [](json& b) { b["workload"]["idle_pct"] = 101; }, "workload.idle_pct",
           "at most 100"},
          {"both forms",
           [](json& b) {
             b["workload"]["profile"] = json::array({{{"minutes", 1}, {"utilization_pct", 50}}});
           },
           "workload.run_minutes", "not both"},
          {"no run", [](json& b) { b["workload"].erase("run_minutes"); }, "workload.run_minutes", "or give profile"},
          {"busy below idle threshold", [](json& b) { b["workload"]["busy_utilization_pct"] = 3; },
           "workload.busy_utilization_pct", "never counts as computing"},
          {"unknown workload key", [](json& b) { b["workload"]["gpu"] = 1; }, "workload.gpu", "unknown field"},
          {"unknown key", [](json& b) { b["offer"] = 1; }, "offer", "unknown field"},
          {"negative price", [](json& b) { b["offers"][0]["prices"]["on_demand"] = "-1.00"; },
           "offers[0].prices.on_demand", ""},
          {"no offers", [](json& b) { b["offers"] = json::array(); }, "offers", "at least one offer"},
          {"too many offers",
           [](json& b) {
             for (int i = 0; i < 20; ++i)
               b["offers"].push_back(offer_json("s", "x" + std::to_string(i), "2.00", "ready", 1));
           },
           "offers", "at most 20"},
          {"offers not a list", [](json& b) { b["offers"] = 3; }, "offers", "must be a list"},
          {"mixed currency",
           [](json& b) {
             json o = offer_json("t", "b", "2.00", "ready", 1);
             o["currency"] = "CNY";
             b["offers"].push_back(o);
           },
           "offers[1].currency", "one currency"},
          {"duplicate offer", [](json& b) { b["offers"].push_back(b["offers"][0]); }, "offers[1]", "twice"},
          {"unknown cold start offer",
           [](json& b) {
             b["cold_starts"] = {{"zz", {{"to_ready_seconds", 1}}}};
           },
           "cold_starts.zz", "names no offer"},
          {"negative cold start",
           [](json& b) {
             b["workload"]["cold_start"] = {{"to_ready_seconds", -5}};
           },
           "workload.cold_start.to_ready_seconds", "at least 0"},
          {"bad term", [](json& b) { b["commit_terms_months"] = {6}; }, "commit_terms_months[0]", "1, 12 or 36"},
          {"empty profile",
           [](json& b) {
             b["workload"].erase("run_minutes");
             b["workload"]["profile"] = json::array();
           },
           "workload.profile", "at least one segment"},
          {"profile never computes",
           [](json& b) {
             b["workload"].erase("run_minutes");
             b["workload"]["profile"] = json::array({{{"minutes", 10}, {"utilization_pct", 1}}});
           },
           "workload.profile", "never computes"},
          {"no room for several launches",
           [](json& b) {
             b["workload"]["run_minutes"] = 43200;
             b["workload"]["cold_start"] = {{"to_ready_seconds", 1}};
           },
           "workload.launches_per_month", "leaves no room"},
          {"one launch longer than the month",
           [](json& b) {
             b["workload"]["launches_per_month"] = 1;
             b["workload"]["run_minutes"] = 43200;
             b["workload"]["cold_start"] = {{"to_ready_seconds", 1}};
           },
           "workload.run_minutes", "does not fit"},
          {"one profiled launch longer than the month",
           [](json& b) {
             b["workload"]["launches_per_month"] = 1;
             b["workload"].erase("run_minutes");
             b["workload"]["profile"] = json::array({{{"minutes", 43200}, {"utilization_pct", 90}}});
             b["workload"]["cold_start"] = {{"to_ready_seconds", 60}};
           },
           "workload.profile", "does not fit"},
          {"too many segments over the launches",
           [](json& b) {
             b["workload"]["launches_per_month"] = 11;  // 11 × 1000 > 10,000
             b["workload"].erase("run_minutes");
             b["workload"]["profile"] = json::array();
             for (int i = 0; i < 1000; ++i)
               b["workload"]["profile"].push_back({{"minutes", 1}, {"utilization_pct", i % 2 ? 0 : 90}});
           },
           "workload.profile", "at most 10000 (got 11000)"},
      },
      [](const json& b) { return parse_quotes_input(b, test_catalog()); });

  // The reasons are message codes; an offer's own problems keep theirs under the offer's path.
  json b = valid;
  b["workload"]["busy_utilization_pct"] = 3;
  auto r = parse_quotes_input(b, test_catalog());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).coded.code, "advisor.quotes.busy_below_idle");
  EXPECT_EQ(zh(r.error().detail), "workload.busy_utilization_pct：不能小于 idle_below_pct（5），否则繁忙部分永远不算作计算");
  b = valid;
  b["offers"][0]["prices"]["on_demand"] = "-1.00";
  r = parse_quotes_input(b, test_catalog());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "offers[0].prices.on_demand");
  EXPECT_EQ(r.error().fields.at(0).coded.code, "field.not_negative");
  EXPECT_EQ(render_en(r.error().detail), r.error().message);
}

// compute_quotes checks inputs the server builds itself, not only parsed ones.
TEST(QuoteInput, ComputeChecksBuiltInputs) {
  QuotesInput in;
  in.workload.profile = {{60 * 60'000, 90}};
  auto r = compute_quotes(in);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "offers");
  EXPECT_EQ(r.error().fields.at(0).coded.code, "advisor.quotes.offers_count");
  EXPECT_EQ(zh(r.error().fields.at(0).coded), "必须列出 1..20 个报价（实际为 0 个）");
  in.offers.push_back(
      {parse_offer(offer_json("s", "a", "2.00", "ready", 1), test_catalog()).value(), QuoteColdStart{-1, 0}});
  r = compute_quotes(in);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "cold_starts.s/a");
  EXPECT_EQ(r.error().fields.at(0).coded.code, "advisor.quotes.cold_start_seconds");
  EXPECT_EQ(zh(r.error().fields.at(0).coded), "秒数必须在 0..86400 之间");
  in.offers[0].cold_start.reset();
  in.workload.profile = {{60 * 60'000, 3}};  // never reaches idle_below_pct (5)
  r = compute_quotes(in);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "workload.profile");
  in.workload.profile = {{60 * 60'000, 50}};
  EXPECT_TRUE(compute_quotes(in).ok());
}

// Properties over random workloads and offers: the ranking is ordered by cost per useful
// GPU-hour, the best plan is the cheapest plan, every plan's components add up to its total,
// extra egress never lowers a total, and the order of the offers in the input does not matter.
TEST(QuoteCompare, PropertiesOverRandomInputs) {
  std::mt19937 rng(20261101);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* starts[] = {"api_call", "running", "ready"};
  for (int iter = 0; iter < 25; ++iter) {
    json offers = json::array();
    for (int k = 0; k < 3; ++k) {
      json o = offer_json("s" + std::to_string(k), "o", std::to_string(pick(1, 5)) + "." + std::to_string(pick(10, 99)),
                          starts[pick(0, 2)], pick(1, 3600));
      if (pick(0, 1)) o["prices"]["reserved_1m"] = "1.00";
      if (pick(0, 1)) o["fees"]["egress"] = {{"per_gb", "0.0" + std::to_string(pick(1, 9))}, {"free_gb", pick(0, 500)}};
      if (pick(0, 1))
        o["fees"]["idle"] = {{"utilization_below_pct", pick(1, 10)},
                             {"window_minutes", pick(1, 30)},
                             {"action", "discount"},
                             {"discount_pct", pick(1, 90)}};
      offers.push_back(o);
    }
    json body = {{"workload",
                  {{"launches_per_month", pick(1, 60)},
                   {"gpus", pick(1, 8)},
                   {"run_minutes", pick(1, 600)},
                   {"idle_pct", pick(0, 60)},
                   {"egress_gb", pick(0, 2000)},
                   {"cold_start", {{"to_running_seconds", pick(0, 600)}, {"to_ready_seconds", pick(0, 600)}}}}},
                 {"offers", offers}};
    QuotesResult r = run(body);
    ASSERT_EQ(r.offers.size(), 3u);
    for (size_t i = 0; i < r.offers.size(); ++i) {
      const OfferQuote& q = r.offers[i];
      if (i > 0) {
        EXPECT_LE(r.offers[i - 1].plans[r.offers[i - 1].best].total.micros(), q.plans[q.best].total.micros());
      }
      for (const auto& p : q.plans) {
        EXPECT_GE(p.total.micros(), q.plans[q.best].total.micros());
        int64_t sum = 0;
        for (const auto& c : p.components) sum += c.amount.micros();
        EXPECT_EQ(sum, p.total.micros());
      }
    }
    json more = body;
    more["workload"]["egress_gb"] = body["workload"]["egress_gb"].get<int>() + 1000;
    QuotesResult r2 = run(more);
    for (const auto& q : r.offers)
      EXPECT_LE(q.plans[0].total.micros(), offer(r2, q.label).plans[0].total.micros()) << q.label;
    json reversed = body;
    std::reverse(reversed["offers"].begin(), reversed["offers"].end());
    QuotesResult r3 = run(reversed);
    for (size_t i = 0; i < r.offers.size(); ++i) EXPECT_EQ(r.offers[i].label, r3.offers[i].label);
  }
}

}  // namespace
}  // namespace gpurent

namespace gpurent {
namespace {

json compute_offer(const std::string& name, const std::string& model, const std::string& price) {
  json o = offer_json("cloud", name, price, "ready", 1);
  o["gpu_model"] = model;
  return o;
}

json compute_body() {
  return {{"workload", {{"launches_per_month", 1}, {"gpus", 8}, {"run_minutes", 600}, {"busy_utilization_pct", 95},
                        {"precision", "bf16"}}},
          {"offers",
           {compute_offer("pcie", "pcie-test-48gb", "0.57"), compute_offer("sxm", "sxm-test-80gb", "3.99"),
            compute_offer("old", "old-test-16gb", "0.30")}},
          {"commit_terms_months", json::array()}};
}

// Ranked per useful GPU-hour the PCIe card at 0.57 wins; what the work needs is PFLOP-hours. By
// datasheet BF16 (362 vs 989 TFLOPS) it still wins: 0.57 × 1000 ÷ 362 = 1.574586 against
// 3.99 × 1000 ÷ 989 = 4.034378 per useful PFLOP-hour. Measured on the tenant's model (95.0 vs
// 710.5 TFLOPS: the smaller card starves on memory bandwidth), the SXM card's PFLOP-hour is the
// cheaper one: 5.615764 against 6.000000. The card without BF16 cannot be priced by compute and
// ranks last, with a warning.
TEST(QuoteCompare, RanksByCostPerUsefulPflopHourAtTheWorkloadsPrecision) {
  QuotesResult d = run(compute_body());
  ASSERT_EQ(d.offers.size(), 3u);
  EXPECT_EQ(d.ranked_by, "per_useful_pflop_hour");
  EXPECT_EQ(d.offers[0].label, "cloud/pcie");
  EXPECT_EQ(d.offers[1].label, "cloud/sxm");
  EXPECT_EQ(d.offers[2].label, "cloud/old");
  EXPECT_EQ(d.offers[0].plans[d.offers[0].best].per_useful_gpu_hour.micros(), 570'000);
  EXPECT_EQ(d.offers[0].per_useful_pflop_hour->micros(), 1'574'586);
  EXPECT_EQ(d.offers[0].tflops_source, "datasheet");
  EXPECT_EQ(d.offers[1].per_useful_pflop_hour->micros(), 4'034'378);
  EXPECT_FALSE(d.offers[2].per_useful_pflop_hour.has_value());
  ASSERT_FALSE(d.offers[2].warnings.empty());
  EXPECT_NE(render_en(d.offers[2].warnings[0]).find("no dense bf16 TFLOPS for old-test-16gb"), std::string::npos);

  json body = compute_body();
  body["measured_tflops"] = {{"cloud/pcie", "95.0"}, {"sxm", "710.5"}};
  QuotesResult m = run(body);
  ASSERT_EQ(m.offers.size(), 3u);
  EXPECT_EQ(m.offers[0].label, "cloud/sxm");
  EXPECT_EQ(m.offers[0].per_useful_pflop_hour->micros(), 5'615'764);
  EXPECT_EQ(m.offers[0].tflops_source, "measured");
  EXPECT_EQ(m.offers[1].label, "cloud/pcie");
  EXPECT_EQ(m.offers[1].per_useful_pflop_hour->micros(), 6'000'000);
  EXPECT_EQ(m.offers[0].rank, 1);
  EXPECT_EQ(offer(m, "cloud/pcie").list_rank, 2);  // the old card's 0.30 is the lowest list price
  const std::string first = render_en(m.offers[0].summary), second = render_en(m.offers[1].summary);
  EXPECT_NE(first.find("Cheapest per useful PFLOP-hour at bf16: 5.615764 USD (710.5 TFLOPS, measured"), std::string::npos)
      << first;
  EXPECT_NE(second.find("cloud/pcie: 6.00 vs 5.615764 USD per useful PFLOP-hour at bf16 (+6.8% on cloud/sxm): 95 TFLOPS (measured)"), std::string::npos)
      << second;
  EXPECT_EQ(zh(m.offers[1].summary).find('{'), std::string::npos) << zh(m.offers[1].summary);
  const json j = to_json(m);
  EXPECT_EQ(j.at("ranked_by"), "per_useful_pflop_hour");
  EXPECT_EQ(j["ranking"][0]["compute"], (json{{"tflops", "710.5"}, {"source", "measured"}, {"per_useful_pflop_hour", "5.615764"}}));
  EXPECT_TRUE(j["ranking"][2]["compute"]["tflops"].is_null());
  EXPECT_GT(expect_messages_catalogued(j), 0u);
  bool stepped = false;
  for (const auto& s : m.steps) stepped |= s.formula == "3.99 × 1000 ÷ 710.5";
  EXPECT_TRUE(stepped) << "no per-PFLOP step";

  // Without a precision nothing changes: ranked per useful GPU-hour, no compute figures.
  json plain = compute_body();
  plain["workload"].erase("precision");
  QuotesResult g = run(plain);
  EXPECT_EQ(g.ranked_by, "per_useful_gpu_hour");
  EXPECT_EQ(g.offers[0].label, "cloud/old");
  EXPECT_FALSE(to_json(g)["ranking"][0].contains("compute"));
}

// A fingerprinted job's training step takes 1.9 s on the PCIe card and 0.24 s on the SXM card (8
// GPUs each): per step 0.57 × 8 × 1,900,000 ÷ 3,600,000,000 = 0.0024066… → 0.002407 against
// 3.99 × 8 × 240,000 ÷ 3,600,000,000 = 0.002128: the dearer card is the cheaper step, ahead of the
// precision's ranking; the old card has no time and ranks last with a warning.
TEST(QuoteCompare, RanksAFingerprintedJobByCostPerUnitOfWork) {
  json body = compute_body();
  body["workload"]["work"] = {{"unit", "step"}, {"us_per_unit", {{"pcie-test-48gb", 1'900'000}, {"sxm-test-80gb", 240'000}}}};
  QuotesResult r = run(body);
  ASSERT_EQ(r.offers.size(), 3u);
  EXPECT_EQ(r.ranked_by, "per_unit_of_work");
  EXPECT_EQ(r.offers[0].label, "cloud/sxm");
  EXPECT_EQ(r.offers[0].per_unit_of_work->micros(), 2'128);
  EXPECT_EQ(r.offers[1].label, "cloud/pcie");
  EXPECT_EQ(r.offers[1].per_unit_of_work->micros(), 2'407);
  EXPECT_FALSE(r.offers[2].per_unit_of_work.has_value());
  ASSERT_FALSE(r.offers[2].warnings.empty());
  EXPECT_NE(render_en(r.offers[2].warnings.back()).find("no time on old-test-16gb"), std::string::npos);
  const std::string first = render_en(r.offers[0].summary), second = render_en(r.offers[1].summary);
  EXPECT_NE(first.find("Cheapest per training step: 0.002128 USD (240000 µs per unit on sxm-test-80gb"), std::string::npos)
      << first;
  EXPECT_NE(second.find("cloud/pcie: 0.002407 vs 0.002128 USD per training step (+13.1% on cloud/sxm)"), std::string::npos)
      << second;
  EXPECT_EQ(zh(r.offers[1].summary).find('{'), std::string::npos) << zh(r.offers[1].summary);
  const json j = to_json(r);
  EXPECT_EQ(j["ranking"][0]["work"], (json{{"us_per_unit", 240'000}, {"per_unit", "0.002128"}}));
  EXPECT_TRUE(j["ranking"][2]["work"]["per_unit"].is_null());
  EXPECT_GT(expect_messages_catalogued(j), 0u);
  bool stepped = false;
  for (const auto& st : r.steps) stepped |= st.formula == "3.99 × 8 × 240000 µs ÷ 3600000000 µs";
  EXPECT_TRUE(stepped) << "no per-step arithmetic";

  // With the output tokens a step produces, the same ranking reads per million tokens too.
  json tokens = body;
  tokens["workload"]["work"]["tokens_per_unit"] = 4000;
  QuotesResult t = run(tokens);
  EXPECT_EQ(t.offers[0].per_million_tokens->micros(), 532'000);  // 0.002128 × 10^6 ÷ 4000
  EXPECT_EQ(t.offers[1].per_million_tokens->micros(), 601'750);  // 0.002407 × 10^6 ÷ 4000
  EXPECT_FALSE(t.offers[2].per_million_tokens.has_value());
  EXPECT_EQ(to_json(t)["ranking"][0]["work"]["per_million_tokens"], "0.532");

  auto error_field = [](json b) {
    auto in = parse_quotes_input(b, test_catalog());
    return in.ok() ? std::string("(parsed)") : in.error().fields.empty() ? in.error().message : in.error().fields[0].field;
  };
  json unknown = body;
  unknown["workload"]["work"]["us_per_unit"]["no-such-gpu"] = 5;
  EXPECT_EQ(error_field(unknown), "workload.work.us_per_unit");
  json zero = body;
  zero["workload"]["work"]["us_per_unit"]["sxm-test-80gb"] = 0;
  EXPECT_EQ(error_field(zero), "workload.work.us_per_unit");
  json unit = body;
  unit["workload"]["work"]["unit"] = "token";
  EXPECT_EQ(error_field(unit), "workload.work.unit");

  // Figures the ranking cannot hold in int64 micro-units are the caller's to fix, named by field
  // (never an exception, which the server would answer 500): 1024 GPUs × an hour per step at
  // 10.00 is about 10^13 micro-units a step; per million tokens at one token a step, 10^6 times
  // that.
  json huge = body;
  huge["workload"]["gpus"] = 1024;
  huge["offers"][1] = compute_offer("sxm", "sxm-test-80gb", "10.00");
  huge["workload"]["work"]["us_per_unit"]["sxm-test-80gb"] = 3'600'000'000'000;
  huge["workload"]["work"]["tokens_per_unit"] = 1;
  auto parsed = parse_quotes_input(huge, test_catalog());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  auto failed = compute_quotes(*parsed);
  ASSERT_FALSE(failed.ok());
  ASSERT_EQ(failed.error().fields.size(), 1u) << failed.error().message;
  EXPECT_EQ(failed.error().fields[0].field, "workload.work.tokens_per_unit");
  EXPECT_NE(failed.error().message.find("cloud/sxm"), std::string::npos) << failed.error().message;
  huge["workload"]["work"]["tokens_per_unit"] = 1'000'000;
  EXPECT_TRUE(compute_quotes(*parse_quotes_input(huge, test_catalog())).ok()) << "10^6 tokens a step fit";
}

TEST(QuoteCompare, ComputeInputsAreChecked) {
  auto errors = [](json body) {
    auto in = parse_quotes_input(body, test_catalog());
    return in.ok() ? std::string("(parsed)") : in.error().fields.empty() ? in.error().message : in.error().fields[0].field;
  };
  json bad_precision = compute_body();
  bad_precision["workload"]["precision"] = "fp4";
  EXPECT_EQ(errors(bad_precision), "workload.precision");
  json no_precision = compute_body();
  no_precision["workload"].erase("precision");
  no_precision["measured_tflops"] = {{"cloud/pcie", "95.0"}};
  EXPECT_EQ(errors(no_precision), "measured_tflops");
  json bad_value = compute_body();
  bad_value["measured_tflops"] = {{"cloud/pcie", "fast"}};
  EXPECT_EQ(errors(bad_value), "measured_tflops.cloud/pcie");
  json unknown = compute_body();
  unknown["measured_tflops"] = {{"cloud/nope", "95.0"}};
  EXPECT_EQ(errors(unknown), "measured_tflops.cloud/nope");
}

}  // namespace
}  // namespace gpurent
