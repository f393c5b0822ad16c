// The order book against the reference book (naive_book.h): after any sequence of adds, cancels
// and replaces both give the same answers, trades and depth; the book never crosses; every trade
// is at the resting order's price, within the incoming order's limit, between different owners;
// and GPU-hours are conserved. Plus the rules on small hand-made books.
#include "market/order_book.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "market/naive_book.h"

namespace gpurent {
namespace {

MarketOrder ord(uint64_t id, uint64_t owner, MarketSide side, int64_t price, int64_t qty, TimeInForce tif = TimeInForce::kGtc,
                bool aon = false) {
  return {id, owner, side, price, qty, tif, aon};
}
constexpr auto kBuy = MarketSide::kBuy;
constexpr auto kSell = MarketSide::kSell;

// No trade is left undone (the third statement of the rules, written apart from both books): no
// resting order could get anything walking the other side in priority — its owner's orders and AON
// orders larger than it still needs passed by — and an AON order not all of its quantity.
void expect_nothing_left_to_trade(const std::vector<MarketOrder>& resting) {
  for (const MarketOrder& o : resting) {
    std::vector<MarketOrder> other;
    for (const MarketOrder& x : resting)
      if (x.side != o.side && (o.side == kBuy ? x.price <= o.price : x.price >= o.price)) other.push_back(x);
    std::sort(other.begin(), other.end(), [](const MarketOrder& a, const MarketOrder& b) {
      return a.price != b.price ? (a.side == kSell ? a.price < b.price : a.price > b.price) : a.seq < b.seq;
    });
    int64_t need = o.qty;
    for (const MarketOrder& x : other) {
      if (x.owner == o.owner || (x.all_or_none && x.qty > need)) continue;
      need -= std::min(need, x.qty);
      if (need == 0) break;
    }
    const int64_t got = o.qty - need;
    if (o.all_or_none)
      ASSERT_LT(got, o.qty) << "AON order " << o.id << " could fill whole and rests";
    else
      ASSERT_EQ(got, 0) << "order " << o.id << " could trade and rests";
  }
}

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
  EXPECT_TRUE(b.cancel(6, f));
  EXPECT_FALSE(b.cancel(6, f));
  EXPECT_FALSE(b.replace(6, 99, 1, f).has_value());
  EXPECT_EQ(b.add(ord(5, 9, kBuy, 97, 1), f).status, AddStatus::kRejected);  // id in use
  EXPECT_EQ(b.add(ord(9, 9, kBuy, 0, 1), f).status, AddStatus::kRejected);
  EXPECT_EQ(b.add(ord(10, 9, kBuy, 97, -1), f).status, AddStatus::kRejected);
}

TEST(OrderBook, AllOrNoneTradesWholeOrNotAtAll) {
  OrderBook b;
  std::vector<MarketFill> f;
  // A resting AON sell of 8 is passed by (kept in place) by a buy of 5: the buy rests beside it.
  EXPECT_EQ(b.add(ord(1, 1, kSell, 100, 8, TimeInForce::kGtc, true), f).status, AddStatus::kRested);
  EXPECT_EQ(b.add(ord(2, 2, kBuy, 100, 5), f).status, AddStatus::kRested);
  EXPECT_TRUE(f.empty());
  // A buy of 3 at 101 rests too; now the two buys can take all 8: the AON order trades at once, at
  // its own price (it was in the book first), best bid first.
  AddResult r = b.add(ord(3, 3, kBuy, 101, 3), f);
  EXPECT_EQ(r.status, AddStatus::kFilled);
  EXPECT_EQ(r.filled, 3);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].maker, 1u);
  EXPECT_EQ(f[0].taker, 3u);
  EXPECT_EQ(f[0].price, 100);
  EXPECT_EQ(f[0].qty, 3);
  EXPECT_EQ(f[1].maker, 1u);
  EXPECT_EQ(f[1].taker, 2u);
  EXPECT_EQ(f[1].qty, 5);
  EXPECT_EQ(b.resting(), 0u);
  // An incoming AON buy of 10 finds only 8: nothing trades, it rests whole; IOC + AON is cancelled.
  f.clear();
  b.add(ord(4, 4, kSell, 100, 4), f);
  b.add(ord(5, 5, kSell, 101, 4), f);
  EXPECT_EQ(b.add(ord(6, 6, kBuy, 102, 10, TimeInForce::kIoc, true), f).status, AddStatus::kCancelled);
  EXPECT_EQ(b.add(ord(7, 6, kBuy, 102, 10, TimeInForce::kGtc, true), f).status, AddStatus::kRested);
  EXPECT_TRUE(f.empty());
  // A sell of 2 at 102 passes the AON buy by, rests, and completes it: the older asks at their
  // prices, the new one at the AON order's.
  r = b.add(ord(8, 8, kSell, 102, 2), f);
  EXPECT_EQ(r.status, AddStatus::kFilled);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ((std::vector<int64_t>{f[0].price, f[1].price, f[2].price}), (std::vector<int64_t>{100, 101, 102}));
  EXPECT_EQ(f[2].maker, 7u);
  EXPECT_EQ(b.resting(), 0u);
  // A taker takes a resting AON order whole when it needs at least that much; a replaced AON order
  // loses its place.
  f.clear();
  b.add(ord(9, 9, kSell, 100, 3, TimeInForce::kGtc, true), f);
  b.add(ord(10, 10, kSell, 100, 2), f);
  ASSERT_TRUE(b.replace(9, 100, 3, f).has_value());
  r = b.add(ord(11, 11, kBuy, 100, 4, TimeInForce::kIoc), f);
  ASSERT_EQ(f.size(), 1u) << "the 2 first (the AON order went behind it), then 3 > 2 left: passed by";
  EXPECT_EQ(f[0].maker, 10u);
  EXPECT_EQ(r.status, AddStatus::kPartlyFilledCancelled);
  expect_nothing_left_to_trade(b.orders());
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
    std::map<uint64_t, int64_t> qty_of, got;  // an order's quantity (as placed or replaced); GPU-hours it got this call
    std::set<uint64_t> aon;
    std::map<uint64_t, MarketOrder> placed;
    int aon_filled = 0;
    for (int step = 0; step < 4000; ++step) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step));
      std::vector<MarketFill> ff, rf;
      const int kind = static_cast<int>(rng() % 10);
      if (kind < 6 || ids.empty()) {
        const TimeInForce tif = kind == 0 ? TimeInForce::kIoc : kind == 1 ? TimeInForce::kFok : TimeInForce::kGtc;
        MarketOrder o = ord(next_id++, 1 + rng() % 4, rng() % 2 ? kBuy : kSell, 95 + static_cast<int64_t>(rng() % 11),
                            1 + static_cast<int64_t>(rng() % 12), tif, rng() % 5 == 0);
        qty_of[o.id] = o.qty;
        placed[o.id] = o;
        if (o.all_or_none) aon.insert(o.id);
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
        const bool a = fast.cancel(id, ff), b = ref.cancel(id, rf);
        ASSERT_EQ(a, b);
        if (a) cancelled += left;
      } else {
        const uint64_t id = ids[rng() % ids.size()];
        const int64_t price = 95 + static_cast<int64_t>(rng() % 11), qty = 1 + static_cast<int64_t>(rng() % 12);
        if (fast.find(id)) qty_of[id] = qty, placed[id].price = price;  // a replaced AON order is a new one of qty
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
        if (maker) {
          ASSERT_NE(maker->owner, 0u);
        }
        traded += ff[i].qty;
        for (uint64_t id : {ff[i].maker, ff[i].taker}) got[id] += ff[i].qty;
        // At the price of the order in the book first, within the other's limit, between two owners.
        const MarketOrder &mk = placed.at(ff[i].maker), &tk = placed.at(ff[i].taker);
        ASSERT_EQ(ff[i].price, mk.price);
        ASSERT_NE(mk.side, tk.side);
        ASSERT_NE(mk.owner, tk.owner);
        ASSERT_TRUE(tk.side == kBuy ? ff[i].price <= tk.price : ff[i].price >= tk.price);
      }
      // An AON order trades whole, in one call: what it got now is all it had.
      for (const auto& [id, n] : got)
        if (aon.count(id)) {
          ASSERT_EQ(n, qty_of.at(id)) << "AON order " << id << " partly filled";
          ++aon_filled;
          ASSERT_EQ(fast.find(id), nullptr);
        }
      got.clear();
      for (MarketSide side : {kBuy, kSell}) {
        const auto a = fast.depth(side, 100), b = ref.depth(side, 100);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
          ASSERT_EQ(a[i].price, b[i].price);
          ASSERT_EQ(a[i].qty, b[i].qty);
          ASSERT_EQ(a[i].orders, b[i].orders);
        }
      }
      if (aon.empty() && fast.best_bid() && fast.best_ask()) {
        ASSERT_LT(*fast.best_bid(), *fast.best_ask()) << "the book crossed";
      }
      ASSERT_EQ(fast.resting(), ref.resting());
      const auto fo = fast.orders(), ro = ref.orders();
      ASSERT_EQ(fo.size(), ro.size());
      for (size_t i = 0; i < fo.size(); ++i) {
        ASSERT_EQ(fo[i].id, ro[i].id);
        ASSERT_EQ(fo[i].qty, ro[i].qty);
        ASSERT_EQ(fo[i].seq, ro[i].seq);
      }
      expect_nothing_left_to_trade(fo);
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GT(traded, 1000) << "the mix should trade";
    EXPECT_GT(aon.size(), 400u);
    EXPECT_GT(aon_filled, 100) << "AON orders should trade, at once and after resting";
    (void)added;
    (void)cancelled;
  }
}

