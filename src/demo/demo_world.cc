#include "demo/demo_world.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "demo/builtin_prices.h"
#include "demo/world_parts.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProviders[] = {"lambda", "runpod"};

Result<std::string> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Error::make(Code::kInternal, "cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return Error::make(Code::kInternal, "error reading " + p.string());
  return s.str();
}

struct LoadedPrices {
  ListPrices prices;
  std::string source;
};

// Each provider's list from <data_dir>/prices/<provider>_vms.csv when the file exists (a file
// that exists but does not parse is an error, not a silent fallback), else the built-in excerpt;
// a model a list lacks is priced from the built-in excerpt too, and the source says so.
Result<LoadedPrices> load_prices(const std::string& data_dir) {
  LoadedPrices out;
  std::vector<std::string> from_files, fallbacks;
  ListPrices builtin;
  for (const char* provider : kProviders) {
    auto rows =
        read_price_list(provider, builtin_price_list(provider), std::string("built-in ") + provider + " excerpt");
    if (!rows) return rows.error();
    for (GpuPrice& g : representative_prices(*rows)) builtin[{g.provider, g.gpu_model}] = std::move(g);

    const fs::path file =
        data_dir.empty() ? fs::path() : fs::path(data_dir) / "prices" / (std::string(provider) + "_vms.csv");
    std::error_code ec;
    if (file.empty() || !fs::is_regular_file(file, ec)) continue;
    auto text = read_file(file);
    if (!text) return text.error();
    auto listed = read_price_list(provider, *text, file.filename().string());
    if (!listed) return listed.error();
    for (GpuPrice& g : representative_prices(*listed)) out.prices[{g.provider, g.gpu_model}] = std::move(g);
    from_files.push_back(file.filename().string());
  }
  for (const auto& key : listed_offer_models()) {
    if (out.prices.count(key)) continue;
    out.prices[key] = builtin.at(key);
    fallbacks.push_back(key.first + " " + key.second);
  }

  if (from_files.empty()) {
    out.source =
        "built-in (excerpt of the Lambda and RunPod lists of the SkyPilot catalog at the commits "
        "../shared/data/prices/SOURCE.md names)";
  } else {
    out.source = (fs::path(data_dir) / "prices").string() + " (";
    for (size_t i = 0; i < from_files.size(); ++i) out.source += (i ? ", " : "") + from_files[i];
    out.source += ")";
    if (!fallbacks.empty()) {
      out.source += "; built-in for";
      for (size_t i = 0; i < fallbacks.size(); ++i) out.source += (i ? ", " : " ") + fallbacks[i];
    }
  }
  out.source += "; huadong-aidc: illustrative built-in CNY prices";
  for (const auto& [key, price] : out.prices)
    for (const std::string& note : price.notes)
      if (note.rfind("spot skipped", 0) == 0) out.source += "; " + key.first + " " + key.second + " " + note;
  return out;
}

}  // namespace

Result<DemoWorld> build_demo_world(const std::string& data_dir, const GpuCatalog& catalog) {
  auto prices = load_prices(data_dir);
  if (!prices) return prices.error();
  auto supply = supply_objects(prices->prices, catalog);
  if (!supply) return supply.error();
  DemoWorld w;
  w.objects = std::move(*supply);
  for (DemoObject& o : demand_objects()) w.objects.push_back(std::move(o));
  w.price_source = std::move(prices->source);
  return w;
}

std::string default_data_dir() {
  if (const char* env = std::getenv("GPURENT_DATA_DIR"); env && *env) return env;
  const std::string candidate = GPURENT_SOURCE_DIR "/../shared/data";
  std::error_code ec;
  if (fs::is_directory(candidate, ec)) return candidate;
  return "";
}

}  // namespace gpurent
