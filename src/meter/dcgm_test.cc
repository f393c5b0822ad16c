#include "meter/dcgm.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpurent {
namespace {

// Shaped like dcgm-exporter's /metrics (its default counters, Kubernetes pod labels empty).
constexpr const char* kScrape = R"(# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-0a1b2c3d-0000-1111-2222-333344445555",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7",container="",namespace="",pod=""} 1980
DCGM_FI_DEV_SM_CLOCK{gpu="1",UUID="GPU-0a1b2c3d-0000-1111-2222-333344446666",pci_bus_id="00000000:2a:00.0",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7",container="",namespace="",pod=""} 1755
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-0a1b2c3d-0000-1111-2222-333344445555",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7",container="",namespace="",pod=""} 87
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-0a1b2c3d-0000-1111-2222-333344446666",pci_bus_id="00000000:2a:00.0",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7",container="",namespace="",pod=""} 0
# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-0a1b2c3d-0000-1111-2222-333344445555",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7",container="",namespace="",pod=""} 40000
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-0a1b2c3d-0000-1111-2222-333344445555",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7",container="",namespace="",pod=""} 349.8765
DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-0a1b2c3d-0000-1111-2222-333344446666",pci_bus_id="00000000:2a:00.0",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7",container="",namespace="",pod=""} 71.002
# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-0a1b2c3d-0000-1111-2222-333344445555",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7",container="",namespace="",pod=""} 0.804512
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-0a1b2c3d-0000-1111-2222-333344445555",Hostname="node-7"} 45
)";

