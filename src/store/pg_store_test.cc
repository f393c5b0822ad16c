// What only the PostgreSQL store has: month partitions of the raw usage samples (created on
// demand, dropped once rolled up), connection options and their errors, several stores on one
// database (migrations applied once, a newer schema refused), a reader pool smaller than the
// number of reading threads, connections the server drops, text PostgreSQL cannot hold, and
// acknowledged writes surviving a SIGKILL of the writing process. The Store contract itself runs
// on both backends (store_test.cc and its siblings).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/pg_db.h"
#include "store/pg_queries.h"
#include "store/pg_test_cluster.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace gpurent {
namespace {

constexpr TimeMs kJan2027 = 1'798'761'600'000;  // 2027-01-01T00:00:00Z
constexpr TimeMs kFeb2027 = 1'801'440'000'000;  // 2027-02-01T00:00:00Z
constexpr TimeMs kMar2027 = 1'803'859'200'000;  // 2027-03-01T00:00:00Z

class PgStore : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = PgTestDatabase::create();
    ASSERT_TRUE(db.ok()) << db.error().message;
    db_ = std::move(db).value();
    store_ = open();
    ASSERT_NE(store_, nullptr);
  }
  void TearDown() override { store_.reset(); }

  std::unique_ptr<Store> open(int readers = 4, const std::string& extra = "") {
    auto s = open_postgres_store({.url = db_->url() + extra, .readers = readers});
    if (!s) ADD_FAILURE() << s.error().message;
    return s ? std::move(s).value() : nullptr;
  }
  // A connection of the test's own, to look at the catalog.
  PgConn sql() {
    auto c = PgConn::connect(db_->url(), 10, /*read_only=*/false);
    if (!c) throw std::runtime_error(c.error().message);
    return std::move(c).value();
  }
  std::vector<std::string> column(const std::string& query, const PgParams& params = PgParams()) {
    PgConn c = sql();
    auto rows = c.query(query, params, "test query");
    EXPECT_TRUE(rows.ok()) << rows.error().message;
    std::vector<std::string> out;
    if (rows)
      for (int i = 0; i < rows->size(); ++i) out.push_back(rows->text(i, 0));
    return out;
  }
  std::vector<std::string> partitions(const std::string& parent) {
    return column(
        "SELECT c.relname || ' ' || pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
        " JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1",
        PgParams().add(parent));
  }
  Status ingest(const std::string& key, std::vector<GpuUsageRow> gpu, std::vector<JobUsageRow> jobs = {}) {
    UsageBatchRows b{key, "d-" + key, kMar2027, "usr_1", std::move(gpu), std::move(jobs)};
    return store_->write([&](StoreTx& tx) -> Status {
      auto r = tx.insert_usage_batch(b);
      return r ? ok_status() : Status(r.error());
    });
  }

  std::unique_ptr<PgTestDatabase> db_;
  std::unique_ptr<Store> store_;
};

GpuUsageRow gpu_at(TimeMs at, int64_t util) {
  GpuUsageRow r;
  r.node_id = "nod_1";
  r.at = at;
  r.utilization_pct = util;
  return r;
}

JobUsageRow job_at(TimeMs at, int64_t egress) {
  JobUsageRow r;
  r.job_id = "job_1";
  r.tenant_id = "ten_1";
  r.project_id = "prj_1";
  r.at = at;
  r.egress_bytes = egress;
  return r;
}

