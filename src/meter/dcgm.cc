#include "meter/dcgm.h"

#include <charconv>
#include <cmath>
#include <map>

namespace gpurent {
namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }
bool space(char c) { return c == ' ' || c == '\t'; }

Error line_error(size_t line, const std::string& reason) {
  return Error::invalid("line " + std::to_string(line), reason);
}

// A cursor over one line.
struct Cursor {
  std::string_view s;
  size_t i = 0;
  bool done() const { return i >= s.size(); }
  char peek() const { return done() ? '\0' : s[i]; }
  void skip_space() {
    while (!done() && space(s[i])) ++i;
  }
  // [A-Za-z_:][A-Za-z0-9_:]* (label names: without ':'; the caller checks).
  std::string_view name() {
    size_t b = i;
    if (done() || !name_start(s[i])) return {};
    while (!done() && name_char(s[i])) ++i;
    return s.substr(b, i - b);
  }
  std::string_view token() {
    size_t b = i;
    while (!done() && !space(s[i])) ++i;
    return s.substr(b, i - b);
  }
};

Result<double> parse_value(std::string_view t, size_t line) {
  std::string_view v = t;
  if (!v.empty() && v[0] == '+') v.remove_prefix(1);
  double d = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (t.empty() || ec != std::errc() || p != v.data() + v.size())
    return line_error(line, "value '" + std::string(t) + "' is not a number");
  return d;
}

Status parse_prom_labels(Cursor& c, PromSample& out, size_t line) {
  ++c.i;  // '{'
  for (;;) {
    c.skip_space();
    if (c.peek() == '}') {
      ++c.i;
      return ok_status();
    }
    std::string_view ln = c.name();
    if (ln.empty() || ln.find(':') != std::string_view::npos)
      return line_error(line, "expected a label name at column " + std::to_string(c.i + 1));
    c.skip_space();
    if (c.peek() != '=') return line_error(line, "expected '=' after label '" + std::string(ln) + "'");
    ++c.i;
    c.skip_space();
    if (c.peek() != '"') return line_error(line, "label '" + std::string(ln) + "': value must be in double quotes");
    ++c.i;
    std::string value;
    bool closed = false;
    while (!c.done()) {
      char ch = c.s[c.i++];
      if (ch == '"') {
        closed = true;
        break;
      }
      if (ch == '\\') {
        if (c.done()) break;
        char e = c.s[c.i++];
        if (e == 'n')
          value += '\n';
        else if (e == '\\' || e == '"')
          value += e;
        else
          return line_error(line, "label '" + std::string(ln) + "': unknown escape '\\" + std::string(1, e) + "'");
      } else {
        value += ch;
      }
    }
    if (!closed) return line_error(line, "label '" + std::string(ln) + "': unterminated value");
    if (out.labels.size() >= kMaxPromLabels)  // bounds the duplicate check below, and the memory
      return line_error(line, "more than " + std::to_string(kMaxPromLabels) + " labels on one series");
    for (const auto& l : out.labels)
      if (l.name == ln) return line_error(line, "label '" + std::string(ln) + "' appears twice");
    out.labels.push_back({std::string(ln), std::move(value)});
    c.skip_space();
    if (c.peek() == ',') {
      ++c.i;
      continue;
    }
    if (c.peek() != '}') return line_error(line, "expected ',' or '}' after label '" + std::string(ln) + "'");
  }
}

Status parse_comment(std::string_view body, size_t line) {
  Cursor c{body, 1};  // after '#'
  c.skip_space();
  std::string_view kw = c.token();
  if (kw != "HELP" && kw != "TYPE") return ok_status();  // a plain comment
  c.skip_space();
  std::string_view metric = c.name();
  if (metric.empty() || (!c.done() && !space(c.peek())))
    return line_error(line, "# " + std::string(kw) + " needs a metric name");
  if (kw == "TYPE") {
    c.skip_space();
    std::string_view type = c.token();
    c.skip_space();
    if (!c.done()) return line_error(line, "# TYPE line has extra text after the type");
    static constexpr std::string_view kTypes[] = {"counter", "gauge", "histogram", "summary", "untyped"};
    bool known = false;
    for (auto t : kTypes) known = known || t == type;
    if (!known) return line_error(line, "unknown metric type '" + std::string(type) + "'");
  }
  return ok_status();
}

}  // namespace

const std::string* PromSample::label(std::string_view n) const {
  for (const auto& l : labels)
    if (l.name == n) return &l.value;
  return nullptr;
}

