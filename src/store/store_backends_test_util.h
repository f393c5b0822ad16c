// The store test suites run against every backend: value-parameterised tests over
// kStoreBackends ("sqlite", "postgres"). A TestBackend is the place one test's store lives (a
// SQLite file in a temporary folder, or a fresh PostgreSQL database from pg_test_cluster.h) and
// opens stores on it, again after a close for the reopen tests. Test-only; not thread-safe.
//
//   class MyStoreTest : public StoreBackendTest {};
//   TEST_P(MyStoreTest, Does) { store_->write(...); }
//   INSTANTIATE_TEST_SUITE_P(Backends, MyStoreTest, ::testing::ValuesIn(kStoreBackends), backend_test_name);
//
// Test names end in the backend ("Backends/MyStoreTest.Does/postgres"); CMakeLists.txt gives the
// postgres ones the cluster fixture by that suffix.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "store/pg_test_cluster.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace gpurent {

class TestBackend {
 public:
  virtual ~TestBackend() = default;
  // A store on this backend's data (the same data on every call).
  virtual Result<std::unique_ptr<Store>> open() = 0;
  // The schema version a store of this backend reaches (its newest migration).
  virtual int latest_schema_version() const = 0;
};

class SqliteTestBackend final : public TestBackend {
 public:
  Result<std::unique_ptr<Store>> open() override { return open_sqlite_store({.path = dir_.file("store.db")}); }
  int latest_schema_version() const override { return 9; }

 private:
  TempDir dir_;
};

class PostgresTestBackend final : public TestBackend {
 public:
  explicit PostgresTestBackend(std::unique_ptr<PgTestDatabase> db) : db_(std::move(db)) {}
  Result<std::unique_ptr<Store>> open() override { return open_postgres_store({.url = db_->url()}); }
  int latest_schema_version() const override { return 8; }
  const PgTestDatabase& database() const { return *db_; }

 private:
  std::unique_ptr<PgTestDatabase> db_;
};

inline const std::vector<std::string> kStoreBackends = {"sqlite", "postgres"};

inline std::string backend_test_name(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

// "sqlite" or "postgres"; an error (e.g. no PostgreSQL to start) says why there is none.
inline Result<std::unique_ptr<TestBackend>> make_test_backend(const std::string& name) {
  if (name == "sqlite") return std::unique_ptr<TestBackend>(std::make_unique<SqliteTestBackend>());
  if (name == "postgres") {
    auto db = PgTestDatabase::create();
    if (!db) return db.error();
    return std::unique_ptr<TestBackend>(std::make_unique<PostgresTestBackend>(std::move(db).value()));
  }
  return Error::invalid("backend", "unknown store backend '" + name + "'");
}

// Fixture: backend_ and an open store_ of the test's backend.
class StoreBackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto backend = make_test_backend(GetParam());
    ASSERT_TRUE(backend.ok()) << GetParam() << " backend: " << backend.error().message;
    backend_ = std::move(backend).value();
    store_ = reopen();
    ASSERT_NE(store_, nullptr);
  }
  // The store must be closed before its PostgreSQL database is dropped.
  void TearDown() override { store_.reset(); }

  // A new store on the same data (close store_ first to test a reopen).
  std::unique_ptr<Store> reopen() {
    auto s = backend_->open();
    if (!s) ADD_FAILURE() << "opening the " << GetParam() << " store: " << s.error().message;
    return s ? std::move(s).value() : nullptr;
  }
  Status insert(const Record& r) { return insert_all(*store_, {r}); }

  std::unique_ptr<TestBackend> backend_;
  std::unique_ptr<Store> store_;
};

}  // namespace gpurent
