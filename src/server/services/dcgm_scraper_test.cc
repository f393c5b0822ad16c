// dcgm_batch: a scrape's GPUs are metered only as the target node's own cards.
#include "server/services/dcgm_scraper.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

constexpr TimeMs kAt = 1'796'000'000'000;

std::string util_line(int gpu, const std::string& uuid, int pct) {
  return "DCGM_FI_DEV_GPU_UTIL{gpu=\"" + std::to_string(gpu) + "\",UUID=\"" + uuid + "\",hostname=\"n7\"} " +
         std::to_string(pct) + "\n";
}

TEST(DcgmBatch, MetersOnlyTheNodesOwnCards) {
  const NodeCards cards = {{0, "GPU-aaaa"}, {1, "GPU-bbbb"}, {2, std::nullopt}};
  const std::string text = util_line(0, "GPU-aaaa", 10) +  // the node's card
                           util_line(1, "GPU-zzzz", 20) +  // index 1 is another card: the wrong node
                           util_line(2, "GPU-cccc", 30) +  // registered without a UUID: accepted
                           util_line(3, "GPU-dddd", 40) +  // no GPU 3 on the node
                           "DCGM_FI_DEV_GPU_UTIL{UUID=\"GPU-bbbb\"} 50\n";  // by UUID only: card 1
  auto b = dcgm_batch(text, "node-7", kAt, cards);
  ASSERT_TRUE(b.ok()) << b.error().message;
  ASSERT_EQ(b->batch.gpu_samples.size(), 3u);
  EXPECT_EQ(b->batch.idempotency_key, "dcgm:node-7:" + std::to_string(kAt));
  EXPECT_EQ(b->batch.gpu_samples[0].gpu, 0);
  EXPECT_EQ(b->batch.gpu_samples[1].gpu, 2);
  EXPECT_EQ(b->batch.gpu_samples[2].gpu, 1);  // named by UUID, metered as node-7's GPU 1
  EXPECT_EQ(b->batch.gpu_samples[2].node, "node-7");
  EXPECT_EQ(b->batch.gpu_samples[2].metrics.utilization_pct, 50);
  ASSERT_EQ(b->skipped.size(), 2u);
  EXPECT_NE(b->skipped[0].find("node-7's GPU 1 is GPU-bbbb; is the target pointed at another node?"), std::string::npos)
      << b->skipped[0];
  EXPECT_NE(b->skipped[1].find("node-7 has no GPU 3"), std::string::npos) << b->skipped[1];
  EXPECT_FALSE(b->lag_ms.has_value());  // the exporter stamped nothing
}

// The same card twice — one series with its UUID, one with only host and index (they group apart):
// one sample for it, the first (two would collide in the store and fail every scrape), the second
// named in `skipped`; and one health reading (a health check no longer compares the card with
// itself): the UUID series', in either order, with what only the other series reports.
TEST(DcgmBatch, ACardReportedTwiceIsMeteredOnce) {
  const NodeCards cards = {{0, "GPU-aaaa"}, {1, "GPU-bbbb"}};
  const std::string host_series =
      "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",hostname=\"n7\"} 79\n"
      "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu=\"0\",hostname=\"n7\"} 3\n";
  const std::string text = util_line(0, "GPU-aaaa", 40) + "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",hostname=\"n7\"} 90\n" +
                           "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-aaaa\"} 0\n" + host_series +
                           util_line(1, "GPU-bbbb", 5);
  std::vector<DcgmCardHealth> health;
  auto b = dcgm_batch(text, "node-7", kAt, cards, &health);
  ASSERT_TRUE(b.ok()) << b.error().message;
  ASSERT_EQ(b->batch.gpu_samples.size(), 2u);
  EXPECT_EQ(b->batch.gpu_samples[0].gpu, 0);
  EXPECT_EQ(b->batch.gpu_samples[0].metrics.utilization_pct, 40);
  EXPECT_EQ(b->batch.gpu_samples[1].gpu, 1);
  ASSERT_EQ(b->skipped.size(), 1u);
  EXPECT_NE(b->skipped[0].find("node-7's GPU 0 came twice"), std::string::npos) << b->skipped[0];
  auto card0 = [&] {
    std::vector<GpuHealth> out;
    for (const DcgmCardHealth& h : health)
      if (h.gpu == 0) out.push_back(h.health);
    return out;
  };
  ASSERT_EQ(card0().size(), 1u);
  EXPECT_EQ(card0()[0].xid, 0) << "the UUID series' XID";
  EXPECT_EQ(card0()[0].ecc_dbe, 3) << "what only the other series reports";
  // The host-and-index series first: the same reading.
  health.clear();
  ASSERT_TRUE(dcgm_batch(host_series + text, "node-7", kAt, cards, &health).ok());
  ASSERT_EQ(card0().size(), 1u);
  EXPECT_EQ(card0()[0].xid, 0);
  EXPECT_EQ(card0()[0].ecc_dbe, 3);
}

TEST(DcgmBatch, AnExpositionOfAnotherNodeIsRefusedWhole) {
  auto b = dcgm_batch(util_line(0, "GPU-other", 10) + "DCGM_FI_DEV_GPU_UTIL{UUID=\"GPU-else\"} 5\n", "node-7", kAt,
                      {{0, "GPU-aaaa"}});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.error().message.find("no GPU of node-7 in the exposition"), std::string::npos) << b.error().message;
  EXPECT_NE(b.error().message.find("not a GPU of node-7"), std::string::npos) << b.error().message;
}

TEST(DcgmBatch, StampedSeriesGiveTheSampleTimeAndTheLag) {
  const std::string text = "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-aaaa\"} 10 " + std::to_string(kAt - 4'000) + "\n";
  auto b = dcgm_batch(text, "node-7", kAt, {{0, "GPU-aaaa"}});
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->batch.gpu_samples[0].at, kAt - 4'000);
  EXPECT_EQ(b->lag_ms, 4'000);
}

TEST(DcgmBatch, MigInstancesAreCountedIntoTheirGpu) {
  const std::string l = "gpu=\"0\",UUID=\"GPU-aaaa\",modelName=\"NVIDIA H100 80GB HBM3\"";
  auto b = dcgm_batch("DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + l + ",GPU_I_ID=\"1\",GPU_I_PROFILE=\"4g.40gb\"} 0.7\n" +
                          "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + l + ",GPU_I_ID=\"2\",GPU_I_PROFILE=\"3g.40gb\"} 0.0\n",
                      "node-7", kAt, {{0, "GPU-aaaa"}});
  ASSERT_TRUE(b.ok()) << b.error().message;
  EXPECT_EQ(b->mig_instances, 2);
  ASSERT_EQ(b->batch.gpu_samples.size(), 1u);
  EXPECT_EQ(b->batch.gpu_samples[0].metrics.utilization_pct, 40);  // 70% x 4/7
}

TEST(DcgmTarget, ParsesUrlAtNode) {
  auto t = parse_dcgm_target("http://10.0.0.7:9400/metrics@node-7");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->url, "http://10.0.0.7:9400/metrics");
  EXPECT_EQ(t->node, "node-7");
  EXPECT_FALSE(parse_dcgm_target("http://10.0.0.7:9400/metrics").ok());
  EXPECT_FALSE(parse_dcgm_target("ftp://x/metrics@n").ok());
}

}  // namespace
}  // namespace gpurent
