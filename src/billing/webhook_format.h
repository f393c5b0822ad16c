// Webhook requests for cost-firewall alerts (billing/firewall.h): the JSON body each kind of
// target expects, and the optional signatures. Pure: the caller passes the time and does the POST.
//
//   generic   every Alert field as one flat JSON object (docs/billing.md#cost-firewall); with a
//             secret, headers X-Gpurent-Timestamp (ms) and X-Gpurent-Signature
//             "sha256=" + hex HMAC-SHA256(secret, timestamp + "." + body).
//   dingtalk  custom robot (自定义机器人): {"msgtype":"markdown","markdown":{"title","text"}}; with a
//             secret (加签), `timestamp` (ms) and `sign` = url-encoded base64
//             HMAC-SHA256(key = secret, message = timestamp + "\n" + secret) as URL query parameters.
//   feishu    custom bot (Feishu and Lark): {"msg_type":"text","content":{"text"}}. Text rather
//             than an interactive card: every Feishu and Lark custom bot accepts it with the same
//             schema, and an alert needs no buttons or layout (the card schema also has two
//             versions). With a secret (签名校验), body fields `timestamp` (seconds, a string) and
//             `sign` = base64 HMAC-SHA256(key = timestamp + "\n" + secret, message = "").
//   wecom     WeCom group robot (企业微信群机器人): {"msgtype":"markdown","markdown":{"content"}};
//             no signing (the key in the URL is the credential), so a secret is an error.
// Every robot message starts with "[gpurent]" (a keyword robots' keyword security can require),
// then the Chinese message, then the English one. Bodies are UTF-8, well under the platforms'
// size limits (WeCom markdown: 4096 bytes).
// Free functions; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "billing/firewall.h"
#include "model/webhook.h"

namespace gpurent {

// {"event":"cost_firewall.alert" (a security alert: "security.alert"; balance: "balance.alert";
//  an instance's release: "instance.alert"),"key","kind","severity","project","subject","from","to" (RFC 3339),
//  "measured","threshold","unit","message_en","message_zh","freeze_egress","upload_limit_bytes",
//  "hold_submissions"}: the generic body, also fit for the API.
nlohmann::json to_json(const Alert& a);

// The unsigned body for a target of `type`.
nlohmann::json webhook_body(WebhookType type, const Alert& a);

// What to POST.
struct WebhookRequest {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // Content-Type first
  std::string body;                                          // UTF-8 JSON
};

// The request for one alert to one target; `secret` empty: unsigned; `now` stamps a signature.
// Errors: a secret for a wecom target ("secret").
Result<WebhookRequest> webhook_request(WebhookType type, std::string_view url, std::string_view secret,
                                       const Alert& a, TimeMs now);

// DingTalk 加签: base64(HMAC-SHA256(key = secret, message = timestamp_ms + "\n" + secret)), not
// yet url-encoded.
std::string dingtalk_signature(std::string_view secret, int64_t timestamp_ms);
// Feishu/Lark 签名校验: base64(HMAC-SHA256(key = timestamp_s + "\n" + secret, message = "")).
std::string feishu_signature(std::string_view secret, int64_t timestamp_s);
// "sha256=" + lowercase hex HMAC-SHA256(key = secret, message = timestamp_ms + "." + body).
std::string generic_signature(std::string_view secret, int64_t timestamp_ms, std::string_view body);
// Percent-encoding of everything but RFC 3986 unreserved characters (A-Z a-z 0-9 - . _ ~).
std::string percent_encode(std::string_view s);

}  // namespace gpurent