TEST_F(PgStore, RawSamplesGoToAPartitionPerMonthCreatedOnDemand) {
  EXPECT_TRUE(partitions("usage_gpu_samples").empty());  // none before the first sample
  // Both sides of the January/February boundary, in one batch.
  ASSERT_TRUE(
      ingest("a", {gpu_at(kFeb2027 - 1, 10), gpu_at(kFeb2027, 20), gpu_at(kJan2027, 30)}, {job_at(kFeb2027 + 5, 1)})
          .ok());
  const std::vector<std::string> want = {
      "usage_gpu_samples_p202701 FOR VALUES FROM ('1798761600000') TO ('1801440000000')",
      "usage_gpu_samples_p202702 FOR VALUES FROM ('1801440000000') TO ('1803859200000')"};
  EXPECT_EQ(partitions("usage_gpu_samples"), want);
  EXPECT_EQ(
      partitions("usage_job_samples"),
      (std::vector<std::string>{"usage_job_samples_p202702 FOR VALUES FROM ('1801440000000') TO ('1803859200000')"}));
  EXPECT_EQ(column("SELECT count(*) FROM usage_gpu_samples_p202701"), (std::vector<std::string>{"2"}));
  EXPECT_EQ(column("SELECT count(*) FROM usage_gpu_samples_p202702"), (std::vector<std::string>{"1"}));
  // Another batch in known months creates nothing; a failed batch leaves no partition behind.
  ASSERT_TRUE(ingest("b", {gpu_at(kJan2027 + 1000, 40)}).ok());
  EXPECT_EQ(partitions("usage_gpu_samples"), want);
  EXPECT_FALSE(ingest("c", {gpu_at(kMar2027, 1), gpu_at(kMar2027, 2)}).ok());  // same key twice
  EXPECT_EQ(partitions("usage_gpu_samples"), want);

  // Rolling up to mid-February empties January: its partition is dropped, the minutes stay.
  Status rolled = store_->write([&](StoreTx& tx) -> Status {
    auto st = tx.roll_up_usage(kFeb2027 + 60'000, 0);
    if (!st) return st.error();
    EXPECT_EQ(st->gpu_samples, 4);
    EXPECT_EQ(st->job_samples, 1);
    return ok_status();
  });
  ASSERT_TRUE(rolled.ok()) << rolled.error().message;
  EXPECT_EQ(partitions("usage_gpu_samples"), std::vector<std::string>{want[1]});
  EXPECT_EQ(column("SELECT name FROM usage_partitions ORDER BY name"),
            (std::vector<std::string>{"usage_gpu_samples_p202702", "usage_job_samples_p202702"}));
  auto pts = store_->gpu_usage("nod_1", 0, kJan2027, kMar2027, 100);
  ASSERT_TRUE(pts.ok()) << pts.error().message;
  ASSERT_EQ(pts->size(), 3u);  // Jan 1st's minute (30, 40), Jan 31st's last minute, Feb 1st's minute
  EXPECT_EQ((*pts)[0].utilization_pct, (UsageStat{2, 70, 40}));
  EXPECT_TRUE((*pts)[2].minute);
  // A late sample for January recreates its partition.
  ASSERT_TRUE(ingest("late", {gpu_at(kJan2027 + 5, 50)}).ok());
  EXPECT_EQ(partitions("usage_gpu_samples"), want);
}

// One server ingests late samples of a month while another's rollup folds that month and drops
// its emptied partition, over and over: no acknowledged sample is lost or folded twice (the fold
// takes exactly the rows its delete removes; a month is dropped only if still empty once locked,
// and an ingest waits for a drop in progress and then makes the month again), and no ingest is
// refused for it.
TEST_F(PgStore, LateSamplesRacingTheRollupOfTheirMonthAreNeitherLostNorCountedTwice) {
  // Two servers ingest (each a store of its own), a third rolls up.
  std::vector<std::unique_ptr<Store>> ingesting;
  for (int k = 0; k < 2; ++k) {
    ingesting.push_back(open());
    ASSERT_NE(ingesting.back(), nullptr);
  }
  std::atomic<bool> stop{false};
  std::atomic<int64_t> acked{0}, refused{0};
  std::mutex mu;
  std::string first_refusal;
  std::vector<std::thread> ingesters;
  for (int k = 0; k < 2; ++k)
    ingesters.emplace_back([&, k] {
      for (int64_t i = 0; !stop; ++i) {
        const std::string key = "late-" + std::to_string(k) + "-" + std::to_string(i);
        UsageBatchRows b{key, "d-" + key, kMar2027, "usr_1", {gpu_at(kJan2027 + (2 * i + k) * 1000, i % 100)}, {}};
        Status s = ingesting[k]->write([&](StoreTx& tx) -> Status {
          auto r = tx.insert_usage_batch(b);
          return r ? ok_status() : Status(r.error());
        });
        if (s) {
          ++acked;
        } else if (++refused == 1) {
          std::lock_guard lock(mu);
          first_refusal = s.error().message;
        }
      }
    });
  auto roll_up = [&] {
    return store_->write([&](StoreTx& tx) -> Status {
      auto st = tx.roll_up_usage(kFeb2027, 0);  // folds all of January, drops its partition when empty
      return st ? ok_status() : Status(st.error());
    });
  };
  int rollups = 0, failed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  // 3 s at least, and on a loaded machine until both sides did enough to prove something (30 s).
  auto enough = [&] { return acked.load() > 5 && rollups > 5; };
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3) ||
         (!enough() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30))) {
    Status s = roll_up();
    if (!s && ++failed <= 3) ADD_FAILURE() << "rollup: " << s.error().message;
    ++rollups;
  }
  stop = true;
  for (auto& t : ingesters) t.join();
  ASSERT_TRUE(roll_up().ok());
  const int64_t raw = std::stoll(column("SELECT count(*) FROM usage_gpu_samples").at(0));
  const int64_t folded = std::stoll(column("SELECT coalesce(sum(samples), 0) FROM usage_gpu_minutes").at(0));
  std::printf("late samples racing the rollup: %lld acknowledged, %lld refused, %d rollups; %lld folded, %lld raw\n",
              static_cast<long long>(acked.load()), static_cast<long long>(refused.load()), rollups,
              static_cast<long long>(folded), static_cast<long long>(raw));
  EXPECT_EQ(raw, 0);  // the last rollup ran alone
  EXPECT_EQ(raw + folded, acked.load()) << "acknowledged samples were lost or folded twice";
  EXPECT_EQ(refused.load(), 0) << first_refusal;
  EXPECT_GT(acked.load(), 5) << "too little ingest to prove anything";
  EXPECT_GT(rollups, 5);
}

