// One order book of GPU-hours (docs/market.md): a (GPU model, region, delivery window) book's
// resting limit orders, matched in price-time priority. Prices are micro-units of the book's
// currency per GPU-hour, quantities whole GPU-hours; a fill's price is the resting order's.
//   GTC  a limit order: what does not fill at once rests at its price
//   IOC  what does not fill at once is cancelled
//   FOK  fills its whole quantity at once, or nothing happens
// Self-trade prevention: an incoming order never trades with its owner's resting orders; each one
// it meets in priority is cancelled (cancel-resting) and matching goes on. Cancel removes a resting
// order; replace keeps its time priority only when the price is unchanged and the quantity goes
// down, otherwise it is a cancel and a new order (which may trade at once).
// Orders are identified by the caller's ids (unique; an id in use is refused). The book never
// crosses: after every call its best bid is below its best ask.
// Deterministic and not thread-safe: one market thread owns a book.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

namespace gpurent {

enum class MarketSide { kBuy, kSell };
enum class TimeInForce { kGtc, kIoc, kFok };

struct MarketOrder {
  uint64_t id = 0;
  uint64_t owner = 0;  // the account that placed it (self-trade prevention)
  MarketSide side = MarketSide::kBuy;
  int64_t price = 0;  // > 0
  int64_t qty = 0;    // > 0
  TimeInForce tif = TimeInForce::kGtc;
};

struct MarketFill {
  uint64_t maker = 0, taker = 0;  // resting order, incoming order
  int64_t price = 0, qty = 0;
};

enum class AddStatus { kRejected, kRested, kFilled, kPartlyFilledRested, kPartlyFilledCancelled, kCancelled };

struct AddResult {
  AddStatus status = AddStatus::kRejected;
  int64_t filled = 0;                // GPU-hours traded
  int64_t rested = 0;                // GPU-hours left resting
  std::vector<uint64_t> stp_cancelled;  // the owner's resting orders self-trade prevention cancelled
};

struct BookLevel {
  int64_t price = 0, qty = 0, orders = 0;
};

class OrderBook {
 public:
  // Matches `o` (appending its trades to `fills`) and rests what is left as its time in force
  // says. Rejected: a non-positive price or quantity, an id in use.
  AddResult add(const MarketOrder& o, std::vector<MarketFill>& fills);
  // Removes a resting order; false when none has that id.
  bool cancel(uint64_t id);
  // New price and quantity for a resting order (see the header's rule); nullopt when none has
  // that id or the new figures are not positive.
  std::optional<AddResult> replace(uint64_t id, int64_t price, int64_t qty, std::vector<MarketFill>& fills);

  std::optional<int64_t> best_bid() const;
  std::optional<int64_t> best_ask() const;
  // Up to `levels` price levels per side, best first, without identities.
  std::vector<BookLevel> depth(MarketSide side, size_t levels) const;
  const MarketOrder* find(uint64_t id) const;
  size_t resting() const { return index_.size(); }

 private:
  using Queue = std::list<MarketOrder>;
  struct Where {
    MarketSide side;
    int64_t price;
    Queue::iterator it;
  };
  int64_t fillable(const MarketOrder& o) const;
  void match(MarketOrder& o, std::vector<MarketFill>& fills, AddResult& r);
  void rest(const MarketOrder& o);
  void erase(uint64_t id);

  std::map<int64_t, Queue, std::greater<int64_t>> bids_;  // best (highest) first
  std::map<int64_t, Queue> asks_;                         // best (lowest) first
  std::unordered_map<uint64_t, Where> index_;
};

}  // namespace gpurent
