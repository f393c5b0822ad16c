#include "model/webhook.h"

#include "core/json_put.h"

#include <algorithm>

namespace gpurent {

bool Webhook::wants(AlertKind k) const { return kinds.empty() || std::find(kinds.begin(), kinds.end(), k) != kinds.end(); }

Result<Webhook> parse_webhook(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Webhook w;
  w.name = f.str("name", {.max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
  w.type = f.enumeration("type", kWebhookTypeNames);
  w.url = f.str("url", {.min_len = 8, .max_len = 2048, .pattern = "https?://[^\\s/?#]+([/?#]\\S*)?",
                        .pattern_help = "pattern.url"});
  w.secret = f.opt_str("secret", {.min_len = 1, .max_len = 256});
  w.tenant = f.opt_str("tenant", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
  const std::vector<std::string> kinds = f.str_list("kinds", {.max_len = 32});
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (auto k = enum_parse(kAlertKindNames, kinds[i]))
      w.kinds.push_back(*k);
    else
      f.error("kinds[" + std::to_string(i) + "]",
              Message("webhook.kinds.unknown").arg("choices", enum_choices(kAlertKindNames)));
  }
  ignore_server_keys(f);
  f.ignore({"tenant_id", "secret_set"});
  f.finish();
  if (!errs.empty()) return errs.to_error();
  if (w.type == WebhookType::kWeCom && w.secret) return Error::invalid("secret", Message("webhook.secret.wecom"));
  return w;
}

Result<Webhook> decode_webhook(const json& body) {
  auto w = parse_webhook(body);
  if (!w) return w.error();
  if (auto it = body.find("tenant_id"); it != body.end()) {
    if (!it->is_string()) return Error::invalid("tenant_id", Message("field.string"));
    w->tenant_id = it->get<std::string>();
  }
  return w;
}

json to_json(const Webhook& w) {
  json kinds = json::array();
  for (AlertKind k : w.kinds) kinds.push_back(enum_name(kAlertKindNames, k));
  json j = {{"name", w.name}, {"type", enum_name(kWebhookTypeNames, w.type)}, {"url", w.url}, {"kinds", kinds},
            {"tenant_id", w.tenant_id}};
  put_opt(j, "secret", w.secret);
  put_opt(j, "tenant", w.tenant);
  return j;
}

}  // namespace gpurent
