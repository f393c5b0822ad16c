// One order book of GPU-hours (docs/market.md): a (GPU model, region, delivery window) book's
// resting limit orders, matched in price-time priority. Prices are micro-units of the book's
// currency per GPU-hour, quantities whole GPU-hours; a fill's price is the resting order's.
//   GTC  a limit order: what does not fill at once rests at its price
//   IOC  what does not fill at once is cancelled
//   FOK  fills its whole quantity at once, or nothing happens
// All-or-none (any time in force): the order trades only its whole quantity in one go, or not at
// all. An incoming AON order that cannot fill whole does not trade: GTC rests whole, IOC (like FOK)
// is cancelled. A resting AON order is passed by (keeping its place) by an incoming order that
// cannot take all of it. So after every change (an order added, cancelled or replaced) the resting
// AON orders are checked, bids then asks in priority: the first that can now fill whole (walking
// the other side as a taker, its owner's orders passed by) trades at once, and again until none
// can. A cancel may therefore trade: an order taken out of the way can let an AON order fill.
// Matching walks the other side in price-time priority: the taker's own orders are cancelled
// (self-trade prevention; an AON order resting and re-checked passes them by instead), AON orders
// larger than what the taker still needs are passed by, every other order is taken. A fill's price
// is the price of whichever of its two orders entered the book first (`maker`).
// Self-trade prevention: an incoming order never trades with its owner's resting orders; each one
// it meets in priority is cancelled (cancel-resting) and matching goes on. Cancel removes a resting
// order; replace keeps its time priority only when the price is unchanged and the quantity goes
// down, otherwise it is a cancel and a new order (which may trade at once).
// Orders are identified by the caller's ids (unique; an id in use is refused). No trade is left
// undone: after every call no resting order could trade with the other side under these rules (so
// without AON orders the best bid is below the best ask).
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
  bool all_or_none = false;
  uint64_t seq = 0;  // set by the book: the order's arrival (time priority; a replace is a new arrival)
};

struct MarketFill {
  uint64_t maker = 0, taker = 0;  // the order that entered the book first (its price), the other
  int64_t price = 0, qty = 0;
};

enum class AddStatus { kRejected, kRested, kFilled, kPartlyFilledRested, kPartlyFilledCancelled, kCancelled };

struct AddResult {
  AddStatus status = AddStatus::kRejected;
  int64_t filled = 0;                // GPU-hours the order traded (at once, or after it rested, by an AON)
  int64_t rested = 0;                // GPU-hours of it left resting
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
  // Removes a resting order (appending the trades of AON orders it let fill); false when none has
  // that id.
  bool cancel(uint64_t id, std::vector<MarketFill>& fills);
  // Rests `o` as it is, without matching, as the next arrival: rebuilding a book from a snapshot of
  // its resting orders in their arrival order (the API's store). The snapshot must be a book's.
  void restore(const MarketOrder& o);
  // New price and quantity for a resting order (see the header's rule; an AON order always loses
  // its place); nullopt when none has that id or the new figures are not positive.
  std::optional<AddResult> replace(uint64_t id, int64_t price, int64_t qty, std::vector<MarketFill>& fills);

  std::optional<int64_t> best_bid() const;
  std::optional<int64_t> best_ask() const;
  // Up to `levels` price levels per side, best first, without identities.
  std::vector<BookLevel> depth(MarketSide side, size_t levels) const;
  const MarketOrder* find(uint64_t id) const;
  size_t resting() const { return index_.size(); }
  // Every resting order, bids then asks, each side in priority order (tests, the API's snapshots).
  std::vector<MarketOrder> orders() const;

 private:
  using Queue = std::list<MarketOrder>;
  struct Where {
    MarketSide side;
    int64_t price;
    Queue::iterator it;
  };
  // What taker `o` (its qty what it still needs) would get walking the other side; `stp`: cancel
  // its owner's orders met (else pass them by). Dry run when `fills` is null.
  int64_t walk(MarketOrder& o, bool stp, std::vector<MarketFill>* fills, AddResult* r);
  void rest(const MarketOrder& o);
  void erase(uint64_t id);
  // Resting AON orders that can fill whole do, first in priority first, until none can.
  void settle_aon(std::vector<MarketFill>& fills);

  std::map<int64_t, Queue, std::greater<int64_t>> bids_;  // best (highest) first
  std::map<int64_t, Queue> asks_;                         // best (lowest) first
  std::unordered_map<uint64_t, Where> index_;
  uint64_t next_seq_ = 1;
  size_t aon_resting_ = 0;  // no re-check while none rests
};

}  // namespace gpurent