TEST(PromText, ParsesLabelsValuesAndTimestamps) {
  auto r = parse_prometheus_text(
      "# a plain comment\n"
      "\n"
      "up 1\n"
      "http_requests_total{method=\"post\",code=\"200\",} 1027 1395066363000\r\n"
      "msg{text=\"say \\\"hi\\\"\\n\\\\ok\", empty=\"\"} -3.5e2\n"
      "weird{a=\"x\"} NaN\n"
      "inf_metric +Inf\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[0].name, "up");
  EXPECT_EQ((*r)[0].line, 3u);
  EXPECT_EQ((*r)[1].labels, (std::vector<PromLabel>{{"method", "post"}, {"code", "200"}}));
  EXPECT_EQ((*r)[1].value, 1027);
  EXPECT_EQ((*r)[1].timestamp_ms, 1395066363000);
  EXPECT_EQ(*(*r)[2].label("text"), "say \"hi\"\n\\ok");
  EXPECT_EQ(*(*r)[2].label("empty"), "");
  EXPECT_EQ((*r)[2].label("nope"), nullptr);
  EXPECT_EQ((*r)[2].value, -350);
  EXPECT_TRUE(std::isnan((*r)[3].value));
  EXPECT_TRUE(std::isinf((*r)[4].value));
}

TEST(PromText, MalformedLinesNameTheLine) {
  struct Case {
    const char* text;
    const char* reason;
  } cases[] = {
      {"ok 1\nbad{gpu=\"0\" 5\n", "expected ',' or '}'"},
      {"ok 1\nok 2\nx{gpu=0} 1\n", "value must be in double quotes"},
      {"x{gpu=\"0} 1\n", "unterminated value"},
      {"x{gpu=\"\\t\"} 1\n", "unknown escape"},
      {"x{gpu=\"0\",gpu=\"1\"} 1\n", "appears twice"},
      {"x 12abc\n", "is not a number"},
      {"x\n", "is not a number"},
      {"x 1 12.5\n", "is not an integer"},
      {"x 1 12 extra\n", "unexpected text"},
      {"# TYPE x gaugeish\n", "unknown metric type"},
      {"# HELP\n", "needs a metric name"},
      {"{a=\"b\"} 1\n", "expected a metric name"},
      {"x{1a=\"b\"} 1\n", "expected a label name"},
  };
  for (const auto& c : cases) {
    auto r = parse_prometheus_text(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    ASSERT_EQ(r.error().fields.size(), 1u);
    const size_t lines = std::string_view(c.text).find("ok 2") != std::string_view::npos ? 3
                         : std::string_view(c.text).starts_with("ok 1")                  ? 2
                                                                                         : 1;
    EXPECT_EQ(r.error().fields[0].field, "line " + std::to_string(lines)) << c.text;
    EXPECT_NE(r.error().fields[0].reason.find(c.reason), std::string::npos) << c.text << " -> " << r.error().message;
  }
}

// What an exporter cannot make the parser do: compare a thousand labels with each other, keep
// every series it does not need, or grow without bound in GPUs or MIG instances.
TEST(PromText, HostileExpositionsAreBounded) {
  std::string many = "x{";
  for (int i = 0; i < 65; ++i) many += (i ? "," : "") + std::string("a") + std::to_string(i) + "=\"\"";
  auto labels = parse_prometheus_text(many + "} 1\n");
  ASSERT_FALSE(labels.ok());
  EXPECT_NE(labels.error().message.find("more than 64 labels"), std::string::npos) << labels.error().message;

  // Only the metrics map_dcgm reads are kept, but every line is still checked.
  auto kept = parse_prometheus_text(kScrape, dcgm_metric_read);
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  for (const PromSample& p : *kept) EXPECT_TRUE(dcgm_metric_read(p.name)) << p.name;
  EXPECT_FALSE(kept->empty());
  std::string noise;
  for (int i = 0; i < 1000; ++i) noise += "go_goroutines " + std::to_string(i) + "\n";
  auto filtered = parse_prometheus_text(noise, dcgm_metric_read);
  ASSERT_TRUE(filtered.ok());
  EXPECT_TRUE(filtered->empty());
  EXPECT_FALSE(parse_prometheus_text(noise + "go_goroutines{\n", dcgm_metric_read).ok());

  std::string gpus;
  for (int i = 0; i <= 1024; ++i) gpus += "DCGM_FI_DEV_GPU_UTIL{UUID=\"GPU-" + std::to_string(i) + "\"} 1\n";
  auto too_many = map_dcgm(parse_prometheus_text(gpus).value());
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().message.find("more than 1024 GPUs"), std::string::npos) << too_many.error().message;

  std::string mig;
  for (int i = 0; i <= 64; ++i)
    mig += "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-a\",GPU_I_ID=\"" + std::to_string(i) + "\"} 0.5\n";
  auto instances = map_dcgm(parse_prometheus_text(mig).value());
  ASSERT_FALSE(instances.ok());
  EXPECT_NE(instances.error().message.find("MIG instances"), std::string::npos) << instances.error().message;
}

TEST(Dcgm, MapsTheExporterFieldsPerGpu) {
  auto samples = parse_prometheus_text(kScrape);
  ASSERT_TRUE(samples.ok()) << samples.error().message;
  auto m = map_dcgm(*samples);
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->gpus.size(), 2u);
  EXPECT_TRUE(m->skipped.empty());
  const DcgmGpuReading& g0 = m->gpus[0];
  EXPECT_EQ(g0.uuid, "GPU-0a1b2c3d-0000-1111-2222-333344445555");
  EXPECT_EQ(g0.gpu, 0);
  EXPECT_EQ(g0.hostname, "node-7");
  EXPECT_EQ(g0.model_name, "NVIDIA H100 80GB HBM3");
  EXPECT_FALSE(g0.at.has_value());
  EXPECT_EQ(g0.metrics.utilization_pct, 87);
  EXPECT_EQ(g0.metrics.memory_used_mib, 40000);
  EXPECT_EQ(g0.metrics.power_mw, 349'877);  // 349.8765 W
  EXPECT_EQ(g0.metrics.sm_clock_mhz, 1980);
  EXPECT_EQ(g0.metrics.gr_engine_active_pct, 80);  // ratio 0.8045
  const DcgmGpuReading& g1 = m->gpus[1];
  EXPECT_EQ(g1.gpu, 1);
  EXPECT_EQ(g1.metrics.utilization_pct, 0);
  EXPECT_EQ(g1.metrics.power_mw, 71'002);
  EXPECT_FALSE(g1.metrics.memory_used_mib.has_value());
  EXPECT_FALSE(g1.metrics.gr_engine_active_pct.has_value());
}

TEST(Dcgm, GroupsByHostAndIndexWithoutUuid) {
  auto samples = parse_prometheus_text(
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",Hostname=\"a\"} 50 1764417600000\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",Hostname=\"b\"} 60 1764417600000\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"2\",Hostname=\"a\"} 10 1764417601000\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"4\",GPU_I_ID=\"\"} 0.25\n"
      "DCGM_FI_DEV_FB_USED{gpu=\"5\"} 10\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"6\"} NaN\n");
  ASSERT_TRUE(samples.ok());
  auto m = map_dcgm(*samples).value();
  ASSERT_EQ(m.gpus.size(), 3u);
  EXPECT_EQ(m.gpus[0].hostname, "a");
  EXPECT_EQ(m.gpus[0].metrics.memory_used_mib, 10);
  EXPECT_EQ(m.gpus[0].at, 1764417601000);
  EXPECT_EQ(m.gpus[1].hostname, "b");
  EXPECT_EQ(m.gpus[1].metrics.utilization_pct, 60);
  EXPECT_EQ(m.gpus[2].gpu, 4);  // utilization from GR_ENGINE_ACTIVE when GPU_UTIL is absent (GPU_I_ID empty: no MIG)
  EXPECT_EQ(m.gpus[2].metrics.utilization_pct, 25);
  EXPECT_EQ(m.skipped.size(), 2u);  // gpu 5 (memory only), gpu 6 (NaN utilization)
}

// A MIG-enabled H100 as dcgm-exporter shows it (no GPU_UTIL; per instance GR_ENGINE_ACTIVE and
// FB_USED with GPU_I_ID and GPU_I_PROFILE; the physical GPU's gpu and UUID; current releases'
// lower-case `hostname`), beside a whole GPU; power is the device's.
constexpr const char* kMigScrape = R"(# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-6e1c0d2a-1111-2222-3333-444455556666",pci_bus_id="00000000:2A:00.0",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",hostname="gpu-node-12",DCGM_FI_DRIVER_VERSION="570.124.06"} 64
# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-5d0b9c19-1111-2222-3333-444455556666",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",hostname="gpu-node-12",DCGM_FI_DRIVER_VERSION="570.124.06",container="vllm",namespace="serving",pod="qwen-7b-0"} 30112
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-5d0b9c19-1111-2222-3333-444455556666",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="2g.20gb",GPU_I_ID="5",hostname="gpu-node-12",DCGM_FI_DRIVER_VERSION="570.124.06"} 9000
DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-5d0b9c19-1111-2222-3333-444455556666",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="1g.10gb",GPU_I_ID="13",hostname="gpu-node-12",DCGM_FI_DRIVER_VERSION="570.124.06"} 13
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-5d0b9c19-1111-2222-3333-444455556666",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",hostname="gpu-node-12",DCGM_FI_DRIVER_VERSION="570.124.06"} 301.5
# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.
# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-5d0b9c19-1111-2222-3333-444455556666",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1",hostname="gpu-node-12",DCGM_FI_DRIVER_VERSION="570.124.06",container="vllm",namespace="serving",pod="qwen-7b-0"} 0.600000
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-5d0b9c19-1111-2222-3333-444455556666",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="2g.20gb",GPU_I_ID="5",hostname="gpu-node-12",DCGM_FI_DRIVER_VERSION="570.124.06"} 0.250000
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-5d0b9c19-1111-2222-3333-444455556666",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",GPU_I_PROFILE="1g.10gb",GPU_I_ID="13",hostname="gpu-node-12",DCGM_FI_DRIVER_VERSION="570.124.06"} 0.000000
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="1",UUID="GPU-6e1c0d2a-1111-2222-3333-444455556666",pci_bus_id="00000000:2A:00.0",device="nvidia1",modelName="NVIDIA H100 80GB HBM3",hostname="gpu-node-12",DCGM_FI_DRIVER_VERSION="570.124.06"} 0.641000
)";