// A write that creates a month's partition holds a lock on the parent until it commits; readers
// of the parent must not wait for it (ATTACH PARTITION, not CREATE TABLE ... PARTITION OF).
TEST_F(PgStore, CreatingAMonthPartitionDoesNotBlockReaders) {
  ASSERT_TRUE(ingest("jan", {gpu_at(kJan2027, 10)}).ok());
  Status s = store_->write([&](StoreTx& tx) -> Status {
    UsageBatchRows b{"feb", "d-feb", kMar2027, "usr_1", {gpu_at(kFeb2027, 20)}, {}};
    if (auto r = tx.insert_usage_batch(b); !r) return r.error();
    auto read = std::async(std::launch::async, [&] {
      auto pts = store_->gpu_usage("nod_1", 0, kJan2027, kMar2027, 100);
      auto cells = store_->gpu_usage_buckets({.from = kJan2027, .to = kMar2027});
      return pts.ok() && cells.ok() ? static_cast<int>(pts->size()) : -1;
    });
    EXPECT_EQ(read.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "a reader waited for the writer";
    EXPECT_EQ(read.get(), 1);  // January's sample; February's is not committed yet
    return ok_status();
  });
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(store_->gpu_usage("nod_1", 0, kJan2027, kMar2027, 100)->size(), 2u);
}

TEST_F(PgStore, SampleTimesOutsideThePartitionableYearsAreInvalid) {
  auto s = ingest("far", {gpu_at(kJan2027, 1), gpu_at(int64_t{1} << 62, 1)});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::kInvalid);
  EXPECT_EQ(s.error().fields.at(0).field, "gpu[1].at");
}

