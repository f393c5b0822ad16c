// MarketBooks and BookTx (market_books.h) on a real SQLite store: a copy of a book is used only at
// the lane stamp it was taken at; a write's copy is the book as that write left it (its inserts,
// fills and cancels applied); a write that fails, or one by another writer, leaves the copy unused.
#include "server/api/market_books.h"

#include <gtest/gtest.h>

#include "store/store_test_util.h"

namespace gpurent {
namespace {

constexpr const char* kBook = "h100|cn-east|w1";

Record order(const std::string& id, int64_t seq, const std::string& state = "open", const std::string& book = kBook) {
  Record r = make_record("market-orders", id, "");
  r.gpu_model = "h100";
  r.region = "cn-east";
  r.state = state;
  r.body = {{"seq", seq}, {"book", book}, {"state", state}};
  return r;
}

bool in_book(const nlohmann::json& b) { return b.value("book", "") == kBook; }

std::vector<std::string> ids(const OrderList& rs) {
  std::vector<std::string> out;
  for (const auto& r : rs) out.push_back(r->id);
  return out;
}

OrderList list(std::initializer_list<Record> rs) {
  OrderList out;
  for (const Record& r : rs) out.push_back(std::make_shared<const Record>(r));
  return out;
}

// Reads the book from the store, counting the reads.
struct StoreRead {
  int reads = 0;
  std::function<Result<std::vector<Record>>(StoreTx&)> fn() {
    return [this](StoreTx& tx) -> Result<std::vector<Record>> {
      ++reads;
      auto all = list_all(tx, "market-orders", {{"state", "open"}});
      if (!all) return all.error();
      std::vector<Record> out;
      for (Record& r : *all)
        if (in_book(r.body)) out.push_back(std::move(r));
      sort_by_seq(out);
      return out;
    };
  }
};

// One market write: lock, read the book, then `change` through the BookTx's transaction.
Result<OrderList> write(Store& store, MarketBooks& cache, StoreRead& read,
                        const std::function<Status(StoreTx&, const OrderList&)>& change, bool commit = true) {
  std::unique_ptr<BookTx> bt;
  OrderList seen;
  Status st = store.write([&](StoreTx& raw) -> Status {
    bt = std::make_unique<BookTx>(&cache, raw);
    if (auto s = bt->lock("h100", "cn-east"); !s) return s;
    auto open = bt->open_orders(kBook, in_book, read.fn());
    if (!open) return open.error();
    seen = *open;
    if (auto s = change(bt->tx(), seen); !s) return s;
    return commit ? ok_status() : Error::make(Code::kConflict, "rolled back");
  });
  if (!st) return st.error();
  bt->committed();
  return seen;
}

TEST(MarketBooks, ACopyIsUsedOnlyAtItsStampAndIsTheBookAsTheWriteLeftIt) {
  TempDir dir;
  auto store = open_or_die(dir.file("m.db"));
  ASSERT_TRUE(store);
  MarketBooks cache;
  StoreRead read;

  // First write: the lane is made, the book read from the store; two orders placed.
  auto w1 = write(*store, cache, read, [](StoreTx& tx, const OrderList&) -> Status {
    if (auto s = tx.insert(order("mko_b", 2)); !s) return s;
    return tx.insert(order("mko_a", 1));
  });
  ASSERT_TRUE(w1) << w1.error().message;
  EXPECT_TRUE(w1->empty());
  EXPECT_EQ(read.reads, 1);
  EXPECT_EQ(cache.orders(), 2u);

  // Second: from the copy (no read), in sequence order, with the versions the store holds; one
  // order fills (leaves the book), another is placed in another book (not this book's).
  auto w2 = write(*store, cache, read, [](StoreTx& tx, const OrderList& open) -> Status {
    Record filled = *open[0];
    filled.state = filled.body["state"] = "filled";
    if (auto s = tx.update(filled); !s) return s;
    if (auto s = tx.insert(order("mko_c", 3)); !s) return s;
    return tx.insert(order("mko_x", 4, "open", "h100|cn-east|w2"));
  });
  ASSERT_TRUE(w2) << w2.error().message;
  EXPECT_EQ(read.reads, 1);
  EXPECT_EQ(ids(*w2), (std::vector<std::string>{"mko_a", "mko_b"}));
  EXPECT_EQ((*w2)[0]->version, 1);

  // Third: the copy is the store's book (b, c), and updates carry the right versions.
  auto w3 = write(*store, cache, read, [](StoreTx& tx, const OrderList& open) -> Status {
    Record b = *open[0];
    b.body["note"] = "changed twice";
    if (auto s = tx.update(b); !s) return s;
    b.version += 1;
    return tx.update(b);
  });
  ASSERT_TRUE(w3) << w3.error().message;
  EXPECT_EQ(read.reads, 1);
  EXPECT_EQ(ids(*w3), (std::vector<std::string>{"mko_b", "mko_c"}));

  // A write that rolls back teaches the cache nothing, and costs it nothing: its stamp never
  // reached the store, so the next write still finds the copy.
  auto failed = write(
      *store, cache, read,
      [](StoreTx& tx, const OrderList&) -> Status { return tx.insert(order("mko_lost", 9)); }, false);
  EXPECT_FALSE(failed);
  auto w4 = write(*store, cache, read, [](StoreTx&, const OrderList&) { return ok_status(); });
  ASSERT_TRUE(w4);
  EXPECT_EQ(read.reads, 1);
  EXPECT_EQ(ids(*w4), (std::vector<std::string>{"mko_b", "mko_c"}));
  EXPECT_EQ((*w4)[0]->version, 3);
  EXPECT_EQ((*w4)[0]->body["note"], "changed twice");

  // Another writer (another server) changes the lane: its new stamp makes the copy unused; the
  // next write reads the store and sees that writer's order.
  MarketBooks other;
  ASSERT_TRUE(write(*store, other, read, [](StoreTx& tx, const OrderList&) { return tx.insert(order("mko_d", 5)); }));
  EXPECT_EQ(read.reads, 2);  // `other` had no copy
  auto w5 = write(*store, cache, read, [](StoreTx&, const OrderList&) { return ok_status(); });
  ASSERT_TRUE(w5);
  EXPECT_EQ(read.reads, 3);
  EXPECT_EQ(ids(*w5), (std::vector<std::string>{"mko_b", "mko_c", "mko_d"}));

  // What a reader sees: the stamp of the last commit, and the copy at it.
  auto stamp = market_lane_stamp(*store, "h100", "cn-east");
  ASSERT_TRUE(stamp);
  auto held = cache.get(market_lane_id("h100", "cn-east"), *stamp, kBook);
  ASSERT_TRUE(held);
  EXPECT_EQ(ids(*held), (std::vector<std::string>{"mko_b", "mko_c", "mko_d"}));
  EXPECT_FALSE(cache.get(market_lane_id("h100", "cn-east"), *stamp, "h100|cn-east|w2")) << "never read: not held";
  EXPECT_EQ(*market_lane_stamp(*store, "a100", "cn-east"), "") << "a lane never written";
}

TEST(MarketBooks, OneTransactionChangesOneLaneAndOneBook) {
  TempDir dir;
  auto store = open_or_die(dir.file("m.db"));
  ASSERT_TRUE(store);
  StoreRead read;
  Status st = store->write([&](StoreTx& raw) -> Status {
    BookTx bt(nullptr, raw);
    EXPECT_FALSE(bt.open_orders(kBook, in_book, read.fn())) << "read before the lane is locked";
    EXPECT_TRUE(bt.lock("h100", "cn-east"));
    EXPECT_TRUE(bt.lock("h100", "cn-east")) << "the same lane again";
    EXPECT_FALSE(bt.lock("h100", "us-west")) << "another lane";
    EXPECT_TRUE(bt.open_orders(kBook, in_book, read.fn()));
    EXPECT_FALSE(bt.open_orders("h100|cn-east|w2", in_book, read.fn())) << "another book";
    return ok_status();
  });
  EXPECT_TRUE(st);
}

TEST(MarketBooks, TheCopiesStayWithinTheirBound) {
  MarketBooks cache(3);
  cache.put("lane", "", "s1", "b1", list({order("mko_1", 1), order("mko_2", 2)}));
  EXPECT_EQ(cache.orders(), 2u);
  cache.put("lane", "s1", "s2", "b2", list({order("mko_3", 3)}));
  EXPECT_EQ(cache.orders(), 3u);
  EXPECT_TRUE(cache.get("lane", "s2", "b1")) << "another book of the lane, held at the stamp the write found";
  cache.put("lane", "s2", "s3", "b3", list({order("mko_4", 4)}));  // a fourth order: the others go
  EXPECT_EQ(cache.orders(), 1u);
  EXPECT_FALSE(cache.get("lane", "s3", "b1"));
  EXPECT_TRUE(cache.get("lane", "s3", "b3"));
  cache.put("lane", "elsewhere", "s9", "b1", list({order("mko_1", 1)}));  // a write that found another stamp
  EXPECT_FALSE(cache.get("lane", "s9", "b3")) << "what this server held may have changed in between";
  EXPECT_FALSE(cache.get("lane", "s3", "b1"));
  EXPECT_TRUE(cache.get("lane", "s9", "b1"));
  cache.put("lane", "s9", "s10", "b1", list({order("a", 1), order("b", 2), order("c", 3), order("d", 4)}));
  EXPECT_EQ(cache.orders(), 0u) << "a book larger than the bound is not held";
  EXPECT_FALSE(cache.get("lane", "s10", "b1"));
}

// Sequence numbers come from the lane's record, not a count of every order: a lane from before it
// kept them starts above every order stored then; two lanes count on their own.
TEST(MarketBooks, ALanesSequenceNumbersAreKeptInItsRecord) {
  TempDir dir;
  auto store = open_or_die(dir.file("m.db"));
  ASSERT_TRUE(store
                  ->write([](StoreTx& tx) -> Status {
                    for (const char* id : {"mko_1", "mko_2", "mko_3"})
                      if (auto s = tx.insert(order(id, 1)); !s) return s;
                    return ok_status();
                  })
                  .ok());
  auto next = [&](const char* region, int n) {
    std::vector<int64_t> out;
    EXPECT_TRUE(store
                    ->write([&](StoreTx& tx) -> Status {
                      BookTx bt(nullptr, tx);
                      if (auto s = bt.lock("h100", region); !s) return s;
                      for (int i = 0; i < n; ++i) {
                        auto seq = bt.next_seq();
                        if (!seq) return seq.error();
                        out.push_back(*seq);
                      }
                      return ok_status();
                    })
                    .ok());
    return out;
  };
  EXPECT_EQ(next("cn-east", 2), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(next("cn-east", 1), (std::vector<int64_t>{6}));
  // Another lane's first number is above every order stored when it first numbers one.
  ASSERT_TRUE(store->write([](StoreTx& tx) { return tx.insert(order("mko_4", 6)); }).ok());
  EXPECT_EQ(next("us-west", 1), (std::vector<int64_t>{5}));
  EXPECT_EQ(next("cn-east", 1), (std::vector<int64_t>{7}));
  // Outside a lane's lock: an internal error, never a number.
  Status outside = store->write([](StoreTx& tx) -> Status {
    BookTx bt(nullptr, tx);
    auto seq = bt.next_seq();
    return seq ? ok_status() : Status(seq.error());
  });
  EXPECT_FALSE(outside.ok());
}

}  // namespace
}  // namespace gpurent