TEST(Dcgm, MigInstancesCountAsTheFractionsOfTheirGpu) {
  auto m = map_dcgm(parse_prometheus_text(kMigScrape).value());
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->gpus.size(), 2u);
  EXPECT_TRUE(m->skipped.empty());
  const DcgmGpuReading& mig = m->gpus[1];  // in order of first appearance: GPU 1 comes first
  EXPECT_EQ(mig.gpu, 0);
  EXPECT_EQ(mig.hostname, "gpu-node-12");  // the lower-case label
  ASSERT_EQ(mig.mig.size(), 3u);
  EXPECT_EQ(mig.mig_slices, 7);
  // (60% x 3 slices + 25% x 2 + 0% x 1) / 7 slices = 32.9%: the idle seventh counts as idle.
  EXPECT_EQ(mig.metrics.utilization_pct, 33);
  EXPECT_EQ(mig.metrics.gr_engine_active_pct, 33);
  EXPECT_EQ(mig.metrics.memory_used_mib, 30112 + 9000 + 13);
  EXPECT_EQ(mig.metrics.power_mw, 301'500);
  EXPECT_EQ(mig.mig[0], (DcgmMigInstance{"1", "3g.40gb", 3, 60, 30112}));
  const DcgmGpuReading& whole = m->gpus[0];
  EXPECT_TRUE(whole.mig.empty());
  EXPECT_EQ(whole.metrics.utilization_pct, 64);
  EXPECT_EQ(whole.metrics.gr_engine_active_pct, 64);
}

