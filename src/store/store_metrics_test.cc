// Job metric points in the store, on every backend: round trip of exact doubles, ordering,
// per-job and per-tenant reads over [from, to), replacement at an instant, the direction rule
// (also against rows of the same batch, and atomically: a refused batch stores nothing) and input
// checks. The upgrade of a version-2 SQLite file is in migrations_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "store/store_backends_test_util.h"

namespace gpurent {
namespace {

JobMetricRow point(std::string job, std::string tenant, std::string name, TimeMs at, double value,
                   bool higher_is_better = true) {
  return {std::move(job), std::move(tenant), "prj_1", std::move(name), at, value, higher_is_better};
}

Status insert_points(Store& s, const std::vector<JobMetricRow>& rows) {
  return s.write([&](StoreTx& tx) { return tx.insert_job_metrics(rows); });
}

std::vector<JobMetricRow> read(Store& s, JobMetricFilter f) {
  auto r = s.job_metrics(f);
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : std::vector<JobMetricRow>{};
}

constexpr TimeMs kMin = std::numeric_limits<TimeMs>::min();
constexpr TimeMs kMax = std::numeric_limits<TimeMs>::max();

class JobMetricsStore : public StoreBackendTest {};

TEST_P(JobMetricsStore, RoundTripsExactValuesInJobNameTimeOrder) {
  const double tiny = 1e-300, big = std::numeric_limits<double>::max(), third = 1.0 / 3.0;
  ASSERT_TRUE(insert_points(*store_, {point("job_b", "ten_1", "loss", 300, 0.5, false),
                               point("job_a", "ten_1", "val_accuracy", 200, third),
                               point("job_a", "ten_1", "val_accuracy", 100, tiny),
                               point("job_a", "ten_1", "loss", 150, -big, false),
                               point("job_a", "ten_1", "loss", 50, 7, false)})
                  .ok());
  auto a = read(*store_, {.job_id = "job_a", .from = kMin, .to = kMax});
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(a[0].name, "loss");
  EXPECT_EQ(a[0].at, 50);
  EXPECT_EQ(a[0].value, 7.0);
  EXPECT_FALSE(a[0].higher_is_better);
  EXPECT_EQ(a[1].value, -big);
  EXPECT_EQ(a[2].name, "val_accuracy");
  EXPECT_EQ(a[2].at, 100);
  EXPECT_EQ(a[2].value, tiny);  // bit-exact: REAL is an IEEE double
  EXPECT_EQ(a[3].value, third);
  EXPECT_TRUE(a[3].higher_is_better);
  EXPECT_EQ(a[3].tenant_id, "ten_1");
  EXPECT_EQ(a[3].project_id, "prj_1");
  EXPECT_EQ(a[3].job_id, "job_a");

  auto tenant = read(*store_, {.tenant_id = "ten_1", .from = kMin, .to = kMax});
  ASSERT_EQ(tenant.size(), 5u);
  EXPECT_EQ(tenant[3].job_id, "job_a");
  EXPECT_EQ(tenant[4].job_id, "job_b");
}

TEST_P(JobMetricsStore, RangesAreHalfOpenAndScopedToTheTenant) {
  ASSERT_TRUE(insert_points(*store_, {point("job_a", "ten_1", "acc", 100, 1), point("job_a", "ten_1", "acc", 200, 2),
                               point("job_a", "ten_1", "acc", 300, 3), point("job_x", "ten_2", "acc", 200, 9)})
                  .ok());
  auto mid = read(*store_, {.job_id = "job_a", .from = 100, .to = 300});
  ASSERT_EQ(mid.size(), 2u);
  EXPECT_EQ(mid[0].at, 100);  // from is inclusive
  EXPECT_EQ(mid[1].at, 200);  // to is exclusive
  auto t1 = read(*store_, {.tenant_id = "ten_1", .from = 150, .to = 1000});
  ASSERT_EQ(t1.size(), 2u);
  for (const auto& r : t1) EXPECT_EQ(r.tenant_id, "ten_1");
  // job and tenant together: the job only if it is the tenant's.
  EXPECT_EQ(read(*store_, {.job_id = "job_x", .tenant_id = "ten_1", .from = kMin, .to = kMax}).size(), 0u);
  EXPECT_EQ(read(*store_, {.job_id = "job_x", .tenant_id = "ten_2", .from = kMin, .to = kMax}).size(), 1u);
  EXPECT_TRUE(read(*store_, {.job_id = "job_none", .from = kMin, .to = kMax}).empty());
}

TEST_P(JobMetricsStore, APointAtAStoredInstantReplacesItsValue) {
  ASSERT_TRUE(insert_points(*store_, {point("job_a", "ten_1", "acc", 100, 0.25)}).ok());
  ASSERT_TRUE(insert_points(*store_, {point("job_a", "ten_1", "acc", 100, 0.75), point("job_a", "ten_1", "acc", 200, 0.8)}).ok());
  auto rows = read(*store_, {.job_id = "job_a", .from = kMin, .to = kMax});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].value, 0.75);
}