Result<std::vector<PromSample>> parse_prometheus_text(std::string_view text, bool (*keep)(std::string_view name)) {
  std::vector<PromSample> out;
  size_t line = 0, pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    Cursor c{l};
    c.skip_space();
    if (c.done()) continue;
    if (c.peek() == '#') {
      if (auto s = parse_comment(l.substr(c.i), line); !s) return s.error();
      continue;
    }
    PromSample s;
    s.line = line;
    std::string_view name = c.name();
    if (name.empty()) return line_error(line, "expected a metric name");
    s.name = std::string(name);
    c.skip_space();
    if (c.peek() == '{') {
      if (auto st = parse_prom_labels(c, s, line); !st) return st.error();
    }
    c.skip_space();
    auto v = parse_value(c.token(), line);
    if (!v) return v.error();
    s.value = *v;
    c.skip_space();
    if (!c.done()) {
      std::string_view t = c.token();
      int64_t ts = 0;
      auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), ts);
      if (ec != std::errc() || p != t.data() + t.size())
        return line_error(line, "timestamp '" + std::string(t) + "' is not an integer (milliseconds)");
      s.timestamp_ms = ts;
      c.skip_space();
      if (!c.done()) return line_error(line, "unexpected text after the timestamp");
    }
    if (!keep || keep(s.name)) out.push_back(std::move(s));
  }
  return out;
}

namespace {

enum class Field { kUtil, kFbUsed, kPower, kSmClock, kGrActive, kXid, kEccDbe, kEccSbe, kRetiredPending, kRowRemapFailure, kPcieReplays, kTemp };

struct FieldSpec {
  const char* metric;
  Field field;
  double scale;     // to gpurent's unit
  double min, max;  // accepted range in the exporter's unit
};

constexpr FieldSpec kFields[] = {
    {"DCGM_FI_DEV_GPU_UTIL", Field::kUtil, 1, 0, 100},
    {"DCGM_FI_DEV_FB_USED", Field::kFbUsed, 1, 0, static_cast<double>(kMaxMemoryMib)},
    {"DCGM_FI_DEV_POWER_USAGE", Field::kPower, 1000, 0, kMaxPowerMw / 1000.0},
    {"DCGM_FI_DEV_SM_CLOCK", Field::kSmClock, 1, 0, static_cast<double>(kMaxClockMhz)},
    // A ratio; DCGM's float arithmetic can land a hair above 1.
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", Field::kGrActive, 100, 0, 1.0001},
    // Health (meter/gpu_health.h): the last XID, error and retirement counters, temperature.
    {"DCGM_FI_DEV_XID_ERRORS", Field::kXid, 1, 0, 1e6},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", Field::kEccDbe, 1, 0, 1e15},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", Field::kEccSbe, 1, 0, 1e15},
    {"DCGM_FI_DEV_RETIRED_PENDING", Field::kRetiredPending, 1, 0, 1e9},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", Field::kRowRemapFailure, 1, 0, 1e9},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", Field::kPcieReplays, 1, 0, 1e15},
    {"DCGM_FI_DEV_GPU_TEMP", Field::kTemp, 1, 0, 200},
};

struct MigPartial {
  std::string profile;
  std::optional<int64_t> gr, fb;
};

struct Partial {
  DcgmGpuReading r;
  std::optional<int64_t> util, gr;
  std::map<std::string, MigPartial> mig;  // GPU_I_ID -> the instance's series
  bool all_timestamped = true;
  std::optional<TimeMs> ts;
  std::string bad;  // a value out of its range (the first): the GPU is not metered this time
};

}  // namespace

bool dcgm_metric_read(std::string_view name) {
  for (const auto& f : kFields)
    if (name == f.metric) return true;
  return false;
}

