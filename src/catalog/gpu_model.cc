#include "catalog/gpu_model.h"

#include <algorithm>
#include <set>

namespace gpurent {

namespace {

constexpr int64_t kMaxTflopsX10 = 10'000'000;  // 1 EFLOPS per device: far beyond any real part
constexpr size_t kMaxAliasLen = 64;
constexpr size_t kMaxSourceLen = 512;
constexpr const char* kTflopsHelp = "pattern.tflops";

// Figures every entry must state (Fields reports them missing); the rest may be left out when
// sources.<figure> says why.
const std::set<std::string>& required_figures() {
  static const std::set<std::string> kRequired = {"form_factor", "memory_gib", "memory_type"};
  return kRequired;
}

std::optional<int64_t> opt_tflops(Fields& f, const char* key) {
  const json* v = f.raw(key);
  if (!v) return std::nullopt;
  auto r = parse_tflops_x10(*v);
  if (!r) {
    if (!r.error().detail.empty()) f.error(key, r.error().detail);
    else f.error(key, r.error().message);
    return std::nullopt;
  }
  return *r;
}

std::vector<std::string> read_aliases(Fields& f) {
  std::vector<std::string> out;
  const json* v = f.raw("aliases");
  if (!v) return out;
  if (!v->is_array()) {
    f.error("aliases", Message("field.string_list"));
    return out;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    const std::string key = "aliases[" + std::to_string(i) + "]";
    const json& a = (*v)[i];
    if (!a.is_string()) {
      f.error(key, Message("field.string"));
      continue;
    }
    const auto& s = a.get_ref<const std::string&>();
    if (s.empty() || s.size() > kMaxAliasLen) {
      f.error(key, Message("gpu_model.alias.length").arg("max", std::to_string(kMaxAliasLen)));
      continue;
    }
    bool printable = true;
    for (unsigned char c : s) printable = printable && c >= 0x20 && c < 0x7f;
    if (!printable) {
      f.error(key, Message("gpu_model.alias.printable"));
      continue;
    }
    if (s.front() == ' ' || s.back() == ' ') {
      f.error(key, Message("gpu_model.alias.space"));
      continue;
    }
    out.push_back(s);
  }
  return out;
}

// Returns false when `sources` is missing or not a map (already reported).
bool read_sources(Fields& f, std::map<std::string, std::string>& out) {
  const json* v = f.raw("sources");
  if (!v) {
    f.error("sources", Message("gpu_model.sources.required"));
    return false;
  }
  if (!v->is_object()) {
    f.error("sources", Message("gpu_model.sources.not_map"));
    return false;
  }
  const auto& figures = gpu_figure_names();
  for (auto it = v->begin(); it != v->end(); ++it) {
    const std::string key = "sources." + it.key();
    if (it.key() != "default" && std::find(figures.begin(), figures.end(), it.key()) == figures.end()) {
      std::string choices = "default";
      for (const auto& name : figures) choices += ", " + name;
      f.error(key, Message("gpu_model.sources.unknown_figure").arg("choices", choices));
      continue;
    }
    if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
      f.error(key, Message("gpu_model.sources.empty"));
      continue;
    }
    const auto& s = it->get_ref<const std::string&>();
    if (s.size() > kMaxSourceLen) {
      f.error(key, Message("field.max_chars").arg("max", std::to_string(kMaxSourceLen)));
      continue;
    }
    out[it.key()] = s;
  }
  return true;
}

}  // namespace

const std::vector<std::string>& gpu_figure_names() {
  static const std::vector<std::string> kNames = {
      "form_factor", "memory_gib",  "memory_type", "memory_bandwidth_gbps", "fp16_tflops",
      "bf16_tflops", "fp8_tflops", "nvlink_gbps", "pcie_gen",              "tdp_watts"};
  return kNames;
}

const std::string& GpuModel::source_of(const std::string& figure) const {
  static const std::string kNone;
  auto it = sources.find(figure);
  if (it != sources.end()) return it->second;
  it = sources.find("default");
  return it != sources.end() ? it->second : kNone;
}

