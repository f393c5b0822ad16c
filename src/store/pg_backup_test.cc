// PostgreSQL backups (pg_dump / pg_restore) and the migration of a SQLite store to PostgreSQL
// (store/backup.h), on the test cluster (pg_test_cluster.h; ctest gives these Pg* suites its
// fixture). Every record is read back through the Store interface and compared
// (store_records_test_util.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "store/backup.h"
#include "store/pg_db.h"
#include "store/pg_test_cluster.h"
#include "store/store_records_test_util.h"
#include "store/store_test_util.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;
using namespace testing_records;

class PgBackup : public ::testing::Test {
 protected:
  std::unique_ptr<PgTestDatabase> database() {
    auto db = PgTestDatabase::create();
    EXPECT_TRUE(db.ok()) << db.error().message;
    return db ? std::move(db).value() : nullptr;
  }
  static std::unique_ptr<Store> open(const std::string& url) {
    auto s = url.starts_with("postgresql://") ? open_postgres_store({.url = url}) : open_sqlite_store({.path = url});
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return s ? std::move(s).value() : nullptr;
  }

  TempDir dir_;
};

TEST_F(PgBackup, RestoreIntoAFreshDatabaseReadsBackEveryRecord) {
  auto source = database(), target = database();
  ASSERT_TRUE(source && target);
  auto live = open(source->uri());
  ASSERT_NE(live, nullptr);
  seed_every_table(*live);
  auto backup = backup_store(source->uri(), dir_.file("pg.dump"));
  ASSERT_TRUE(backup.ok()) << backup.error().message;
  EXPECT_EQ(backup->backend, "postgres");
  EXPECT_EQ(backup->schema_version, live->schema_version());
  EXPECT_GT(backup->bytes, 0);
  auto restored = restore_store(dir_.file("pg.dump"), target->uri(), {});
  ASSERT_TRUE(restored.ok()) << restored.error().message;
  EXPECT_EQ(restored->backend, "postgres");
  EXPECT_EQ(restored->backup_schema_version, live->schema_version());
  auto back = open(target->uri());
  ASSERT_NE(back, nullptr);
  expect_same_records(*live, *back);
  // The restored database goes on: a new object, a new event after the old ones.
  ASSERT_TRUE(insert_all(*back, {record("tenants", "ten_2", "initech")}).ok());
  ASSERT_TRUE(back->write([](StoreTx& tx) {
                    return tx.append_job_event({"job_1", kFeb1, "running", "done", {}});
                  })
                  .ok());
  auto events = back->job_events("job_1");
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->back().to_state, "done");
}

TEST_F(PgBackup, RestoreRefusesANonEmptyDatabaseWithoutForce) {
  auto source = database(), target = database();
  ASSERT_TRUE(source && target);
  {
    auto live = open(source->uri());
    ASSERT_NE(live, nullptr);
    seed_every_table(*live);
  }
  ASSERT_TRUE(backup_store(source->uri(), dir_.file("pg.dump")).ok());
  constexpr TimeMs kMar1 = 1'803'859'200'000;  // 2027-03-01T00:00:00Z
  {
    // Another store there, with raw samples in a month the backup has too (its partition exists
    // on both sides) and in one it has not.
    auto other = open(target->uri());
    ASSERT_NE(other, nullptr);
    ASSERT_TRUE(insert_all(*other, {record("tenants", "ten_9", "initech")}).ok());
    ASSERT_TRUE(other
                    ->write([&](StoreTx& tx) -> Status {
                      auto r = tx.insert_usage_batch(
                          {"x1", "sha-x1", kMar1, "usr_1", {gpu_sample(kFeb1 + 7, 0, 1), gpu_sample(kMar1, 0, 2)}, {}});
                      return r ? ok_status() : Status(r.error());
                    })
                    .ok());
  }
  {
    // And a table the backup's schema version does not have (as a later migration would add).
    auto conn = PgConn::connect(target->uri(), 10, /*read_only=*/false);
    ASSERT_TRUE(conn.ok()) << conn.error().message;
    ASSERT_TRUE(conn->script("CREATE TABLE public.added_later (x integer); INSERT INTO public.added_later VALUES (1)",
                             "a later table")
                    .ok());
  }
  auto refused = restore_store(dir_.file("pg.dump"), target->uri(), {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Code::kConflict);
  EXPECT_NE(refused.error().message.find("is not empty"), std::string::npos) << refused.error().message;
  EXPECT_NE(refused.error().message.find("--force"), std::string::npos);
  // Replaced twice: the second time over the backup's own tables and month partitions.
  for (int i = 0; i < 2; ++i) {
    auto forced = restore_store(dir_.file("pg.dump"), target->uri(), {.force = true});
    ASSERT_TRUE(forced.ok()) << forced.error().message;
  }
  auto live = open(source->uri()), back = open(target->uri());
  ASSERT_TRUE(live && back);
  EXPECT_EQ(back->get("tenants", "ten_9").error().code, Code::kNotFound);
  auto march = back->gpu_usage("nod_1", 0, kMar1, kMar1 + kMin, 10);
  ASSERT_TRUE(march.ok()) << march.error().message;
  EXPECT_TRUE(march->empty());
  expect_same_records(*live, *back);
  auto conn = PgConn::connect(target->uri(), 10, /*read_only=*/true);
  ASSERT_TRUE(conn.ok()) << conn.error().message;
  auto later = conn->query("SELECT to_regclass('public.added_later') IS NULL", PgParams(), "the later table");
  ASSERT_TRUE(later.ok()) << later.error().message;
  EXPECT_TRUE(later->boolean(0, 0)) << "a table the backup does not have survived the restore";
}

TEST_F(PgBackup, ForceReplacesOnlyAGpurentDatabase) {
  auto source = database(), target = database();
  ASSERT_TRUE(source && target);
  {
    auto live = open(source->uri());
    ASSERT_NE(live, nullptr);
  }
  ASSERT_TRUE(backup_store(source->uri(), dir_.file("pg.dump")).ok());
  auto conn = PgConn::connect(target->uri(), 10, /*read_only=*/false);
  ASSERT_TRUE(conn.ok()) << conn.error().message;
  ASSERT_TRUE(conn->script("CREATE TABLE public.orders (id integer); INSERT INTO public.orders VALUES (7)", "theirs").ok());
  auto refused = restore_store(dir_.file("pg.dump"), target->uri(), {.force = true});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Code::kInvalid);
  EXPECT_NE(refused.error().message.find("is not a gpurent database"), std::string::npos) << refused.error().message;
  auto kept = conn->query("SELECT count(*) FROM public.orders", PgParams(), "their table");
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  EXPECT_EQ(kept->integer(0, 0), 1);
}

