// The shell's file and environment access: the catalog, the scheduler config and the demo's
// price lists are read here and parsed by their (pure) modules.
#include "io/files.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace gpurent {
namespace {

const std::string kDataFile = GPURENT_SOURCE_DIR "/data/gpu_catalog.yaml";

TEST(CatalogFile, ErrorsNameThePath) {
  auto missing = load_catalog_file("/nonexistent/gpu_catalog.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, Code::kNotFound);
  EXPECT_NE(missing.error().message.find("/nonexistent/gpu_catalog.yaml"), std::string::npos);

  const std::string path = testing::TempDir() + "/bad_gpu_catalog.yaml";
  std::ofstream(path) << "models:\n  - id: x\n";
  auto bad = load_catalog_file(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find(path), std::string::npos);
  EXPECT_NE(bad.error().message.find("models[0]."), std::string::npos) << bad.error().message;
  std::filesystem::remove(path);

  auto dir = load_catalog_file(testing::TempDir());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.error().message.find("not a regular file"), std::string::npos);
}

TEST(CatalogFile, DefaultPathHonoursEnvironment) {
  const char* old = std::getenv("GPURENT_CATALOG");
  const std::string saved = old ? old : "";
  ::setenv("GPURENT_CATALOG", "/etc/gpurent/catalog.yaml", 1);
  EXPECT_EQ(default_catalog_path(), "/etc/gpurent/catalog.yaml");
  ::setenv("GPURENT_CATALOG", "", 1);
  EXPECT_EQ(default_catalog_path(), kDataFile);
  ::unsetenv("GPURENT_CATALOG");
  EXPECT_EQ(default_catalog_path(), kDataFile);
  if (old) ::setenv("GPURENT_CATALOG", saved.c_str(), 1);
}

TEST(CatalogFile, LoadsTheRepositoryCatalog) {
  auto c = load_catalog_file(kDataFile);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_NE(c->find("H100"), nullptr);
}

TEST(SchedConfigFile, ReadsTheFileAndNamesItInErrors) {
  const std::string path = testing::TempDir() + "/sched_cfg.yaml";
  std::ofstream(path) << "policy: bestfit\nspot_notice_seconds: 5\n";
  auto good = load_sched_config_file(path);
  ASSERT_TRUE(good.ok()) << good.error().message;
  EXPECT_EQ(good->score_policy, "bestfit");
  EXPECT_EQ(good->spot_notice_ms, 5000);

  std::ofstream(path) << "policy: nope\n";
  auto bad = load_sched_config_file(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().fields.at(0).field, "policy");
  EXPECT_EQ(bad.error().message.rfind(path + ": ", 0), 0u) << bad.error().message;

  std::ofstream(path) << "- 1\n";
  auto list = load_sched_config_file(path);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().fields.at(0).field, "--sched-config");
  EXPECT_EQ(list.error().fields.at(0).reason, path + ": must be a map of settings");
  std::filesystem::remove(path);

  auto missing = load_sched_config_file("/nonexistent/x.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().fields.at(0).field, "--sched-config");
  EXPECT_NE(missing.error().fields.at(0).reason.find("/nonexistent/x.yaml"), std::string::npos);
}

TEST(DemoPriceFiles, ReadsTheProvidersListsThatExist) {
  const std::string dir = testing::TempDir() + "/demo_data";
  std::filesystem::create_directories(dir + "/prices");
  EXPECT_TRUE(read_demo_price_files("")->files.empty());
  EXPECT_TRUE(read_demo_price_files(dir)->files.empty());
  std::ofstream(dir + "/prices/lambda_vms.csv") << "InstanceType,AcceleratorName\n";
  std::ofstream(dir + "/prices/other_vms.csv") << "x\n";
  auto files = read_demo_price_files(dir);
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->files.size(), 1u);
  EXPECT_EQ(files->files[0].provider, "lambda");
  EXPECT_EQ(files->files[0].name, "lambda_vms.csv");
  EXPECT_EQ(files->files[0].text, "InstanceType,AcceleratorName\n");
  EXPECT_EQ(files->dir, dir + "/prices");
  std::filesystem::remove_all(dir);
}

TEST(DefaultDataDir, EnvironmentOverridesTheSourceTree) {
  const char* old = std::getenv("GPURENT_DATA_DIR");
  const std::string saved = old ? old : "";
  ::setenv("GPURENT_DATA_DIR", "/srv/gpurent-data", 1);
  EXPECT_EQ(default_data_dir(), "/srv/gpurent-data");
  ::setenv("GPURENT_DATA_DIR", "", 1);  // empty counts as unset
  const std::string fallback = default_data_dir();
  const std::string tree = GPURENT_SOURCE_DIR "/../shared/data";
  EXPECT_EQ(fallback, std::filesystem::is_directory(tree) ? tree : "");
  if (old)
    ::setenv("GPURENT_DATA_DIR", saved.c_str(), 1);
  else
    ::unsetenv("GPURENT_DATA_DIR");
}

}  // namespace
}  // namespace gpurent
