// Webhook bodies (exact shape per target) and signatures against vectors computed independently
// with the openssl command line.
#include "billing/webhook_format.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

constexpr TimeMs kNov29 = 1'795'910'400'000;  // 2026-11-29T00:00:00Z
constexpr TimeMs kNov = 1'793'491'200'000;    // 2026-11-01T00:00:00Z

Alert egress_alert() {
  Alert a;
  a.key = "egress_daily_cost:vision:2026-11-29";
  a.kind = AlertKind::kEgressDailyCost;
  a.severity = AlertSeverity::kCritical;
  a.project = "vision";
  a.subject = "vision";
  a.from = kNov29;
  a.to = kNov29 + 86'400'000;
  a.measured = "612.40";
  a.threshold = "500.00";
  a.unit = "USD";
  a.message = Message("alert.egress_daily_cost")
                  .arg("project", "vision")
                  .arg("cost", "612.40 USD")
                  .arg("date", "2026-11-29")
                  .arg("threshold", "500.00 USD")
                  .arg("upload_limit", "10 GB");
  a.freeze_egress = true;
  a.upload_limit_bytes = 10'000'000'000;
  return a;
}

Alert card_alert() {
  Alert a;
  a.key = "card_daily_cost:n1/3:2026-11-29";
  a.kind = AlertKind::kCardDailyCost;
  a.severity = AlertSeverity::kWarning;
  a.subject = "n1/3";
  a.from = kNov29;
  a.to = kNov29 + 86'400'000;
  a.measured = "120.00";
  a.threshold = "100.00";
  a.unit = "USD";
  a.message = Message("alert.card_daily_cost")
                  .arg("card", "n1/3")
                  .arg("cost", "120.00 USD")
                  .arg("date", "2026-11-29")
                  .arg("threshold", "100.00 USD");
  return a;
}

TEST(WebhookFormat, GenericCarriesEveryField) {
  const auto expected = nlohmann::json::parse(R"({
    "event": "cost_firewall.alert", "key": "egress_daily_cost:vision:2026-11-29", "kind": "egress_daily_cost",
    "severity": "critical", "project": "vision", "subject": "vision",
    "from": "2026-11-29T00:00:00.000Z", "to": "2026-11-30T00:00:00.000Z",
    "measured": "612.40", "threshold": "500.00", "unit": "USD",
    "message_en": "Project vision: egress cost 612.40 USD on 2026-11-29 exceeds 500.00 USD; egress and uploads over 10 GB are to be frozen by the supplier's gateways until an admin lifts it",
    "message_zh": "项目 vision：2026-11-29 出网流量费用 612.40 USD，超过阈值 500.00 USD；出网及超过 10 GB 的上传应由供应商网关冻结，直至管理员解除",
    "freeze_egress": true, "upload_limit_bytes": 10000000000, "hold_submissions": false, "stop_work": false})");
  EXPECT_EQ(webhook_body(WebhookType::kGeneric, egress_alert()), expected);
  EXPECT_EQ(to_json(egress_alert()), expected);
}

TEST(WebhookFormat, DingTalkMarkdown) {
  const auto expected = nlohmann::json::parse(R"({"msgtype": "markdown", "markdown": {
    "title": "[gpurent] 出网流量日费用超限 / Daily egress cost over threshold",
    "text": "### [gpurent] 严重 critical：出网流量日费用超限 / Daily egress cost over threshold\n\n项目 vision：2026-11-29 出网流量费用 612.40 USD，超过阈值 500.00 USD；出网及超过 10 GB 的上传应由供应商网关冻结，直至管理员解除\n\nProject vision: egress cost 612.40 USD on 2026-11-29 exceeds 500.00 USD; egress and uploads over 10 GB are to be frozen by the supplier's gateways until an admin lifts it\n\n> 告警键 Key: egress_daily_cost:vision:2026-11-29"}})");
  EXPECT_EQ(webhook_body(WebhookType::kDingTalk, egress_alert()), expected);
}

TEST(WebhookFormat, FeishuText) {
  const auto expected = nlohmann::json::parse(R"({"msg_type": "text", "content": {"text":
    "[gpurent] 警告 warning：单卡日费用超限 / Card daily cost over threshold\n显卡 n1/3：2026-11-29 费用 120.00 USD，超过阈值 100.00 USD\nCard n1/3: cost 120.00 USD on 2026-11-29 exceeds 100.00 USD\n告警键 Key: card_daily_cost:n1/3:2026-11-29"}})");
  EXPECT_EQ(webhook_body(WebhookType::kFeishu, card_alert()), expected);
}

TEST(WebhookFormat, WeComMarkdown) {
  const auto expected = nlohmann::json::parse(R"({"msgtype": "markdown", "markdown": {"content":
    "### [gpurent] <font color=\"comment\">警告 warning</font>：单卡日费用超限 / Card daily cost over threshold\n显卡 n1/3：2026-11-29 费用 120.00 USD，超过阈值 100.00 USD\nCard n1/3: cost 120.00 USD on 2026-11-29 exceeds 100.00 USD\n> 告警键 Key: <font color=\"comment\">card_daily_cost:n1/3:2026-11-29</font>"}})");
  EXPECT_EQ(webhook_body(WebhookType::kWeCom, card_alert()), expected);
  const auto critical = webhook_body(WebhookType::kWeCom, egress_alert());
  EXPECT_EQ(critical["markdown"]["content"].get<std::string>().rfind(
                "### [gpurent] <font color=\"warning\">严重 critical</font>：出网流量日费用超限", 0),
            0u);
}

