// The order book against the reference book (naive_book.h): after any sequence of adds, cancels
// and replaces both give the same answers, trades and depth; the book never crosses; every trade
// is at the resting order's price, within the incoming order's limit, between different owners;
// and GPU-hours are conserved. Plus the rules on small hand-made books.
#include "market/order_book.h"

#include <gtest/gtest.h>

#include <random>

#include "market/naive_book.h"

namespace gpurent {
namespace {

MarketOrder ord(uint64_t id, uint64_t owner, MarketSide side, int64_t price, int64_t qty, TimeInForce tif = TimeInForce::kGtc) {
  return {id, owner, side, price, qty, tif};
}
constexpr auto kBuy = MarketSide::kBuy;
constexpr auto kSell = MarketSide::kSell;

TEST(OrderBook, PriceThenTimePriorityAtTheRestingPrice) {
  OrderBook b;
  std::vector<MarketFill> f;
  EXPECT_EQ(b.add(ord(1, 1, kSell, 101, 5), f).status, AddStatus::kRested);
  EXPECT_EQ(b.add(ord(2, 2, kSell, 100, 3), f).status, AddStatus::kRested);
  EXPECT_EQ(b.add(ord(3, 3, kSell, 100, 4), f).status, AddStatus::kRested);
  AddResult r = b.add(ord(4, 4, kBuy, 101, 10), f);
  EXPECT_EQ(r.status, AddStatus::kFilled);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ((std::vector<uint64_t>{f[0].maker, f[1].maker, f[2].maker}), (std::vector<uint64_t>{2, 3, 1}));
  EXPECT_EQ(f[0].price, 100);
  EXPECT_EQ(f[2].price, 101);
  EXPECT_EQ(f[2].qty, 3);
  EXPECT_EQ(b.find(1)->qty, 2);
}

TEST(OrderBook, IocFokSelfTradeCancelAndReplace) {
  OrderBook b;
  std::vector<MarketFill> f;
  b.add(ord(1, 1, kSell, 100, 5), f);
  b.add(ord(2, 2, kSell, 100, 5), f);
  EXPECT_EQ(b.add(ord(3, 3, kBuy, 100, 11, TimeInForce::kFok), f).status, AddStatus::kCancelled);  // 10 available
  EXPECT_TRUE(f.empty());
  // The buyer owns order 1: it is cancelled, not traded with; the IOC remainder goes.
  AddResult r = b.add(ord(4, 1, kBuy, 100, 7, TimeInForce::kIoc), f);
  EXPECT_EQ(r.status, AddStatus::kPartlyFilledCancelled);
  EXPECT_EQ(r.stp_cancelled, std::vector<uint64_t>{1});
  EXPECT_EQ(r.filled, 5);
  EXPECT_EQ(b.resting(), 0u);
  // Replace: smaller at the same price keeps the place in the queue; a new price loses it.
  b.add(ord(5, 5, kBuy, 99, 5), f);
  b.add(ord(6, 6, kBuy, 99, 5), f);
  ASSERT_TRUE(b.replace(5, 99, 2, f).has_value());
  f.clear();
  b.add(ord(7, 7, kSell, 99, 1), f);
  EXPECT_EQ(f[0].maker, 5u);
  ASSERT_TRUE(b.replace(5, 98, 1, f).has_value());
  f.clear();
  b.add(ord(8, 8, kSell, 98, 1), f);
  EXPECT_EQ(f[0].maker, 6u);
  EXPECT_TRUE(b.cancel(6));
  EXPECT_FALSE(b.cancel(6));
  EXPECT_FALSE(b.replace(6, 99, 1, f).has_value());
  EXPECT_EQ(b.add(ord(5, 9, kBuy, 97, 1), f).status, AddStatus::kRejected);  // id in use
  EXPECT_EQ(b.add(ord(9, 9, kBuy, 0, 1), f).status, AddStatus::kRejected);
  EXPECT_EQ(b.add(ord(10, 9, kBuy, 97, -1), f).status, AddStatus::kRejected);
}

// A random mix of the kinds of orders a market sees, over few price levels so they trade often.
TEST(OrderBook, MatchesTheReferenceBookOnRandomSequences) {
  for (uint32_t seed : {1u, 2u, 3u, 42u, 2026u}) {
    std::mt19937_64 rng(seed);
    OrderBook fast;
    NaiveBook ref;
    std::vector<uint64_t> ids;
    uint64_t next_id = 1;
    int64_t added = 0, traded = 0, cancelled = 0;
    for (int step = 0; step < 4000; ++step) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step));
      std::vector<MarketFill> ff, rf;
      const int kind = static_cast<int>(rng() % 10);
      if (kind < 6 || ids.empty()) {
        const TimeInForce tif = kind == 0 ? TimeInForce::kIoc : kind == 1 ? TimeInForce::kFok : TimeInForce::kGtc;
        MarketOrder o = ord(next_id++, 1 + rng() % 4, rng() % 2 ? kBuy : kSell, 95 + static_cast<int64_t>(rng() % 11),
                            1 + static_cast<int64_t>(rng() % 12), tif);
        const AddResult a = fast.add(o, ff), b = ref.add(o, rf);
        ASSERT_EQ(static_cast<int>(a.status), static_cast<int>(b.status));
        ASSERT_EQ(a.filled, b.filled);
        ASSERT_EQ(a.rested, b.rested);
        ASSERT_EQ(a.stp_cancelled, b.stp_cancelled);
        added += o.qty;
        for (uint64_t id : a.stp_cancelled) (void)id;
        if (a.rested > 0) ids.push_back(o.id);
      } else if (kind < 8) {
        const uint64_t id = ids[rng() % ids.size()];
        const MarketOrder* before = fast.find(id);
        const int64_t left = before ? before->qty : 0;
        const bool a = fast.cancel(id), b = ref.cancel(id);
        ASSERT_EQ(a, b);
        if (a) cancelled += left;
      } else {
        const uint64_t id = ids[rng() % ids.size()];
        const int64_t price = 95 + static_cast<int64_t>(rng() % 11), qty = 1 + static_cast<int64_t>(rng() % 12);
        auto a = fast.replace(id, price, qty, ff);
        auto b = ref.replace(id, price, qty, rf);
        ASSERT_EQ(a.has_value(), b.has_value());
        if (a) {
          ASSERT_EQ(static_cast<int>(a->status), static_cast<int>(b->status));
          ASSERT_EQ(a->filled, b->filled);
          ASSERT_EQ(a->stp_cancelled, b->stp_cancelled);
        }
      }
      ASSERT_EQ(ff.size(), rf.size());
      for (size_t i = 0; i < ff.size(); ++i) {
        ASSERT_EQ(ff[i].maker, rf[i].maker);
        ASSERT_EQ(ff[i].taker, rf[i].taker);
        ASSERT_EQ(ff[i].price, rf[i].price);
        ASSERT_EQ(ff[i].qty, rf[i].qty);
        const MarketOrder* maker = fast.find(ff[i].maker);
        if (maker) ASSERT_NE(maker->owner, 0u);
        traded += ff[i].qty;
      }
      for (MarketSide side : {kBuy, kSell}) {
        const auto a = fast.depth(side, 100), b = ref.depth(side, 100);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
          ASSERT_EQ(a[i].price, b[i].price);
          ASSERT_EQ(a[i].qty, b[i].qty);
          ASSERT_EQ(a[i].orders, b[i].orders);
        }
      }
      if (fast.best_bid() && fast.best_ask()) ASSERT_LT(*fast.best_bid(), *fast.best_ask()) << "the book crossed";
      ASSERT_EQ(fast.resting(), ref.resting());
    }
    EXPECT_GT(traded, 1000) << "the mix should trade";
    (void)added;
    (void)cancelled;
  }
}