TEST_F(PgStore, BadOptionsGiveClearErrors) {
  auto field = [](const PostgresOptions& o) {
    auto s = open_postgres_store(o);
    return s.ok() ? std::string("(opened)") : s.error().fields.empty() ? s.error().message : s.error().fields[0].field;
  };
  EXPECT_EQ(field({.url = ""}), "url");
  EXPECT_EQ(field({.url = "mysql://db.example/gpurent"}), "url");
  EXPECT_EQ(field({.url = "postgresql://[::1/gpurent"}), "url");
  EXPECT_EQ(field({.url = "host=localhost port"}), "url");
  EXPECT_EQ(field({.url = db_->url(), .readers = 0}), "readers");
  EXPECT_EQ(field({.url = db_->url(), .connect_timeout_s = 0}), "connect_timeout_s");
  auto scheme = open_postgres_store({.url = "mysql://db.example/gpurent"});
  EXPECT_NE(scheme.error().message.find("scheme 'mysql'"), std::string::npos) << scheme.error().message;

  // Nothing listens on port 1: unavailable, naming where it tried and never the password.
  auto down = open_postgres_store({.url = "postgresql://app:s3cret@127.0.0.1:1/gpurent", .connect_timeout_s = 2});
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.error().code, Code::kUnavailable);
  EXPECT_NE(down.error().message.find("host=127.0.0.1 port=1 dbname=gpurent user=app"), std::string::npos)
      << down.error().message;
  EXPECT_EQ(down.error().message.find("s3cret"), std::string::npos) << down.error().message;

  auto no_db = open_postgres_store({.url = PgTestCluster::with_dbname(db_->url(), "gpurent_no_such_db")});
  ASSERT_FALSE(no_db.ok());
  EXPECT_EQ(no_db.error().code, Code::kUnavailable);
  EXPECT_NE(no_db.error().message.find("gpurent_no_such_db"), std::string::npos) << no_db.error().message;
}

TEST_F(PgStore, SeveralStoresShareOneDatabaseAndMigrateItOnce) {
  ASSERT_TRUE(insert_all(*store_, {make_record("tenants", "ten_1", "acme")}).ok());
  auto other = open();  // a second server on the same database
  ASSERT_NE(other, nullptr);
  EXPECT_TRUE(other->get("tenants", "ten_1").ok());
  ASSERT_TRUE(insert_all(*other, {make_record("tenants", "ten_2", "beta")}).ok());
  EXPECT_EQ(store_->count("tenants", {}).value(), 2);
  EXPECT_EQ(column("SELECT version FROM schema_migrations ORDER BY version"),
            (std::vector<std::string>{"1", "2", "3", "4", "5", "6", "7", "8"}));

  // Servers starting at once on a fresh database: each migration runs once (advisory lock).
  auto fresh = PgTestDatabase::create();
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  std::vector<std::thread> openers;
  std::atomic<int> opened = 0;
  for (int i = 0; i < 4; ++i) {
    openers.emplace_back([&] {
      auto s = open_postgres_store({.url = (*fresh)->url(), .readers = 1});
      if (s && (*s)->schema_version() == 8) ++opened;
      if (!s) ADD_FAILURE() << s.error().message;
    });
  }
  for (auto& t : openers) t.join();
  EXPECT_EQ(opened, 4);
}

