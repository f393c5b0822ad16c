// SQLite backups and restores (store/backup.h): a backup taken while another thread keeps
// writing holds one consistent state; a restore into a new file reads back every record; a
// restore refuses an existing database without force, and files that are not gpurent backups.
// The PostgreSQL side and the migration are in pg_backup_test.cc.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "store/backup.h"
#include "store/migrations.h"
#include "store/store_records_test_util.h"
#include "store/store_test_util.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;
using namespace testing_records;

std::unique_ptr<Store> open_sqlite(const std::string& path) {
  auto s = open_sqlite_store({.path = path});
  EXPECT_TRUE(s.ok()) << path << ": " << (s.ok() ? "" : s.error().message);
  return s ? std::move(s).value() : nullptr;
}

// An item object and the ledger's count, moved together in one write: any committed state has
// as many items as the ledger says.
Status add_item(Store& s, int i) {
  return s.write([&](StoreTx& tx) -> Status {
    if (auto st = tx.insert(make_record("items", "itm_" + std::to_string(100000 + i), "")); !st) return st;
    auto ledger = tx.get("ledgers", "led_1");
    if (!ledger) return ledger.error();
    ledger->body["count"] = ledger->body.value("count", 0) + 1;
    return tx.update(*ledger);
  });
}

int64_t ledger_count(Store& s) {
  auto ledger = s.get("ledgers", "led_1");
  EXPECT_TRUE(ledger.ok());
  return ledger.ok() ? ledger->body.value("count", int64_t{-1}) : -1;
}

TEST(SqliteBackup, TakenWhileAnotherThreadWritesHoldsOneConsistentState) {
  TempDir dir;
  auto live = open_sqlite(dir.file("live.db"));
  ASSERT_NE(live, nullptr);
  ASSERT_TRUE(insert_all(*live, {make_record("ledgers", "led_1", "")}).ok());
  std::atomic<bool> stop{false}, failed{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      if (!add_item(*live, i).ok()) {
        failed.store(true);
        return;
      }
      written.store(i + 1);
    }
  });
  auto wait_for = [&](int n) {
    while (written.load() < n && !failed.load()) std::this_thread::yield();
  };
  wait_for(200);
  auto report = backup_store(dir.file("live.db"), dir.file("snap.db"));
  wait_for(written.load() + 200);  // the writer goes on after the backup too
  stop.store(true);
  writer.join();
  ASSERT_FALSE(failed.load()) << "a write failed while the backup ran";
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->backend, "sqlite");
  EXPECT_EQ(report->schema_version, sqlite_migrations().back().version);
  EXPECT_EQ(report->bytes, static_cast<int64_t>(fs::file_size(dir.file("snap.db"))));
  // One self-contained file: no WAL beside it, nothing left under a temporary name.
  EXPECT_FALSE(fs::exists(dir.file("snap.db-wal")));
  for (const auto& e : fs::directory_iterator(dir.file("")))
    EXPECT_EQ(e.path().filename().string().find(".partial"), std::string::npos) << e.path();

  auto snap = open_sqlite(dir.file("snap.db"));
  ASSERT_NE(snap, nullptr);
  auto items = list_all(*snap, "items");
  ASSERT_TRUE(items.ok());
  EXPECT_GE(items->size(), 200u);
  EXPECT_EQ(static_cast<int64_t>(items->size()), ledger_count(*snap));  // no write half in, half out
  EXPECT_LT(static_cast<int64_t>(items->size()), ledger_count(*live));  // the later writes are not in it
}

TEST(SqliteBackup, RestoreIntoANewFileReadsBackEveryRecord) {
  TempDir dir;
  auto live = open_sqlite(dir.file("live.db"));
  ASSERT_NE(live, nullptr);
  seed_every_table(*live);
  ASSERT_TRUE(backup_store(dir.file("live.db"), dir.file("backup.db")).ok());
  auto restored = restore_store(dir.file("backup.db"), dir.file("restored.db"), {});
  ASSERT_TRUE(restored.ok()) << restored.error().message;
  EXPECT_EQ(restored->backend, "sqlite");
  EXPECT_EQ(restored->backup_schema_version, sqlite_migrations().back().version);
  EXPECT_EQ(restored->schema_version, sqlite_migrations().back().version);
  auto back = open_sqlite(dir.file("restored.db"));
  ASSERT_NE(back, nullptr);
  expect_same_records(*live, *back);
}

TEST(SqliteBackup, RestoreRefusesAnExistingDatabaseWithoutForce) {
  TempDir dir;
  {
    auto live = open_sqlite(dir.file("live.db"));
    ASSERT_NE(live, nullptr);
    seed_every_table(*live);
  }
  ASSERT_TRUE(backup_store(dir.file("live.db"), dir.file("backup.db")).ok());
  {
    auto other = open_sqlite(dir.file("other.db"));
    ASSERT_NE(other, nullptr);
    ASSERT_TRUE(insert_all(*other, {make_record("tenants", "ten_9", "initech")}).ok());
  }
  auto refused = restore_store(dir.file("backup.db"), dir.file("other.db"), {});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, Code::kConflict);
  EXPECT_NE(refused.error().message.find("already exists and is not empty"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("--force"), std::string::npos);
  {
    auto other = open_sqlite(dir.file("other.db"));
    ASSERT_NE(other, nullptr);
    EXPECT_TRUE(other->get("tenants", "ten_9").ok()) << "a refused restore changed the database";
  }
  // With force the whole file is replaced: the backup's records, none of the old ones.
  auto forced = restore_store(dir.file("backup.db"), dir.file("other.db"), {.force = true});
  ASSERT_TRUE(forced.ok()) << forced.error().message;
  auto other = open_sqlite(dir.file("other.db"));
  auto live = open_sqlite(dir.file("live.db"));
  ASSERT_NE(other, nullptr);
  ASSERT_NE(live, nullptr);
  EXPECT_EQ(other->get("tenants", "ten_9").error().code, Code::kNotFound);
  expect_same_records(*live, *other);
}

