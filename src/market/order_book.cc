// The order book's matching (order_book.h).
#include "market/order_book.h"

#include <algorithm>

namespace gpurent {

namespace {

bool crosses(MarketSide side, int64_t limit, int64_t resting_price) {
  return side == MarketSide::kBuy ? resting_price <= limit : resting_price >= limit;
}

}  // namespace

int64_t OrderBook::walk(MarketOrder& o, bool stp, std::vector<MarketFill>* fills, AddResult* r) {
  auto run = [&](auto& levels) -> int64_t {
    int64_t need = o.qty;
    auto level = levels.begin();
    while (need > 0 && level != levels.end() && crosses(o.side, o.price, level->first)) {
      auto& queue = level->second;
      for (auto it = queue.begin(); it != queue.end() && need > 0;) {
        if (it->owner == o.owner) {
          if (stp && fills) {  // self-trade prevention: the resting order goes
            r->stp_cancelled.push_back(it->id);
            if (it->all_or_none) --aon_resting_;
            index_.erase(it->id);
            it = queue.erase(it);
          } else {
            ++it;
          }
          continue;
        }
        if (it->all_or_none && it->qty > need) {  // cannot take all of it: passed by
          ++it;
          continue;
        }
        const int64_t q = std::min(need, it->qty);
        need -= q;
        if (!fills) {
          ++it;
          continue;
        }
        const bool resting_first = it->seq < o.seq;
        fills->push_back({resting_first ? it->id : o.id, resting_first ? o.id : it->id,
                          resting_first ? it->price : o.price, q});
        it->qty -= q;
        if (it->qty == 0) {
          if (it->all_or_none) --aon_resting_;
          index_.erase(it->id);
          it = queue.erase(it);
        } else {
          ++it;
        }
      }
      level = queue.empty() ? levels.erase(level) : std::next(level);
    }
    return o.qty - need;
  };
  const int64_t got = o.side == MarketSide::kBuy ? run(asks_) : run(bids_);
  if (fills) o.qty -= got;
  return got;
}

void OrderBook::rest(const MarketOrder& o) {
  Queue* q = o.side == MarketSide::kBuy ? &bids_[o.price] : &asks_[o.price];
  q->push_back(o);
  index_[o.id] = {o.side, o.price, std::prev(q->end())};
  if (o.all_or_none) ++aon_resting_;
}

void OrderBook::erase(uint64_t id) {
  auto w = index_.find(id);
  if (w == index_.end()) return;
  if (w->second.it->all_or_none) --aon_resting_;
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

void OrderBook::settle_aon(std::vector<MarketFill>& fills) {
  bool again = aon_resting_ > 0;
  while (again) {
    again = false;
    auto first_fillable = [&](auto& levels) -> std::optional<MarketOrder> {
      for (auto& [price, queue] : levels)
        for (const MarketOrder& a : queue) {
          if (!a.all_or_none) continue;
          MarketOrder probe = a;
          if (walk(probe, false, nullptr, nullptr) >= a.qty) return a;
        }
      return std::nullopt;
    };
    std::optional<MarketOrder> a = first_fillable(bids_);
    if (!a) a = first_fillable(asks_);
    if (a) {
      erase(a->id);
      walk(*a, false, &fills, nullptr);
      again = aon_resting_ > 0;
    }
  }
}

AddResult OrderBook::add(const MarketOrder& in, std::vector<MarketFill>& fills) {
  AddResult r;
  if (in.price <= 0 || in.qty <= 0 || index_.count(in.id)) return r;
  MarketOrder o = in;
  o.seq = next_seq_++;
  bool trade = true;
  if (o.all_or_none || o.tif == TimeInForce::kFok) {
    MarketOrder probe = o;
    trade = walk(probe, false, nullptr, nullptr) >= o.qty;
  }
  if (trade) r.filled = walk(o, true, &fills, &r);
  if (o.qty == 0 || o.tif != TimeInForce::kGtc) {
    r.status = o.qty == 0 ? AddStatus::kFilled : r.filled > 0 ? AddStatus::kPartlyFilledCancelled : AddStatus::kCancelled;
    settle_aon(fills);  // what it took or cancelled may let a resting AON order fill whole
    return r;
  }
  rest(o);
  settle_aon(fills);  // may take some or all of o
  const MarketOrder* left = find(o.id);
  r.rested = left ? left->qty : 0;
  r.filled = in.qty - r.rested;
  r.status = r.rested == 0 ? AddStatus::kFilled : r.filled > 0 ? AddStatus::kPartlyFilledRested : AddStatus::kRested;
  return r;
}

bool OrderBook::cancel(uint64_t id, std::vector<MarketFill>& fills) {
  if (!index_.count(id)) return false;
  erase(id);
  settle_aon(fills);  // an order that is gone no longer stands before a resting AON order's fill
  return true;
}

void OrderBook::restore(const MarketOrder& in) {
  MarketOrder o = in;
  o.seq = next_seq_++;
  rest(o);
}

std::optional<AddResult> OrderBook::replace(uint64_t id, int64_t price, int64_t qty, std::vector<MarketFill>& fills) {
  auto w = index_.find(id);
  if (w == index_.end() || price <= 0 || qty <= 0) return std::nullopt;
  MarketOrder& cur = *w->second.it;
  if (price == cur.price && qty <= cur.qty && !cur.all_or_none) {  // smaller at the same price: keeps its place
    cur.qty = qty;
    settle_aon(fills);  // less of it may let a resting AON order fill whole, taking it too
    AddResult r;
    const MarketOrder* left = find(id);
    r.rested = left ? left->qty : 0;
    r.filled = qty - r.rested;
    r.status = r.rested == 0 ? AddStatus::kFilled : r.filled > 0 ? AddStatus::kPartlyFilledRested : AddStatus::kRested;
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

std::vector<MarketOrder> OrderBook::orders() const {
  std::vector<MarketOrder> out;
  for (const auto& [price, queue] : bids_) out.insert(out.end(), queue.begin(), queue.end());
  for (const auto& [price, queue] : asks_) out.insert(out.end(), queue.begin(), queue.end());
  return out;
}

const MarketOrder* OrderBook::find(uint64_t id) const {
  auto w = index_.find(id);
  return w == index_.end() ? nullptr : &*w->second.it;
}

}  // namespace gpurent