// get_locked holds the row until the transaction ends: another store's update of it waits for
// the commit and then finds the version it read gone (what the leader lease's fence relies on).
TEST_F(PgStore, ALockedRecordMakesAnotherStoresUpdateWaitForTheCommit) {
  ASSERT_TRUE(insert_all(*store_, {make_record("leases", "lse_a", "a")}).ok());
  auto other = open();
  ASSERT_NE(other, nullptr);
  std::promise<void> locked;
  std::chrono::steady_clock::time_point holder_done;  // written before the holder's commit
  auto holder = std::async(std::launch::async, [&] {
    return store_->write([&](StoreTx& tx) -> Status {
      auto r = tx.get_locked("leases", "lse_a");
      if (!r) return r.error();
      locked.set_value();
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      Record u = *r;
      u.body["by"] = "holder";
      Status st = tx.update(u);
      holder_done = std::chrono::steady_clock::now();
      return st;
    });
  });
  locked.get_future().wait();
  Status late = other->write([&](StoreTx& tx) -> Status {
    Record u = make_record("leases", "lse_a", "a");
    u.version = 1;  // what it was before the holder's commit
    u.body["by"] = "other";
    return tx.update(u);
  });
  const auto other_done = std::chrono::steady_clock::now();
  ASSERT_TRUE(holder.get().ok());
  // Ordering, not a duration: the other update returned only after the holder's last step.
  EXPECT_GE(other_done, holder_done) << "the update did not wait for the lock";
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().code, Code::kConflict) << late.error().message;
  auto now = store_->get("leases", "lse_a");
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now->body.value("by", ""), "holder");
}

// A fresh database an older gpurent left: migrated up to version `v` only, with a connection.
struct OlderDatabase {
  std::unique_ptr<PgTestDatabase> db;
  PgConn conn;
};
OlderDatabase database_at_version(int v) {
  auto fresh = PgTestDatabase::create();
  if (!fresh) throw std::runtime_error(fresh.error().message);
  auto c = PgConn::connect((*fresh)->url(), 10, /*read_only=*/false);
  if (!c) throw std::runtime_error(c.error().message);
  const auto all = postgres_migrations();
  if (all[static_cast<size_t>(v) - 1].version != v ||
      apply_migrations(*c, all.first(static_cast<size_t>(v)), 1).value() != v)
    throw std::runtime_error("cannot migrate to version " + std::to_string(v));
  return {std::move(*fresh), std::move(*c)};
}

// Version 6 fills each tenant's stored bytes from the artifacts and images already there, by the
// rule the object writes use (an integer size_bytes counts; as SQLite's version 7).
TEST_F(PgStore, TenantStorageStartsFromTheRecordsAlreadyStored) {
  store_.reset();
  OlderDatabase old = database_at_version(5);
  {
    PgConn* c = &old.conn;
    ASSERT_TRUE(c->script("INSERT INTO objects (kind, id, tenant_id, body, created_at, updated_at, version) VALUES"
                          " ('artifacts', 'art_1', 'ten_a', '{\"size_bytes\": 100, \"sha256\": \"aa\"}', 1, 1, 1),"
                          " ('images', 'img_1', 'ten_a', '{\"size_bytes\": 20}', 1, 1, 1),"
                          " ('images', 'img_2', '', '{\"size_bytes\": 5000}', 1, 1, 1),"
                          " ('artifacts', 'art_2', 'ten_a', '{\"size_bytes\": 1.5}', 1, 1, 1),"
                          " ('artifacts', 'art_4', 'ten_a', '{\"size_bytes\": \"9\"}', 1, 1, 1),"
                          " ('volumes', 'vol_1', 'ten_a', '{\"size_bytes\": 7}', 1, 1, 1),"
                          " ('artifacts', 'art_3', 'ten_b', '{\"size_bytes\": 3}', 1, 1, 1)",
                          "test")
                    .ok());
  }
  auto s = open_postgres_store({.url = old.db->url(), .readers = 1});
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ((*s)->tenant_stored_bytes("ten_a").value(), 120);
  EXPECT_EQ((*s)->tenant_stored_bytes("ten_b").value(), 3);
  EXPECT_EQ((*s)->count("artifacts", {{"sha256", "aa"}}).value(), 1);
  ASSERT_TRUE((*s)->write([](StoreTx& tx) { return tx.remove("artifacts", "art_1"); }).ok());
  EXPECT_EQ((*s)->tenant_stored_bytes("ten_a").value(), 20);
}

