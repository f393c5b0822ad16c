// Store::gpu_usage_buckets: sums per (node, GPU, bucket) over raw samples and rolled-up minutes
// mixed in one bucket, range edges (raw by time, minutes by start), node and GPU filters, bucket
// sizes, and the errors naming the offending field.
#include <gtest/gtest.h>

#include "store/store.h"
#include "store/store_backends_test_util.h"

namespace gpurent {
namespace {

constexpr TimeMs kT0 = 1'800'000'000'000;  // a whole UTC hour
constexpr TimeMs kMin = 60'000;
constexpr TimeMs kHour = 3'600'000;
const std::string kNodeA = "nod_00000000000000aa";
const std::string kNodeB = "nod_00000000000000bb";

GpuUsageRow row(const std::string& node, int64_t gpu, TimeMs at, int64_t util) {
  GpuUsageRow r;
  r.node_id = node;
  r.gpu = gpu;
  r.at = at;
  r.utilization_pct = util;
  return r;
}

class UsageBuckets : public StoreBackendTest {
 protected:
  void ingest(const std::string& key, std::vector<GpuUsageRow> rows) {
    UsageBatchRows b{key, "digest-" + key, kT0 + 2 * kHour, "usr_1", std::move(rows), {}};
    Status s = store_->write([&](StoreTx& tx) -> Status {
      auto out = tx.insert_usage_batch(b);
      return out ? ok_status() : Status(out.error());
    });
    ASSERT_TRUE(s.ok()) << s.error().message;
  }
  void roll_up(TimeMs raw_before) {
    Status s = store_->write([&](StoreTx& tx) -> Status {
      auto st = tx.roll_up_usage(raw_before, 0);
      return st ? ok_status() : Status(st.error());
    });
    ASSERT_TRUE(s.ok()) << s.error().message;
  }
  std::vector<GpuBucket> buckets(GpuBucketQuery q) {
    auto r = store_->gpu_usage_buckets(q);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r ? *r : std::vector<GpuBucket>{};
  }
};

// Node A GPU 0: minute 0 rolled up (10, 30) plus a raw 20 that arrived after the rollup, a raw 50
// in minute 1, and 80 in the next hour. GPU 1: 40. Node B GPU 0: 100.
TEST_P(UsageBuckets, RawAndRolledUpMinutesMergeInOneBucket) {
  ingest("a", {row(kNodeA, 0, kT0, 10), row(kNodeA, 0, kT0 + 30'000, 30), row(kNodeA, 0, kT0 + 90'000, 50),
               row(kNodeA, 0, kT0 + kHour + 5 * kMin, 80), row(kNodeA, 1, kT0 + 10 * kMin, 40),
               row(kNodeB, 0, kT0 + 20 * kMin, 100)});
  roll_up(kT0 + kMin);  // folds node A GPU 0's minute 0 (two samples) into one minute row
  ingest("late", {row(kNodeA, 0, kT0 + 45'000, 20)});
  auto pts = store_->gpu_usage(kNodeA, 0, kT0, kT0 + kMin, 100);
  ASSERT_TRUE(pts.ok());
  ASSERT_EQ(pts->size(), 2u);  // the minute row and the late raw sample
  EXPECT_TRUE((*pts)[0].minute);

  auto all = buckets({.from = kT0, .to = kT0 + 2 * kHour});
  const std::vector<GpuBucket> want = {{kNodeA, 0, kT0, 4, 110, 50},
                                       {kNodeA, 0, kT0 + kHour, 1, 80, 80},
                                       {kNodeA, 1, kT0, 1, 40, 40},
                                       {kNodeB, 0, kT0, 1, 100, 100}};
  EXPECT_EQ(all, want);
}

TEST_P(UsageBuckets, RangeCountsRawSamplesByTimeAndMinutesByTheirStart) {
  ingest("a", {row(kNodeA, 0, kT0, 10), row(kNodeA, 0, kT0 + 30'000, 30), row(kNodeA, 0, kT0 + 90'000, 50)});
  roll_up(kT0 + kMin);
  ingest("late", {row(kNodeA, 0, kT0 + 45'000, 20)});
  // From the middle of minute 0: the minute row starts before `from`, the late raw sample does not.
  EXPECT_EQ(buckets({.from = kT0 + 30'000, .to = kT0 + kHour}), (std::vector<GpuBucket>{{kNodeA, 0, kT0, 2, 70, 50}}));
  // `to` is exclusive: a sample exactly at `to` is left out.
  EXPECT_EQ(buckets({.from = kT0, .to = kT0 + 90'000}), (std::vector<GpuBucket>{{kNodeA, 0, kT0, 3, 60, 30}}));
  EXPECT_TRUE(buckets({.from = kT0 + kHour, .to = kT0 + 2 * kHour}).empty());
}

TEST_P(UsageBuckets, FiltersByNodeAndGpu) {
  ingest("a",
         {row(kNodeA, 0, kT0, 10), row(kNodeA, 1, kT0, 40), row(kNodeA, 1, kT0 + kMin, 60), row(kNodeB, 1, kT0, 100)});
  roll_up(kT0 + kMin);
  EXPECT_EQ(buckets({.node_id = kNodeA, .from = kT0, .to = kT0 + kHour}),
            (std::vector<GpuBucket>{{kNodeA, 0, kT0, 1, 10, 10}, {kNodeA, 1, kT0, 2, 100, 60}}));
  EXPECT_EQ(buckets({.node_id = kNodeA, .gpu = 1, .from = kT0, .to = kT0 + kHour}),
            (std::vector<GpuBucket>{{kNodeA, 1, kT0, 2, 100, 60}}));
  EXPECT_EQ(buckets({.node_id = kNodeB, .gpu = 1, .from = kT0, .to = kT0 + kHour}),
            (std::vector<GpuBucket>{{kNodeB, 1, kT0, 1, 100, 100}}));
  EXPECT_TRUE(buckets({.node_id = kNodeB, .gpu = 0, .from = kT0, .to = kT0 + kHour}).empty());
  EXPECT_TRUE(buckets({.node_id = "nod_00000000000000cc", .from = kT0, .to = kT0 + kHour}).empty());
}

TEST_P(UsageBuckets, BucketsAlignToTheEpoch) {
  ingest("a", {row(kNodeA, 0, kT0 + 10'000, 10), row(kNodeA, 0, kT0 + 70'000, 20), row(kNodeA, 0, kT0 + 130'000, 30)});
  roll_up(kT0 + 2 * kMin);
  EXPECT_EQ(
      buckets({.from = kT0, .to = kT0 + kHour, .bucket_ms = kMin}),
      (std::vector<GpuBucket>{
          {kNodeA, 0, kT0, 1, 10, 10}, {kNodeA, 0, kT0 + kMin, 1, 20, 20}, {kNodeA, 0, kT0 + 2 * kMin, 1, 30, 30}}));
  // Two-minute buckets start at even minutes from the epoch, whatever `from` is.
  EXPECT_EQ(buckets({.from = kT0 + kMin, .to = kT0 + kHour, .bucket_ms = 2 * kMin}),
            (std::vector<GpuBucket>{{kNodeA, 0, kT0, 1, 20, 20}, {kNodeA, 0, kT0 + 2 * kMin, 1, 30, 30}}));
  EXPECT_EQ(buckets({.from = kT0, .to = kT0 + kHour, .bucket_ms = 24 * kHour}).size(), 1u);
}

TEST_P(UsageBuckets, BadQueriesNameTheField) {
  auto field_of = [&](GpuBucketQuery q) {
    auto r = store_->gpu_usage_buckets(q);
    return r.ok() || r.error().fields.empty() ? std::string("(ok)") : r.error().fields[0].field;
  };
  EXPECT_EQ(field_of({.from = kT0, .to = kT0}), "to");
  EXPECT_EQ(field_of({.from = kT0, .to = kT0 + kHour, .bucket_ms = 0}), "bucket_ms");
  EXPECT_EQ(field_of({.from = kT0, .to = kT0 + kHour, .bucket_ms = 90'000}), "bucket_ms");
  EXPECT_EQ(field_of({.gpu = 0, .from = kT0, .to = kT0 + kHour}), "gpu");
  EXPECT_EQ(field_of({.node_id = kNodeA, .gpu = -2, .from = kT0, .to = kT0 + kHour}), "gpu");
  EXPECT_EQ(store_->gpu_usage_buckets({.from = kT0, .to = kT0}).error().code, Code::kInvalid);
}

INSTANTIATE_TEST_SUITE_P(Backends, UsageBuckets, ::testing::ValuesIn(kStoreBackends), backend_test_name);

}  // namespace
}  // namespace gpurent
