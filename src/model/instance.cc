#include "model/instance.h"

#include <algorithm>

#include "model/record_codec.h"
#include "model/volume.h"

namespace gpurent {

namespace {

constexpr StrRule kInstanceNameRule{.min_len = 1, .max_len = 57, .pattern = kSlug, .pattern_help = kSlugHelp};
constexpr StrRule kProjectRefRule{.min_len = 1, .max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp};
constexpr const char* kJobFieldKeys[] = {"resources", "image", "command", "env", "billing"};
// The job constraints an instance may state itself (its GPU model is `gpu_model`, its host its last).
constexpr const char* kInstanceConstraintKeys[] = {"regions", "suppliers"};
constexpr StrRule kVolumeRefRule{.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp};

// A shared volume: {name, mount (default /shared/<name>), read_only}.
VolumeMount read_shared(Fields& v) {
  VolumeMount m;
  m.name = v.str("name", kVolumeRefRule);
  m.mount = v.opt_str("mount", {.min_len = 1, .max_len = 4096}).value_or("/shared/" + m.name);
  m.read_only = v.boolean("read_only", false);
  return m;
}

void read_instance_declared(Fields& f, Instance& i) {
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
    m.name = v.str("name", kVolumeRefRule);
    m.mount = v.opt_str("mount", {.min_len = 1, .max_len = 4096}).value_or("/data");
    i.volume_size_gb = v.opt_integer("size_gb", 1, kMaxVolumeGb);
    v.finish();
    i.volume = std::move(m);
  });
  f.objects("shared_volumes", false, kMaxSharedVolumes, [&](Fields& v, size_t) { i.shared_volumes.push_back(read_shared(v)); });
  // 4 KiB holds any OpenSSH public key (an RSA-16384 key is about 2.8 KB); 16 of them stay well
  // under the kernel's 128 KiB limit on one argument, which the container's entry script is.
  i.ssh_keys = f.str_list("ssh_keys", {.min_len = 1, .max_len = 4096});
  if (i.ssh_keys.size() > kMaxInstanceSshKeys)
    f.error("ssh_keys", Message("instance.ssh_keys.too_many").arg("max", std::to_string(kMaxInstanceSshKeys)));
  for (size_t k = 0; k < i.ssh_keys.size(); ++k)
    if (auto why = ssh_key_problem(i.ssh_keys[k]))
      f.error("ssh_keys[" + std::to_string(k) + "]", std::move(*why));
  i.notebook = f.boolean("notebook", false);
  i.idle_stop = read_idle_stop(f, "idle_stop");
  for (const char* k : kJobFieldKeys)
    if (const json* v = f.raw(k); v && !v->is_null()) i.job_fields[k] = *v;
  f.object("constraints", false, [&](Fields& c) {
    json kept = json::object();
    for (const char* k : kInstanceConstraintKeys)
      if (const json* v = c.raw(k); v && !v->is_null()) kept[k] = *v;
    c.finish();  // any other key is refused by name (gpu_model is the instance's own field)
    if (!kept.empty()) i.job_fields["constraints"] = std::move(kept);
  });
}