Result<int64_t> parse_tflops_x10(const json& v) {
  auto bad = [](Message why) { return Error::make(Code::kInvalid, std::move(why)); };
  const Message too_large = Message("field.at_most").arg("max", std::to_string(kMaxTflopsX10 / 10));
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(kMaxTflopsX10 / 10)) return bad(too_large);
    return static_cast<int64_t>(v.get<uint64_t>()) * 10;
  }
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0) return bad(Message("field.not_negative"));
    if (v.get<int64_t>() > kMaxTflopsX10 / 10) return bad(too_large);
    return v.get<int64_t>() * 10;
  }
  if (v.is_number()) return bad(Message("gpu_model.tflops.float").arg("help", Message(kTflopsHelp)));
  if (!v.is_string()) return bad(Message("gpu_model.tflops.not_string").arg("help", Message(kTflopsHelp)));
  const auto& s = v.get_ref<const std::string&>();
  const size_t dot = s.find('.');
  const std::string whole = s.substr(0, dot);
  const std::string frac = dot == std::string::npos ? "" : s.substr(dot + 1);
  auto digits = [](const std::string& t) {
    return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(whole) || (dot != std::string::npos && (!digits(frac) || frac.size() > 1)))
    return bad(Message("gpu_model.tflops.invalid").arg("value", s).arg("help", Message(kTflopsHelp)));
  if (whole.size() > 7) return bad(too_large);
  const int64_t x10 = std::stoll(whole) * 10 + (frac.empty() ? 0 : frac[0] - '0');
  if (x10 > kMaxTflopsX10) return bad(too_large);
  return x10;
}

std::string format_tflops_x10(int64_t x10) {
  std::string out = std::to_string(x10 / 10);
  if (x10 % 10 != 0) out += "." + std::to_string(x10 % 10);
  return out;
}

GpuModel read_gpu_model(Fields& f) {
  GpuModel m;
  m.id = f.str("id", {.max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
  m.name = f.str("name", {.max_len = 128});
  m.vendor = f.enumeration("vendor", kVendorNames);
  m.form_factor = f.enumeration("form_factor", kFormFactorNames);
  m.memory_gib = f.integer("memory_gib", 1, 65'536);
  m.memory_type = f.enumeration("memory_type", kMemoryTypeNames);
  m.memory_bandwidth_gbps = f.opt_integer("memory_bandwidth_gbps", 1, 1'000'000);
  m.fp16_tflops_x10 = opt_tflops(f, "fp16_tflops");
  m.bf16_tflops_x10 = opt_tflops(f, "bf16_tflops");
  m.fp8_tflops_x10 = opt_tflops(f, "fp8_tflops");
  m.nvlink_gbps = f.opt_integer("nvlink_gbps", 0, 1'000'000);
  m.pcie_gen = f.opt_integer("pcie_gen", 1, 9);
  m.tdp_watts = f.opt_integer("tdp_watts", 1, 100'000);
  m.verified = f.boolean("verified", true);
  m.aliases = read_aliases(f);
  const bool sources_given = read_sources(f, m.sources);

  // Every figure is accounted for: a present one has a source, an absent one a note saying why.
  std::string unsourced;
  for (const auto& figure : gpu_figure_names()) {
    if (f.has(figure.c_str())) {
      if (m.source_of(figure).empty()) unsourced += (unsourced.empty() ? "" : ", ") + figure;
    } else if (!required_figures().count(figure) && !m.sources.count(figure)) {
      f.error(figure, Message("gpu_model.figure.required").arg("figure", figure));
    }
  }
  if (sources_given && !unsourced.empty())
    f.error("sources", Message("gpu_model.sources.missing").arg("figures", unsourced));
  return m;
}

json to_json(const GpuModel& m) {
  json j = {{"id", m.id},
            {"name", m.name},
            {"vendor", enum_name(kVendorNames, m.vendor)},
            {"form_factor", enum_name(kFormFactorNames, m.form_factor)},
            {"memory_gib", m.memory_gib},
            {"memory_type", enum_name(kMemoryTypeNames, m.memory_type)},
            {"verified", m.verified},
            {"aliases", m.aliases},
            {"sources", m.sources}};
  auto put = [&j](const char* key, const std::optional<int64_t>& v) {
    if (v) j[key] = *v;
  };
  auto put_tflops = [&j](const char* key, const std::optional<int64_t>& v) {
    if (v) j[key] = format_tflops_x10(*v);
  };
  put("memory_bandwidth_gbps", m.memory_bandwidth_gbps);
  put_tflops("fp16_tflops", m.fp16_tflops_x10);
  put_tflops("bf16_tflops", m.bf16_tflops_x10);
  put_tflops("fp8_tflops", m.fp8_tflops_x10);
  put("nvlink_gbps", m.nvlink_gbps);
  put("pcie_gen", m.pcie_gen);
  put("tdp_watts", m.tdp_watts);
  return j;
}

}  // namespace gpurent