TEST(SqliteBackup, RefusesFilesThatAreNotGpurentBackups) {
  TempDir dir;
  std::ofstream(dir.file("notes.txt")) << "not a database";
  auto text = restore_store(dir.file("notes.txt"), dir.file("a.db"), {});
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().code, Code::kInvalid);
  EXPECT_EQ(text.error().message, "backup: " + dir.file("notes.txt") +
                                      " is not a gpurent backup (neither a SQLite database nor a pg_dump custom-format "
                                      "dump)");
  EXPECT_FALSE(fs::exists(dir.file("a.db")));

  {  // a SQLite database of some other program
    auto db = Db::open(dir.file("foreign.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->exec("CREATE TABLE songs (title TEXT)").ok());
  }
  auto foreign = restore_store(dir.file("foreign.db"), dir.file("a.db"), {});
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.error().code, Code::kInvalid);
  EXPECT_NE(foreign.error().message.find("is a SQLite database but not a gpurent store"), std::string::npos)
      << foreign.error().message;
  EXPECT_EQ(foreign.error().fields.at(0).field, "backup");
  auto foreign_source = backup_store(dir.file("foreign.db"), dir.file("b.db"));
  ASSERT_FALSE(foreign_source.ok());
  EXPECT_EQ(foreign_source.error().fields.at(0).field, "source");

  {  // a gpurent store from a newer binary
    auto db = Db::open(dir.file("newer.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
    ASSERT_TRUE(db.ok());
    std::vector<Migration> newer(sqlite_migrations().begin(), sqlite_migrations().end());
    newer.push_back({newer.back().version + 1, "from the future", "CREATE TABLE future (x INTEGER)"});
    ASSERT_TRUE(apply_migrations(*db, newer, 1).ok());
  }
  auto newer = restore_store(dir.file("newer.db"), dir.file("a.db"), {});
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.error().message.find("newer than this binary supports"), std::string::npos) << newer.error().message;

  auto missing = restore_store(dir.file("nothing.db"), dir.file("a.db"), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "backup: " + dir.file("nothing.db") + " does not exist");
  EXPECT_FALSE(fs::exists(dir.file("a.db")));
}

TEST(SqliteBackup, NeverWritesOverAnExistingFile) {
  TempDir dir;
  { ASSERT_NE(open_sqlite(dir.file("live.db")), nullptr); }
  std::ofstream(dir.file("taken.db")) << "keep me";
  auto taken = backup_store(dir.file("live.db"), dir.file("taken.db"));
  ASSERT_FALSE(taken.ok());
  EXPECT_EQ(taken.error().message, "dest: " + dir.file("taken.db") + " already exists; give a new file name");
  std::ifstream in(dir.file("taken.db"));
  std::string kept;
  std::getline(in, kept);
  EXPECT_EQ(kept, "keep me");
  auto no_folder = backup_store(dir.file("live.db"), dir.file("missing/b.db"));
  ASSERT_FALSE(no_folder.ok());
  EXPECT_EQ(no_folder.error().fields.at(0).field, "dest");
  auto no_source = backup_store(dir.file("absent.db"), dir.file("b.db"));
  ASSERT_FALSE(no_source.ok());
  EXPECT_EQ(no_source.error().message, "source: " + dir.file("absent.db") + " does not exist");
}

// The migration's checks that need no PostgreSQL: they run before it connects.
TEST(MigrateChecks, RefusesWhatItCannotMoveBeforeConnecting) {
  TempDir dir;
  const std::string nowhere = "postgresql://gpurent@127.0.0.1:1/none?connect_timeout=1";
  {
    auto db = Db::open(dir.file("extra.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(apply_migrations(*db, sqlite_migrations(), 1).ok());
    ASSERT_TRUE(db->exec("CREATE TABLE notes (x TEXT)").ok());
  }
  auto extra = migrate_store(dir.file("extra.db"), nowhere);
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.error().code, Code::kInvalid);
  EXPECT_NE(extra.error().message.find("has a table 'notes' that this gpurent does not know how to move"),
            std::string::npos)
      << extra.error().message;

  {
    auto db = Db::open(dir.file("old.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(apply_migrations(*db, sqlite_migrations().first(3), 1).ok());
  }
  auto old = migrate_store(dir.file("old.db"), nowhere);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().message.find("is at schema version 3, older than this gpurent's"), std::string::npos)
      << old.error().message;

  auto swapped = migrate_store(nowhere, dir.file("old.db"));
  ASSERT_FALSE(swapped.ok());
  EXPECT_EQ(swapped.error().fields.at(0).field, "sqlite_path");
}

}  // namespace
}  // namespace gpurent
