#include "demo/demo_world.h"

#include "demo/builtin_prices.h"
#include "demo/world_parts.h"

namespace gpurent {
namespace {

struct LoadedPrices {
  ListPrices prices;
  std::string source;
};

// Each provider's list from its file when the shell read one (a file that does not parse is an
// error, not a silent fallback), else the built-in excerpt; a model a list lacks is priced from
// the built-in excerpt too, and the source says so.
Result<LoadedPrices> load_prices(const DemoPriceFiles& files) {
  LoadedPrices out;
  std::vector<std::string> from_files, fallbacks;
  ListPrices builtin;
  for (const std::string& provider : demo_price_providers()) {
    auto rows = read_price_list(provider, builtin_price_list(provider), "built-in " + provider + " excerpt");
    if (!rows) return rows.error();
    for (GpuPrice& g : representative_prices(*rows)) builtin[{g.provider, g.gpu_model}] = std::move(g);
    for (const DemoPriceFile& f : files.files) {
      if (f.provider != provider) continue;
      auto listed = read_price_list(provider, f.text, f.name);
      if (!listed) return listed.error();
      for (GpuPrice& g : representative_prices(*listed)) out.prices[{g.provider, g.gpu_model}] = std::move(g);
      from_files.push_back(f.name);
    }
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
    out.source = files.dir + " (";
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

const std::vector<std::string>& demo_price_providers() {
  static const std::vector<std::string> providers = {"lambda", "runpod"};
  return providers;
}

Result<DemoWorld> build_demo_world(const DemoPriceFiles& files, const GpuCatalog& catalog) {
  auto prices = load_prices(files);
  if (!prices) return prices.error();
  auto supply = supply_objects(prices->prices, catalog);
  if (!supply) return supply.error();
  DemoWorld w;
  w.objects = std::move(*supply);
  for (DemoObject& o : demand_objects()) w.objects.push_back(std::move(o));
  w.price_source = std::move(prices->source);
  return w;
}

}  // namespace gpurent
