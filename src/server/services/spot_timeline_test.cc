// Each offer's spot timeline (services/spot_timeline.h) on a real SQLite store: the prices stored
// before it was kept are walked until noted once; then one record per offer answers the latest
// price and the one in force, holding only what can still be in force.
#include "server/services/spot_timeline.h"

#include <gtest/gtest.h>

#include "server/services/services_test_util.h"

namespace gpurent {
namespace {

constexpr TimeMs kHour = 3'600'000;

class SpotTimeline : public StoreFixture {
 protected:
  // A spot price as the spot-prices create stores it (the offer's id in the state column).
  void put_price(const std::string& id, const std::string& offer, TimeMs from, const char* price) {
    Record r;
    r.kind = "spot-prices";
    r.id = id;
    r.state = offer;
    r.body = {{"offer_id", offer}, {"price", price}, {"currency", "USD"}, {"from", format_rfc3339(from)}};
    put(r);
  }
  template <class T, class F>
  T in_tx(F f) {
    T out{};
    EXPECT_TRUE(store_
                    ->write([&](StoreTx& tx) -> Status {
                      auto r = f(tx);
                      if (!r) return r.error();
                      out = std::move(*r);
                      return ok_status();
                    })
                    .ok());
    return out;
  }
  std::vector<SpotPoint> line(const std::string& offer) {
    return in_tx<std::vector<SpotPoint>>([&](StoreTx& tx) { return spot_timeline(tx, offer); });
  }
  std::map<std::string, int64_t> in_force(TimeMs now) {
    return in_tx<std::map<std::string, int64_t>>([&](StoreTx& tx) { return spot_prices_in_force(tx, now); });
  }
  int64_t timelines() { return store_->count("spot-timelines", {}).value(); }
};

TEST_F(SpotTimeline, StoredPricesAreWalkedUntilNotedOnceThenOneRecordAnswers) {
  put_price("spp_1", "off_a", 1 * kHour, "1.00");
  put_price("spp_2", "off_a", 2 * kHour, "2.00");
  put_price("spp_3", "off_a", 5 * kHour, "5.00");
  put_price("spp_4", "off_b", 1 * kHour, "0.50");
  // Not noted yet: the walk, newest first.
  EXPECT_EQ(line("off_a"),
            (std::vector<SpotPoint>{{5 * kHour, 5'000'000}, {2 * kHour, 2'000'000}, {1 * kHour, 1'000'000}}));
  EXPECT_EQ(in_force(3 * kHour), (std::map<std::string, int64_t>{{"off_a", 2'000'000}, {"off_b", 500'000}}));
  EXPECT_TRUE(in_force(0).empty());
  // Noted at 3 h: off_a keeps the price still to come and the one in force; once only.
  ASSERT_TRUE(store_->write([](StoreTx& tx) { return backfill_spot_timelines(tx, 3 * kHour); }).ok());
  EXPECT_EQ(timelines(), 3);  // two offers and the marker
  ASSERT_TRUE(store_->write([](StoreTx& tx) { return backfill_spot_timelines(tx, 4 * kHour); }).ok());
  EXPECT_EQ(timelines(), 3);
  EXPECT_EQ(line("off_a"), (std::vector<SpotPoint>{{5 * kHour, 5'000'000}, {2 * kHour, 2'000'000}}));
  EXPECT_EQ(in_force(3 * kHour), (std::map<std::string, int64_t>{{"off_a", 2'000'000}, {"off_b", 500'000}}));
  EXPECT_EQ(in_force(6 * kHour).at("off_a"), 5'000'000) << "the waiting price takes effect";
  // The records answer, not the prices: one stored now without its timeline is not seen.
  put_price("spp_5", "off_b", 4 * kHour, "0.75");
  EXPECT_EQ(in_force(6 * kHour).at("off_b"), 500'000);
  EXPECT_TRUE(line("off_c").empty()) << "an offer with no price yet";
}

TEST_F(SpotTimeline, ANewPriceKeepsOnlyWhatCanStillBeInForce) {
  ASSERT_TRUE(store_->write([](StoreTx& tx) { return backfill_spot_timelines(tx, 0); }).ok());
  auto note = [&](TimeMs from, int64_t price, TimeMs now) {
    ASSERT_TRUE(store_->write([&](StoreTx& tx) { return note_spot_price(tx, "off_a", {from, price}, now); }).ok());
  };
  note(1 * kHour, 10, 1 * kHour);
  note(3 * kHour, 30, 2 * kHour);  // dated in the future
  note(4 * kHour, 40, 2 * kHour);
  EXPECT_EQ(line("off_a"), (std::vector<SpotPoint>{{4 * kHour, 40}, {3 * kHour, 30}, {1 * kHour, 10}}));
  EXPECT_EQ(in_force(2 * kHour).at("off_a"), 10);
  EXPECT_EQ(in_force(3 * kHour).at("off_a"), 30);
  note(5 * kHour, 50, 5 * kHour);  // at 5 h nothing older than this one can be in force again
  EXPECT_EQ(line("off_a"), (std::vector<SpotPoint>{{5 * kHour, 50}}));
  EXPECT_EQ(in_force(5 * kHour).at("off_a"), 50);
  EXPECT_EQ(timelines(), 2);  // the offer's and the marker
}

}  // namespace
}  // namespace gpurent
