// The market's books beside the store (docs/market.md#books-in-memory).
//
// A lane is the books of one GPU model in one region: everything a trade there touches (the
// books, the sellers' nodes and their reservations) belongs to it. Every market write — an order
// placed, cancelled or replaced, and the trades and settlement it makes — runs through a BookTx,
// which first locks its lane's row in the store (kind "market-lanes", StoreTx::get_locked: on
// PostgreSQL another server's write to the lane waits for this one's commit; SQLite's one writer
// holds the database anyway) and gives it a new random stamp. So several servers on one database
// match a book one after another, as one server would, and never sell a node twice.
//
// MarketBooks keeps each book's open orders in memory as they were at a lane stamp. A write finds
// its book there when the lane's stamp in the store is the one the copy was taken at (no other
// server and no failed transaction changed it since), else reads it from the store; after its
// commit the copy becomes the book as the write left it. The store stays the one truth: a copy is
// used only while the stamp proves it equal to the store, and a restart starts with none.
//
// Thread-safety: MarketBooks is thread-safe (the writer's commands and HTTP threads share it).
// A BookTx lives inside one command of the writer (services/control_loop.h) and is not.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace gpurent {

// A book's open orders, oldest first (sequence number, then id). The records are shared and never
// changed in place: a copy of the list costs a pointer per order, not a document.
using OrderList = std::vector<std::shared_ptr<const Record>>;

class MarketBooks {
 public:
  // At most `max_orders` open orders are held over all books; a copy that would pass it empties
  // the cache first (the books are read from the store again as they are used).
  explicit MarketBooks(size_t max_orders = 200'000) : max_orders_(max_orders) {}
  MarketBooks(const MarketBooks&) = delete;
  MarketBooks& operator=(const MarketBooks&) = delete;

  // Book `book`'s open orders at stamp `stamp` of lane `lane`, when held.
  std::optional<OrderList> get(const std::string& lane, const std::string& stamp, const std::string& book) const;
  // After a commit took lane `lane` from stamp `was` to `stamp`, changing book `book` only (to
  // `open`): the lane's other books stay when they were held at `was`, else are forgotten.
  void put(const std::string& lane, const std::string& was, const std::string& stamp, const std::string& book,
           OrderList open);
  size_t orders() const;  // held now, over all books

 private:
  struct Lane {
    std::string stamp;
    std::map<std::string, OrderList> books;
  };
  mutable std::mutex mu_;
  std::map<std::string, Lane> lanes_;
  size_t orders_ = 0;
  size_t max_orders_;
};

// The lane's row: kind "market-lanes", one per (GPU model, region).
std::string market_lane_id(const std::string& gpu_model, const std::string& region);
// Locks the lane's row inside the writer's transaction (making it the first time) without a new
// stamp: for writes that change no book but what its trades hold (a seller's default).
Result<Record> lock_market_lane(StoreTx& tx, const std::string& gpu_model, const std::string& region);
// The lane's stamp as a reader sees it now ("" when the lane has never been written).
Result<std::string> market_lane_stamp(StoreReader& store, const std::string& gpu_model, const std::string& region);

// One market write transaction's lane and book. Every write of the transaction goes through tx(),
// which notes the orders (kind "market-orders") it inserts and updates.
class BookTx {
 public:
  // cache may be null (no copies kept: every book is read from the store).
  BookTx(MarketBooks* cache, StoreTx& tx);
  ~BookTx();
  BookTx(const BookTx&) = delete;
  BookTx& operator=(const BookTx&) = delete;

  StoreTx& tx();
  // Locks the lane of (gpu_model, region) and stamps it anew; once per transaction (a second call
  // for the same lane does nothing; another lane is an internal error).
  Status lock(const std::string& gpu_model, const std::string& region);
  // The next sequence number of the locked lane (time priority within its books), kept in the
  // lane's record: not a count of every order ever placed, which grows with the market's history.
  // A lane from before the record kept it starts above every order stored then.
  Result<int64_t> next_seq();
  // The open orders of book `book` (lock() first; one book per transaction), ordered by their
  // sequence numbers, as this transaction has left them so far. `in_book` says whether an order
  // belongs to the book; `read` reads the book's open orders from the store (when no copy is held).
  Result<OrderList> open_orders(const std::string& book, const std::function<bool(const nlohmann::json&)>& in_book,
                                const std::function<Result<std::vector<Record>>(StoreTx&)>& read);
  // Call once the transaction has committed: the cache holds the book as this transaction left it.
  void committed();

 private:
  class Recording;
  OrderList current() const;
  MarketBooks* cache_;
  std::unique_ptr<Recording> rec_;
  std::string lane_, was_, stamp_, book_;
  std::optional<Record> lane_rec_;  // the locked lane as this transaction last wrote it
  std::function<bool(const nlohmann::json&)> in_book_;
  std::optional<OrderList> found_;  // the book's open orders as the transaction found them
};

// The order of a book's open orders: by sequence number (time priority), then id.
bool before_in_book(const Record& a, const Record& b);
void sort_by_seq(std::vector<Record>& orders);

}  // namespace gpurent
