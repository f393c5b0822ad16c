// Test helpers shared by the scenario-file suites (tests/scenarios/sched, tests/scenarios/billing):
// the repository's GPU catalog (or any catalog file), a file's text, the YAML files of a folder, and a GoogleTest name
// made from a file name. Header-only; for *_test.cc files.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"

namespace gpurent::testutil {

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A catalog file parsed (tests read files themselves: the catalog module reads none).
inline Result<GpuCatalog> catalog_file(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) return Error::make(Code::kNotFound, "no catalog file " + path);
  return GpuCatalog::parse(slurp(path));
}

inline const GpuCatalog& repo_catalog() {
  static const GpuCatalog c = [] {
    auto r = catalog_file(std::string(GPURENT_SOURCE_DIR) + "/data/gpu_catalog.yaml");
    EXPECT_TRUE(r.ok());
    return r.ok() ? std::move(*r) : GpuCatalog{};
  }();
  return c;
}

// The *.yaml file names in GPURENT_SOURCE_DIR/rel_dir, sorted.
inline std::vector<std::string> yaml_files(const std::string& rel_dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(GPURENT_SOURCE_DIR) / rel_dir))
    if (e.path().extension() == ".yaml") out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// "spot_market.yaml" -> "spot_market" (non-alphanumerics become '_').
struct FileTestName {
  template <class Info>
  std::string operator()(const Info& info) const {
    std::string n = info.param.substr(0, info.param.size() - 5);
    for (char& c : n)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return n;
  }
};

}  // namespace gpurent::testutil