// Version 8 copies each clause-less contract's first offer's template into it (every default when
// the offer is gone), as SQLite's version 9; contracts with clauses and non-object bodies stay.
TEST_F(PgStore, ContractsWithoutClausesGetTheirFirstOffersTemplate) {
  store_.reset();
  OlderDatabase old = database_at_version(7);
  PgConn* c = &old.conn;
  const auto all = postgres_migrations();
  ASSERT_TRUE(
      c->script(
           "INSERT INTO objects (kind, id, body, created_at, updated_at, version) VALUES"
           " ('offers', 'off_1', '{\"contract_template\": {\"exit_notice_days\": 60}}', 1, 1, 1),"
           " ('contracts', 'ctr_1', '{\"offer_ids\": [\"off_1\"]}', 1, 1, 1),"
           " ('contracts', 'ctr_2', '{\"offer_ids\": [\"off_1\"], \"clauses\": null}', 1, 1, 1),"
           " ('contracts', 'ctr_3', '{\"offer_ids\": [\"off_1\"], \"clauses\": {\"exit_notice_days\": 10}}', 1, 1, 1),"
           " ('contracts', 'ctr_4', '{\"offer_ids\": [\"off_gone\"]}', 1, 1, 1),"
           " ('contracts', 'ctr_5', '[1]', 1, 1, 1)",
           "test")
          .ok());
  ASSERT_EQ(apply_migrations(*c, all, 2).value(), all.back().version);
  auto rows =
      c->query("SELECT id, version, body::text FROM objects WHERE kind = 'contracts' ORDER BY id", PgParams(), "test");
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  std::vector<std::string> got;
  for (int i = 0; i < rows->size(); ++i)
    got.push_back(rows->text(i, 0) + " " + rows->text(i, 1) + " " + rows->text(i, 2));
  EXPECT_EQ(got, (std::vector<std::string>{
                     R"(ctr_1 2 {"clauses": {"exit_notice_days": 60}, "offer_ids": ["off_1"]})",
                     R"(ctr_2 2 {"clauses": {"exit_notice_days": 60}, "offer_ids": ["off_1"]})",
                     R"(ctr_3 1 {"clauses": {"exit_notice_days": 10}, "offer_ids": ["off_1"]})",
                     R"(ctr_4 2 {"clauses": {}, "offer_ids": ["off_gone"]})",
                     R"(ctr_5 1 [1])",
                 }));
}

TEST_F(PgStore, ADatabaseFromANewerGpurentIsRefused) {
  {
    PgConn c = sql();
    ASSERT_TRUE(c.script("INSERT INTO schema_migrations VALUES (99, 1, 'from the future')", "test").ok());
  }
  store_.reset();
  auto s = open_postgres_store({.url = db_->url()});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("schema version 99 is newer"), std::string::npos) << s.error().message;
}

TEST_F(PgStore, MoreReadingThreadsThanReaderConnections) {
  store_ = open(/*readers=*/2, " application_name=pool_test");
  ASSERT_NE(store_, nullptr);
  ASSERT_TRUE(insert_all(*store_, {make_record("jobs", "job_0", "j0", "ten_1")}).ok());
  std::atomic<bool> done = false;
  std::atomic<int> errors = 0, reads = 0;
  std::vector<std::thread> readers;
  for (int t = 0; t < 8; ++t) {
    readers.emplace_back([&] {
      while (!done) {
        auto n = store_->count("jobs", {{"tenant_id", "ten_1"}});
        if (!n.ok() || *n < 1) ++errors;
        ++reads;
      }
    });
  }
  for (int i = 1; i <= 50; ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "job_%d", i);
    EXPECT_TRUE(insert_all(*store_, {make_record("jobs", id, id, "ten_1")}).ok());
  }
  // Each thread reads more than once, however busy the machine (the writes can be done first).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (reads < 64 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(errors, 0);
  EXPECT_GE(reads, 64);
  // The writer and two readers, however many threads read.
  EXPECT_EQ(column("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                   " AND application_name = 'pool_test'"),
            (std::vector<std::string>{"3"}));
}

