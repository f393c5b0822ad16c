// Readers against a writer, on every backend: reads from other threads see the last committed
// state while a write transaction is open, and committed state only moves forward.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <thread>

#include "store/store.h"
#include "store/store_backends_test_util.h"

namespace gpurent {
namespace {

using namespace std::chrono_literals;

class StoreConcurrency : public StoreBackendTest {};

TEST_P(StoreConcurrency, ReadersSeeCommittedStateWhileAWriterHoldsItsTransaction) {
  Store* store = store_.get();
  ASSERT_TRUE(insert_all(*store, {make_record("jobs", "job_a", "a", "ten_1")}).ok());

  std::promise<void> in_tx;
  std::promise<void> reader_done;
  auto reader_done_f = reader_done.get_future();
  std::atomic<bool> reader_finished_inside_tx = false;
  std::thread writer([&] {
    auto s = store->write([&](StoreTx& tx) -> Status {
      if (auto s = tx.insert(make_record("jobs", "job_b", "b", "ten_1")); !s) return s;
      in_tx.set_value();
      // Hold the write lock until the reader is done (or give up, which fails the test below).
      reader_finished_inside_tx = reader_done_f.wait_for(20s) == std::future_status::ready;
      return ok_status();
    });
    EXPECT_TRUE(s.ok()) << s.error().message;
  });

  in_tx.get_future().wait();
  // Each read either succeeds at once (SQLite's WAL, PostgreSQL's MVCC) or, were it blocked, fails
  // after a timeout or hangs; both the results and reader_finished_inside_tx catch that.
  auto a = store->get("jobs", "job_a");
  EXPECT_TRUE(a.ok()) << a.error().message;
  auto b = store->get("jobs", "job_b");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, Code::kNotFound);  // not committed yet
  auto page = store->list({.kind = "jobs"});
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(page->items.size(), 1u);
  EXPECT_EQ(store->count("jobs", {{"tenant_id", "ten_1"}}).value(), 1);
  EXPECT_TRUE(store->healthy());
  reader_done.set_value();
  writer.join();

  EXPECT_TRUE(reader_finished_inside_tx);
  EXPECT_TRUE(store->get("jobs", "job_b").ok());
}

TEST_P(StoreConcurrency, ManyReadersDuringManyWrites) {
  Store* store = store_.get();
  ASSERT_TRUE(insert_all(*store, {make_record("counters", "cnt_1", "c")}).ok());

  constexpr int kWrites = 300;
  std::atomic<bool> done = false;
  std::atomic<int> read_errors = 0;
  std::atomic<int> regressions = 0;
  std::atomic<int64_t> reads = 0;
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&] {
      int64_t last_count = 0;
      int64_t last_version = 0;
      while (!done) {
        auto n = store->count("jobs", {});
        auto c = store->get("counters", "cnt_1");
        auto page = store->list({.kind = "jobs", .limit = 50});
        if (!n.ok() || !c.ok() || !page.ok()) {
          ++read_errors;
          continue;
        }
        // Committed state only moves forward.
        if (*n < last_count || c->version < last_version) ++regressions;
        last_count = *n;
        last_version = c->version;
        ++reads;
      }
    });
  }
  for (int i = 0; i < kWrites; ++i) {
    auto s = store->write([&](StoreTx& tx) -> Status {
      char id[32];
      std::snprintf(id, sizeof id, "job_%06d", i);
      if (auto s = tx.insert(make_record("jobs", id, id, "ten_1")); !s) return s;
      auto c = tx.get("counters", "cnt_1");
      if (!c) return c.error();
      c->body["n"] = i + 1;
      return tx.update(*c);
    });
    if (!s.ok()) {
      ADD_FAILURE() << s.error().message;
      break;  // still stop and join the readers
    }
  }
  done = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(read_errors, 0);
  EXPECT_EQ(regressions, 0);
  EXPECT_GT(reads, 0);
  EXPECT_EQ(store->count("jobs", {}).value(), kWrites);
  EXPECT_EQ(store->get("counters", "cnt_1")->version, kWrites + 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreConcurrency, ::testing::ValuesIn(kStoreBackends), backend_test_name);

}  // namespace
}  // namespace gpurent