// Each trade is at the price of its earlier order, within the later one's limit, between two owners,
// and a book's GPU-hours are what was added less what traded (twice: both sides) and what was
// cancelled — all-or-none orders (one in five) included.
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
                        1 + static_cast<int64_t>(rng() % 20), rng() % 5 == 0 ? TimeInForce::kIoc : TimeInForce::kGtc,
                        rng() % 5 == 0);
    std::map<uint64_t, int64_t> before;
    for (const auto& [rid, r] : placed)
      if (const MarketOrder* m = b.find(rid)) before[rid] = m->qty;
    std::vector<MarketFill> f;
    const AddResult r = b.add(o, f);
    placed[id] = o;
    in += o.qty;
    for (const MarketFill& x : f) {
      const MarketOrder& maker = placed.at(x.maker);
      const MarketOrder& taker = placed.at(x.taker);
      ASSERT_NE(maker.owner, taker.owner);
      ASSERT_NE(maker.side, taker.side);
      ASSERT_LT(maker.id, taker.id) << "the maker entered the book first";
      ASSERT_EQ(x.price, maker.price);
      ASSERT_TRUE(taker.side == kBuy ? x.price <= taker.price : x.price >= taker.price);
      out += 2 * x.qty;
    }
    out += o.qty - r.filled - r.rested;  // IOC remainder
    for (uint64_t c : r.stp_cancelled) out += before.at(c);
    ASSERT_EQ(in - out, resting_total()) << "at order " << id;
  }
}

}  // namespace
}  // namespace gpurent