TEST_F(PgStore, ReadsAndWritesSurviveConnectionsTheServerDropped) {
  ASSERT_TRUE(insert_all(*store_, {make_record("tenants", "ten_1", "acme")}).ok());
  ASSERT_TRUE(store_->get("tenants", "ten_1").ok());  // a reader connection is now idle in the pool
  EXPECT_EQ(column("SELECT count(pg_terminate_backend(pid, 5000)) > 0 FROM pg_stat_activity"
                   " WHERE datname = current_database() AND pid <> pg_backend_pid()"),
            (std::vector<std::string>{"t"}));
  auto got = store_->get("tenants", "ten_1");  // retried once on a fresh connection
  EXPECT_TRUE(got.ok()) << got.error().message;
  auto wrote = insert_all(*store_, {make_record("tenants", "ten_2", "beta")});  // the writer reconnects
  EXPECT_TRUE(wrote.ok()) << wrote.error().message;
  EXPECT_EQ(store_->count("tenants", {}).value(), 2);
}

// A restarted server breaks every pooled connection at once: the first read that finds one broken
// leaves all the idle ones behind, so no read (an authentication among them) fails for it.
TEST_F(PgStore, AfterADroppedServerNoReadFailsWhateverIdleReadersThePoolHeld) {
  store_ = open(/*readers=*/3, " application_name=drop_test");
  ASSERT_NE(store_, nullptr);
  ASSERT_TRUE(insert_all(*store_, {make_record("tenants", "ten_1", "acme")}).ok());
  auto open_conns = [&] {
    auto n = column("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND application_name = 'drop_test'");
    return n.empty() ? 0 : std::stoi(n[0]);
  };
  for (int round = 0; round < 200 && open_conns() < 4; ++round) {  // the writer and three idle readers
    std::vector<std::thread> readers;
    for (int t = 0; t < 6; ++t)
      readers.emplace_back([&] {
        for (int i = 0; i < 20; ++i) (void)store_->get("tenants", "ten_1");
      });
    for (auto& t : readers) t.join();
  }
  ASSERT_EQ(open_conns(), 4);
  EXPECT_EQ(column("SELECT count(pg_terminate_backend(pid, 5000)) > 0 FROM pg_stat_activity"
                   " WHERE datname = current_database() AND pid <> pg_backend_pid()"),
            (std::vector<std::string>{"t"}));
  for (int i = 0; i < 3; ++i) {
    auto got = store_->get("tenants", "ten_1");
    EXPECT_TRUE(got.ok()) << "read " << i << ": " << got.error().message;
  }
}

