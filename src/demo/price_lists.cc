#include "demo/price_lists.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace gpurent {
namespace {

Error csv_error(const std::string& label, size_t line, const std::string& what) {
  return Error::make(Code::kInvalid, label + " line " + std::to_string(line) + ": " + what);
}

// "8", "8.0", "8.00" -> 8; anything else (fractions, signs, blanks) -> nullopt.
std::optional<int64_t> parse_gpu_count(std::string_view s) {
  size_t i = 0;
  int64_t n = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9' && i < 4) n = n * 10 + (s[i++] - '0');
  if (i == 0) return std::nullopt;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] == '0') ++i;
  }
  if (i != s.size() || n < 1) return std::nullopt;
  return n;
}

bool cheaper(const Money& a, const Money& b) { return a.micros() < b.micros(); }

std::string reason_of(const Error& e) { return e.fields.empty() ? e.message : e.fields.front().reason; }

}  // namespace

std::optional<size_t> CsvTable::column(std::string_view name) const {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  return std::nullopt;
}

Result<CsvTable> parse_csv(std::string_view text, const std::string& label) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  CsvTable t;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false;        // inside a quoted field
  bool row_has_data = false;  // the current line holds at least one character
  size_t line = 1, row_line = 1;

  auto end_row = [&]() -> Status {
    row.push_back(std::move(field));
    field.clear();
    if (t.header.empty()) {
      t.header = std::move(row);
    } else if (row.size() != t.header.size()) {
      return csv_error(
          label, row_line,
          "has " + std::to_string(row.size()) + " fields, the header has " + std::to_string(t.header.size()));
    } else {
      t.rows.push_back(std::move(row));
      t.row_lines.push_back(row_line);
    }
    row.clear();
    return ok_status();
  };

  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '\r' || c == '\n') {  // CRLF, LF or a lone CR ends a line
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (row_has_data)
        if (auto s = end_row(); !s) return s.error();
      row_has_data = false;
      row_line = ++line;
      continue;
    }
    row_has_data = true;
    if (c == '"' && field.empty()) {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
    } else {
      field += c;
    }
  }
  if (quoted) return csv_error(label, row_line, "a quoted field is not closed before the end of the file");
  if (row_has_data)
    if (auto s = end_row(); !s) return s.error();
  if (t.header.empty()) return Error::make(Code::kInvalid, label + ": empty file (no header line)");
  return t;
}

std::string demo_gpu_model(std::string_view provider, std::string_view instance_type,
                           std::string_view accelerator_name) {
  if (provider == "lambda") {
    // gpu_<n>x_<part>; Lambda's accelerator names are ambiguous, its instance types are not.
    if (instance_type.substr(0, 4) != "gpu_") return "";
    size_t x = instance_type.find("x_", 4);
    if (x == std::string_view::npos) return "";
    std::string_view part = instance_type.substr(x + 2);
    if (part == "h100_sxm5") return "h100-sxm5-80gb";
    if (part == "a100_80gb_sxm4") return "a100-sxm4-80gb";
    return "";
  }
  if (provider == "runpod") {
    // RunPod names the SXM parts "-SXM" and the PCIe cards without a suffix.
    if (accelerator_name == "H100-SXM") return "h100-sxm5-80gb";
    if (accelerator_name == "H200-SXM") return "h200-sxm-141gb";
    if (accelerator_name == "A100-80GB-SXM") return "a100-sxm4-80gb";
    if (accelerator_name == "A100-80GB") return "a100-pcie-80gb";
    if (accelerator_name == "L40S") return "l40s-48gb";
    return "";
  }
  return "";
}

Result<Money> per_gpu_hour(std::string_view instance_price, int64_t gpu_count, Currency currency) {
  if (gpu_count < 1) return Error::invalid("gpu_count", "must be at least 1 (got " + std::to_string(gpu_count) + ")");
  auto whole = Money::parse(instance_price, currency);
  if (!whole) return whole.error();
  if (whole->micros() <= 0)
    return Error::invalid("amount", "'" + std::string(instance_price) + "' is not a positive price");
  return whole->mul_ratio(1, gpu_count);
}

