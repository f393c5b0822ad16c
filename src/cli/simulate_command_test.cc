// `gpurent simulate alloc` in process on a small synthetic trace: output formats and exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.h"
#include "core/clock.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;

class SimulateCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpurent_sim_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "nodes.csv") << "sn,cpu_milli,memory_mib,gpu,model\n"
                                         "n0,16000,65536,1,T4\nn1,16000,65536,1,T4\n"
                                         "n2,16000,65536,1,P100\nn3,16000,65536,1,P100\n";
    std::ofstream(dir_ / "pods.csv") << "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
                                        "p0,1000,1024,1,1000,\np1,1000,1024,1,1000,\n"
                                        "p2,1000,1024,1,1000,\np3,1000,1024,1,1000,\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  struct Run {
    int rc;
    std::string out, err;
  };
  Run run(std::vector<std::string> extra) {
    std::vector<std::string> args{"simulate", "alloc", "--nodes", (dir_ / "nodes.csv").string(), "--pods",
                                  (dir_ / "pods.csv").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    std::istringstream in;
    std::ostringstream out, err;
    auto env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    auto serve = [](const ServerOptions&) { return 0; };
    FakeClock clock(0);
    CliIo io{in, out, err, env, clock, serve};
    int rc = run_cli(args, io);
    return {rc, out.str(), err.str()};
  }
  fs::path dir_;
};

TEST_F(SimulateCommandTest, JsonHasSeriesPerSeedAndMean) {
  auto r = run({"--policy", "bestfit", "--seeds", "1-3", "-o", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["policy"], "bestfit");
  EXPECT_EQ(doc["seeds"], nlohmann::json({1, 2, 3}));
  ASSERT_EQ(doc["alloc_pct"].size(), 131u);
  EXPECT_EQ(doc["alloc_pct"][100], 100.0);  // 4 whole-GPU pods fill 4 one-GPU nodes
  EXPECT_TRUE(doc["alloc_pct"][130].is_null());
  ASSERT_EQ(doc["per_seed"].size(), 3u);
  EXPECT_EQ(doc["per_seed"][0]["seed"], 1);
  EXPECT_EQ(doc["per_seed"][0]["alloc_pct"].size(), 131u);
  EXPECT_TRUE(doc["run_seconds"].is_number());
}

TEST_F(SimulateCommandTest, TableShowsRowsAndTiming) {
  auto r = run({"--seeds", "5"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("policy fgd"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("      100        100.00"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("s per experiment"), std::string::npos);
}

TEST_F(SimulateCommandTest, BadInputsExitTwo) {
  auto p = run({"--policy", "tetris"});
  EXPECT_EQ(p.rc, 2);
  EXPECT_NE(p.err.find("known: random, dotprod, gpuclustering, gpupacking, bestfit, fgd"), std::string::npos) << p.err;
  auto s = run({"--seeds", "51-42"});
  EXPECT_EQ(s.rc, 2);
  EXPECT_NE(s.err.find("--seeds"), std::string::npos) << s.err;
  EXPECT_EQ(run({"--seeds", "4x"}).rc, 2);
  auto t = run({"--tune", "0"});
  EXPECT_EQ(t.rc, 2);
  EXPECT_NE(t.err.find("--tune: must be in (0, 10]"), std::string::npos) << t.err;
  for (const char* tune : {"inf", "nan", "11"}) EXPECT_EQ(run({"--tune", tune}).rc, 2) << tune;
  // The largest seed is one seed, not a range that wraps around and never ends.
  auto last = run({"--seeds", "18446744073709551615-18446744073709551615", "-o", "json"});
  ASSERT_EQ(last.rc, 0) << last.err;
  EXPECT_EQ(nlohmann::json::parse(last.out)["seeds"].size(), 1u);
  fs::remove(dir_ / "pods.csv");
  auto m = run({});
  EXPECT_EQ(m.rc, 2);
  EXPECT_NE(m.err.find("pods.csv: cannot open file"), std::string::npos) << m.err;
}

}  // namespace
}  // namespace gpurent
