#include "model/job.h"
#include "model/enums_supply.h"

#include "core/json_put.h"

#include <regex>
#include <set>

namespace gpurent {
namespace {

constexpr StrRule kNameRule{.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp};
constexpr StrRule kProjectRule{.min_len = 1, .max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp};
constexpr StrRule kGpuModelRule{.min_len = 1, .max_len = 64, .pattern = "\\S(.{0,62}\\S)?",
                                .pattern_help = "pattern.gpu_model_ref"};
// OCI image reference: [registry[:port]/]path[:tag][@sha256:digest], lowercase path components.
constexpr StrRule kImageRule{
    .min_len = 1,
    .max_len = 512,
    .pattern = "[a-z0-9]+([._-]+[a-z0-9]+)*(:[0-9]{1,5})?(/[a-z0-9]+([._-]+[a-z0-9]+)*)*"
               "(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?",
    .pattern_help = "pattern.job_image"};

// An absolute path on the node, printable, no "..": where the command starts.
constexpr StrRule kWorkdirRule{.min_len = 1, .max_len = 4096, .pattern = "/([^\\x00-\\x1f\\x7f]*)",
                               .pattern_help = "pattern.workdir"};

bool valid_env_name(const std::string& k) {
  if (k.empty() || k.size() > 128) return false;  // before the regex: it recurses per character
  static const std::regex re("[A-Za-z_][A-Za-z0-9_]{0,127}");
  return std::regex_match(k, re);
}

// Variables the platform sets for every worker; a job must not override them.
std::optional<Message> reserved_env_reason(const std::string& k) {
  if (k.rfind("GPURENT_", 0) == 0) return Message("job.env.reserved_prefix");
  if (k == "CUDA_VISIBLE_DEVICES" || k == "NVIDIA_VISIBLE_DEVICES") return Message("job.env.platform_set");
  return std::nullopt;
}

// A path inside the container that is plain ("/data/x": no empty, "." or ".." segment) and not
// /, nor under /proc, /sys, /dev or /.gpurent (an instance's tmpfs); errors on `key`.
void check_container_path(Fields& v, const char* key, const std::string& p) {
  if (p.empty()) return;  // already reported
  const std::string path = p + "/";
  // ':' and ',' separate the parts of a container runtime's mount option.
  const bool plain = p != "/" && path.find("//") == std::string::npos && path.find("/./") == std::string::npos &&
                     path.find("/../") == std::string::npos && p.find_first_of(":,") == std::string::npos;
  const std::string top = p.substr(0, p.find('/', 1));
  if (!plain && p != "/")
    v.error(key, Message("job.volumes.mount_plain").arg("mount", p));
  else if (p == "/" || top == "/proc" || top == "/sys" || top == "/dev" || top == "/.gpurent")
    v.error(key, Message("job.volumes.mount_reserved").arg("mount", p));
}

// secrets: [{name, env} | {name, file}], distinct variables and files.
void read_secrets(Fields& f, Job& j) {
  std::set<std::string> envs, files;
  f.objects("secrets", false, kMaxJobSecrets, [&](Fields& v, size_t) {
    JobSecret s;
    s.name = v.str("name", {.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
    const bool has_env = v.has("env"), has_file = v.has("file");
    if (has_env == has_file) v.error(has_env ? "file" : "env", Message("job.secrets.env_or_file"));
    if (has_env) {
      s.env = v.str("env", {.min_len = 1, .max_len = 128});
      if (!s.env.empty() && !valid_env_name(s.env))
        v.error("env", Message("job.env.bad_name"));
      else if (auto why = reserved_env_reason(s.env))
        v.error("env", *why);
      else if (!s.env.empty() && !envs.insert(s.env).second)
        v.error("env", Message("job.secrets.duplicate").arg("value", s.env));
    }
    if (has_file) {
      s.file = v.str("file", kWorkdirRule);
      check_container_path(v, "file", s.file);
      if (!s.file.empty() && !files.insert(s.file).second)
        v.error("file", Message("job.secrets.duplicate").arg("value", s.file));
      for (const VolumeMount& m : j.volumes)  // a file inside a volume would hide or be hidden
        if (!s.file.empty() && (s.file == m.mount || s.file.rfind(m.mount + "/", 0) == 0))
          v.error("file", Message("job.secrets.in_volume").arg("file", s.file).arg("mount", m.mount));
    }
    j.secrets.push_back(std::move(s));
  });
  for (size_t i = 0; i < j.secrets.size(); ++i)
    if (!j.secrets[i].env.empty() && j.env.count(j.secrets[i].env))
      f.error("secrets[" + std::to_string(i) + "].env", Message("job.secrets.env_taken").arg("name", j.secrets[i].env));
}

// artifacts: [{name, sha256, mount}], distinct mounts, none inside a volume or on a secret's file.
void read_artifacts(Fields& f, Job& j) {
  std::set<std::string> mounts;
  f.objects("artifacts", false, kMaxJobArtifacts, [&](Fields& v, size_t) {
    JobArtifact a;
    a.name = v.str("name", {.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
    a.sha256 = v.str("sha256", {.min_len = 64, .max_len = 64, .pattern = "[0-9a-fA-F]{64}", .pattern_help = "pattern.sha256"});
    for (char& c : a.sha256)
      if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
    a.mount = v.str("mount", kWorkdirRule);
    check_container_path(v, "mount", a.mount);
    if (!a.mount.empty() && !mounts.insert(a.mount).second)
      v.error("mount", Message("job.artifacts.duplicate").arg("value", a.mount));
    for (const VolumeMount& m : j.volumes)
      if (!a.mount.empty() && (a.mount == m.mount || a.mount.rfind(m.mount + "/", 0) == 0))
        v.error("mount", Message("job.artifacts.in_volume").arg("mount", a.mount).arg("volume", m.mount));
    for (const JobSecret& s : j.secrets)
      if (!a.mount.empty() && a.mount == s.file)
        v.error("mount", Message("job.artifacts.duplicate").arg("value", a.mount));
    j.artifacts.push_back(std::move(a));
  });
}

// volumes: [{name, mount, read_only}], distinct names and mount points.
void read_volumes(Fields& f, Job& j) {
  std::set<std::string> names, mounts;
  f.objects("volumes", false, kMaxVolumes, [&](Fields& v, size_t) {
    VolumeMount m;
    m.name = v.str("name", {.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
    m.mount = v.str("mount", kWorkdirRule);
    m.read_only = v.boolean("read_only", false);
    check_container_path(v, "mount", m.mount);
    if (!m.name.empty() && !names.insert(m.name).second)
      v.error("name", Message("job.volumes.duplicate").arg("value", m.name));
    if (!m.mount.empty() && !mounts.insert(m.mount).second)
      v.error("mount", Message("job.volumes.duplicate").arg("value", m.mount));
    j.volumes.push_back(std::move(m));
  });
}

// An optional enum key (absent and null both mean "not given").
template <class E, size_t N>
std::optional<E> opt_enum(Fields& f, const char* key, const EnumEntry<E> (&table)[N]) {
  if (!f.has(key)) {
    f.raw(key);
    return std::nullopt;
  }
  return f.enumeration(key, table);
}

std::map<std::string, std::string> read_env(Fields& f) {
  std::map<std::string, std::string> env;
  const json* raw = f.raw("env");
  if (!raw) return env;
  if (raw->is_object() && raw->size() > kMaxEnvVars) {
    f.error("env", Message("job.env.too_many")
                       .arg("max", std::to_string(kMaxEnvVars))
                       .arg("got", std::to_string(raw->size())));
    return env;
  }
  f.object("env", false, [&](Fields& e) {
    size_t bytes = 0;
    for (auto it = raw->begin(); it != raw->end(); ++it) {
      const std::string& k = it.key();
      e.raw(k.c_str());
      if (!valid_env_name(k)) {
        e.error(k, Message("job.env.bad_name"));
      } else if (auto why = reserved_env_reason(k)) {
        e.error(k, std::move(*why));
      } else if (!it->is_string()) {
        e.error(k, Message("job.env.not_string"));
      } else if (auto v = e.opt_str(k.c_str(), {.min_len = 0, .max_len = kMaxEnvBytes})) {
        bytes += k.size() + v->size();
        env[k] = *v;
      }
    }
    if (bytes > kMaxEnvBytes)
      f.error("env", Message("job.env.too_large")
                         .arg("max", std::to_string(kMaxEnvBytes))
                         .arg("got", std::to_string(bytes)));
  });
  return env;
}

std::vector<std::string> read_command(Fields& f, bool* clean) {
  const json* raw = f.raw("command");
  if (raw && raw->is_array() && raw->size() > kMaxCommandArgs) {
    f.error("command", Message("job.command.too_many_args")
                           .arg("max", std::to_string(kMaxCommandArgs))
                           .arg("got", std::to_string(raw->size())));
    *clean = false;
    return {};
  }
  if (raw && !raw->is_array()) {
    // Catch the common mistake of a shell string instead of an argv list.
    f.error("command", Message("job.command.not_list"));
    *clean = false;
    return {};
  }
  std::vector<std::string> argv = f.str_list("command", {.min_len = 0, .max_len = kMaxCommandBytes});
  if (raw && argv.size() != raw->size()) {  // str_list reported the bad items
    *clean = false;
    return argv;
  }
  size_t bytes = 0;
  for (const auto& a : argv) bytes += a.size();
  if (bytes > kMaxCommandBytes) {
    f.error("command", Message("job.command.too_large").arg("max", std::to_string(kMaxCommandBytes)));
    *clean = false;
  } else if (!argv.empty() && argv[0].empty()) {
    f.error("command[0]", Message("job.command.empty_program"));
    *clean = false;
  }
  return argv;
}

// A list of at most kMaxPlaceChoices distinct strings.
std::vector<std::string> distinct_list(Fields& c, const char* key, const StrRule& rule) {
  const json* raw = c.raw(key);
  if (raw && raw->is_array() && raw->size() > kMaxPlaceChoices) {
    c.error(key, Message("job.list.too_many").arg("max", std::to_string(kMaxPlaceChoices)));
    return {};
  }
  std::vector<std::string> v = c.str_list(key, rule);
  for (size_t i = 0; i < v.size(); ++i)
    for (size_t p = 0; p < i; ++p)
      if (v[i] == v[p]) {
        c.error(std::string(key) + "[" + std::to_string(i) + "]",
                Message("job.list.repeated").arg("value", v[i]).arg("index", std::to_string(p)));
        break;
      }
  return v;
}

void read_constraints(Fields& c, Job& j) {
  auto& k = j.constraints;
  const json* models = c.raw("gpu_models");
  if (models && models->is_array() && models->size() > kMaxGpuModelChoices) {
    c.error("gpu_models", Message("job.gpu_models.too_many").arg("max", std::to_string(kMaxGpuModelChoices)));
  } else {
    k.gpu_models = c.str_list("gpu_models", kGpuModelRule);
    for (size_t i = 0; i < k.gpu_models.size(); ++i)
      for (size_t p = 0; p < i; ++p)
        if (k.gpu_models[i] == k.gpu_models[p]) {
          c.error("gpu_models[" + std::to_string(i) + "]",
                  Message("job.gpu_models.repeated").arg("model", k.gpu_models[i]).arg("index", std::to_string(p)));
          break;
        }
  }
  const json* nodes = c.raw("nodes");
  if (nodes && nodes->is_array() && nodes->size() > kMaxNodeChoices) {
    c.error("nodes", Message("job.nodes.too_many").arg("max", std::to_string(kMaxNodeChoices)));
  } else {
    k.nodes = c.str_list("nodes", kProjectRule);  // a reference: an id or a name
    for (size_t i = 0; i < k.nodes.size(); ++i)
      for (size_t p = 0; p < i; ++p)
        if (k.nodes[i] == k.nodes[p]) {
          c.error("nodes[" + std::to_string(i) + "]",
                  Message("job.nodes.repeated").arg("node", k.nodes[i]).arg("index", std::to_string(p)));
          break;
        }
  }
  k.regions = distinct_list(c, "regions", kRegionRule);
  k.suppliers = distinct_list(c, "suppliers", kProjectRule);  // references: ids or names
  k.span_sites = c.boolean("span_sites", false);
  k.form_factor = opt_enum(c, "form_factor", kFormFactorNames);
  k.min_gpu_memory_gib = c.opt_integer("min_gpu_memory_gib", 1, 1024);
  k.rdma = c.enumeration("rdma", kRdmaRequirementNames, std::optional(RdmaRequirement::kNone));
  k.placement = c.enumeration("placement", kPlacementRuleNames, std::optional(PlacementRule::kAny));
}

}  // namespace

PriorityClass default_priority(JobKind kind) {
  switch (kind) {
    case JobKind::kInference:
      return PriorityClass::kHigh;
    case JobKind::kTraining:
      return PriorityClass::kNormal;
    case JobKind::kDebug:
    case JobKind::kBatch:
      return PriorityClass::kLow;
  }
  return PriorityClass::kNormal;
}

Result<Job> parse_job(const json& body, Currency currency) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  // Cross-field rules run only on fields that parsed cleanly, so one mistake gives one error.
  auto count = [&] { return errs.list().size(); };
  Job j;

  j.name = f.str("name", kNameRule);
  j.project = f.str("project", kProjectRule);
  size_t mark = count();
  j.kind = f.enumeration("kind", kJobKindNames);
  const bool kind_ok = count() == mark;

  mark = count();
  j.workers = f.opt_integer("workers", 1, kMaxWorkers).value_or(1);
  const bool workers_ok = count() == mark;

  const bool has_whole = f.has("gpus_per_worker");
  const bool has_milli = f.has("gpu_milli");
  mark = count();
  j.gpus_per_worker = f.opt_integer("gpus_per_worker", 0, kMaxGpusPerWorker).value_or(0);
  j.gpu_milli = f.opt_integer("gpu_milli", 1, 999);
  const bool gpus_ok = count() == mark && has_whole != has_milli;
  if (!has_whole && !has_milli)
    f.error("gpus_per_worker", Message("job.gpus_per_worker.required"));
  if (has_whole && has_milli) {
    f.error("gpu_milli", Message("job.gpu_milli.with_whole"));
    j.gpu_milli.reset();
  }

  bool cpu_given = false, memory_given = false;
  const bool has_resources = f.has("resources");
  f.object("resources", false, [&](Fields& r) {
    cpu_given = r.has("cpu_cores");
    memory_given = r.has("memory_gib");
    j.resources.cpu_cores = r.opt_integer("cpu_cores", 1, 1024);
    j.resources.memory_gib = r.opt_integer("memory_gib", 1, 16384);
    j.resources.shm_gib = r.opt_integer("shm_gib", 1, 1024);
  });

  f.object("constraints", false, [&](Fields& c) { read_constraints(c, j); });

  mark = count();
  j.priority_class =
      f.enumeration("priority_class", kPriorityClassNames, std::optional(default_priority(kind_ok ? j.kind : JobKind::kTraining)));
  const bool priority_ok = count() == mark;

  bool billing_mode_ok = true;
  f.object("billing", false, [&](Fields& b) {
    mark = count();
    j.billing.mode = b.enumeration("mode", kBillingModeNames, std::optional(BillingMode::kOnDemand));
    billing_mode_ok = count() == mark;
    j.billing.max_price_per_gpu_hour = b.opt_money("max_price_per_gpu_hour", currency);
    j.billing.offer = b.opt_str("offer", kProjectRule);  // a reference: an id or a name
    if (j.billing.max_price_per_gpu_hour && j.billing.max_price_per_gpu_hour->micros() == 0)
      b.error("max_price_per_gpu_hour", Message("job.billing.max_price_zero"));
    b.object("endpoint", false, [&](Fields& e) {
      JobEndpoint ep;
      ep.model = e.str("model", {.min_len = 1, .max_len = 128, .pattern = "[A-Za-z0-9][A-Za-z0-9._/:-]*",
                                 .pattern_help = "pattern.model_name"});
      ep.per = e.enumeration("per", kEndpointBillingNames);
      ep.qps = e.opt_integer("qps", 1, 100'000);
      if (ep.per == EndpointBilling::kQps && !ep.qps && !e.has("qps")) e.error("qps", Message("job.endpoint.qps_required"));
      if (ep.per != EndpointBilling::kQps && e.has("qps")) e.error("qps", Message("job.endpoint.qps_for_token"));
      j.billing.endpoint = std::move(ep);
    });
  });

  j.image = f.opt_str("image", kImageRule);
  bool command_ok = true;
  j.command = read_command(f, &command_ok);
  j.env = read_env(f);
  j.expected_duration_seconds = f.opt_integer("expected_duration_seconds", 1, kMaxJobDurationSeconds);
  j.time_limit_seconds = f.opt_integer("time_limit_seconds", 1, kMaxJobDurationSeconds);
  j.fault_retries = f.opt_integer("fault_retries", 0, kMaxFaultRetries).value_or(0);
  j.workdir = f.opt_str("workdir", kWorkdirRule);
  if (j.workdir && ("/" + *j.workdir + "/").find("/../") != std::string::npos)
    f.error("workdir", Message("job.workdir.dotdot"));

  read_volumes(f, j);
  read_secrets(f, j);
  read_artifacts(f, j);

  f.object("replicas", false, [&](Fields& r) {
    Replicas rep;
    mark = count();
    rep.min = r.integer("min", 1, 1000);
    rep.max = r.integer("max", 1, 1000);
    if (count() == mark && rep.min > rep.max)
      r.error("min", Message("job.replicas.min_above_max")
                         .arg("min", std::to_string(rep.min))
                         .arg("max", std::to_string(rep.max)));
    j.replicas = rep;
  });
  f.object("readiness", false, [&](Fields& r) {
    JobReadiness rd;
    const bool has_command = r.has("command"), has_beat = r.has("heartbeat");
    bool clean = true;
    rd.command = read_command(r, &clean);
    rd.heartbeat = r.boolean("heartbeat", false);
    rd.interval_seconds = r.opt_integer("interval_seconds", 1, kMaxReadinessIntervalSeconds).value_or(5);
    if (has_command && clean && rd.command.empty()) r.error("command", Message("job.readiness.empty_command"));
    if (has_command == (has_beat && rd.heartbeat))
      r.error(has_command ? "heartbeat" : "command", Message("job.readiness.one_of"));
    j.readiness = std::move(rd);
  });
  j.labels = parse_labels(f, "labels");

  ignore_server_keys(f);
  f.ignore({"tenant_id", "project_id", "status"});
  f.finish();

  // --- cross-field rules ------------------------------------------------------------------------
  const std::string kind_name = enum_name(kJobKindNames, j.kind);
  if (kind_ok && gpus_ok && j.gpu_milli && j.kind != JobKind::kInference && j.kind != JobKind::kDebug)
    f.error("gpu_milli", Message("job.gpu_milli.kind").arg("kind", kind_name));
  if (gpus_ok && workers_ok && j.gpu_milli && j.workers > 1)
    f.error("workers", Message("job.workers.gpu_milli"));
  if (kind_ok && j.kind == JobKind::kInference && !f.has("replicas"))
    f.error("replicas", Message("job.replicas.required").arg("shape", "{min, max}"));
  if (kind_ok && j.kind != JobKind::kInference && f.has("replicas"))
    f.error("replicas", Message("job.replicas.inference_only").arg("kind", kind_name));
  // Containers a job may run at once: every pass that looks at a waiting job binds and unbinds
  // them one by one, and a CPU-only job has no GPU quota to bound them.
  if (workers_ok && j.replicas && j.workers * j.replicas->max > kMaxJobContainers)
    f.error("replicas.max", Message("job.containers.too_many")
                                .arg("workers", std::to_string(j.workers))
                                .arg("replicas", std::to_string(j.replicas->max))
                                .arg("max", std::to_string(kMaxJobContainers)));

  if (gpus_ok && j.cpu_only()) {
    const Message why = Message("job.cpu_only.not_applicable");
    if (!j.constraints.gpu_models.empty()) f.error("constraints.gpu_models", why);
    if (j.constraints.form_factor) f.error("constraints.form_factor", why);
    if (j.constraints.min_gpu_memory_gib) f.error("constraints.min_gpu_memory_gib", why);
    if (j.constraints.placement == PlacementRule::kSameNvlinkDomain) f.error("constraints.placement", why);
    const Message need = Message("job.cpu_only.resources_required");
    if (!has_resources) {
      f.error("resources", need);
    } else {
      if (!cpu_given) f.error("resources.cpu_cores", need);
      if (!memory_given) f.error("resources.memory_gib", need);
    }
  }
  if (gpus_ok && workers_ok && j.constraints.placement == PlacementRule::kSameNode && !j.gpu_milli &&
      j.workers * j.gpus_per_worker > kMaxGpusPerWorker)
    f.error("constraints.placement", Message("job.placement.same_node_too_big")
                                         .arg("gpus", std::to_string(j.workers * j.gpus_per_worker))
                                         .arg("max", std::to_string(kMaxGpusPerWorker)));

  if (billing_mode_ok && priority_ok && j.billing.mode == BillingMode::kSpot &&
      j.priority_class == PriorityClass::kCritical)
    f.error("billing.mode", Message("job.billing.spot_critical"));
  if (billing_mode_ok && j.billing.mode == BillingMode::kReserved && j.billing.max_price_per_gpu_hour)
    f.error("billing.max_price_per_gpu_hour", Message("job.billing.reserved_max_price"));
  if (j.billing.endpoint && kind_ok && j.kind != JobKind::kInference)
    f.error("billing.endpoint", Message("job.endpoint.inference_only"));
  else if (j.billing.endpoint && billing_mode_ok && j.billing.mode != BillingMode::kOnDemand)
    f.error("billing.endpoint", Message("job.endpoint.on_demand_only"));
  if (command_ok && !f.has("image") && j.command.empty())
    f.error("command", Message("job.command.required"));

  if (!errs.empty()) return errs.to_error();
  return j;
}

json to_json(const Job& j) {
  json out = {{"name", j.name},
              {"project", j.project},
              {"kind", enum_name(kJobKindNames, j.kind)},
              {"workers", j.workers},
              {"priority_class", enum_name(kPriorityClassNames, j.priority_class)},
              {"status", to_json(j.status)}};
  if (j.gpu_milli)
    out["gpu_milli"] = *j.gpu_milli;
  else
    out["gpus_per_worker"] = j.gpus_per_worker;

  json res = json::object();
  put_opt(res, "cpu_cores", j.resources.cpu_cores);
  put_opt(res, "memory_gib", j.resources.memory_gib);
  put_opt(res, "shm_gib", j.resources.shm_gib);
  if (!res.empty()) out["resources"] = std::move(res);

  const auto& k = j.constraints;
  json c = {{"gpu_models", k.gpu_models},
            {"rdma", enum_name(kRdmaRequirementNames, k.rdma)},
            {"placement", enum_name(kPlacementRuleNames, k.placement)}};
  if (k.form_factor) c["form_factor"] = enum_name(kFormFactorNames, *k.form_factor);
  put_opt(c, "min_gpu_memory_gib", k.min_gpu_memory_gib);
  if (!k.nodes.empty()) c["nodes"] = k.nodes;
  if (!k.regions.empty()) c["regions"] = k.regions;
  if (!k.suppliers.empty()) c["suppliers"] = k.suppliers;
  if (k.span_sites) c["span_sites"] = true;
  out["constraints"] = std::move(c);

  json b = {{"mode", enum_name(kBillingModeNames, j.billing.mode)}};
  put_opt_money(b, "max_price_per_gpu_hour", j.billing.max_price_per_gpu_hour);
  put_opt(b, "offer", j.billing.offer);
  if (const auto& ep = j.billing.endpoint) {
    json e = {{"model", ep->model}, {"per", enum_name(kEndpointBillingNames, ep->per)}};
    put_opt(e, "qps", ep->qps);
    b["endpoint"] = std::move(e);
  }
  out["billing"] = std::move(b);

  put_opt(out, "image", j.image);
  if (!j.command.empty()) out["command"] = j.command;
  if (!j.env.empty()) out["env"] = j.env;
  put_opt(out, "expected_duration_seconds", j.expected_duration_seconds);
  put_opt(out, "time_limit_seconds", j.time_limit_seconds);
  if (j.fault_retries > 0) out["fault_retries"] = j.fault_retries;
  put_opt(out, "workdir", j.workdir);
  if (!j.secrets.empty()) {
    json secs = json::array();
    for (const auto& s : j.secrets) {
      json one = {{"name", s.name}};
      if (!s.env.empty()) one["env"] = s.env;
      if (!s.file.empty()) one["file"] = s.file;
      secs.push_back(std::move(one));
    }
    out["secrets"] = std::move(secs);
  }
  if (!j.artifacts.empty()) {
    json arts = json::array();
    for (const auto& a : j.artifacts) arts.push_back({{"name", a.name}, {"sha256", a.sha256}, {"mount", a.mount}});
    out["artifacts"] = std::move(arts);
  }
  if (!j.volumes.empty()) {
    json vols = json::array();
    for (const auto& v : j.volumes) vols.push_back({{"name", v.name}, {"mount", v.mount}, {"read_only", v.read_only}});
    out["volumes"] = std::move(vols);
  }
  if (j.replicas) out["replicas"] = {{"min", j.replicas->min}, {"max", j.replicas->max}};
  if (j.readiness) {
    json rd = {{"interval_seconds", j.readiness->interval_seconds}};
    if (!j.readiness->command.empty()) rd["command"] = j.readiness->command;
    if (j.readiness->heartbeat) rd["heartbeat"] = true;
    out["readiness"] = std::move(rd);
  }
  if (!j.labels.empty()) out["labels"] = labels_to_json(j.labels);
  if (!j.tenant_id.empty()) out["tenant_id"] = j.tenant_id;
  if (!j.project_id.empty()) out["project_id"] = j.project_id;
  return out;
}

IndexCols index_of(const Job& j) {
  IndexCols c;
  c.name = j.name;
  c.tenant_id = j.tenant_id;
  c.project_id = j.project_id;
  c.state = job_state_name(j.status.state);
  c.gpu_model = j.constraints.gpu_models.empty() ? "" : j.constraints.gpu_models.front();
  return c;
}

Result<JobStatus> stored_job_status(const json& job_body) {
  auto it = job_body.is_object() ? job_body.find("status") : job_body.end();
  return parse_job_status(it == job_body.end() ? json::object() : *it, "status");
}

void set_stored_job_status(json& job_body, const JobStatus& status) { job_body["status"] = to_json(status); }

Result<std::vector<VolumeMount>> stored_job_volumes(const json& job_body) {
  FieldErrors errs;
  Fields f(job_body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Job j;
  read_volumes(f, j);
  if (!errs.empty()) return errs.to_error();
  return j.volumes;
}

}  // namespace gpurent
