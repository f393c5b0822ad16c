#include "meter/usage.h"

#include <unordered_set>

#include "core/fields.h"
#include "core/ids.h"

namespace gpurent {
namespace {

// A batch with thousands of bad samples reports the first ones, not a response as big as the body.
constexpr size_t kMaxReportedErrors = 100;

bool is_hex_lower(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lowercase hex, as nvidia-smi -L and DCGM print it.
// Checked by hand: a regex per sample would dominate ingest time.
bool valid_gpu_uuid(const std::string& s) {
  static constexpr size_t kGroups[] = {8, 4, 4, 4, 12};
  if (s.size() != 40 || s.compare(0, 4, "GPU-") != 0) return false;
  size_t i = 4;
  for (size_t g = 0; g < 5; ++g) {
    for (size_t k = 0; k < kGroups[g]; ++k, ++i)
      if (!is_hex_lower(s[i])) return false;
    if (g < 4 && s[i++] != '-') return false;
  }
  return true;
}

void check_window(Fields& f, const char* key, TimeMs at, const UsageParseOptions& opts) {
  if (at < opts.now - kSampleMaxAgeMs)
    f.error(key, Message("usage.at_too_old").arg("at", format_rfc3339(at)));
  else if (at > opts.now + kSampleMaxAheadMs)
    f.error(key, Message("usage.at_in_future").arg("at", format_rfc3339(at)).arg("now", format_rfc3339(opts.now)));
  else if (at < opts.not_before)
    f.error(key, Message("usage.at_in_closed_month")
                     .arg("at", format_rfc3339(at))
                     .arg("month", format_rfc3339(at).substr(0, 7)));
}

constexpr StrRule kNodeRefRule{.min_len = 1, .max_len = 64};
constexpr StrRule kJobRefRule{.min_len = 1, .max_len = 64};

GpuSample parse_gpu_sample(Fields& f, const UsageParseOptions& opts) {
  GpuSample s;
  s.at = f.time("at");
  if (f.has("at")) check_window(f, "at", s.at, opts);
  if (f.has("uuid")) {
    s.uuid = f.opt_str("uuid", {.min_len = 1, .max_len = 64}).value_or("");
    if (!s.uuid.empty() && !valid_gpu_uuid(s.uuid))
      f.error("uuid", Message("usage.uuid_invalid").arg("uuid", s.uuid));
    if (f.has("node")) f.error("node", Message("usage.not_with_uuid"));
    if (f.has("gpu")) f.error("gpu", Message("usage.not_with_uuid"));
    f.ignore({"node", "gpu"});
  } else {
    if (!f.has("node") && !f.has("gpu")) {
      f.error("node", Message("usage.node_required"));
      f.ignore({"gpu"});
    } else {
      s.node = f.str("node", kNodeRefRule);
      if (!f.has("gpu")) f.error("gpu", Message("usage.gpu_required_with_node"));
      s.gpu = f.opt_integer("gpu", 0, kMaxGpuIndex);
    }
  }
  GpuMetrics& m = s.metrics;
  m.utilization_pct = f.integer("utilization_pct", 0, 100);
  m.memory_used_mib = f.opt_integer("memory_used_mib", 0, kMaxMemoryMib);
  m.power_mw = f.opt_integer("power_mw", 0, kMaxPowerMw);
  m.sm_clock_mhz = f.opt_integer("sm_clock_mhz", 0, kMaxClockMhz);
  m.gr_engine_active_pct = f.opt_integer("gr_engine_active_pct", 0, 100);
  return s;
}

JobSample parse_job_sample(Fields& f, const UsageParseOptions& opts) {
  JobSample s;
  s.at = f.time("at");
  if (f.has("at")) check_window(f, "at", s.at, opts);
  s.job = f.str("job", kJobRefRule);
  JobCounters& c = s.delta;
  c.storage_io_bytes = f.opt_integer("storage_io_bytes", 0, kMaxCounterDelta).value_or(0);
  c.egress_bytes = f.opt_integer("egress_bytes", 0, kMaxCounterDelta).value_or(0);
  c.input_tokens = f.opt_integer("input_tokens", 0, kMaxCounterDelta).value_or(0);
  c.output_tokens = f.opt_integer("output_tokens", 0, kMaxCounterDelta).value_or(0);
  c.requests = f.opt_integer("requests", 0, kMaxCounterDelta).value_or(0);
  return s;
}

// Walks body[key] (a list of objects), stopping once too many errors have been reported.
template <class Fn>
void each_object(Fields& top, const char* key, FieldErrors& errs, Fn&& fn) {
  const nlohmann::json* list = top.raw(key);
  if (!list) return;
  if (!list->is_array()) return top.error(key, FieldReason{"field.list"});
  for (size_t i = 0; i < list->size(); ++i) {
    if (errs.list().size() >= kMaxReportedErrors) {
      errs.add(key, Message("usage.validation_stopped").arg("n", std::to_string(kMaxReportedErrors)));
      return;
    }
    Fields sub((*list)[i], std::string(key) + "[" + std::to_string(i) + "]", errs);
    if (!sub.valid_object()) continue;
    fn(sub, i);
    sub.finish();
  }
}

size_t list_size(const nlohmann::json& body, const char* key) {
  auto it = body.find(key);
  return it != body.end() && it->is_array() ? it->size() : 0;
}

void put(std::string& out, int64_t v) {
  out += std::to_string(v);
  out += '|';
}
void put(std::string& out, const std::optional<int64_t>& v) {
  if (v) return put(out, *v);
  out += "-|";
}
void put(std::string& out, const std::string& s) {
  // Lengths make the encoding unambiguous whatever the strings contain.
  out += std::to_string(s.size());
  out += ':';
  out += s;
  out += '|';
}

}  // namespace

JobCounters& JobCounters::operator+=(const JobCounters& o) {
  storage_io_bytes += o.storage_io_bytes;
  egress_bytes += o.egress_bytes;
  input_tokens += o.input_tokens;
  output_tokens += o.output_tokens;
  requests += o.requests;
  return *this;
}

bool valid_idempotency_key(std::string_view s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Result<UsageBatch> parse_usage_batch(const nlohmann::json& body, const UsageParseOptions& opts) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  UsageBatch b;
  b.idempotency_key = f.str("idempotency_key", {.min_len = 1, .max_len = 128});
  if (!b.idempotency_key.empty() && !valid_idempotency_key(b.idempotency_key))
    f.error("idempotency_key", Message("usage.idempotency_key_chars").arg("value", b.idempotency_key));

  const size_t n_gpu = list_size(body, "gpu_samples"), n_job = list_size(body, "job_samples");
  if (n_gpu + n_job > opts.max_samples) {
    f.error("gpu_samples", Message("usage.batch_too_large")
                               .arg("max", std::to_string(opts.max_samples))
                               .arg("got", std::to_string(n_gpu + n_job)));
    f.ignore({"gpu_samples", "job_samples"});
    f.finish();
    return errs.to_error();
  }
  b.gpu_samples.reserve(n_gpu);
  b.job_samples.reserve(n_job);

  // The same GPU (as written) at the same time twice in one batch is a producer bug.
  std::unordered_set<std::string> seen;
  seen.reserve(n_gpu);
  each_object(f, "gpu_samples", errs, [&](Fields& sf, size_t i) {
    GpuSample s = parse_gpu_sample(sf, opts);
    std::string key = s.uuid.empty() ? s.node + "#" + std::to_string(s.gpu.value_or(-1)) : s.uuid;
    key += "@" + std::to_string(s.at);
    if (!seen.insert(std::move(key)).second)
      errs.add("gpu_samples[" + std::to_string(i) + "]", Message("usage.repeated_sample"));
    b.gpu_samples.push_back(std::move(s));
  });
  each_object(f, "job_samples", errs, [&](Fields& sf, size_t) { b.job_samples.push_back(parse_job_sample(sf, opts)); });
  f.finish();
  if (errs.empty() && b.size() == 0)
    errs.add("gpu_samples", Message("usage.batch_empty"));
  if (!errs.empty()) return errs.to_error();
  return b;
}

std::string usage_batch_digest(const UsageBatch& b) {
  std::string out;
  out.reserve(64 * b.size() + 16);
  out += "usage/v1\n";
  for (const GpuSample& s : b.gpu_samples) {
    out += "g|";
    put(out, s.at);
    put(out, s.node);
    put(out, s.gpu);
    put(out, s.uuid);
    put(out, s.metrics.utilization_pct);
    put(out, s.metrics.memory_used_mib);
    put(out, s.metrics.power_mw);
    put(out, s.metrics.sm_clock_mhz);
    put(out, s.metrics.gr_engine_active_pct);
    out += '\n';
  }
  for (const JobSample& s : b.job_samples) {
    out += "j|";
    put(out, s.at);
    put(out, s.job);
    put(out, s.delta.storage_io_bytes);
    put(out, s.delta.egress_bytes);
    put(out, s.delta.input_tokens);
    put(out, s.delta.output_tokens);
    put(out, s.delta.requests);
    out += '\n';
  }
  return sha256_hex(out);
}

}  // namespace gpurent
