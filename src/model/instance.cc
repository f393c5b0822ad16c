#include "model/instance.h"

#include "model/record_codec.h"

namespace gpurent {

namespace {

constexpr StrRule kInstanceNameRule{.min_len = 1, .max_len = 57, .pattern = kSlug, .pattern_help = kSlugHelp};
constexpr StrRule kProjectRefRule{.min_len = 1, .max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp};
constexpr const char* kJobFieldKeys[] = {"resources", "image", "command", "env"};

void read_declared(Fields& f, Instance& i) {
  i.name = f.str("name", kInstanceNameRule);
  i.project = f.str("project", kProjectRefRule);
  const json* gpus = f.raw("gpus");
  const bool gpus_ok = !gpus || gpus->is_null() || (gpus->is_number_integer() && gpus->get<int64_t>() >= 0 &&
                                                    gpus->get<int64_t>() <= kMaxInstanceGpus);
  i.gpus = f.opt_integer("gpus", 0, kMaxInstanceGpus).value_or(0);
  i.gpu_model = f.opt_str("gpu_model", {.min_len = 1, .max_len = 64});
  if (gpus_ok && i.gpus > 0 && !i.gpu_model && !f.has("gpu_model"))  // one mistake, one error
    f.error("gpu_model", Message("instance.gpu_model.required"));
  if (gpus_ok && i.gpus == 0 && i.gpu_model) f.error("gpu_model", Message("instance.gpu_model.cpu_only"));
  i.stop_after_minutes = f.opt_integer("stop_after_minutes", 1, kMaxJobDurationSeconds / 60);
  i.stop_at = f.opt_time("stop_at");
  f.object("volume", false, [&](Fields& v) {
    VolumeMount m;
    m.name = v.str("name", {.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
    m.mount = v.opt_str("mount", {.min_len = 1, .max_len = 4096}).value_or("/data");
    v.finish();
    i.volume = std::move(m);
  });
  for (const char* k : kJobFieldKeys)
    if (const json* v = f.raw(k); v && !v->is_null()) i.job_fields[k] = *v;
}

}  // namespace

Result<Instance> parse_instance(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Instance i;
  read_declared(f, i);
  f.ignore({"tenant_id", "project_id", "state", "job_ids", "want_running", "stop_reason", "stop_reason_message",
            "current_job", "reason", "cost_per_hour", "stop_reason_text", "stops_at", "cost_until_stop"});
  ignore_server_keys(f);
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return i;
}

Result<Instance> decode_instance(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Instance i;
  read_declared(f, i);
  i.tenant_id = f.str("tenant_id", kServerText);
  i.project_id = f.str("project_id", kServerText);
  i.want_running = f.boolean("want_running", true);
  i.job_ids = f.str_list("job_ids", kServerText);
  i.stop_reason = stored_message(f, "stop_reason");
  f.ignore({"stop_reason_text"});
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return i;
}

json to_json(const Instance& i) {
  json j = {{"name", i.name},           {"project", i.project},     {"gpus", i.gpus},
            {"tenant_id", i.tenant_id}, {"project_id", i.project_id}, {"want_running", i.want_running},
            {"job_ids", i.job_ids}};
  if (i.gpu_model) j["gpu_model"] = *i.gpu_model;
  if (i.volume) j["volume"] = {{"name", i.volume->name}, {"mount", i.volume->mount}};
  if (i.stop_after_minutes) j["stop_after_minutes"] = *i.stop_after_minutes;
  if (i.stop_at) j["stop_at"] = format_rfc3339(*i.stop_at);
  for (const auto& [k, v] : i.job_fields.items()) j[k] = v;
  if (i.stop_reason) {
    j["stop_reason"] = message_to_json(*i.stop_reason);
    j["stop_reason_text"] = render_en(*i.stop_reason);
  }
  return j;
}

IndexCols index_of(const Instance& i) {
  IndexCols c;
  c.name = i.name;
  c.tenant_id = i.tenant_id;
  c.project_id = i.project_id;
  c.gpu_model = i.gpu_model.value_or("");
  return c;
}

Result<json> instance_job(const Instance& i, int64_t n, TimeMs now) {
  std::optional<int64_t> limit;
  if (i.stop_after_minutes) limit = *i.stop_after_minutes * 60;
  if (i.stop_at) {
    if (*i.stop_at <= now)
      return Error::invalid("stop_at", Message("instance.stop_at.past").arg("at", format_rfc3339(*i.stop_at)));
    const int64_t s = (*i.stop_at - now + 999) / 1000;  // whole seconds, rounded up
    if (s > kMaxJobDurationSeconds) return Error::invalid("stop_at", Message("instance.stop_at.too_far"));
    limit = limit ? std::min(*limit, s) : s;
  }
  json j = {{"name", i.name + "-" + std::to_string(n)},
            {"project", i.project_id.empty() ? i.project : i.project_id},
            {"kind", "debug"},
            {"workers", 1},
            {"gpus_per_worker", i.gpus},
            {"labels", {{kInstanceLabel, i.name}}}};
  if (i.gpu_model) j["constraints"] = {{"gpu_models", {*i.gpu_model}}};
  if (i.volume) j["volumes"] = {{{"name", i.volume->name}, {"mount", i.volume->mount}}};
  if (limit) j["time_limit_seconds"] = *limit;
  for (const auto& [k, v] : i.job_fields.items()) j[k] = v;
  return j;
}

std::string instance_field(const std::string& job_field) {
  if (job_field == "gpus_per_worker") return "gpus";
  if (job_field.rfind("constraints.gpu_models", 0) == 0) return "gpu_model";
  if (job_field.rfind("volumes[0].", 0) == 0) return "volume." + job_field.substr(11);
  if (job_field == "volumes") return "volume";
  if (job_field == "time_limit_seconds") return "stop_after_minutes";
  return job_field;
}

}  // namespace gpurent
