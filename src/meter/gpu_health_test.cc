#include "meter/gpu_health.h"

#include <gtest/gtest.h>

#include "meter/dcgm.h"

namespace gpurent {
namespace {

GpuHealth healthy() {
  GpuHealth h;
  h.xid = 0;
  h.ecc_dbe = 0;
  h.ecc_sbe = 12;
  h.retired_pending = 0;
  h.row_remap_failure = 0;
  h.temp_c = 60;
  return h;
}

TEST(GpuHealth, TheFirstReadingIsTheBaseline) {
  GpuHealth bad = healthy();
  bad.xid = 79;
  bad.ecc_dbe = 4;
  EXPECT_FALSE(judge_gpu_health(std::nullopt, bad, "GPU 0").has_value());
  EXPECT_FALSE(judge_gpu_health(bad, bad, "GPU 0").has_value()) << "nothing changed";
}

// A field one scrape leaves out keeps its last value: when it comes back unchanged nothing fires
// (the scraper keeps merged_health of its readings as the next baseline); a real change still does.
TEST(GpuHealth, AFieldMissingFromOneScrapeIsNoChange) {
  GpuHealth known = healthy();
  known.xid = 79;  // already there when watching began
  known.retired_pending = 1;
  GpuHealth partial;  // this scrape: the temperature only
  partial.temp_c = 61;
  ASSERT_FALSE(judge_gpu_health(known, partial, "GPU 0").has_value());
  const GpuHealth kept = merged_health(known, partial);
  EXPECT_EQ(kept.xid, 79);
  EXPECT_EQ(kept.retired_pending, 1);
  EXPECT_EQ(kept.temp_c, 61) << "what the scrape read replaces what was known";
  EXPECT_FALSE(judge_gpu_health(kept, known, "GPU 0").has_value()) << "back, unchanged";
  GpuHealth worse = known;
  worse.ecc_dbe = 3;
  auto f = judge_gpu_health(kept, worse, "GPU 0");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->rule, "ecc_dbe_rising");
}

TEST(GpuHealth, RulesFireOnWhatChanges) {
  const GpuHealth before = healthy();
  auto fire = [&](GpuHealth now) {
    auto f = judge_gpu_health(before, now, "GPU 3");
    return f ? f->rule + " | " + render_en(f->why) : std::string("(none)");
  };
  GpuHealth x = healthy();
  x.xid = 79;
  EXPECT_EQ(fire(x), "xid_79 | GPU 3 reported XID 79, a fault that takes a card out of service: its node is out of "
                     "service before it fails under a job");
  x.xid = 13;  // a graphics engine exception: the application's fault, not the card's
  EXPECT_EQ(fire(x), "(none)");
  for (int64_t xid : {48, 63, 64, 74, 92, 94, 95}) EXPECT_TRUE(xid_takes_node_out(xid)) << xid;
  for (int64_t xid : {0, 13, 31, 43, 45}) EXPECT_FALSE(xid_takes_node_out(xid)) << xid;
  GpuHealth d = healthy();
  d.ecc_dbe = 2;
  EXPECT_NE(fire(d).find("ecc_dbe_rising | GPU 3: double-bit ECC errors rose from 0 to 2"), std::string::npos);
  GpuHealth s = healthy();
  s.ecc_sbe = 5000;  // corrected: no rule
  s.temp_c = 88;
  s.pcie_replays = 40;
  EXPECT_EQ(fire(s), "(none)");
  GpuHealth p = healthy();
  p.retired_pending = 1;
  EXPECT_NE(fire(p).find("retired_pages_pending"), std::string::npos);
  GpuHealth r = healthy();
  r.row_remap_failure = 1;
  EXPECT_NE(fire(r).find("row_remap_failure"), std::string::npos);
  // A field the exporter stopped sending is not a change.
  GpuHealth gone;
  EXPECT_EQ(fire(gone), "(none)");
  EXPECT_NE(render(judge_gpu_health(before, d, "GPU 3")->why, "zh").find("双比特 ECC 错误从 0 增加到 2"), std::string::npos);
}

TEST(GpuHealth, DcgmHealthFieldsAreRead) {
  auto m = map_dcgm(parse_prometheus_text(
                        "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-a\"} 79\n"
                        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu=\"0\",UUID=\"GPU-a\"} 3\n"
                        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{gpu=\"0\",UUID=\"GPU-a\"} 120\n"
                        "DCGM_FI_DEV_RETIRED_PENDING{gpu=\"0\",UUID=\"GPU-a\"} 1\n"
                        "DCGM_FI_DEV_ROW_REMAP_FAILURE{gpu=\"0\",UUID=\"GPU-a\"} 0\n"
                        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu=\"0\",UUID=\"GPU-a\"} 7\n"
                        "DCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\"} 71\n"
                        "DCGM_FI_DEV_GPU_TEMP{gpu=\"1\",UUID=\"GPU-b\"} 55\n"
                        "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-b\"} 40\n")
                        .value());
  ASSERT_TRUE(m.ok()) << m.error().message;
  ASSERT_EQ(m->gpus.size(), 1u);  // GPU 0 reports no utilization: not metered…
  ASSERT_EQ(m->health.size(), 2u);  // …but its health is read
  EXPECT_EQ(m->health[0].uuid, "GPU-a");
  const GpuHealth& h = m->health[0].health;
  EXPECT_EQ(h.xid, 79);
  EXPECT_EQ(h.ecc_dbe, 3);
  EXPECT_EQ(h.ecc_sbe, 120);
  EXPECT_EQ(h.retired_pending, 1);
  EXPECT_EQ(h.row_remap_failure, 0);
  EXPECT_EQ(h.pcie_replays, 7);
  EXPECT_EQ(h.temp_c, 71);
  EXPECT_EQ(m->health[1].health.temp_c, 55);
  EXPECT_EQ(m->gpus[0].health.temp_c, 55);
  // A health value out of range is not read (the GPU is named in skipped, not drained on it).
  auto bad = map_dcgm(parse_prometheus_text("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu=\"0\"} -1\n").value());
  ASSERT_TRUE(bad.ok());
  EXPECT_TRUE(bad->health.empty());
  ASSERT_EQ(bad->skipped.size(), 1u);
  EXPECT_NE(bad->skipped[0].find("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL value -1"), std::string::npos) << bad->skipped[0];
}

}  // namespace
}  // namespace gpurent
