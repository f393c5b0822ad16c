#include "model/alert.h"

#include "core/json_put.h"

#include "model/record_codec.h"

namespace gpurent {
json alert_fields(const Alert& a) {
  return {{"key", a.key},
          {"kind", enum_name(kAlertKindNames, a.kind)},
          {"severity", enum_name(kAlertSeverityNames, a.severity)},
          {"project", a.project},
          {"subject", a.subject},
          {"from", format_rfc3339(a.from)},
          {"to", format_rfc3339(a.to)},
          {"measured", a.measured},
          {"threshold", a.threshold},
          {"unit", a.unit},
          {"message_en", render(a.message, "en")},
          {"message_zh", render(a.message, "zh")},
          {"freeze_egress", a.freeze_egress},
          {"upload_limit_bytes", a.upload_limit_bytes},
          {"hold_submissions", a.hold_submissions},
          {"stop_work", a.stop_work}};
}

StoredAlert new_stored_alert(Alert a, std::string tenant, std::string tenant_id, std::string project_id, TimeMs now) {
  StoredAlert s;
  s.message_en = render(a.message, "en");
  s.message_zh = render(a.message, "zh");
  s.alert = std::move(a);
  s.tenant = std::move(tenant);
  s.tenant_id = std::move(tenant_id);
  s.project_id = std::move(project_id);
  s.first_seen = now;
  return s;
}

Result<StoredAlert> decode_stored_alert(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  StoredAlert s;
  Alert& a = s.alert;
  a.key = f.str("key", kServerText);
  a.kind = f.enumeration("kind", kAlertKindNames);
  a.severity = f.enumeration("severity", kAlertSeverityNames);
  a.project = f.opt_str("project", kServerText).value_or("");
  a.subject = f.opt_str("subject", kServerText).value_or("");
  a.from = f.time("from");
  a.to = f.time("to");
  a.measured = f.opt_str("measured", kServerText).value_or("");
  a.threshold = f.opt_str("threshold", kServerText).value_or("");
  a.unit = f.opt_str("unit", kServerText).value_or("");
  s.message_en = f.opt_str("message_en", kServerText).value_or("");
  s.message_zh = f.opt_str("message_zh", kServerText).value_or("");
  f.ignore({"text"});  // rendered from text_message
  a.message = stored_message(f, "text_message").value_or(verbatim(s.message_en));  // none: stored before codes
  a.freeze_egress = f.boolean("freeze_egress", false);
  a.upload_limit_bytes = f.opt_integer("upload_limit_bytes", 0, INT64_MAX).value_or(0);
  a.hold_submissions = f.boolean("hold_submissions", false);
  a.stop_work = f.boolean("stop_work", false);
  s.tenant = f.opt_str("tenant", kServerText).value_or("");
  s.tenant_id = f.opt_str("tenant_id", kServerText).value_or("");
  s.project_id = f.opt_str("project_id", kServerText).value_or("");
  s.state = f.enumeration("state", kAlertStateNames);
  s.first_seen = f.time("first_seen");
  s.resolved_at = f.opt_time("resolved_at");
  s.lifted_at = f.opt_time("lifted_at");
  s.lifted_by = f.opt_str("lifted_by", kServerText).value_or("");
  f.objects("deliveries", false, 1 << 20, [&](Fields& d, size_t) {
    AlertDelivery x;
    x.webhook = d.str("webhook", kServerText);
    x.at = d.time("at");
    x.status = d.opt_integer("status", 0, 999);
    x.error = d.opt_str("error", kServerText);
    s.deliveries.push_back(std::move(x));
  });
  s.delivery_pending = f.boolean("delivery_pending", false);
  if (!errs.empty()) return errs.to_error();
  return s;
}

json to_json(const StoredAlert& s) {
  json j = alert_fields(s.alert);
  j["message_en"] = s.message_en;
  j["message_zh"] = s.message_zh;
  j["tenant"] = s.tenant;
  j["tenant_id"] = s.tenant_id;
  j["project_id"] = s.project_id;
  j["state"] = enum_name(kAlertStateNames, s.state);
  j["first_seen"] = format_rfc3339(s.first_seen);
  put_opt_time(j, "resolved_at", s.resolved_at);
  put_opt_time(j, "lifted_at", s.lifted_at);
  if (!s.lifted_by.empty()) j["lifted_by"] = s.lifted_by;
  json deliveries = json::array();
  for (const auto& d : s.deliveries) {
    json x = {{"webhook", d.webhook}, {"at", format_rfc3339(d.at)}};
    put_opt(x, "status", d.status);
    put_opt(x, "error", d.error);
    deliveries.push_back(std::move(x));
  }
  j["deliveries"] = std::move(deliveries);
  if (s.delivery_pending) j["delivery_pending"] = true;
  j["text"] = render_en(s.alert.message);
  j["text_message"] = message_to_json(s.alert.message);
  return j;
}

}  // namespace gpurent
