// The node agent's sources: the simulated one cycles its sequences; NVML that cannot be loaded is
// an error that says what is missing; the usage batch is what POST /api/v1/usage takes.
#include "agent/gpu_source.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

TEST(AgentSource, TheSimulatedSourceCyclesItsSequences) {
  auto src = open_simulated_source(json::parse(R"({"gpus": [
      {"index": 0, "uuid": "GPU-1", "utilization_pct": [10, 90], "memory_used_mib": [1000]},
      {"index": 3, "utilization_pct": [55], "power_mw": [300000, 310000, 320000]}]})"));
  ASSERT_TRUE(src.ok()) << src.error().message;
  EXPECT_EQ((*src)->describe(), "simulated GPU source (2 GPUs)");
  std::vector<int64_t> util, power;
  for (int i = 0; i < 4; ++i) {
    auto r = (*src)->read();
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->size(), 2u);
    util.push_back((*r)[0].utilization_pct);
    power.push_back(*(*r)[1].power_mw);
    EXPECT_EQ((*r)[0].memory_used_mib, 1000);
    EXPECT_FALSE((*r)[1].memory_used_mib.has_value());
    EXPECT_EQ((*r)[1].index, 3);
  }
  EXPECT_EQ(util, (std::vector<int64_t>{10, 90, 10, 90}));
  EXPECT_EQ(power, (std::vector<int64_t>{300000, 310000, 320000, 300000}));
}

TEST(AgentSource, BadSimulatedFilesNameTheField) {
  auto field = [](const char* text) {
    auto r = open_simulated_source(json::parse(text));
    return r.ok() ? std::string("(ok)") : r.error().fields.empty() ? r.error().message : r.error().fields[0].field;
  };
  EXPECT_EQ(field(R"({"gpus": [{"index": 0, "utilization_pct": [101]}]})"), "gpus[0].utilization_pct");
  EXPECT_EQ(field(R"({"gpus": [{"index": 0, "utilization_pct": []}]})"), "gpus[0].utilization_pct");
  EXPECT_EQ(field(R"({"gpus": [{"index": 0}]})"), "gpus[0].utilization_pct");
  EXPECT_EQ(field(R"({"gpus": [{"index": 64, "utilization_pct": [1]}]})"), "gpus[0].index");
  EXPECT_EQ(field(R"({"gpus": [{"index": 0, "utilization_pct": [1], "temp": [3]}]})"), "gpus[0].temp");
  EXPECT_EQ(field(R"({"cards": []})"), "gpus");
}

TEST(AgentSource, NvmlThatCannotBeLoadedSaysWhy) {
  auto r = open_nvml_source("/nonexistent/libnvidia-ml.so.1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::kUnavailable);
  EXPECT_NE(r.error().message.find("cannot load NVML (/nonexistent/libnvidia-ml.so.1)"), std::string::npos) << r.error().message;
  // A library that is not NVML (the C library has none of its functions) is refused by name.
  auto libc = open_nvml_source("libc.so.6");
  ASSERT_FALSE(libc.ok());
  EXPECT_NE(libc.error().message.find("has no nvmlInit_v2"), std::string::npos) << libc.error().message;
}

TEST(AgentSource, TheBatchIsKeyedByNodeAndSecond) {
  std::vector<AgentGpu> gpus = {{0, "GPU-1", 42, 1000, 250000, 1980}, {1, "", 7, std::nullopt, std::nullopt, std::nullopt}};
  const json b = agent_usage_batch("gpn1", gpus, 1'796'400'000'000);
  EXPECT_EQ(b["idempotency_key"], "agent-gpn1-1796400000000");
  ASSERT_EQ(b["gpu_samples"].size(), 2u);
  EXPECT_EQ(b["gpu_samples"][0], (json{{"at", "2026-12-04T16:00:00.000Z"}, {"node", "gpn1"}, {"gpu", 0},
                                      {"utilization_pct", 42}, {"memory_used_mib", 1000}, {"power_mw", 250000},
                                      {"sm_clock_mhz", 1980}}));
  EXPECT_FALSE(b["gpu_samples"][1].contains("memory_used_mib"));
}

}  // namespace
}  // namespace gpurent
