// Webhook bodies and signatures for cost-firewall alerts (billing/webhook_format.h).
#include "billing/webhook_format.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace gpurent {

namespace {

struct Titles {
  const char* zh;
  const char* en;
};

Titles kind_title(AlertKind k) {
  switch (k) {
    case AlertKind::kCardDailyCost: return {"单卡日费用超限", "Card daily cost over threshold"};
    case AlertKind::kStorageIoShare: return {"存储 I/O 费用占比过高", "Storage I/O share of cost over threshold"};
    case AlertKind::kEgressDailyCost: return {"出网流量日费用超限", "Daily egress cost over threshold"};
    case AlertKind::kBudgetBreach: return {"项目月度预算已用尽", "Monthly project budget reached"};
    case AlertKind::kArtifactDigestMismatch: return {"制品校验和不符（安全）", "Artifact digest mismatch (security)"};
    case AlertKind::kBalanceLow: return {"余额即将用尽", "Balance running low"};
    case AlertKind::kBalanceExhausted: return {"余额已用尽，运行中的作业已停止", "Balance exhausted: running work stopped"};
    case AlertKind::kInstanceRelease: return {"已停止的实例将被释放", "Stopped instance to be released"};
  }
  return {"?", "?"};
}

std::string severity_text(AlertSeverity s) {
  return s == AlertSeverity::kCritical ? "严重 critical" : "警告 warning";
}

// "出网流量日费用超限 / Daily egress cost over threshold"
std::string title(const Alert& a) {
  const Titles t = kind_title(a.kind);
  return std::string(t.zh) + " / " + t.en;
}

std::string hmac_sha256(std::string_view key, std::string_view msg) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(msg.data()),
       msg.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string hex(const std::string& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace

nlohmann::json to_json(const Alert& a) {
  nlohmann::json j = alert_fields(a);
  // A cost rule's alert, or a security alert (an artifact's digest).
  j["event"] = a.kind == AlertKind::kArtifactDigestMismatch                                   ? "security.alert"
               : a.kind == AlertKind::kBalanceLow || a.kind == AlertKind::kBalanceExhausted ? "balance.alert"
               : a.kind == AlertKind::kInstanceRelease                                      ? "instance.alert"
                                                                                             : "cost_firewall.alert";
  return j;
}

nlohmann::json webhook_body(WebhookType type, const Alert& a) {
  const std::string head = "[gpurent] " + severity_text(a.severity) + "：" + title(a);
  switch (type) {
    case WebhookType::kGeneric: return to_json(a);
    case WebhookType::kDingTalk:
      return {{"msgtype", "markdown"},
              {"markdown",
               {{"title", "[gpurent] " + title(a)},
                {"text", "### " + head + "\n\n" + render(a.message, "zh") + "\n\n" + render(a.message, "en") + "\n\n> 告警键 Key: " + a.key}}}};
    case WebhookType::kFeishu:
      return {{"msg_type", "text"},
              {"content", {{"text", head + "\n" + render(a.message, "zh") + "\n" + render(a.message, "en") + "\n告警键 Key: " + a.key}}}};
    case WebhookType::kWeCom: {
      const char* color = a.severity == AlertSeverity::kCritical ? "warning" : "comment";
      return {{"msgtype", "markdown"},
              {"markdown",
               {{"content", "### [gpurent] <font color=\"" + std::string(color) + "\">" + severity_text(a.severity) +
                                "</font>：" + title(a) + "\n" + render(a.message, "zh") + "\n" + render(a.message, "en") +
                                "\n> 告警键 Key: <font color=\"comment\">" + a.key + "</font>"}}}};
    }
  }
  return to_json(a);
}

Result<WebhookRequest> webhook_request(WebhookType type, std::string_view url, std::string_view secret,
                                       const Alert& a, TimeMs now) {
  WebhookRequest r{std::string(url), {{"Content-Type", "application/json; charset=utf-8"}}, ""};
  nlohmann::json body = webhook_body(type, a);
  if (!secret.empty()) {
    switch (type) {
      case WebhookType::kGeneric:
        r.body = dump(body);
        r.headers.emplace_back("X-Gpurent-Timestamp", std::to_string(now));
        r.headers.emplace_back("X-Gpurent-Signature", generic_signature(secret, now, r.body));
        return r;
      case WebhookType::kDingTalk:
        r.url += (url.find('?') == std::string_view::npos ? "?" : "&");
        r.url += "timestamp=" + std::to_string(now) + "&sign=" + percent_encode(dingtalk_signature(secret, now));
        break;
      case WebhookType::kFeishu: {
        const int64_t seconds = now / 1000;
        body["timestamp"] = std::to_string(seconds);
        body["sign"] = feishu_signature(secret, seconds);
        break;
      }
      case WebhookType::kWeCom:
        return Error::invalid("secret", Message("webhook.wecom_unsigned"));
    }
  }
  r.body = dump(body);
  return r;
}

std::string dingtalk_signature(std::string_view secret, int64_t timestamp_ms) {
  return base64(hmac_sha256(secret, std::to_string(timestamp_ms) + "\n" + std::string(secret)));
}

std::string feishu_signature(std::string_view secret, int64_t timestamp_s) {
  return base64(hmac_sha256(std::to_string(timestamp_s) + "\n" + std::string(secret), ""));
}

std::string generic_signature(std::string_view secret, int64_t timestamp_ms, std::string_view body) {
  return "sha256=" + hex(hmac_sha256(secret, std::to_string(timestamp_ms) + "." + std::string(body)));
}

std::string percent_encode(std::string_view s) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kDigits[c >> 4];
      out += kDigits[c & 15];
    }
  }
  return out;
}

}  // namespace gpurent