// Standard base64 (RFC 4648, padded) to bytes; nullopt when it is not.
std::optional<std::string> base64_decode(const std::string& in) {
  if (in.empty() || in.size() % 4 != 0) return std::nullopt;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (size_t k = 0; k < in.size(); ++k) {
    const char c = in[k];
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+') v = 62;
    else if (c == '/') v = 63;
    else if (c == '=' && k + 2 >= in.size()) { ++pad; continue; }
    else return std::nullopt;
    if (pad) return std::nullopt;  // data after padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace

Result<Instance> parse_instance(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Instance i;
  read_instance_declared(f, i);
  f.ignore({"tenant_id", "project_id", "state", "job_ids", "want_running", "stop_reason", "stop_reason_message",
            "current_job", "reason", "cost_per_hour", "stop_reason_text", "stops_at", "cost_until_stop",
            "ssh_port", "notebook_port", "access", "idle_stop_in_force", "utilization", "release_at",
            "release_after_days", "stopping_job", "stopping_since", "stopping_gone_at", "released_at"});
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
  read_instance_declared(f, i);
  i.tenant_id = f.str("tenant_id", kServerText);
  i.project_id = f.str("project_id", kServerText);
  i.want_running = f.boolean("want_running", true);
  i.job_ids = f.str_list("job_ids", kServerText);
  i.stop_reason = stored_message(f, "stop_reason");
  i.ssh_port = f.opt_integer("ssh_port", 1, 65535).value_or(0);
  i.notebook_port = f.opt_integer("notebook_port", 1, 65535).value_or(0);
  i.notebook_token = f.opt_str("notebook_token", {.min_len = 0, .max_len = 128}).value_or("");
  i.stopping_job = f.opt_str("stopping_job", kServerText).value_or("");
  i.stopping_since = f.opt_time("stopping_since").value_or(0);
  i.stopping_gone_at = f.opt_time("stopping_gone_at").value_or(0);
  i.released_at = f.opt_time("released_at");
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
  if (!i.shared_volumes.empty()) {
    j["shared_volumes"] = json::array();
    for (const VolumeMount& m : i.shared_volumes)
      j["shared_volumes"].push_back({{"name", m.name}, {"mount", m.mount}, {"read_only", m.read_only}});
  }
  if (i.stop_after_minutes) j["stop_after_minutes"] = *i.stop_after_minutes;
  if (i.stop_at) j["stop_at"] = format_rfc3339(*i.stop_at);
  for (const auto& [k, v] : i.job_fields.items()) j[k] = v;
  if (i.idle_stop) j["idle_stop"] = idle_stop_json(*i.idle_stop);
  j["ssh_keys"] = i.ssh_keys;
  j["notebook"] = i.notebook;
  if (i.ssh_port) j["ssh_port"] = i.ssh_port;
  if (i.notebook_port) j["notebook_port"] = i.notebook_port;
  if (!i.notebook_token.empty()) j["notebook_token"] = i.notebook_token;
  if (i.stop_reason) {
    j["stop_reason"] = message_to_json(*i.stop_reason);
    j["stop_reason_text"] = render_en(*i.stop_reason);
  }
  if (!i.stopping_job.empty()) {
    j["stopping_job"] = i.stopping_job;
    j["stopping_since"] = format_rfc3339(i.stopping_since);
    if (i.stopping_gone_at) j["stopping_gone_at"] = format_rfc3339(i.stopping_gone_at);
  }
  if (i.released_at) j["released_at"] = format_rfc3339(*i.released_at);
  return j;
}

IndexCols index_of(const Instance& i) {
  IndexCols c;
  c.name = i.name;
  c.tenant_id = i.tenant_id;
  c.project_id = i.project_id;
  c.gpu_model = i.gpu_model.value_or("");
  if (!i.stopping_job.empty()) c.state = "stopping";  // found each tick without reading them all
  if (i.released_at) {
    c.name.clear();  // free for a new instance at once
    // Its last run may still be stopping: found each tick as stopping until it has gone.
    if (i.stopping_job.empty()) c.state = "released";
  }
  return c;
}

void mark_released(Instance& i, const Message& why, TimeMs now) {
  i.released_at = now;
  i.want_running = false;
  i.stop_reason = why;
  // stopping_job stays: until the last run has gone, its volumes and ports are still in use.
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
  if (i.volume || !i.shared_volumes.empty()) {
    j["volumes"] = json::array();
    if (i.volume) j["volumes"].push_back({{"name", i.volume->name}, {"mount", i.volume->mount}});
    for (const VolumeMount& m : i.shared_volumes)
      j["volumes"].push_back({{"name", m.name}, {"mount", m.mount}, {"read_only", m.read_only}});
  }
  if (limit) j["time_limit_seconds"] = *limit;
  for (const auto& [k, v] : i.job_fields.items()) {
    if (k != "constraints") {
      j[k] = v;
      continue;
    }
    if (!j["constraints"].is_object()) j["constraints"] = json::object();
    for (const auto& [ck, cv] : v.items()) j["constraints"][ck] = cv;
  }
  return j;
}

Result<VolumeAttach> parse_volume_attach(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  VolumeAttach a;
  a.shared = f.boolean("shared", false);
  if (a.shared) {
    a.mount = read_shared(f);
  } else {
    a.mount.name = f.str("name", kVolumeRefRule);
    a.mount.mount = f.opt_str("mount", {.min_len = 1, .max_len = 4096}).value_or("/data");
    if (f.boolean("read_only", false)) f.error("read_only", Message("instance.volume.data_read_only"));
  }
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return a;
}

Result<std::string> parse_volume_detach(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  std::string name = f.str("name", kVolumeRefRule);
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return name;
}

Result<StartOn> parse_start_request(const json& body) {
  if (body.is_object() && body.empty()) return StartOn::kAuto;
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  const StartOn on = f.enumeration("on", kStartOnNames, std::optional(StartOn::kAuto));
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return on;
}

json start_job_on(json job, StartOn on, const std::string& host) {
  if (on == StartOn::kCpuOnly) {
    job["gpus_per_worker"] = 0;
    // What the GPUs were to be (model, memory, form factor, RDMA, placement) goes; where it may run
    // and who may sell it (regions, suppliers) stay: a CPU-only start keeps the data where it was.
    if (job.contains("constraints") && job["constraints"].is_object()) {
      json kept = json::object();
      for (const char* k : {"regions", "suppliers", "span_sites"})
        if (job["constraints"].contains(k)) kept[k] = job["constraints"][k];
      if (kept.empty())
        job.erase("constraints");
      else
        job["constraints"] = std::move(kept);
    }
    json& res = job["resources"];
    if (!res.is_object()) res = json::object();
    if (!res.contains("cpu_cores")) res["cpu_cores"] = kCpuOnlyStartCores;
    if (!res.contains("memory_gib")) res["memory_gib"] = kCpuOnlyStartMemoryGib;
  }
  if (!host.empty()) {
    if (!job["constraints"].is_object()) job["constraints"] = json::object();
    job["constraints"]["nodes"] = {host};
  }
  return job;
}

TimeMs release_time(TimeMs stopped_at, int64_t days) { return stopped_at + days * 86'400'000; }

std::vector<int64_t> release_warnings_due(TimeMs now, TimeMs stopped_at, TimeMs release_at) {
  std::vector<int64_t> due;
  for (int64_t d : kReleaseWarningDays)
    if (now >= std::max(stopped_at, release_at - d * 86'400'000) && now < release_at) due.push_back(d);
  return due;
}

std::string instance_field(const std::string& job_field, bool has_volume) {
  if (job_field == "gpus_per_worker") return "gpus";
  if (job_field.rfind("constraints.gpu_models", 0) == 0) return "gpu_model";
  if (job_field.rfind("volumes[", 0) == 0) {
    const size_t close = job_field.find(']');
    const std::string digits = close == std::string::npos ? "" : job_field.substr(8, close - 8);
    if (!digits.empty() && digits.size() < 4 && digits.find_first_not_of("0123456789") == std::string::npos) {
      const int k = std::stoi(digits);
      const std::string rest = job_field.substr(close + 1);  // ".name", ".mount", ""
      if (has_volume && k == 0) return rest.empty() ? "volume" : "volume" + rest;
      return "shared_volumes[" + std::to_string(has_volume ? k - 1 : k) + "]" + rest;
    }
  }
  if (job_field == "volumes") return has_volume ? "volume" : "shared_volumes";
  if (job_field == "time_limit_seconds") return "stop_after_minutes";
  return job_field;
}

std::optional<Message> ssh_key_problem(const std::string& key) {
  static constexpr const char* kTypes[] = {"ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384",
                                           "ecdsa-sha2-nistp521", "sk-ssh-ed25519@openssh.com",
                                           "sk-ecdsa-sha2-nistp256@openssh.com"};
  for (unsigned char c : key)
    if (c < 0x20 || c > 0x7e) return Message("instance.ssh_key.one_line");
  const size_t sp = key.find(' ');
  const std::string type = key.substr(0, sp);
  bool known = false;
  for (const char* t : kTypes) known = known || type == t;
  if (!known) return Message("instance.ssh_key.type").arg("type", type.substr(0, 40));
  if (sp == std::string::npos) return Message("instance.ssh_key.no_key");
  const size_t sp2 = key.find(' ', sp + 1);
  const std::string blob = key.substr(sp + 1, sp2 == std::string::npos ? std::string::npos : sp2 - sp - 1);
  auto raw = base64_decode(blob);
  if (!raw || raw->size() < 4 + type.size()) return Message("instance.ssh_key.not_base64");
  const uint32_t n = (uint32_t(uint8_t((*raw)[0])) << 24) | (uint32_t(uint8_t((*raw)[1])) << 16) |
                     (uint32_t(uint8_t((*raw)[2])) << 8) | uint32_t(uint8_t((*raw)[3]));
  if (n != type.size() || raw->compare(4, n, type) != 0) return Message("instance.ssh_key.type_mismatch").arg("type", type);
  return std::nullopt;
}

}  // namespace gpurent
