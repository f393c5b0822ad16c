// The codecs of the records only the server writes (runs, images kept, alerts, webhooks, faults): each stored
// document decodes to what was encoded, byte for byte back, and each kind of damage is an error
// naming the field (services/record_faults.h turns it into a reported, loud failure).
#include <gtest/gtest.h>

#include "model/alert.h"
#include "model/fault.h"
#include "model/image.h"
#include "model/model_test_util.h"
#include "model/job_run.h"
#include "model/webhook.h"

namespace gpurent {
namespace {

using testing_util::BadCase;
using testing_util::expect_each_case_fails;

constexpr TimeMs kT = 1'795'000'000'000;  // 2026-11-18T09:06:40Z

JobRun closed_run() {
  JobRun r;
  r.job_id = "job_00000000000000a1";
  r.job = "llama-sft";
  r.project_id = "prj_00000000000000a1";
  r.tenant_id = "ten_00000000000000a1";
  r.supplier_id = "sup_00000000000000a1";
  r.offer_id = "off_00000000000000a1";
  r.billing_mode = BillingMode::kSpot;
  r.gpu_milli = 16000;
  r.placement = {{"nod_00000000000000a1", "h100-01", {0, 1, 2, 3, 4, 5, 6, 7}},
                 {"nod_00000000000000a2", "h100-02", {0, 1, 2, 3, 4, 5, 6, 7}}};
  r.requested_at = kT - 60'000;
  r.admitted_at = kT - 30'000;
  r.running_at = r.ready_at = kT;
  r.ended_at = kT + 3'600'500;
  r.end_reason = "requeued: node h100-02 failed";
  r.end_reason_message = Message("sched.node_failed").arg("node", "h100-02");
  r.state = RunState::kClosed;
  r.slurm_job_id = 4242;
  return r;
}

TEST(StoredRun, RoundTripsOpenAndClosed) {
  const JobRun closed = closed_run();
  EXPECT_EQ(closed.cards(), 16);
  auto back = decode_run(to_json(closed));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, closed);
  EXPECT_EQ(to_json(*back).dump(), to_json(closed).dump());

  JobRun open = closed;
  open.ended_at.reset();
  open.end_reason.clear();
  open.end_reason_message.reset();
  open.admitted_at.reset();
  open.slurm_job_id.reset();
  open.state = RunState::kOpen;
  const json j = to_json(open);
  EXPECT_TRUE(j["ended_at"].is_null());
  EXPECT_FALSE(j.contains("slurm_job_id"));
  auto back_open = decode_run(j);
  ASSERT_TRUE(back_open.ok()) << back_open.error().message;
  EXPECT_EQ(*back_open, open);
}

TEST(StoredRun, DamageNamesTheField) {
  expect_each_case_fails(
      to_json(closed_run()),
      {
          {"no job", [](json& j) { j.erase("job_id"); }, "job_id", "required"},
          {"mode", [](json& j) { j["billing_mode"] = "monthly"; }, "billing_mode", "monthly"},
          {"milli type", [](json& j) { j["gpu_milli"] = "8"; }, "gpu_milli", ""},
          {"milli range", [](json& j) { j["gpu_milli"] = -1; }, "gpu_milli", ""},
          {"time", [](json& j) { j["running_at"] = "yesterday"; }, "running_at", ""},
          {"cards", [](json& j) { j["placement"][1]["gpus"] = json::array({0, "1"}); }, "placement[1].gpus", "card indexes"},
          {"state", [](json& j) { j["state"] = "paused"; }, "state", "paused"},
          {"message", [](json& j) { j["end_reason_message"] = 7; }, "end_reason_message", ""},
      },
      decode_run);
}

TEST(StoredKeptImage, RoundTripsAndNamesDamage) {
  KeptImage k{"img_00000000000000a1", "trainer", "off_00000000000000a1", "", 3'000'000'000, kT, std::nullopt};
  auto back = decode_kept_image(to_json(k));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, k);
  EXPECT_TRUE(to_json(k)["to"].is_null());
  k.to = kT + 1000;
  k.contract_id = "ctr_00000000000000a1";
  back = decode_kept_image(to_json(k));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, k);
  EXPECT_EQ(to_json(*back).dump(), to_json(k).dump());
  expect_each_case_fails(
      to_json(k),
      {
          {"no image", [](json& j) { j.erase("image_id"); }, "image_id", "required"},
          {"no offer", [](json& j) { j.erase("offer_id"); }, "offer_id", "required"},
          {"bytes", [](json& j) { j["bytes"] = -1; }, "bytes", ""},
          {"from", [](json& j) { j["from"] = "soon"; }, "from", ""},
          {"to", [](json& j) { j["to"] = 5; }, "to", ""},
      },
      decode_kept_image);
}

Alert budget_alert() {
  Alert a;
  a.key = "budget_breach:vision:2026-11";
  a.kind = AlertKind::kBudgetBreach;
  a.severity = AlertSeverity::kCritical;
  a.project = "vision";
  a.subject = "vision";
  a.from = kT - 17 * kMsPerDay;
  a.to = kT;
  a.measured = "1200.00";
  a.threshold = "1000.00";
  a.unit = "USD";
  a.message = Message("alert.budget_breach").arg("project", "vision").arg("cost", "1200.00 USD").arg("month", "2026-11").arg("budget", "1000.00 USD");
  a.hold_submissions = true;
  return a;
}