Result<std::vector<InstancePrice>> read_price_list(std::string_view provider, std::string_view csv_text,
                                                   const std::string& label) {
  if (provider != "lambda" && provider != "runpod")
    return Error::make(Code::kInvalid, label + ": unknown price-list provider '" + std::string(provider) + "'");
  auto table = parse_csv(csv_text, label);
  if (!table) return table.error();
  const char* required[] = {"InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "SpotPrice", "Region"};
  std::map<std::string, size_t> col;
  for (const char* name : required) {
    auto c = table->column(name);
    if (!c) return Error::make(Code::kInvalid, label + ": no column '" + name + "' in the header");
    col[name] = *c;
  }
  const std::optional<size_t> zone_col = table->column("AvailabilityZone");

  std::vector<InstancePrice> out;
  for (size_t r = 0; r < table->rows.size(); ++r) {
    const auto& row = table->rows[r];
    const size_t line = table->row_lines[r];
    std::string model = demo_gpu_model(provider, row[col["InstanceType"]], row[col["AcceleratorName"]]);
    if (model.empty()) continue;
    InstancePrice p;
    p.provider = std::string(provider);
    p.instance_type = row[col["InstanceType"]];
    p.gpu_model = std::move(model);
    p.line = line;
    auto count = parse_gpu_count(row[col["AcceleratorCount"]]);
    if (!count)
      return csv_error(label, line,
                       "AcceleratorCount: '" + row[col["AcceleratorCount"]] + "' is not a whole GPU count");
    p.gpu_count = *count;
    p.zone = zone_col && !row[*zone_col].empty() ? row[*zone_col] : row[col["Region"]];
    if (p.zone.empty()) return csv_error(label, line, "neither AvailabilityZone nor Region is given");
    const std::string& price = row[col["Price"]];
    if (price.empty()) return csv_error(label, line, "Price: is empty");
    auto per_gpu = per_gpu_hour(price, p.gpu_count);
    if (!per_gpu) return csv_error(label, line, "Price: " + reason_of(per_gpu.error()));
    p.price_per_gpu = *per_gpu;
    if (const std::string& spot = row[col["SpotPrice"]]; !spot.empty()) {
      auto s = per_gpu_hour(spot, p.gpu_count);
      if (!s) return csv_error(label, line, "SpotPrice: " + reason_of(s.error()));
      p.spot_per_gpu = *s;
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<GpuPrice> representative_prices(const std::vector<InstancePrice>& rows) {
  std::map<std::pair<std::string, std::string>, std::vector<const InstancePrice*>> groups;
  for (const InstancePrice& r : rows) groups[{r.provider, r.gpu_model}].push_back(&r);

  std::vector<GpuPrice> out;
  for (const auto& [key, group] : groups) {
    bool has_eight = false;
    int64_t largest = 0;
    for (const InstancePrice* r : group) {
      has_eight = has_eight || r->gpu_count == 8;
      largest = std::max(largest, r->gpu_count);
    }
    const int64_t size = has_eight ? 8 : largest;

    const InstancePrice* best = nullptr;
    for (const InstancePrice* r : group) {
      if (r->gpu_count != size) continue;
      if (!best || cheaper(r->price_per_gpu, best->price_per_gpu) ||
          (r->price_per_gpu == best->price_per_gpu &&
           std::tie(r->zone, r->instance_type, r->line) < std::tie(best->zone, best->instance_type, best->line)))
        best = r;
    }
    GpuPrice g;
    g.provider = key.first;
    g.gpu_model = key.second;
    g.instance_type = best->instance_type;
    g.gpu_count = size;
    g.zone = best->zone;
    g.on_demand = best->price_per_gpu;

    // Spot: rows whose spot exceeds their own on-demand price are list errors, grouped for the note.
    std::map<std::tuple<std::string, int64_t, int64_t>, std::set<std::string>> above;  // (type, spot, od) -> zones
    bool any_spot = false;
    for (const InstancePrice* r : group) {
      if (r->gpu_count != size || !r->spot_per_gpu) continue;
      any_spot = true;
      if (cheaper(r->price_per_gpu, *r->spot_per_gpu)) {
        above[{r->instance_type, r->spot_per_gpu->micros(), r->price_per_gpu.micros()}].insert(r->zone);
        continue;
      }
      if (!g.spot || cheaper(*r->spot_per_gpu, *g.spot)) g.spot = r->spot_per_gpu;
    }
    for (const auto& [k, zones] : above) {
      const auto& [type, spot, od] = k;
      g.notes.push_back("spot skipped: " + type + " lists spot " + Money(spot, Currency::kUSD).amount_string() +
                        " above on-demand " + Money(od, Currency::kUSD).amount_string() + " USD per GPU-hour in " +
                        std::to_string(zones.size()) + (zones.size() == 1 ? " zone" : " zones") +
                        " (taken as a list error: interruptible capacity is never dearer than on-demand)");
    }
    if (g.spot && cheaper(g.on_demand, *g.spot)) {
      g.notes.push_back("spot skipped: the cheapest spot price " + g.spot->amount_string() +
                        " exceeds the cheapest on-demand price " + g.on_demand.amount_string() + " USD per GPU-hour");
      g.spot.reset();
    }
    if (!any_spot) g.notes.push_back("no spot price in the list for " + std::to_string(size) + "-GPU instances");
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace gpurent