TEST(WebhookFormat, UnsignedRequestsPostTheBodyAsIs) {
  for (auto type : {WebhookType::kGeneric, WebhookType::kDingTalk, WebhookType::kFeishu, WebhookType::kWeCom}) {
    auto r = webhook_request(type, "https://hooks.example/x?k=1", "", egress_alert(), kNov);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->url, "https://hooks.example/x?k=1");
    ASSERT_EQ(r->headers.size(), 1u);
    EXPECT_EQ(r->headers[0], (std::pair<std::string, std::string>{"Content-Type", "application/json; charset=utf-8"}));
    EXPECT_EQ(nlohmann::json::parse(r->body), webhook_body(type, egress_alert()));
    EXPECT_NE(r->body.find("出网流量"), std::string::npos);  // raw UTF-8, not \u escapes
  }
}

// printf '1793491200000\nSEC0123456789abcdef' | openssl dgst -sha256 -hmac 'SEC0123456789abcdef' -binary | base64
constexpr const char* kDingTalkSign = "+mlZeWer89me/JLAuTKIzx3OnQ9b08dmB+Fou6o+R0w=";

TEST(WebhookFormat, DingTalkSigning) {
  EXPECT_EQ(dingtalk_signature("SEC0123456789abcdef", 1'793'491'200'000), kDingTalkSign);
  auto r = webhook_request(WebhookType::kDingTalk, "https://oapi.dingtalk.com/robot/send?access_token=abc",
                           "SEC0123456789abcdef", egress_alert(), 1'793'491'200'000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->url,
            "https://oapi.dingtalk.com/robot/send?access_token=abc&timestamp=1793491200000"
            "&sign=%2BmlZeWer89me%2FJLAuTKIzx3OnQ9b08dmB%2BFou6o%2BR0w%3D");
  EXPECT_EQ(nlohmann::json::parse(r->body), webhook_body(WebhookType::kDingTalk, egress_alert()));
  auto bare = webhook_request(WebhookType::kDingTalk, "https://robot.example/send", "SEC0123456789abcdef",
                              egress_alert(), 1'793'491'200'000);
  EXPECT_EQ(bare->url.substr(0, 43), "https://robot.example/send?timestamp=179349");
}

// printf '' | openssl dgst -sha256 -hmac "$(printf '1793491200\nfeishu-secret')" -binary | base64
constexpr const char* kFeishuSign = "SO4pkd8zZCrFyU2csjlNvHbqwFh1gBh7ujFod9AgmVw=";

TEST(WebhookFormat, FeishuSigning) {
  EXPECT_EQ(feishu_signature("feishu-secret", 1'793'491'200), kFeishuSign);
  // The timestamp is in seconds (milliseconds dropped), as a string, inside the body.
  auto r = webhook_request(WebhookType::kFeishu, "https://open.feishu.cn/open-apis/bot/v2/hook/xyz", "feishu-secret",
                           card_alert(), 1'793'491'200'999);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->url, "https://open.feishu.cn/open-apis/bot/v2/hook/xyz");
  auto expected = webhook_body(WebhookType::kFeishu, card_alert());
  expected["timestamp"] = "1793491200";
  expected["sign"] = kFeishuSign;
  EXPECT_EQ(nlohmann::json::parse(r->body), expected);
}

TEST(WebhookFormat, GenericSigning) {
  // printf '1793491200000.{"a":1}' | openssl dgst -sha256 -hmac 'generic-secret'
  EXPECT_EQ(generic_signature("generic-secret", 1'793'491'200'000, R"({"a":1})"),
            "sha256=b5c7b14ecd150ee7b88fa65fc00951ad64c429f40945013a7ef0d51568cd7b44");
  auto r = webhook_request(WebhookType::kGeneric, "https://hooks.example/in", "generic-secret", egress_alert(),
                           1'793'491'200'000);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->headers.size(), 3u);
  EXPECT_EQ(r->headers[1], (std::pair<std::string, std::string>{"X-Gpurent-Timestamp", "1793491200000"}));
  EXPECT_EQ(r->headers[2].first, "X-Gpurent-Signature");
  EXPECT_EQ(r->headers[2].second, generic_signature("generic-secret", 1'793'491'200'000, r->body));
  EXPECT_EQ(nlohmann::json::parse(r->body), to_json(egress_alert()));
}

TEST(WebhookFormat, WeComRejectsASecret) {
  auto r = webhook_request(WebhookType::kWeCom, "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k", "s",
                           card_alert(), kNov);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "secret");
}

TEST(WebhookFormat, UrlEncode) {
  EXPECT_EQ(percent_encode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(percent_encode("a b+/=&?"), "a%20b%2B%2F%3D%26%3F");
  EXPECT_EQ(percent_encode("中"), "%E4%B8%AD");
}

TEST(WebhookFormat, TypeNames) {
  EXPECT_EQ(enum_parse(kWebhookTypeNames, "feishu"), WebhookType::kFeishu);
  EXPECT_EQ(std::string(enum_name(kWebhookTypeNames, WebhookType::kWeCom)), "wecom");
  EXPECT_FALSE(enum_parse(kWebhookTypeNames, "slack").has_value());
}

}  // namespace
}  // namespace gpurent
