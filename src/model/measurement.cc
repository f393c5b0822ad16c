#include "model/measurement.h"

#include <algorithm>

#include "core/json_put.h"

#include "model/record_codec.h"

#include "catalog/gpu_model.h"

namespace gpurent {

Result<Measurement> parse_measurement(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Measurement m;
  const json* k = f.raw("kind");
  const bool kind_ok = k && k->is_string() && enum_parse(kMeasurementKindNames, k->get_ref<const std::string&>());
  m.kind = Fields(json{{"kind", k ? *k : json()}}, "", errs).enumeration("kind", kMeasurementKindNames);
  m.node = f.str("node", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
  m.note = f.opt_str("note", {.min_len = 0, .max_len = 1024}).value_or("");
  auto forbid = [&](const char* key, const char* why) {
    if (f.has(key)) {
      f.error(key, Message("measurement.field_not_used").arg("kind", why));
      f.raw(key);
    }
  };
  if (!kind_ok) {
    for (const char* key : {"gpu", "at", "from", "to", "fp16_tflops", "busbw_gbps", "responded_at"}) f.raw(key);
  } else if (m.kind == MeasurementKind::kFp16Tflops) {
    m.gpu = f.integer("gpu", 0, 63);
    m.at = f.time("at");
    if (const json* v = f.raw("fp16_tflops")) {
      auto x10 = parse_tflops_x10(*v);
      if (!x10 || *x10 <= 0)
        f.error("fp16_tflops", Message("measurement.fp16_tflops.invalid"));
      else
        m.tflops_x10 = *x10;
    } else {
      f.error("fp16_tflops", Message("field.required"));
    }
    forbid("from", "fp16_tflops");
    forbid("to", "fp16_tflops");
    forbid("busbw_gbps", "fp16_tflops");
    forbid("responded_at", "fp16_tflops");
  } else {
    m.from = f.time("from");
    m.to = f.time("to");
    if (m.from && m.to && *m.to <= *m.from) f.error("to", Message("measurement.to_before_from"));
    if (m.kind == MeasurementKind::kNcclBusbw) {
      m.busbw_gbps = f.integer("busbw_gbps", 0, 100'000);
      forbid("fp16_tflops", "nccl_busbw");
      forbid("responded_at", "nccl_busbw");
    } else {
      forbid("busbw_gbps", "incident");
      forbid("fp16_tflops", "incident");
      // The first response to the outage: not before it began, not after it was over.
      m.responded_at = f.opt_time("responded_at");
      if (m.responded_at && m.from && m.to && *m.to > *m.from && (*m.responded_at < *m.from || *m.responded_at > *m.to))
        f.error("responded_at", Message("measurement.responded_at_outside")
                                    .arg("from", format_rfc3339(*m.from))
                                    .arg("to", format_rfc3339(*m.to)));
    }
    forbid("gpu", enum_name(kMeasurementKindNames, m.kind));
    forbid("at", enum_name(kMeasurementKindNames, m.kind));
  }
  m.method = f.enumeration("method", kMeasurementMethodNames, std::optional(MeasurementMethod::kManual));
  // A tool's output as it printed it: line breaks and tabs kept, other control characters refused.
  if (const json* e = f.raw("evidence")) {
    const std::string* text = e->is_string() ? &e->get_ref<const std::string&>() : nullptr;
    if (!text)
      f.error("evidence", Message("field.string"));
    else if (text->size() > kMaxEvidenceBytes)
      f.error("evidence", Message("field.max_chars").arg("max", std::to_string(kMaxEvidenceBytes)));
    else if (std::any_of(text->begin(), text->end(), [](unsigned char c) {
               return (c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0x7f;
             }))
      f.error("evidence", Message("measurement.evidence_control"));
    else
      m.evidence = *text;
  }
  m.corrects = f.opt_str("corrects", {.max_len = 64, .pattern = "[a-z]{2,4}_[0-9a-f]{16}", .pattern_help = "pattern.id"});
  ignore_server_keys(f);
  f.ignore({"node_id", "recorded_by", "status", "tenant_id", "resolved_by", "resolved_at", "resolution_note",
            "acceptance_run"});
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return m;
}

Result<Measurement> decode_measurement(const json& body) {
  return with_server_keys(parse_measurement(body), body,
                          [](Fields& f, Measurement& m) {
                            m.node_id = f.opt_str("node_id", kServerText).value_or("");
                            m.recorded_by = f.opt_str("recorded_by", kServerText).value_or("");
                            m.status = f.enumeration("status", kMeasurementStatusNames,
                                                     std::optional(MeasurementStatus::kRecorded));
                            m.tenant_id = f.opt_str("tenant_id", kServerText).value_or("");
                            m.resolved_by = f.opt_str("resolved_by", kServerText).value_or("");
                            m.resolved_at = f.opt_time("resolved_at");
                            m.resolution_note = f.opt_str("resolution_note", kServerText).value_or("");
                            m.acceptance_run = f.opt_str("acceptance_run", kServerText).value_or("");
                          });
}

json to_json(const Measurement& m) {
  json j = {{"kind", enum_name(kMeasurementKindNames, m.kind)}, {"node", m.node}, {"note", m.note}};
  put_opt(j, "gpu", m.gpu);
  put_opt_time(j, "at", m.at);
  put_opt_time(j, "from", m.from);
  put_opt_time(j, "to", m.to);
  put_opt_time(j, "responded_at", m.responded_at);
  if (m.tflops_x10) j["fp16_tflops"] = format_tflops_x10(*m.tflops_x10);
  put_opt(j, "busbw_gbps", m.busbw_gbps);
  j["method"] = enum_name(kMeasurementMethodNames, m.method);
  if (!m.evidence.empty()) j["evidence"] = m.evidence;
  put_opt(j, "corrects", m.corrects);
  if (!m.node_id.empty()) j["node_id"] = m.node_id;
  if (!m.recorded_by.empty()) j["recorded_by"] = m.recorded_by;
  j["status"] = enum_name(kMeasurementStatusNames, m.status);
  if (!m.tenant_id.empty()) j["tenant_id"] = m.tenant_id;
  if (!m.resolved_by.empty()) j["resolved_by"] = m.resolved_by;
  put_opt_time(j, "resolved_at", m.resolved_at);
  if (!m.resolution_note.empty()) j["resolution_note"] = m.resolution_note;
  if (!m.acceptance_run.empty()) j["acceptance_run"] = m.acceptance_run;
  return j;
}

IndexCols index_of(const Measurement& m) {
  IndexCols c;
  c.state = enum_name(kMeasurementKindNames, m.kind);
  return c;
}

}  // namespace gpurent