TEST(Dcgm, AMigGpuThatCannotBeCountedIsSkippedWithWhy) {
  const std::string labels = "gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA A30\",Hostname=\"n\"";
  auto run = [&](const std::string& text) { return map_dcgm(parse_prometheus_text(text).value()).value(); };
  // An A30 has 4 slices: 2g.12gb at 50% and 1g.6gb at 100% -> (100 + 100) / 4 = 50%.
  auto a30 = run("DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + labels + ",GPU_I_ID=\"1\",GPU_I_PROFILE=\"2g.12gb\"} 0.5\n" +
                 "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + labels + ",GPU_I_ID=\"3\",GPU_I_PROFILE=\"1g.6gb\"} 1\n");
  ASSERT_EQ(a30.gpus.size(), 1u);
  EXPECT_EQ(a30.gpus[0].mig_slices, 4);
  EXPECT_EQ(a30.gpus[0].metrics.utilization_pct, 50);
  // An instance with memory but no activity (profiling metrics off): the GPU cannot be counted.
  auto silent = run("DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + labels + ",GPU_I_ID=\"1\",GPU_I_PROFILE=\"2g.12gb\"} 0.5\n" +
                    "DCGM_FI_DEV_FB_USED{" + labels + ",GPU_I_ID=\"3\",GPU_I_PROFILE=\"1g.6gb\"} 100\n");
  EXPECT_TRUE(silent.gpus.empty());
  ASSERT_EQ(silent.skipped.size(), 1u);
  EXPECT_NE(silent.skipped[0].find("MIG instance 3 (1g.6gb) reports no DCGM_FI_PROF_GR_ENGINE_ACTIVE"), std::string::npos)
      << silent.skipped[0];
  auto unreadable = run("DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + labels + ",GPU_I_ID=\"1\",GPU_I_PROFILE=\"big\"} 0.5\n");
  ASSERT_EQ(unreadable.skipped.size(), 1u);
  EXPECT_NE(unreadable.skipped[0].find("no readable GPU_I_PROFILE ('big')"), std::string::npos);
  auto too_many = run("DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + labels + ",GPU_I_ID=\"1\",GPU_I_PROFILE=\"4g.24gb\"} 0.5\n" +
                      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + labels + ",GPU_I_ID=\"2\",GPU_I_PROFILE=\"1g.6gb\"} 0.5\n");
  ASSERT_EQ(too_many.skipped.size(), 1u);
  EXPECT_NE(too_many.skipped[0].find("5 compute slices, more than the 4 of a NVIDIA A30"), std::string::npos)
      << too_many.skipped[0];
  EXPECT_EQ(mig_profile_slices("7g.80gb"), 7);
  EXPECT_EQ(mig_profile_slices("1g.10gb+me"), 1);
  EXPECT_EQ(mig_profile_slices("1c.3g.40gb"), 0);
  EXPECT_EQ(mig_profile_slices(""), 0);
  EXPECT_EQ(mig_gpu_slices("NVIDIA H200"), 7);
}