// The same usage batch sent through two servers at once (a client's retry after a timeout): the
// second waits for the first to commit and answers as a duplicate, not as a conflict.
TEST_F(PgStore, TheSameBatchThroughTwoServersAtOnceIsADuplicateNotAConflict) {
  auto other = open();
  ASSERT_NE(other, nullptr);
  const UsageBatchRows b{"retry-1", "d-retry-1", kMar2027, "usr_1", {gpu_at(kJan2027 + 1000, 50)}, {}};
  std::future<Result<UsageIngestOutcome>> second;
  Status first = store_->write([&](StoreTx& tx) -> Status {
    auto r = tx.insert_usage_batch(b);
    if (!r) return r.error();
    second = std::async(std::launch::async, [&] {
      Result<UsageIngestOutcome> out = Error::make(Code::kInternal, "not run");
      Status s = other->write([&](StoreTx& tx2) -> Status {
        out = tx2.insert_usage_batch(b);
        return out ? ok_status() : Status(out.error());
      });
      if (!s && out) out = s.error();
      return out;
    });
    // Commit only once the second one waits on the key (it found none, and its insert blocks).
    bool waiting = false;
    for (int i = 0; i < 200 && !waiting; ++i) {
      waiting = column("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                       " AND wait_event_type = 'Lock'") != std::vector<std::string>{"0"};
      if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    EXPECT_TRUE(waiting) << "the second insert never waited on the first";
    return ok_status();
  });
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto got = second.get();
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_TRUE(got->duplicate);
  EXPECT_EQ(got->gpu_samples, 1);
}

// A row lock taken inside a write stays until it commits, also when a later operation of the write
// fails (and is rolled back to the savepoint): a parent held shared, then a name already taken.
TEST_F(PgStore, ALockOutlivesALaterFailedOperationOfTheSameWrite) {
  ASSERT_TRUE(insert_all(*store_, {make_record("tenants", "ten_1", "acme"), make_record("tenants", "ten_2", "beta")}).ok());
  std::string other_saw;
  auto st = store_->write([&](StoreTx& tx) -> Status {
    if (auto held = tx.get_shared("tenants", "ten_1"); !held) return held.error();
    EXPECT_FALSE(tx.insert(make_record("tenants", "ten_2", "beta")).ok());  // taken: rolled back to the savepoint
    PgConn other = sql();
    auto r = other.query("SELECT id FROM objects WHERE kind = 'tenants' AND id = 'ten_1' FOR UPDATE NOWAIT",
                         PgParams(), "locking from another connection");
    other_saw = r ? "locked it" : r.error().message;
    return ok_status();
  });
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_NE(other_saw.find("could not obtain lock"), std::string::npos)
      << "the shared hold was kept through the failed insert: " << other_saw;
}

TEST_F(PgStore, TextPostgresCannotHoldIsInvalidNamingTheField) {
  Record r = make_record("tenants", "ten_1", "acme");
  r.body["note"] = std::string("a\0b", 3);  // stored by SQLite; jsonb has no U+0000
  auto s = insert_all(*store_, {r});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Code::kInvalid);
  EXPECT_EQ(s.error().fields.at(0).field, "body");
  Record named = make_record("tenants", "ten_2", std::string("ac\0me", 5));
  s = insert_all(*store_, {named});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().fields.at(0).field, "name");
  // The failed operations left the transaction usable: the next one in the same write commits.
  ASSERT_TRUE(store_
                  ->write([&](StoreTx& tx) -> Status {
                    EXPECT_FALSE(tx.insert(r).ok());
                    return tx.insert(make_record("tenants", "ten_3", "ok"));
                  })
                  .ok());
  EXPECT_EQ(store_->count("tenants", {}).value(), 1);
}

// Child: write until killed, reporting each id on the pipe only after write() returned ok.
[[noreturn]] void pg_write_until_killed(const std::string& url, int fd) {
  auto store = open_postgres_store({.url = url, .readers = 1});
  if (!store) _exit(2);
  write_jobs_until_killed(**store, fd);
}

TEST_F(PgStore, AcknowledgedWritesSurviveASigkilledWriter) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const std::string url = db_->url();
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    pg_write_until_killed(url, fds[1]);
  }
  close(fds[1]);
  std::vector<std::string> acknowledged;
  std::string pending;
  bool killed = false;
  char buf[4096];
  for (;;) {
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    pending.append(buf, static_cast<size_t>(got));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1))
      acknowledged.push_back(pending.substr(0, nl));
    if (!killed && acknowledged.size() >= 150) {
      ASSERT_EQ(kill(pid, SIGKILL), 0);
      killed = true;
    }
  }
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
  ASSERT_GE(acknowledged.size(), 150u);
  int missing = 0;
  for (const auto& id : acknowledged)
    if (!store_->get("jobs", id).ok() || store_->job_events(id).value().size() != 1) ++missing;
  EXPECT_EQ(missing, 0) << "of " << acknowledged.size() << " acknowledged writes";
  // The server rolls back the killed client's open transaction: at most the one in flight committed.
  const int64_t stored = store_->count("jobs", {}).value();
  EXPECT_GE(stored, static_cast<int64_t>(acknowledged.size()));
  EXPECT_LE(stored, static_cast<int64_t>(acknowledged.size()) + 1);
}

}  // namespace
}  // namespace gpurent
