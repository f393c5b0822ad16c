#include "model/volume.h"

#include "core/json_put.h"
#include "model/record_codec.h"

namespace gpurent {

namespace {

constexpr StrRule kVolumeNameRule{.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp};

void read_volume_declared(Fields& f, Volume& v) {
  v.name = f.str("name", kVolumeNameRule);
  v.tenant = f.opt_str("tenant", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp}).value_or("");
  v.size_gb = f.integer("size_gb", 1, kMaxVolumeGb);
  v.description = f.opt_str("description", {.min_len = 1, .max_len = 512});
  v.project = f.opt_str("project", {.min_len = 1, .max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
  v.placement = f.enumeration("placement", kVolumePlacementNames, std::optional(VolumePlacement::kShared));
}

}  // namespace

Result<Volume> parse_volume(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Volume v;
  read_volume_declared(f, v);
  f.ignore({"tenant_id", "project_id", "node_id", "node", "used_bytes", "used_at", "last_copy"});
  ignore_server_keys(f);
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return v;
}

Result<Volume> decode_volume(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Volume v;
  read_volume_declared(f, v);
  v.tenant_id = f.str("tenant_id", kServerText);
  v.project_id = f.opt_str("project_id", kServerText).value_or("");
  v.node_id = f.opt_str("node_id", kServerText).value_or("");
  v.used_bytes = f.opt_integer("used_bytes", 0, INT64_MAX);
  v.used_at = f.opt_time("used_at");
  f.object("last_copy", false, [&](Fields& c) {
    VolumeCopy k;
    k.from_node = c.str("from_node", kServerText);
    k.to_node = c.str("to_node", kServerText);
    k.bytes = c.integer("bytes", 0, INT64_MAX);
    k.ms = c.integer("ms", 0, INT64_MAX);
    k.at = c.time("at");
    k.job_id = c.opt_str("job_id", kServerText).value_or("");
    v.last_copy = k;
  });
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return v;
}

json to_json(const Volume& v) {
  json j = {{"name", v.name}, {"size_gb", v.size_gb}, {"tenant_id", v.tenant_id}};
  if (!v.tenant.empty()) j["tenant"] = v.tenant;
  put_opt(j, "description", v.description);
  put_opt(j, "project", v.project);
  if (!v.project_id.empty()) j["project_id"] = v.project_id;
  if (v.placement != VolumePlacement::kShared) j["placement"] = enum_name(kVolumePlacementNames, v.placement);
  if (!v.node_id.empty()) j["node_id"] = v.node_id;
  put_opt(j, "used_bytes", v.used_bytes);
  if (v.used_at) j["used_at"] = format_rfc3339(*v.used_at);
  if (v.last_copy) {
    j["last_copy"] = {{"from_node", v.last_copy->from_node}, {"to_node", v.last_copy->to_node}, {"bytes", v.last_copy->bytes},
                      {"ms", v.last_copy->ms}, {"at", format_rfc3339(v.last_copy->at)}};
    if (!v.last_copy->job_id.empty()) j["last_copy"]["job_id"] = v.last_copy->job_id;
  }
  return j;
}

IndexCols index_of(const Volume& v) {
  IndexCols c;
  c.name = v.name;
  c.tenant_id = v.tenant_id;
  c.project_id = v.project_id;
  return c;
}

Result<KeptVolume> decode_kept_volume(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  KeptVolume k;
  k.volume_id = f.str("volume_id", kServerText);
  k.volume = f.str("volume", kServerText);
  k.offer_id = f.str("offer_id", kServerText);
  k.contract_id = f.opt_str("contract_id", kServerText).value_or("");
  k.bytes = f.integer("bytes", 0, kMaxVolumeGb * 1'000'000'000);
  k.from = f.time("from");
  if (const json* v = f.raw("to"); v && !v->is_null()) k.to = f.opt_time("to");
  if (!errs.empty()) return errs.to_error();
  return k;
}

json to_json(const KeptVolume& k) {
  return {{"volume_id", k.volume_id}, {"volume", k.volume}, {"offer_id", k.offer_id},
          {"contract_id", k.contract_id}, {"bytes", k.bytes}, {"from", format_rfc3339(k.from)},
          {"to", time_or_null(k.to)}};
}

}  // namespace gpurent