TEST(Dcgm, RepeatedSeriesKeepTheFirstValue) {
  auto samples = parse_prometheus_text(
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0a1b2c3d-0000-1111-2222-333344445555\",pod=\"a\"} 40\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0a1b2c3d-0000-1111-2222-333344445555\",pod=\"b\"} 41\n");
  auto m = map_dcgm(samples.value()).value();
  ASSERT_EQ(m.gpus.size(), 1u);
  EXPECT_EQ(m.gpus[0].metrics.utilization_pct, 40);
}

// A value out of its range leaves that GPU unmetered this time, named with its line in `skipped`;
// the other GPUs are metered and every health field in range is read (a card reporting garbage
// utilization while it falls off the bus must still be drained).
TEST(Dcgm, AnOutOfRangeValueSkipsOnlyItsGpu) {
  auto skipped_for = [](const char* text) {
    auto m = map_dcgm(parse_prometheus_text(text).value());
    EXPECT_TRUE(m.ok()) << text;
    return m.ok() ? m->skipped : std::vector<std::string>{"not read"};
  };
  auto first = [](const std::vector<std::string>& v) { return v.empty() ? std::string() : v[0]; };
  EXPECT_NE(
      first(skipped_for("up 1\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 130\n")).find("line 2: DCGM_FI_DEV_GPU_UTIL value 130"),
      std::string::npos);
  EXPECT_NE(
      first(skipped_for("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 5\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} -1\n")).find("outside"),
      std::string::npos);
  EXPECT_NE(first(skipped_for("DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\"} 1.5\n")).find("outside"), std::string::npos);
  auto m = map_dcgm(parse_prometheus_text("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\"} 4294967295\n"
                                          "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-a\"} 79\n"
                                          "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-b\"} 40\n")
                        .value());
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->gpus.size(), 1u);
  EXPECT_EQ(m->gpus[0].gpu, 1);
  ASSERT_EQ(m->skipped.size(), 1u);
  EXPECT_EQ(m->skipped[0].rfind("GPU-a: line 1: DCGM_FI_DEV_GPU_UTIL", 0), 0u) << m->skipped[0];
  ASSERT_EQ(m->health.size(), 1u);
  EXPECT_EQ(m->health[0].gpu, 0);
}

TEST(Dcgm, UnknownGpusAreErrorsNamingTheLine) {
  auto check = [](const char* text, const char* line, const char* reason) {
    auto m = map_dcgm(parse_prometheus_text(text).value());
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_EQ(m.error().fields.at(0).field, line);
    EXPECT_NE(m.error().message.find(reason), std::string::npos) << m.error().message;
  };
  check("DCGM_FI_DEV_GPU_UTIL{gpu=\"x\"} 1\n", "line 1", "not a GPU index");
  check("DCGM_FI_DEV_GPU_UTIL{device=\"nvidia0\"} 1\n", "line 1", "neither a UUID nor a gpu label");
}

}  // namespace
}  // namespace gpurent