TEST_P(JobMetricsStore, DirectionMustAgreeWithStoredPointsAndTheBatch) {
  ASSERT_TRUE(insert_points(*store_, {point("job_a", "ten_1", "loss", 100, 2.0, false)}).ok());
  // Against the store: the whole batch is refused, naming the offending row.
  auto s = insert_points(*store_, {point("job_a", "ten_1", "acc", 150, 0.5), point("job_a", "ten_1", "loss", 200, 1.0, true)});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::kConflict);
  ASSERT_EQ(s.error().fields.size(), 1u);
  EXPECT_EQ(s.error().fields[0].field, "rows[1].higher_is_better");
  EXPECT_NE(s.error().message.find("'loss'"), std::string::npos) << s.error().message;
  EXPECT_EQ(read(*store_, {.job_id = "job_a", .from = kMin, .to = kMax}).size(), 1u);  // nothing of it stored

  // Within the batch: the first row of a new metric sets its direction.
  s = insert_points(*store_, {point("job_a", "ten_1", "bleu", 1, 10), point("job_a", "ten_1", "bleu", 2, 11, false)});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::kConflict);
  EXPECT_EQ(s.error().fields[0].field, "rows[1].higher_is_better");
  EXPECT_NE(s.error().message.find("earlier in this batch"), std::string::npos) << s.error().message;

  // The same name on another job is another series, free to choose.
  EXPECT_TRUE(insert_points(*store_, {point("job_b", "ten_1", "loss", 100, 2.0, true)}).ok());
}

TEST_P(JobMetricsStore, RefusesIncompleteRowsAndNonFiniteValues) {
  auto s = insert_points(*store_, {point("job_a", "ten_1", "acc", 1, 1), point("job_a", "ten_1", "acc", 2, std::nan(""))});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::kInvalid);
  EXPECT_EQ(s.error().fields[0].field, "rows[1].value");
  s = insert_points(*store_, {point("job_a", "ten_1", "acc", 1, std::numeric_limits<double>::infinity())});
  EXPECT_EQ(s.error().fields[0].field, "rows[0].value");
  EXPECT_EQ(insert_points(*store_, {point("", "ten_1", "acc", 1, 1)}).error().fields[0].field, "rows[0].job_id");
  EXPECT_EQ(insert_points(*store_, {point("job_a", "", "acc", 1, 1)}).error().fields[0].field, "rows[0].tenant_id");
  EXPECT_EQ(insert_points(*store_, {point("job_a", "ten_1", "", 1, 1)}).error().fields[0].field, "rows[0].name");
  EXPECT_TRUE(read(*store_, {.job_id = "job_a", .from = kMin, .to = kMax}).empty());
  EXPECT_TRUE(insert_points(*store_, {}).ok());  // an empty batch is a no-op
}

TEST_P(JobMetricsStore, RefusesAnEmptyFilterOrRange) {
  auto none = store_->job_metrics({.from = 0, .to = 10});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, Code::kInvalid);
  auto empty = store_->job_metrics({.job_id = "job_a", .from = 10, .to = 10});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().fields[0].field, "to");
}