TEST(StoredAlert, RoundTripsThroughEveryState) {
  StoredAlert s = new_stored_alert(budget_alert(), "acme", "ten_00000000000000a1", "prj_00000000000000a1", kT);
  EXPECT_EQ(s.message_en, render(s.alert.message, "en"));
  EXPECT_NE(s.message_zh, s.message_en);
  s.deliveries = {{"ops-dingtalk", kT + 1000, 200, std::nullopt}, {"ops-generic", kT + 1000, std::nullopt, "connection refused"}};
  s.state = AlertState::kLifted;
  s.lifted_at = kT + 5000;
  s.lifted_by = "usr_00000000000000a1";
  const json j = to_json(s);
  EXPECT_EQ(j["text"], s.message_en);
  EXPECT_EQ(j["state"], "lifted");
  auto back = decode_stored_alert(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, s);
  EXPECT_EQ(to_json(*back).dump(), j.dump());
}

TEST(StoredAlert, OneStoredBeforeCodesKeepsItsOwnTexts) {
  json j = to_json(new_stored_alert(budget_alert(), "acme", "ten_00000000000000a1", "", kT));
  j.erase("text_message");
  j.erase("text");
  j["message_en"] = "over budget";
  j["message_zh"] = "超出预算";
  auto back = decode_stored_alert(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(render(back->alert.message, "en"), "over budget");
  EXPECT_EQ(back->message_zh, "超出预算");
}

TEST(StoredAlert, DamageNamesTheField) {
  expect_each_case_fails(
      to_json(new_stored_alert(budget_alert(), "acme", "ten_00000000000000a1", "", kT)),
      {
          {"kind", [](json& j) { j["kind"] = "gpu_on_fire"; }, "kind", "gpu_on_fire"},
          {"state", [](json& j) { j["state"] = "snoozed"; }, "state", "snoozed"},
          {"from", [](json& j) { j.erase("from"); }, "from", "required"},
          {"hold", [](json& j) { j["hold_submissions"] = "yes"; }, "hold_submissions", ""},
          {"delivery", [](json& j) { j["deliveries"] = json::array({{{"webhook", "x"}}}); }, "deliveries[0].at", "required"},
      },
      decode_stored_alert);
}

TEST(StoredWebhook, ParsesDecodesAndRoundTrips) {
  json body = {{"name", "ops-feishu"}, {"type", "feishu"}, {"url", "https://open.feishu.cn/hook/x"},
               {"secret", "s3"}, {"tenant", "acme"}, {"kinds", {"budget_breach", "egress_daily_cost"}}};
  auto w = parse_webhook(body);
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_TRUE(w->wants(AlertKind::kBudgetBreach));
  EXPECT_FALSE(w->wants(AlertKind::kCardDailyCost));
  w->tenant_id = "ten_00000000000000a1";
  auto back = decode_webhook(to_json(*w));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, *w);
  body["tenant_id"] = "ten_ffffffffffffffff";  // server-set: a client's is ignored
  EXPECT_EQ(parse_webhook(body)->tenant_id, "");

  auto wecom = parse_webhook({{"name", "w"}, {"type", "wecom"}, {"url", "https://qyapi.weixin.qq.com/x"}, {"secret", "s"}});
  ASSERT_FALSE(wecom.ok());
  EXPECT_EQ(wecom.error().fields.at(0).field, "secret");
  EXPECT_EQ(wecom.error().message, "secret: WeCom group robots are not signed; leave secret out");
  EXPECT_EQ(wecom.error().fields.at(0).coded.code, "webhook.secret.wecom");
  EXPECT_EQ(render(wecom.error().detail, "zh"), "secret：企业微信群机器人不使用签名；请省略 secret");
  auto kinds = parse_webhook({{"name", "w"}, {"type", "generic"}, {"url", "https://example.com/x"}, {"kinds", {"spam"}}});
  ASSERT_FALSE(kinds.ok());
  EXPECT_EQ(kinds.error().fields.at(0).field, "kinds[0]");
  EXPECT_EQ(kinds.error().fields.at(0).coded.code, "webhook.kinds.unknown");
  auto url = parse_webhook({{"name", "w"}, {"type", "generic"}, {"url", "ftp://example.com/x"}});
  ASSERT_FALSE(url.ok());
  EXPECT_EQ(url.error().fields.at(0).reason, "'ftp://example.com/x' is not valid: an http:// or https:// URL");
  EXPECT_EQ(testing_util::nested_code(url.error().fields.at(0).coded, "help"), "pattern.url");
  auto tid = decode_webhook({{"name", "w"}, {"type", "generic"}, {"url", "https://example.com/x"}, {"tenant_id", 5}});
  ASSERT_FALSE(tid.ok());
  EXPECT_EQ(tid.error().fields.at(0).field, "tenant_id");
}

TEST(StoredFault, RoundTripsAndNamesDamage) {
  const Fault f{"fault-1-1", "job_00000000000000a1", "nod_00000000000000a1", "ten_00000000000000a1",
                "prj_00000000000000a1", "sup_00000000000000a1", kT, Message("sched.node_failed").arg("node", "h100-01")};
  const json j = to_json(f);
  EXPECT_EQ(j["reason"], render_en(f.reason));
  auto back = decode_fault(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, f);
  expect_each_case_fails(j,
                         {
                             {"node", [](json& j) { j.erase("node"); }, "node", "required"},
                             {"at", [](json& j) { j["at"] = 17; }, "at", ""},
                         },
                         decode_fault);
}

}  // namespace
}  // namespace gpurent
