// What only the SQLite store has: its file (WAL mode, paths) and its synchronous setting. The
// Store contract itself is tested on every backend in store_test.cc.
#include <gtest/gtest.h>

#include <cstdio>

#include "store/sqlite_db.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace gpurent {
namespace {

TEST(SqliteStoreOpen, DataSurvivesReopenWithSynchronousNormal) {
  TempDir dir;
  const std::string path = dir.file("g.db");
  {
    auto store = open_or_die(path);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(insert_all(*store, {make_record("offers", "off_1", "h100-spot", "", "sup_a")}).ok());
    ASSERT_TRUE(store->write([](StoreTx& tx) {
      return tx.insert_token({.id = "tok_1", .user_id = "usr_1", .role = "operator", .secret_hash = "h"});
    }).ok());
  }
  auto store = open_or_die(path, /*synchronous_full=*/false);
  ASSERT_NE(store, nullptr);
  auto got = store->get("offers", "off_1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->supplier_id, "sup_a");
  EXPECT_EQ(got->body["name"], "h100-spot");
  EXPECT_TRUE(store->token_by_hash("h").value().has_value());
  EXPECT_TRUE(store->healthy());
}

TEST(SqliteStoreOpen, FileIsInWalMode) {
  TempDir dir;
  const std::string path = dir.file("g.db");
  auto store = open_or_die(path);
  ASSERT_NE(store, nullptr);
  auto db = Db::open(path, SQLITE_OPEN_READONLY, 1000);
  ASSERT_TRUE(db.ok()) << db.error().message;
  EXPECT_EQ(db->scalar_text("PRAGMA journal_mode").value(), "wal");
}

TEST(SqliteStoreOpen, RefusesBadPaths) {
  auto missing_dir = open_sqlite_store({.path = "/nonexistent-gpurent-dir/x/g.db"});
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_EQ(missing_dir.error().code, Code::kInvalid);
  EXPECT_EQ(missing_dir.error().fields.at(0).field, "path");
  EXPECT_NE(missing_dir.error().message.find("/nonexistent-gpurent-dir/x"), std::string::npos);
  EXPECT_FALSE(open_sqlite_store({.path = ""}).ok());
  EXPECT_FALSE(open_sqlite_store({.path = ":memory:"}).ok());

  TempDir dir;
  const std::string junk = dir.file("junk.db");
  FILE* f = std::fopen(junk.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("this is not a database, just some text that is long enough to have a header.........", f);
  std::fclose(f);
  auto notdb = open_sqlite_store({.path = junk});
  ASSERT_FALSE(notdb.ok());
  EXPECT_NE(notdb.error().message.find("not a database"), std::string::npos) << notdb.error().message;
}

}  // namespace
}  // namespace gpurent