// A job keeps at most kMaxJobMetricPoints points and kMaxJobMetricNames names: the batch that
// would pass either is refused whole (naming points), a replaced instant does not count twice,
// and other jobs are not limited by it.
TEST_P(JobMetricsStore, AJobKeepsBoundedPointsAndNames) {
  std::vector<JobMetricRow> batch;
  for (TimeMs at = 0; at < kMaxJobMetricPoints; ++at) batch.push_back(point("job_a", "ten_1", "loss", at, 1.0 * at, false));
  ASSERT_TRUE(insert_points(*store_, batch).ok());
  ASSERT_TRUE(insert_points(*store_, {point("job_a", "ten_1", "loss", 7, 0.5, false)}).ok()) << "a replaced instant";
  Status over = insert_points(*store_, {point("job_a", "ten_1", "loss", 7, 0.25, false),
                                        point("job_a", "ten_1", "loss", kMaxJobMetricPoints, 1, false)});
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, Code::kInvalid);
  ASSERT_EQ(over.error().fields.size(), 1u);
  EXPECT_EQ(over.error().fields[0].field, "points");
  EXPECT_NE(over.error().message.find("more than 100000 points"), std::string::npos) << over.error().message;
  auto a = read(*store_, {.job_id = "job_a", .from = 7, .to = 8});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].value, 0.5) << "the refused batch changed nothing";
  EXPECT_TRUE(insert_points(*store_, {point("job_b", "ten_1", "loss", 1, 1, false)}).ok());

  batch.clear();
  for (int64_t i = 0; i <= kMaxJobMetricNames; ++i) batch.push_back(point("job_c", "ten_1", "m" + std::to_string(i), 1, 1));
  Status names = insert_points(*store_, batch);
  ASSERT_FALSE(names.ok());
  EXPECT_NE(names.error().message.find("more than 100 metric names"), std::string::npos) << names.error().message;
  batch.pop_back();
  EXPECT_TRUE(insert_points(*store_, batch).ok());
}

// ends_only: the first and last point of each series in the range, aggregated by the database.
TEST_P(JobMetricsStore, EndsOnlyReadsEachSeriesFirstAndLastPoint) {
  ASSERT_TRUE(insert_points(*store_, {point("job_a", "ten_1", "acc", 10, 0.1), point("job_a", "ten_1", "acc", 20, 0.2),
                                      point("job_a", "ten_1", "acc", 30, 0.3), point("job_a", "ten_1", "loss", 15, 9, false),
                                      point("job_b", "ten_1", "acc", 5, 0.5), point("job_b", "ten_1", "acc", 50, 0.6),
                                      point("job_z", "ten_2", "acc", 10, 1), point("job_z", "ten_2", "acc", 20, 2)})
                  .ok());
  auto ends = read(*store_, {.tenant_id = "ten_1", .from = 0, .to = 40, .ends_only = true});
  std::vector<std::tuple<std::string, std::string, TimeMs, double>> got;
  for (const JobMetricRow& r : ends) got.emplace_back(r.job_id, r.name, r.at, r.value);
  const std::vector<std::tuple<std::string, std::string, TimeMs, double>> want = {
      {"job_a", "acc", 10, 0.1}, {"job_a", "acc", 30, 0.3}, {"job_a", "loss", 15, 9}, {"job_b", "acc", 5, 0.5}};
  EXPECT_EQ(got, want);
  EXPECT_FALSE(ends[2].higher_is_better);
  EXPECT_EQ(read(*store_, {.job_id = "job_a", .from = 11, .to = 100, .ends_only = true}).size(), 3u);
  EXPECT_FALSE(store_->job_metrics({.job_id = "job_a", .tenant_id = "ten_1", .from = 0, .to = 9, .ends_only = true}).ok());
}

INSTANTIATE_TEST_SUITE_P(Backends, JobMetricsStore, ::testing::ValuesIn(kStoreBackends), backend_test_name);

}  // namespace
}  // namespace gpurent
