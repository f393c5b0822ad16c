// bench/run market [OPS]: the order book's matching on one thread (src/market/order_book.h) on a
// realistic mix — 45% limit orders resting a few ticks off the touch, 10% marketable orders (half
// IOC), 45% cancels of random resting orders (so the book stays near a steady size, as a live one does) — beside the reference book (naive_book.h, every resting
// order in one vector) on the first 60,000 operations of the same sequence (its first 10,000 fill the book). Operations are
// generated before the clock starts. Last line: market: <orders/s> (baseline: <orders/s>).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "market/naive_book.h"
#include "market/order_book.h"

using namespace gpurent;

namespace {

struct Op {
  int kind;  // 0 add, 1 cancel
  MarketOrder order;
  uint64_t cancel_id;
};

std::vector<Op> make_ops(size_t n) {
  std::mt19937_64 rng(2026);
  std::vector<Op> ops;
  ops.reserve(n);
  uint64_t next = 1;
  std::vector<uint64_t> pool;  // orders placed to rest and not yet cancelled (some traded since)
  const int64_t mid = 2'000'000;  // 2.00 per GPU-hour, in micro-units; ticks of 0.001
  for (size_t i = 0; i < n; ++i) {
    // The first 10,000 operations fill the book (limit orders up to 200 ticks off the touch), so the
    // mix meets a book of about that size, as on a busy market.
    const int r = i < 10'000 ? 50 : static_cast<int>(rng() % 100);
    if (r < 45 && !pool.empty()) {  // a cancel of a random resting order
      const size_t k = rng() % pool.size();
      ops.push_back({1, {}, pool[k]});
      pool[k] = pool.back();
      pool.pop_back();
      continue;
    }
    MarketOrder o;
    o.id = next++;
    o.owner = 1 + rng() % 1000;
    o.side = rng() % 2 ? MarketSide::kBuy : MarketSide::kSell;
    o.qty = 1 + static_cast<int64_t>(rng() % 64);
    const bool marketable = r >= 90;
    const int64_t ticks = 1 + static_cast<int64_t>(rng() % (i < 10'000 ? 200 : 20));
    if (marketable) {
      o.price = o.side == MarketSide::kBuy ? mid + 25'000 : mid - 25'000;
      o.tif = rng() % 2 ? TimeInForce::kIoc : TimeInForce::kGtc;
    } else {
      o.price = o.side == MarketSide::kBuy ? mid - ticks * 1000 : mid + ticks * 1000;
      o.tif = TimeInForce::kGtc;
      pool.push_back(o.id);
    }
    ops.push_back({0, o, 0});
  }
  return ops;
}

template <class Book>
double run(Book& book, const std::vector<Op>& ops, size_t n, uint64_t* fills_out) {
  std::vector<MarketFill> fills;
  fills.reserve(1024);
  uint64_t total = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < n; ++i) {
    const Op& op = ops[i];
    if (op.kind == 0) {
      fills.clear();
      book.add(op.order, fills);
      total += fills.size();
    } else {
      fills.clear();
      book.cancel(op.cancel_id, fills);
      total += fills.size();
    }
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *fills_out = total;
  return static_cast<double>(n) / s;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t n = argc > 1 ? static_cast<size_t>(std::atoll(argv[1])) : 5'000'000;
  const size_t baseline_n = std::min<size_t>(n, 60'000);
  const std::vector<Op> ops = make_ops(n);
  uint64_t fills = 0, naive_fills = 0, fast_prefix_fills = 0;
  {  // the same prefix on both, to check they agree on what traded
    OrderBook prefix;
    run(prefix, ops, baseline_n, &fast_prefix_fills);
  }
  NaiveBook naive;
  const double base = run(naive, ops, baseline_n, &naive_fills);
  OrderBook book;
  const double rate = run(book, ops, n, &fills);
  std::printf("operations %zu (45%% resting limit, 10%% marketable, 45%% cancels), trades %llu, resting at the end %zu\n", n,
              static_cast<unsigned long long>(fills), book.resting());
  std::printf("reference book on the first %zu operations: %llu trades (order book: %llu)\n", baseline_n,
              static_cast<unsigned long long>(naive_fills), static_cast<unsigned long long>(fast_prefix_fills));
  if (naive_fills != fast_prefix_fills) {
    std::printf("market: the two books disagree\n");
    return 1;
  }
  std::printf("market: %.0f orders/s (baseline: %.0f orders/s)\n", rate, base);
  return 0;
}
