#include "io/files.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sched/sched_config.h"

#ifndef GPURENT_SOURCE_DIR
#error "GPURENT_SOURCE_DIR must be defined by the build (CMakeLists.txt sets it)"
#endif

namespace gpurent {

namespace fs = std::filesystem;

namespace {
constexpr int64_t kMaxCatalogBytes = int64_t{4} << 20;
constexpr int64_t kMaxConfigBytes = int64_t{1} << 20;
constexpr int64_t kMaxPriceListBytes = int64_t{64} << 20;
}  // namespace

Result<std::string> read_text_file(const std::string& path, int64_t max_bytes, const std::string& what) {
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
    return Error::make(Code::kInvalid, what + " '" + path + "' is not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::make(Code::kNotFound, "cannot read " + what + " '" + path + "': " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return Error::make(Code::kInternal, "cannot read " + what + " '" + path + "'");
  if (size > max_bytes)
    return Error::make(Code::kTooLarge, what + " '" + path + "' is larger than " + std::to_string(max_bytes >> 20) + " MiB");
  in.seekg(0, std::ios::beg);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error::make(Code::kInternal, "error reading " + what + " '" + path + "'");
  return text.str();
}

std::string default_catalog_path() {
  const char* env = std::getenv("GPURENT_CATALOG");
  if (env && *env) return env;
  return GPURENT_SOURCE_DIR "/data/gpu_catalog.yaml";
}

std::string default_data_dir() {
  if (const char* env = std::getenv("GPURENT_DATA_DIR"); env && *env) return env;
  const std::string candidate = GPURENT_SOURCE_DIR "/../shared/data";
  std::error_code ec;
  if (fs::is_directory(candidate, ec)) return candidate;
  return "";
}

Result<GpuCatalog> load_catalog_file(const std::string& path) {
  auto text = read_text_file(path, kMaxCatalogBytes, "GPU catalog");
  if (!text) return text.error();
  auto cat = GpuCatalog::parse(*text);
  if (!cat) {
    Error e = cat.error();
    e.message = "GPU catalog '" + path + "': " + e.message;
    return e;
  }
  return cat;
}

Result<SchedConfig> load_sched_config_file(const std::string& path, SchedConfig defaults) {
  auto text = read_text_file(path, kMaxConfigBytes, "scheduler config");
  if (!text) return Error::invalid("--sched-config", text.error().message);
  auto cfg = parse_sched_config(*text, std::move(defaults));
  if (!cfg) {
    Error e = cfg.error();
    if (e.fields.size() == 1 && e.fields[0].field == "--sched-config") {
      e.fields[0].reason = path + ": " + e.fields[0].reason;
      e.message = "--sched-config: " + e.fields[0].reason;
    } else {
      e.message = path + ": " + e.message;
    }
    return e;
  }
  return cfg;
}

Result<DemoPriceFiles> read_demo_price_files(const std::string& data_dir) {
  DemoPriceFiles out;
  if (data_dir.empty()) return out;
  out.dir = (fs::path(data_dir) / "prices").string();
  for (const std::string& provider : demo_price_providers()) {
    const fs::path file = fs::path(data_dir) / "prices" / (provider + "_vms.csv");
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    auto text = read_text_file(file.string(), kMaxPriceListBytes, "price list");
    if (!text) return text.error();
    out.files.push_back({provider, file.filename().string(), std::move(*text)});
  }
  return out;
}

}  // namespace gpurent
