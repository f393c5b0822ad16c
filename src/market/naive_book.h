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
    o.seq = seq_++;
    bool trade = true;
    if (o.all_or_none || o.tif == TimeInForce::kFok) trade = walk(o, false, nullptr, nullptr) >= o.qty;
    if (trade) r.filled = walk(o, true, &fills, &r);
    if (o.qty == 0 || o.tif != TimeInForce::kGtc) {
      r.status = o.qty == 0 ? AddStatus::kFilled : r.filled > 0 ? AddStatus::kPartlyFilledCancelled : AddStatus::kCancelled;
      settle_aon(fills);
      return r;
    }
    book_.push_back(o);
    settle_aon(fills);
    const MarketOrder* left = find(o.id);
    r.rested = left ? left->qty : 0;
    r.filled = in.qty - r.rested;
    r.status = r.rested == 0 ? AddStatus::kFilled : r.filled > 0 ? AddStatus::kPartlyFilledRested : AddStatus::kRested;
    return r;
  }

  bool cancel(uint64_t id, std::vector<MarketFill>& fills) {
    if (!remove(id)) return false;
    settle_aon(fills);
    return true;
  }

  std::optional<AddResult> replace(uint64_t id, int64_t price, int64_t qty, std::vector<MarketFill>& fills) {
    for (auto it = book_.begin(); it != book_.end(); ++it) {
      if (it->id != id) continue;
      if (price <= 0 || qty <= 0) return std::nullopt;
      if (price == it->price && qty <= it->qty && !it->all_or_none) {
        it->qty = qty;
        settle_aon(fills);
        AddResult r;
        const MarketOrder* left = find(id);
        r.rested = left ? left->qty : 0;
        r.filled = qty - r.rested;
        r.status = r.rested == 0 ? AddStatus::kFilled : r.filled > 0 ? AddStatus::kPartlyFilledRested : AddStatus::kRested;
        return r;
      }
      MarketOrder next = *it;
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
    for (const MarketOrder& x : book_) {
      if (x.side != side) continue;
      auto it = std::find_if(all.begin(), all.end(), [&](const BookLevel& l) { return l.price == x.price; });
      if (it == all.end()) all.push_back({x.price, x.qty, 1});
      else it->qty += x.qty, ++it->orders;
    }
    std::sort(all.begin(), all.end(), [&](const BookLevel& a, const BookLevel& b) {
      return side == MarketSide::kBuy ? a.price > b.price : a.price < b.price;
    });
    if (all.size() > levels) all.resize(levels);
    return all;
  }

  const MarketOrder* find(uint64_t id) const {
    for (const MarketOrder& x : book_)
      if (x.id == id) return &x;
    return nullptr;
  }
  size_t resting() const { return book_.size(); }
  // Bids then asks, each side best first.
  std::vector<MarketOrder> orders() const {
    std::vector<MarketOrder> out = book_;
    std::sort(out.begin(), out.end(), [](const MarketOrder& a, const MarketOrder& b) {
      if (a.side != b.side) return a.side == MarketSide::kBuy;
      return better(a, b);
    });
    return out;
  }

 private:
  static bool crosses(const MarketOrder& o, int64_t price) {
    return o.side == MarketSide::kBuy ? price <= o.price : price >= o.price;
  }
  // Price priority within a side (the best price first), then time.
  static bool better(const MarketOrder& a, const MarketOrder& b) {
    if (a.price != b.price) return a.side == MarketSide::kSell ? a.price < b.price : a.price > b.price;
    return a.seq < b.seq;
  }
  // Taker `o` walks the other side, one best unvisited order at a time: its owner's are cancelled
  // (stp) or passed by, AON orders larger than it still needs are passed by, others are taken.
  // A dry run (fills null) changes nothing. Returns what it got; o.qty goes down when applied.
  int64_t walk(MarketOrder& o, bool stp, std::vector<MarketFill>* fills, AddResult* r) {
    int64_t need = o.qty;
    std::vector<uint64_t> visited;
    while (need > 0) {
      const MarketOrder* best = nullptr;
      for (const MarketOrder& x : book_)
        if (x.side != o.side && crosses(o, x.price) &&
            std::find(visited.begin(), visited.end(), x.id) == visited.end() && (!best || better(x, *best)))
          best = &x;
      if (!best) break;
      const uint64_t id = best->id;
      if (best->owner == o.owner) {
        if (stp && fills) {
          r->stp_cancelled.push_back(id);
          remove(id);
        } else {
          visited.push_back(id);
        }
        continue;
      }
      if (best->all_or_none && best->qty > need) {
        visited.push_back(id);
        continue;
      }
      const int64_t q = std::min(need, best->qty);
      need -= q;
      if (!fills) {
        visited.push_back(id);
        continue;
      }
      const bool resting_first = best->seq < o.seq;
      fills->push_back({resting_first ? id : o.id, resting_first ? o.id : id, resting_first ? best->price : o.price, q});
      for (MarketOrder& x : book_)
        if (x.id == id) x.qty -= q;
      if (find(id)->qty == 0) remove(id);
    }
    const int64_t got = o.qty - need;
    if (fills) o.qty -= got;
    return got;
  }

  bool remove(uint64_t id) {
    for (auto it = book_.begin(); it != book_.end(); ++it)
      if (it->id == id) {
        book_.erase(it);
        return true;
      }
    return false;
  }
  // The first resting AON order (bids then asks, each in priority) that can fill whole does; again
  // until none can.
  void settle_aon(std::vector<MarketFill>& fills) {
    for (bool again = true; again;) {
      again = false;
      for (const MarketOrder& a : orders()) {
        if (!a.all_or_none) continue;
        MarketOrder taker = a;
        if (walk(taker, false, nullptr, nullptr) < a.qty) continue;
        remove(a.id);
        walk(taker, false, &fills, nullptr);
        again = true;
        break;
      }
    }
  }

  std::vector<MarketOrder> book_;
  uint64_t seq_ = 1;
};

}  // namespace gpurent