TEST_F(PgBackup, RestoreRefusesWhatIsNotAPostgresBackup) {
  auto target = database();
  ASSERT_TRUE(target);
  {
    auto lite = open(dir_.file("lite.db"));
    ASSERT_NE(lite, nullptr);
  }
  ASSERT_TRUE(backup_store(dir_.file("lite.db"), dir_.file("lite.backup")).ok());
  auto sqlite = restore_store(dir_.file("lite.backup"), target->uri(), {});
  ASSERT_FALSE(sqlite.ok());
  EXPECT_EQ(sqlite.error().code, Code::kInvalid);
  EXPECT_NE(sqlite.error().message.find("is a SQLite backup"), std::string::npos) << sqlite.error().message;
  std::ofstream(dir_.file("junk")) << "PGDMP but not really";
  auto junk = restore_store(dir_.file("junk"), target->uri(), {});
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(junk.error().message.find("pg_restore"), std::string::npos) << junk.error().message;
  // A backup of a database that is not gpurent's is refused before anything is written.
  auto empty = backup_store(target->uri(), dir_.file("empty.dump"));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("is not a gpurent database"), std::string::npos) << empty.error().message;
  EXPECT_FALSE(fs::exists(dir_.file("empty.dump")));
}

class PgMigrate : public PgBackup {};

TEST_F(PgMigrate, CopiesEveryRecordAndReadsBackTheSame) {
  auto target = database();
  ASSERT_TRUE(target);
  auto lite = open(dir_.file("lite.db"));
  ASSERT_NE(lite, nullptr);
  seed_every_table(*lite);
  auto report = migrate_store(dir_.file("lite.db"), target->uri());
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->sqlite_schema_version, lite->schema_version());
  EXPECT_EQ(report->objects_verified, 7);
  std::map<std::string, int64_t> rows;
  for (const auto& t : report->tables) rows[t.table] = t.rows;
  EXPECT_EQ(rows.size(), 13u);
  EXPECT_EQ(rows["objects"], 7);
  EXPECT_EQ(rows["tenant_storage"], 1);
  EXPECT_EQ(rows["api_tokens"], 2);
  EXPECT_EQ(rows["job_events"], 3);
  EXPECT_EQ(rows["audit_log"], 3);
  EXPECT_EQ(rows["usage_batches"], 3);
  EXPECT_EQ(rows["job_metric_points"], 4);
  EXPECT_GT(rows["usage_gpu_samples"], 0);
  EXPECT_GT(rows["usage_gpu_minutes"], 0);
  EXPECT_GT(rows["usage_job_samples"], 0);
  EXPECT_GT(rows["usage_job_minutes"], 0);
  auto pg = open(target->uri());
  ASSERT_NE(pg, nullptr);
  EXPECT_EQ(pg->schema_version(), report->postgres_schema_version);
  expect_same_records(*lite, *pg);
  // Appends continue after the copied ones (the identity sequences moved past them).
  ASSERT_TRUE(pg->write([](StoreTx& tx) -> Status {
                  if (auto s = tx.append_audit({kFeb1, "usr_1", "delete", "jobs", "job_2", ""}); !s) return s;
                  auto r = tx.insert_usage_batch({"k4", "sha-k4", kFeb1, "usr_1", {gpu_sample(kFeb1 + 5, 0, 1)}, {}});
                  return r ? ok_status() : Status(r.error());
                }).ok());
  auto audit = pg->audit("", 1);
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->at(0).action, "delete");
}

TEST_F(PgMigrate, RefusesATargetThatIsNotEmpty) {
  auto target = database();
  ASSERT_TRUE(target);
  {
    auto lite = open(dir_.file("lite.db"));
    ASSERT_NE(lite, nullptr);
    seed_every_table(*lite);
    auto pg = open(target->uri());
    ASSERT_NE(pg, nullptr);
    ASSERT_TRUE(insert_all(*pg, {record("tenants", "ten_9", "initech")}).ok());
  }
  auto refused = migrate_store(dir_.file("lite.db"), target->uri());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Code::kConflict);
  EXPECT_NE(refused.error().message.find("is not empty (its table objects has rows)"), std::string::npos)
      << refused.error().message;
  auto pg = open(target->uri());
  ASSERT_NE(pg, nullptr);
  auto tenants = list_all(*pg, "tenants");
  ASSERT_TRUE(tenants.ok());
  ASSERT_EQ(tenants->size(), 1u);  // nothing was copied
  EXPECT_EQ(tenants->at(0).id, "ten_9");
}

}  // namespace
}  // namespace gpurent