namespace {

// The spec of a DCGM metric gpurent reads; nullptr for any other metric.
const FieldSpec* field_spec(const std::string& name) {
  const FieldSpec* spec = nullptr;
  for (const auto& f : kFields)
    if (name == f.metric) spec = &f;
  return spec;
}

// The GPU a sample is about, by UUID or by host and gpu index: its position in gpus, added (with
// the sample's identity labels) the first time it is seen.
Result<size_t> gpu_of(const PromSample& s, std::vector<Partial>& gpus, std::map<std::string, size_t>& index) {
  const std::string* uuid = s.label("UUID");
  if (!uuid) uuid = s.label("uuid");
  const std::string* gpu = s.label("gpu");
  const std::string* host = s.label("hostname");  // dcgm-exporter since its PR #655; before, Hostname
  if (!host) host = s.label("Hostname");
  std::optional<int64_t> gpu_index;
  if (gpu) {
    int64_t g = -1;
    auto [p, ec] = std::from_chars(gpu->data(), gpu->data() + gpu->size(), g);
    if (ec != std::errc() || p != gpu->data() + gpu->size() || g < 0 || g > kMaxGpuIndex)
      return line_error(s.line, "label gpu=\"" + *gpu + "\" is not a GPU index");
    gpu_index = g;
  }
  std::string key;
  if (uuid && !uuid->empty())
    key = "u/" + *uuid;
  else if (gpu_index)
    key = "h/" + (host ? *host : std::string()) + "/" + std::to_string(*gpu_index);
  else
    return line_error(s.line, s.name + " has neither a UUID nor a gpu label: cannot tell which GPU it is");
  auto [it, fresh] = index.emplace(key, gpus.size());
  if (fresh && gpus.size() >= kMaxDcgmGpus) {
    index.erase(it);
    return line_error(s.line, "more than " + std::to_string(kMaxDcgmGpus) + " GPUs in one exposition");
  }
  if (fresh) {
    Partial p;
    p.r.uuid = uuid ? *uuid : "";
    p.r.gpu = gpu_index;
    p.r.hostname = host ? *host : "";
    if (const std::string* m = s.label("modelName")) p.r.model_name = *m;
    gpus.push_back(std::move(p));
  }
  return it->second;
}

// Where a field's value goes in p (v, in gpurent's unit, is capped for fields that need it).
std::optional<int64_t>* field_slot(Partial& p, Field field, int64_t& v) {
  std::optional<int64_t>* slot = nullptr;
  switch (field) {
    case Field::kUtil:
      slot = &p.util;
      break;
    case Field::kFbUsed:
      slot = &p.r.metrics.memory_used_mib;
      break;
    case Field::kPower:
      slot = &p.r.metrics.power_mw;
      break;
    case Field::kSmClock:
      slot = &p.r.metrics.sm_clock_mhz;
      break;
    case Field::kGrActive:
      slot = &p.gr;
      v = std::min<int64_t>(v, 100);
      break;
    case Field::kXid:
      slot = &p.r.health.xid;
      break;
    case Field::kEccDbe:
      slot = &p.r.health.ecc_dbe;
      break;
    case Field::kEccSbe:
      slot = &p.r.health.ecc_sbe;
      break;
    case Field::kRetiredPending:
      slot = &p.r.health.retired_pending;
      break;
    case Field::kRowRemapFailure:
      slot = &p.r.health.row_remap_failure;
      break;
    case Field::kPcieReplays:
      slot = &p.r.health.pcie_replays;
      break;
    case Field::kTemp:
      slot = &p.r.health.temp_c;
      break;
  }
  return slot;
}

// A MIG-enabled GPU's utilization and memory from its instances, each weighted by its compute
// slices; false with `why` when an instance cannot be counted.
bool fold_mig(Partial& p, std::string& why) {
  const int64_t total = mig_gpu_slices(p.r.model_name);
  int64_t slices = 0, weighted = 0;
  std::optional<int64_t> memory;
  for (const auto& [id, m] : p.mig) {
    const int64_t n = mig_profile_slices(m.profile);
    if (n == 0) {
      why = "MIG instance " + id + " has no readable GPU_I_PROFILE ('" + m.profile + "')";
      return false;
    }
    if (!m.gr) {
      why = "MIG instance " + id + " (" + m.profile + ") reports no DCGM_FI_PROF_GR_ENGINE_ACTIVE";
      return false;
    }
    slices += n;
    weighted += *m.gr * n;
    if (m.fb) memory = memory.value_or(0) + *m.fb;
    p.r.mig.push_back({id, m.profile, n, *m.gr, m.fb});
  }
  if (slices > total) {
    why = "its MIG instances hold " + std::to_string(slices) + " compute slices, more than the " +
          std::to_string(total) + " of a " + (p.r.model_name.empty() ? std::string("GPU") : p.r.model_name);
    p.r.mig.clear();
    return false;
  }
  p.r.mig_slices = total;
  const int64_t pct = (2 * weighted + total) / (2 * total);  // rounded half up
  p.r.metrics.utilization_pct = pct;
  p.r.metrics.gr_engine_active_pct = pct;
  if (memory) p.r.metrics.memory_used_mib = std::min<int64_t>(*memory, kMaxMemoryMib);
  return true;
}

// The readings of the GPUs that reported a utilization; the others are listed as skipped.
DcgmReadings readings(std::vector<Partial>& gpus) {
  DcgmReadings out;
  for (Partial& p : gpus) {
    if (!p.r.health.empty()) {
      DcgmGpuReading h;
      h.uuid = p.r.uuid;
      h.gpu = p.r.gpu;
      h.hostname = p.r.hostname;
      h.model_name = p.r.model_name;
      h.health = p.r.health;
      out.health.push_back(std::move(h));
    }
    std::string who = !p.r.uuid.empty() ? p.r.uuid : "gpu " + std::to_string(p.r.gpu.value_or(-1));
    if (!p.bad.empty()) {
      out.skipped.push_back(who + ": " + p.bad);
      continue;
    }
    if (!p.util && !p.mig.empty()) {
      std::string why;
      if (!fold_mig(p, why)) {
        out.skipped.push_back(who + ": " + why);
        continue;
      }
      if (p.all_timestamped && p.ts) p.r.at = *p.ts;
      out.gpus.push_back(std::move(p.r));
      continue;
    }
    if (!p.util && !p.gr) {
      out.skipped.push_back(who + ": neither DCGM_FI_DEV_GPU_UTIL nor DCGM_FI_PROF_GR_ENGINE_ACTIVE reported");
      continue;
    }
    p.r.metrics.utilization_pct = p.util ? *p.util : *p.gr;
    p.r.metrics.gr_engine_active_pct = p.gr;
    if (p.all_timestamped && p.ts) p.r.at = *p.ts;
    out.gpus.push_back(std::move(p.r));
  }
  return out;
}

}  // namespace

