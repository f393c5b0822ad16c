// The order book's matching (order_book.h).
#include "market/order_book.h"

#include <algorithm>

namespace gpurent {

namespace {

bool crosses(MarketSide side, int64_t limit, int64_t resting_price) {
  return side == MarketSide::kBuy ? resting_price <= limit : resting_price >= limit;
}

// What `o` could trade now against `levels` (the opposite side), its owner's orders left out;
// stops counting once it reaches o.qty.
template <class Levels>
int64_t fillable_in(const Levels& levels, const MarketOrder& o) {
  int64_t n = 0;
  for (const auto& [price, queue] : levels) {
    if (!crosses(o.side, o.price, price)) break;
    for (const MarketOrder& r : queue) {
      if (r.owner == o.owner) continue;
      n += r.qty;
      if (n >= o.qty) return n;
    }
  }
  return n;
}

// Trades `o` against `levels` in price-time priority; cancels its owner's orders met on the way.
template <class Levels, class Index>
void match_in(Levels& levels, Index& index, MarketOrder& o, std::vector<MarketFill>& fills, AddResult& r) {
  auto level = levels.begin();
  while (o.qty > 0 && level != levels.end() && crosses(o.side, o.price, level->first)) {
    auto& queue = level->second;
    for (auto it = queue.begin(); it != queue.end() && o.qty > 0;) {
      if (it->owner == o.owner) {  // self-trade prevention: the resting order goes
        r.stp_cancelled.push_back(it->id);
        index.erase(it->id);
        it = queue.erase(it);
        continue;
      }
      const int64_t q = std::min(o.qty, it->qty);
      fills.push_back({it->id, o.id, level->first, q});
      o.qty -= q;
      r.filled += q;
      it->qty -= q;
      if (it->qty == 0) {
        index.erase(it->id);
        it = queue.erase(it);
      } else {
        ++it;
      }
    }
    level = queue.empty() ? levels.erase(level) : std::next(level);
  }
}

}  // namespace

int64_t OrderBook::fillable(const MarketOrder& o) const {
  return o.side == MarketSide::kBuy ? fillable_in(asks_, o) : fillable_in(bids_, o);
}

void OrderBook::match(MarketOrder& o, std::vector<MarketFill>& fills, AddResult& r) {
  if (o.side == MarketSide::kBuy)
    match_in(asks_, index_, o, fills, r);
  else
    match_in(bids_, index_, o, fills, r);
}

void OrderBook::rest(const MarketOrder& o) {
  Queue* q = o.side == MarketSide::kBuy ? &bids_[o.price] : &asks_[o.price];
  q->push_back(o);
  index_[o.id] = {o.side, o.price, std::prev(q->end())};
}

void OrderBook::erase(uint64_t id) {
  auto w = index_.find(id);
  if (w == index_.end()) return;
  auto drop = [&](auto& levels) {
    auto level = levels.find(w->second.price);
    level->second.erase(w->second.it);
    if (level->second.empty()) levels.erase(level);
  };
  if (w->second.side == MarketSide::kBuy)
    drop(bids_);
  else
    drop(asks_);
  index_.erase(w);
}

AddResult OrderBook::add(const MarketOrder& in, std::vector<MarketFill>& fills) {
  AddResult r;
  if (in.price <= 0 || in.qty <= 0 || index_.count(in.id)) return r;
  MarketOrder o = in;
  if (o.tif == TimeInForce::kFok && fillable(o) < o.qty) {
    r.status = AddStatus::kCancelled;
    return r;
  }
  match(o, fills, r);
  if (o.qty == 0) {
    r.status = AddStatus::kFilled;
  } else if (o.tif == TimeInForce::kGtc) {
    rest(o);
    r.rested = o.qty;
    r.status = r.filled > 0 ? AddStatus::kPartlyFilledRested : AddStatus::kRested;
  } else {
    r.status = r.filled > 0 ? AddStatus::kPartlyFilledCancelled : AddStatus::kCancelled;
  }
  return r;
}

bool OrderBook::cancel(uint64_t id) {
  if (!index_.count(id)) return false;
  erase(id);
  return true;
}

std::optional<AddResult> OrderBook::replace(uint64_t id, int64_t price, int64_t qty, std::vector<MarketFill>& fills) {
  auto w = index_.find(id);
  if (w == index_.end() || price <= 0 || qty <= 0) return std::nullopt;
  MarketOrder& cur = *w->second.it;
  if (price == cur.price && qty <= cur.qty) {  // smaller at the same price: keeps its place
    cur.qty = qty;
    AddResult r;
    r.status = AddStatus::kRested;
    r.rested = qty;
    return r;
  }
  MarketOrder next = cur;
  next.price = price;
  next.qty = qty;
  next.tif = TimeInForce::kGtc;
  erase(id);
  return add(next, fills);
}

std::optional<int64_t> OrderBook::best_bid() const {
  if (bids_.empty()) return std::nullopt;
  return bids_.begin()->first;
}

std::optional<int64_t> OrderBook::best_ask() const {
  if (asks_.empty()) return std::nullopt;
  return asks_.begin()->first;
}

std::vector<BookLevel> OrderBook::depth(MarketSide side, size_t levels) const {
  std::vector<BookLevel> out;
  auto collect = [&](const auto& book) {
    for (const auto& [price, queue] : book) {
      if (out.size() >= levels) break;
      BookLevel l{price, 0, 0};
      for (const MarketOrder& o : queue) {
        l.qty += o.qty;
        ++l.orders;
      }
      out.push_back(l);
    }
  };
  if (side == MarketSide::kBuy)
    collect(bids_);
  else
    collect(asks_);
  return out;
}

const MarketOrder* OrderBook::find(uint64_t id) const {
  auto w = index_.find(id);
  return w == index_.end() ? nullptr : &*w->second.it;
}

}  // namespace gpurent
