#include "model/fault.h"

#include "model/record_codec.h"

namespace gpurent {

Result<Fault> decode_fault(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Fault x;
  x.name = f.str("name", kServerText);
  x.job = f.str("job", kServerText);
  x.node = f.str("node", kServerText);
  x.tenant_id = f.opt_str("tenant_id", kServerText).value_or("");
  x.project_id = f.opt_str("project_id", kServerText).value_or("");
  x.supplier_id = f.opt_str("supplier_id", kServerText).value_or("");
  x.at = f.time("at");
  const std::string en = f.opt_str("reason", kServerText).value_or("");
  x.reason = stored_message(f, "reason_message").value_or(verbatim(en));  // none: stored before codes
  if (!errs.empty()) return errs.to_error();
  return x;
}

json to_json(const Fault& f) {
  return {{"name", f.name},
          {"job", f.job},
          {"node", f.node},
          {"tenant_id", f.tenant_id},
          {"project_id", f.project_id},
          {"supplier_id", f.supplier_id},
          {"at", format_rfc3339(f.at)},
          {"reason", render_en(f.reason)},
          {"reason_message", message_to_json(f.reason)}};
}

}  // namespace gpurent