int64_t mig_profile_slices(std::string_view profile) {
  int64_t n = 0;
  size_t i = 0;
  while (i < profile.size() && i < 2 && profile[i] >= '0' && profile[i] <= '9') n = n * 10 + (profile[i++] - '0');
  if (i == 0 || i >= profile.size() || profile[i] != 'g' || n < 1 || n > 8) return 0;
  return n;
}

int64_t mig_gpu_slices(std::string_view model_name) { return model_name.find("A30") != std::string_view::npos ? 4 : 7; }

Result<DcgmReadings> map_dcgm(std::span<const PromSample> samples) {
  std::vector<Partial> gpus;
  std::map<std::string, size_t> index;  // group key -> gpus[i]
  for (const PromSample& s : samples) {
    const FieldSpec* spec = field_spec(s.name);
    if (!spec) continue;
    const std::string* mig = s.label("GPU_I_ID");
    if (mig && mig->empty()) mig = nullptr;
    auto at = gpu_of(s, gpus, index);
    if (!at) return at.error();
    Partial& p = gpus[*at];
    if (std::isnan(s.value)) continue;
    // A GPU_UTIL per MIG instance is not a DCGM field (MIG has none) and is not counted, whatever
    // its value.
    if (mig && spec->field == Field::kUtil) continue;
    // A value out of range (DCGM has reported 4294967295 for GPU_UTIL) leaves this GPU unmetered
    // this time, named in `skipped`; the other GPUs, and every health field in range (a card
    // falling off the bus), are still read.
    if (!(s.value >= spec->min && s.value <= spec->max)) {
      if (p.bad.empty())
        p.bad = "line " + std::to_string(s.line) + ": " + s.name + " value " + std::to_string(s.value) +
                " is outside " + std::to_string(spec->min) + ".." + std::to_string(spec->max);
      continue;
    }
    int64_t v = std::llround(s.value * spec->scale);
    std::optional<int64_t>* slot = nullptr;
    if (mig && (spec->field == Field::kGrActive || spec->field == Field::kFbUsed || spec->field == Field::kUtil)) {
      // An instance's own activity and memory; a GPU_UTIL per instance is not a DCGM field
      // (MIG has none) and is not counted.
      if (spec->field == Field::kUtil) continue;
      if (!p.mig.count(*mig) && p.mig.size() >= kMaxMigInstances)
        return line_error(s.line, "more than " + std::to_string(kMaxMigInstances) + " MIG instances on one GPU");
      MigPartial& m = p.mig[*mig];
      if (const std::string* prof = s.label("GPU_I_PROFILE"); prof && m.profile.empty()) m.profile = *prof;
      if (spec->field == Field::kGrActive) v = std::min<int64_t>(v, 100);
      slot = spec->field == Field::kGrActive ? &m.gr : &m.fb;
    } else {
      slot = field_slot(p, spec->field, v);  // power and clocks are the device's, on MIG too
    }
    if (slot->has_value()) continue;  // repeated series (one per pod on a shared GPU): keep the first
    *slot = v;
    if (s.timestamp_ms) {
      p.ts = p.ts ? std::max(*p.ts, *s.timestamp_ms) : *s.timestamp_ms;
    } else {
      p.all_timestamped = false;
    }
  }
  return readings(gpus);
}

}  // namespace gpurent
