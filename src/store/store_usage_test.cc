// Usage in the store, on every backend: idempotent batches scoped to their caller, series in time
// order, the per-minute rollup merging late samples, totals, a tenant's usage in one read.
#include <gtest/gtest.h>

#include "store/store.h"
#include "store/store_backends_test_util.h"

namespace gpurent {
namespace {

constexpr TimeMs kT0 = 1'800'000'000'000;  // a whole minute
constexpr TimeMs kMin = 60'000;
const std::string kNode = "nod_00000000000000aa";

GpuUsageRow gpu_row(TimeMs at, int64_t util, int64_t gpu = 0, std::optional<int64_t> mem = std::nullopt) {
  GpuUsageRow r;
  r.node_id = kNode;
  r.gpu = gpu;
  r.at = at;
  r.utilization_pct = util;
  r.memory_used_mib = mem;
  return r;
}

JobUsageRow job_row(std::string job, TimeMs at, int64_t egress, std::string tenant = "ten_1",
                    std::string project = "prj_1") {
  JobUsageRow r;
  r.job_id = std::move(job);
  r.tenant_id = std::move(tenant);
  r.project_id = std::move(project);
  r.at = at;
  r.egress_bytes = egress;
  r.requests = 1;
  return r;
}

UsageBatchRows batch(std::string key, std::string digest, std::vector<GpuUsageRow> g, std::vector<JobUsageRow> j = {}) {
  return {std::move(key), std::move(digest), kT0 + 5 * kMin, "usr_1", std::move(g), std::move(j)};
}

Result<UsageIngestOutcome> ingest(Store& s, const UsageBatchRows& b) {
  Result<UsageIngestOutcome> out = Error::make(Code::kInternal, "not run");
  Status st = s.write([&](StoreTx& tx) -> Status {
    out = tx.insert_usage_batch(b);
    return out.ok() ? ok_status() : Status(out.error());
  });
  if (!st) return st.error();
  return out;
}

class UsageStore : public StoreBackendTest {};

// The schema is at each backend's latest migration (SQLite 9, PostgreSQL 8: contracts' clauses
// copied in): a new migration must bump these, so the test names the version the schema is
// at, not a floor.
TEST_P(UsageStore, SchemaIsAtTheLatestMigration) {
  EXPECT_EQ(store_->schema_version(), GetParam() == "sqlite" ? 9 : 8);
  EXPECT_EQ(store_->schema_version(), backend_->latest_schema_version());
}

TEST_P(UsageStore, InsertsOnceAndRecognisesDuplicatesAndConflicts) {
  auto b = batch("k1", "d1", {gpu_row(kT0, 50, 0, 1000), gpu_row(kT0 + 15'000, 70)}, {job_row("job_a", kT0, 100)});
  auto first = ingest(*store_, b);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_FALSE(first->duplicate);
  EXPECT_EQ(first->gpu_samples, 2);
  EXPECT_EQ(first->job_samples, 1);

  auto again = ingest(*store_, b);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->gpu_samples, 2);
  EXPECT_EQ(again->received_at, b.received_at);
  EXPECT_EQ(store_->gpu_usage(kNode, 0, kT0, kT0 + kMin, 100)->size(), 2u);

  auto other = b;
  other.content_sha256 = "d2";
  auto conflict = ingest(*store_, other);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code, Code::kConflict);
  EXPECT_NE(conflict.error().message.find("'k1'"), std::string::npos);
  EXPECT_EQ(store_->gpu_usage(kNode, 0, kT0, kT0 + kMin, 100)->size(), 2u);
  EXPECT_EQ(store_->job_usage_totals({.job_id = "job_a", .from = kT0, .to = kT0 + kMin}).value().at(0).egress_bytes,
            100);
}

TEST_P(UsageStore, KeysAreScopedToTheirCaller) {
  // Two tenants (and the platform) may use the same key: each batch is stored, none conflicts.
  auto a = batch("nightly-1", "da", {gpu_row(kT0, 50)});
  a.scope = "tenant:ten_a";
  auto b = batch("nightly-1", "db", {gpu_row(kT0 + 1000, 60)});
  b.scope = "tenant:ten_b";
  auto c = batch("nightly-1", "dc", {gpu_row(kT0 + 2000, 70)});
  for (const auto* x : {&a, &b, &c}) {
    auto r = ingest(*store_, *x);
    ASSERT_TRUE(r.ok()) << x->scope << ": " << r.error().message;
    EXPECT_FALSE(r->duplicate) << x->scope;
  }
  // Within one scope the key is still once: same content is a duplicate, other content a conflict.
  auto again = ingest(*store_, a);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_TRUE(again->duplicate);
  auto other = a;
  other.content_sha256 = "changed";
  auto conflict = ingest(*store_, other);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code, Code::kConflict);
}

TEST_P(UsageStore, AFailedBatchLeavesNothingBehind) {
  // Two rows for the same GPU and time in one batch violate the key: the whole batch rolls back.
  auto b = batch("k1", "d1", {gpu_row(kT0, 50), gpu_row(kT0, 60)});
  auto r = ingest(*store_, b);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(store_->gpu_usage(kNode, 0, kT0 - kMin, kT0 + kMin, 10)->empty());
  auto ok = ingest(*store_, batch("k1", "d1", {gpu_row(kT0, 50)}));
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_FALSE(ok->duplicate);
}

TEST_P(UsageStore, SeriesAreRawPointsInTimeOrderWithinTheRange) {
  ASSERT_TRUE(
      ingest(*store_, batch("a", "a", {gpu_row(kT0 + 30'000, 30), gpu_row(kT0, 10, 0, 512), gpu_row(kT0, 99, 1)})).ok());
  ASSERT_TRUE(ingest(*store_, batch("b", "b", {gpu_row(kT0 + 15'000, 20), gpu_row(kT0 + kMin, 40)})).ok());
  auto pts = store_->gpu_usage(kNode, 0, kT0, kT0 + kMin, 100).value();
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_EQ(pts[0].at, kT0);
  EXPECT_EQ(pts[0].memory_used_mib, (UsageStat{1, 512, 512}));
  EXPECT_EQ(pts[0].power_mw, (UsageStat{}));
  EXPECT_EQ(pts[1].utilization_pct, (UsageStat{1, 20, 20}));
  EXPECT_EQ(pts[2].at, kT0 + 30'000);
  EXPECT_FALSE(pts[2].minute);
  EXPECT_EQ(store_->gpu_usage(kNode, 0, kT0, kT0 + kMin, 2)->size(), 2u);
  EXPECT_FALSE(store_->gpu_usage(kNode, 0, kT0, kT0, 2).ok());
}

TEST_P(UsageStore, RollupFoldsOldRawRowsIntoMinutesAndMergesLateOnes) {
  ASSERT_TRUE(ingest(*store_, batch("a", "a",
                                   {gpu_row(kT0, 10, 0, 100), gpu_row(kT0 + 20'000, 30),
                                    gpu_row(kT0 + kMin, 50, 0, 300), gpu_row(kT0 + 2 * kMin + 1, 70)},
                                   {job_row("job_a", kT0 + 1, 5), job_row("job_a", kT0 + 2, 7),
                                    job_row("job_a", kT0 + 2 * kMin, 11)}))
                  .ok());
  // raw_before is floored to the minute: kT0 + 2 min + 30 s rolls up the first two minutes only.
  Result<UsageRollupStats> st = Error::make(Code::kInternal, "");
  ASSERT_TRUE(store_->write([&](StoreTx& tx) -> Status {
    st = tx.roll_up_usage(kT0 + 2 * kMin + 30'000, 0);
    return st.ok() ? ok_status() : Status(st.error());
  }));
  EXPECT_EQ(st->gpu_samples, 3);
  EXPECT_EQ(st->job_samples, 2);
  auto pts = store_->gpu_usage(kNode, 0, kT0, kT0 + 10 * kMin, 100).value();
  ASSERT_EQ(pts.size(), 3u);
  EXPECT_TRUE(pts[0].minute);
  EXPECT_EQ(pts[0].samples, 2);
  EXPECT_EQ(pts[0].utilization_pct, (UsageStat{2, 40, 30}));
  EXPECT_EQ(pts[0].memory_used_mib, (UsageStat{1, 100, 100}));
  EXPECT_TRUE(pts[1].minute);
  EXPECT_EQ(pts[1].at, kT0 + kMin);
  EXPECT_FALSE(pts[2].minute);

  // A late sample for an already rolled-up minute merges into it at the next rollup.
  ASSERT_TRUE(
      ingest(*store_, batch("late", "late", {gpu_row(kT0 + 59'000, 90, 0, 700)}, {job_row("job_a", kT0 + 3, 1)})).ok());
  ASSERT_TRUE(store_->write([&](StoreTx& tx) -> Status {
    return tx.roll_up_usage(kT0 + 2 * kMin, 0).ok() ? ok_status() : Status(Error::make(Code::kInternal, "rollup"));
  }));
  pts = store_->gpu_usage(kNode, 0, kT0, kT0 + kMin, 100).value();
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_EQ(pts[0].samples, 3);
  EXPECT_EQ(pts[0].utilization_pct, (UsageStat{3, 130, 90}));
  EXPECT_EQ(pts[0].memory_used_mib, (UsageStat{2, 800, 700}));

  auto jp = store_->job_usage("job_a", kT0, kT0 + 10 * kMin, 100).value();
  ASSERT_EQ(jp.size(), 2u);
  EXPECT_TRUE(jp[0].minute);
  EXPECT_EQ(jp[0].samples, 3);
  EXPECT_EQ(jp[0].egress_bytes, 13);
  EXPECT_FALSE(jp[1].minute);
  auto tot = store_->job_usage_totals({.job_id = "job_a", .from = kT0, .to = kT0 + 10 * kMin}).value();
  ASSERT_EQ(tot.size(), 1u);
  EXPECT_EQ(tot[0].samples, 4);
  EXPECT_EQ(tot[0].egress_bytes, 24);
  EXPECT_EQ(tot[0].requests, 4);
}

// Rolled-up minutes and raw samples that came in after their minute was rolled up read as one
// series in time order, a minute before a raw sample of the same instant; the limit counts both.
TEST_P(UsageStore, MinutesAndLateRawSamplesInterleaveInTimeOrder) {
  ASSERT_TRUE(ingest(*store_, batch("a", "a", {gpu_row(kT0 + 10'000, 10), gpu_row(kT0 + kMin + 10'000, 20)},
                                    {job_row("job_a", kT0 + 10'000, 1), job_row("job_a", kT0 + kMin + 10'000, 2)}))
                  .ok());
  ASSERT_TRUE(store_->write([&](StoreTx& tx) -> Status {
    return tx.roll_up_usage(kT0 + 2 * kMin, 0).ok() ? ok_status() : Status(Error::make(Code::kInternal, "rollup"));
  }));
  ASSERT_TRUE(
      ingest(*store_,
             batch("late", "late", {gpu_row(kT0 + 2 * kMin, 70), gpu_row(kT0 + 30'000, 50), gpu_row(kT0, 90)},
                   {job_row("job_a", kT0 + 2 * kMin, 16), job_row("job_a", kT0 + 30'000, 8), job_row("job_a", kT0, 4)}))
          .ok());
  const std::vector<std::pair<TimeMs, bool>> want = {
      {kT0, true}, {kT0, false}, {kT0 + 30'000, false}, {kT0 + kMin, true}, {kT0 + 2 * kMin, false}};
  auto pts = store_->gpu_usage(kNode, 0, kT0, kT0 + 10 * kMin, 100).value();
  auto jp = store_->job_usage("job_a", kT0, kT0 + 10 * kMin, 100).value();
  ASSERT_EQ(pts.size(), want.size());
  ASSERT_EQ(jp.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(std::make_pair(pts[i].at, pts[i].minute), want[i]) << i;
    EXPECT_EQ(std::make_pair(jp[i].at, jp[i].minute), want[i]) << i;
  }
  EXPECT_EQ(pts[0].utilization_pct, (UsageStat{1, 10, 10}));
  EXPECT_EQ(pts[1].utilization_pct, (UsageStat{1, 90, 90}));
  EXPECT_EQ(jp[1].egress_bytes, 4);
  // The first three, whichever table they come from.
  auto first = store_->gpu_usage(kNode, 0, kT0, kT0 + 10 * kMin, 3).value();
  EXPECT_EQ(first, std::vector<GpuUsagePoint>(pts.begin(), pts.begin() + 3));
  auto first_jobs = store_->job_usage("job_a", kT0, kT0 + 10 * kMin, 3).value();
  EXPECT_EQ(first_jobs, std::vector<JobUsagePoint>(jp.begin(), jp.begin() + 3));
  // A range that starts inside the rolled-up minutes.
  auto later = store_->gpu_usage(kNode, 0, kT0 + 20'000, kT0 + 10 * kMin, 100).value();
  ASSERT_EQ(later.size(), 3u);
  EXPECT_EQ(later[0].at, kT0 + 30'000);
}

TEST_P(UsageStore, TotalsPerTenantAndProject) {
  ASSERT_TRUE(
      ingest(*store_,
             batch("a", "a", {},
                   {job_row("job_a", kT0, 1, "ten_1", "prj_1"), job_row("job_b", kT0, 2, "ten_1", "prj_2"),
                    job_row("job_c", kT0, 4, "ten_2", "prj_3"), job_row("job_a", kT0 + 3 * kMin, 8, "ten_1", "prj_1")}))
          .ok());
  auto t1 = store_->job_usage_totals({.tenant_id = "ten_1", .from = kT0, .to = kT0 + kMin}).value();
  ASSERT_EQ(t1.size(), 2u);
  EXPECT_EQ(t1[0].job_id, "job_a");
  EXPECT_EQ(t1[0].egress_bytes, 1);  // the later sample is outside the range
  EXPECT_EQ(t1[1].job_id, "job_b");
  EXPECT_EQ(t1[1].project_id, "prj_2");
  auto p2 = store_->job_usage_totals({.project_id = "prj_2", .from = kT0, .to = kT0 + kMin}).value();
  ASSERT_EQ(p2.size(), 1u);
  EXPECT_EQ(p2[0].egress_bytes, 2);
  EXPECT_FALSE(store_->job_usage_totals({.job_id = "x", .tenant_id = "y", .from = 0, .to = 1}).ok());
}

// A tenant's job usage in one read: every job of the tenant, each as job_usage gives it (raw and
// rolled-up points merged in time order), jobs in id order; other tenants' jobs never.
TEST_P(UsageStore, TenantJobUsageIsEachJobsSeriesInOneRead) {
  ASSERT_TRUE(ingest(*store_, batch("a", "a", {},
                                   {job_row("job_b", kT0 + 1, 1), job_row("job_a", kT0 + 2, 2),
                                    job_row("job_a", kT0 + 3 * kMin, 4), job_row("job_c", kT0 + 5, 8, "ten_2"),
                                    job_row("job_b", kT0 + 9 * kMin, 16)}))
                  .ok());
  ASSERT_TRUE(store_->write([&](StoreTx& tx) -> Status {  // job_a's and job_b's first minute rolled up
    return tx.roll_up_usage(kT0 + 2 * kMin, 0).ok() ? ok_status() : Status(Error::make(Code::kInternal, "rollup"));
  }));
  auto all = store_->tenant_job_usage("ten_1", kT0, kT0 + 5 * kMin, 100).value();
  ASSERT_EQ(all.size(), 3u);  // job_b's sample at 9 min is outside
  EXPECT_EQ(all[0].first, "job_a");
  EXPECT_EQ(all[1].first, "job_a");
  EXPECT_EQ(all[2].first, "job_b");
  for (const std::string job : {"job_a", "job_b"}) {
    std::vector<JobUsagePoint> mine;
    for (const auto& [j, p] : all)
      if (j == job) mine.push_back(p);
    EXPECT_EQ(mine, store_->job_usage(job, kT0, kT0 + 5 * kMin, 100).value()) << job;
  }
  EXPECT_TRUE(all[0].second.minute);
  EXPECT_EQ(all[0].second.egress_bytes, 2);
  EXPECT_FALSE(all[1].second.minute);
  EXPECT_EQ(store_->tenant_job_usage("ten_1", kT0, kT0 + 5 * kMin, 2).value().size(), 2u);  // the limit
  EXPECT_TRUE(store_->tenant_job_usage("ten_3", kT0, kT0 + kMin, 10).value().empty());
  EXPECT_FALSE(store_->tenant_job_usage("ten_1", kT0, kT0, 10).ok());
  EXPECT_FALSE(store_->tenant_job_usage("ten_1", kT0, kT0 + 1, 0).ok());
}

TEST_P(UsageStore, ForgetsOldKeysAtRollup) {
  auto b = batch("old", "d", {gpu_row(kT0, 1)});
  b.received_at = kT0;
  ASSERT_TRUE(ingest(*store_, b).ok());
  Result<UsageRollupStats> st = Error::make(Code::kInternal, "");
  ASSERT_TRUE(store_->write([&](StoreTx& tx) -> Status {
    st = tx.roll_up_usage(0, kT0 + 1);
    return st.ok() ? ok_status() : Status(st.error());
  }));
  EXPECT_EQ(st->batches_forgotten, 1);
  EXPECT_EQ(st->gpu_samples, 0);
  auto again = ingest(*store_, batch("old", "other", {gpu_row(kT0 + 1, 1)}));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->duplicate);
}

TEST_P(UsageStore, SurvivesReopen) {
  ASSERT_TRUE(ingest(*store_, batch("a", "a", {gpu_row(kT0, 10)})).ok());
  store_.reset();
  store_ = reopen();
  ASSERT_NE(store_, nullptr);
  auto r = ingest(*store_, batch("a", "a", {gpu_row(kT0, 10)}));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->duplicate);
}

INSTANTIATE_TEST_SUITE_P(Backends, UsageStore, ::testing::ValuesIn(kStoreBackends), backend_test_name);

}  // namespace
}  // namespace gpurent
