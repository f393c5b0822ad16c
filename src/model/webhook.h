// Webhook: where the cost firewall's alerts are delivered (kind "webhooks", id "whk_…"): a
// generic JSON endpoint or a DingTalk, Feishu/Lark or WeCom group robot (bodies and signatures:
// billing/webhook_format.h), for every tenant or one, for every alert kind or some. Operators
// create and delete them; the secret is write-only in the API. Schema: docs/api.md "Cost firewall: alerts and webhooks".
// Value types and pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/alert.h"
#include "model/resource.h"

namespace gpurent {

enum class WebhookType { kGeneric, kDingTalk, kFeishu, kWeCom };
inline constexpr EnumEntry<WebhookType> kWebhookTypeNames[] = {{WebhookType::kGeneric, "generic"},
                                                               {WebhookType::kDingTalk, "dingtalk"},
                                                               {WebhookType::kFeishu, "feishu"},
                                                               {WebhookType::kWeCom, "wecom"}};

struct Webhook {
  std::string name;  // slug
  WebhookType type = WebhookType::kGeneric;
  std::string url;   // http:// or https://
  std::optional<std::string> secret;  // signs DingTalk/Feishu/generic bodies; WeCom robots take none
  std::optional<std::string> tenant;  // reference as given: only this tenant's alerts
  std::vector<AlertKind> kinds;       // empty: every kind

  std::string tenant_id;  // set by the server from `tenant`; "" for every tenant

  bool wants(AlertKind k) const;
  bool operator==(const Webhook&) const = default;
};

// A create body from the API: errors name the field; tenant_id and secret_set are ignored.
Result<Webhook> parse_webhook(const json& body);
// A stored document: parse_webhook's rules plus the server's tenant_id.
Result<Webhook> decode_webhook(const json& body);
json to_json(const Webhook& w);  // the stored document, secret included (the API hides it)

}  // namespace gpurent
