// The reference order book: the same rules as OrderBook (order_book.h) written the plainest way —
// every resting order in one vector, the best one found by scanning it. Slow (each match scans the
// whole book) and obviously right: the property tests compare OrderBook with it after every call,
// and `bench/run market` measures it as the baseline. Not thread-safe.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "market/order_book.h"

namespace gpurent {

class NaiveBook {
 public:
  AddResult add(const MarketOrder& in, std::vector<MarketFill>& fills) {
    AddResult r;
    if (in.price <= 0 || in.qty <= 0 || find(in.id)) return r;
    MarketOrder o = in;
    if (o.tif == TimeInForce::kFok) {
      int64_t avail = 0;
      for (const Resting& x : book_)
        if (x.o.side != o.side && x.o.owner != o.owner && crosses(o, x.o.price)) avail += x.o.qty;
      if (avail < o.qty) {
        r.status = AddStatus::kCancelled;
        return r;
      }
    }
    while (o.qty > 0) {
      auto best = book_.end();
      for (auto it = book_.begin(); it != book_.end(); ++it)
        if (it->o.side != o.side && crosses(o, it->o.price) && (best == book_.end() || better(*it, *best))) best = it;
      if (best == book_.end()) break;
      if (best->o.owner == o.owner) {
        r.stp_cancelled.push_back(best->o.id);
        book_.erase(best);
        continue;
      }
      const int64_t q = std::min(o.qty, best->o.qty);
      fills.push_back({best->o.id, o.id, best->o.price, q});
      o.qty -= q;
      r.filled += q;
      best->o.qty -= q;
      if (best->o.qty == 0) book_.erase(best);
    }
    if (o.qty == 0) {
      r.status = AddStatus::kFilled;
    } else if (o.tif == TimeInForce::kGtc) {
      book_.push_back({o, seq_++});
      r.rested = o.qty;
      r.status = r.filled > 0 ? AddStatus::kPartlyFilledRested : AddStatus::kRested;
    } else {
      r.status = r.filled > 0 ? AddStatus::kPartlyFilledCancelled : AddStatus::kCancelled;
    }
    return r;
  }

  bool cancel(uint64_t id) {
    for (auto it = book_.begin(); it != book_.end(); ++it)
      if (it->o.id == id) {
        book_.erase(it);
        return true;
      }
    return false;
  }

  std::optional<AddResult> replace(uint64_t id, int64_t price, int64_t qty, std::vector<MarketFill>& fills) {
    for (auto it = book_.begin(); it != book_.end(); ++it) {
      if (it->o.id != id) continue;
      if (price <= 0 || qty <= 0) return std::nullopt;
      if (price == it->o.price && qty <= it->o.qty) {
        it->o.qty = qty;
        AddResult r;
        r.status = AddStatus::kRested;
        r.rested = qty;
        return r;
      }
      MarketOrder next = it->o;
      next.price = price;
      next.qty = qty;
      next.tif = TimeInForce::kGtc;
      book_.erase(it);
      return add(next, fills);
    }
    return std::nullopt;
  }

  std::vector<BookLevel> depth(MarketSide side, size_t levels) const {
    std::vector<BookLevel> all;
    for (const Resting& x : book_) {
      if (x.o.side != side) continue;
      auto it = std::find_if(all.begin(), all.end(), [&](const BookLevel& l) { return l.price == x.o.price; });
      if (it == all.end()) all.push_back({x.o.price, x.o.qty, 1});
      else it->qty += x.o.qty, ++it->orders;
    }
    std::sort(all.begin(), all.end(), [&](const BookLevel& a, const BookLevel& b) {
      return side == MarketSide::kBuy ? a.price > b.price : a.price < b.price;
    });
    if (all.size() > levels) all.resize(levels);
    return all;
  }

  const MarketOrder* find(uint64_t id) const {
    for (const Resting& x : book_)
      if (x.o.id == id) return &x.o;
    return nullptr;
  }
  size_t resting() const { return book_.size(); }

 private:
  struct Resting {
    MarketOrder o;
    uint64_t seq;
  };
  static bool crosses(const MarketOrder& o, int64_t price) {
    return o.side == MarketSide::kBuy ? price <= o.price : price >= o.price;
  }
  // Price priority (the best price for the incoming side), then time.
  static bool better(const Resting& a, const Resting& b) {
    if (a.o.price != b.o.price) return a.o.side == MarketSide::kSell ? a.o.price < b.o.price : a.o.price > b.o.price;
    return a.seq < b.seq;
  }
  std::vector<Resting> book_;
  uint64_t seq_ = 0;
};

}  // namespace gpurent