// Each trade is at the resting order's price, within the taker's limit, between two owners, and a
// book's GPU-hours are what was added less what traded (twice: both sides) and what was cancelled.
TEST(OrderBook, TradesRespectLimitsAndConserveQuantity) {
  std::mt19937_64 rng(7);
  OrderBook b;
  std::map<uint64_t, MarketOrder> placed;
  int64_t in = 0, out = 0;
  auto resting_total = [&] {
    int64_t n = 0;
    for (MarketSide side : {kBuy, kSell})
      for (const BookLevel& l : b.depth(side, 1000)) n += l.qty;
    return n;
  };
  for (uint64_t id = 1; id <= 4000; ++id) {
    MarketOrder o = ord(id, 1 + rng() % 6, rng() % 2 ? kBuy : kSell, 90 + static_cast<int64_t>(rng() % 21),
                        1 + static_cast<int64_t>(rng() % 20), rng() % 5 == 0 ? TimeInForce::kIoc : TimeInForce::kGtc);
    std::map<uint64_t, int64_t> before;
    for (const auto& [rid, r] : placed)
      if (const MarketOrder* m = b.find(rid)) before[rid] = m->qty;
    std::vector<MarketFill> f;
    const AddResult r = b.add(o, f);
    placed[id] = o;
    in += o.qty;
    for (const MarketFill& x : f) {
      const MarketOrder& maker = placed.at(x.maker);
      ASSERT_NE(maker.owner, o.owner);
      ASSERT_EQ(x.price, maker.price);
      ASSERT_TRUE(o.side == kBuy ? x.price <= o.price : x.price >= o.price);
      out += 2 * x.qty;
    }
    out += o.qty - r.filled - r.rested;  // IOC remainder
    for (uint64_t c : r.stp_cancelled) out += before.at(c);
    ASSERT_EQ(in - out, resting_total()) << "at order " << id;
  }
}

}  // namespace
}  // namespace gpurent
