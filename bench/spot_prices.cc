// Benchmark: what a long spot-price history costs the writer. Every spot trade of the market
// records a spot price, and the scheduler reads the price in force of every offer at each tick;
// each new spot price checks that it starts after the offer's latest. One SQLite store (WAL,
// synchronous=FULL, the server's default) holding N prices spread over 10 offers, in the same run:
//  * the tick's read, spot_prices_in_force (services/spot_timeline.h): one timeline record per
//    offer, against the baseline, the walk it replaced (every price decoded: what the same
//    function does before the timelines are backfilled);
//  * a new price's "latest" check, spot_timeline of one offer: its record, against the walk of
//    that offer's N / 10 prices.
// Usage: spot_prices [N]   (default 100000 prices)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_records.h"
#include "bench_timing.h"
#include "server/services/spot_timeline.h"
#include "store/store.h"

namespace {

using gpurent::Record;
using gpurent::Status;
using gpurent::StoreTx;
using gpurent::bench::die;
using gpurent::bench::median_ms;

constexpr int kOffers = 10;
constexpr gpurent::TimeMs kMinute = 60'000;

std::string offer_id(int o) { return "off_00000000000000" + std::to_string(10 + o); }

// Price i as the spot-prices create stores it: offer i % 10, a minute after the offer's last.
Record price(int i) {
  const std::string offer = offer_id(i % kOffers);
  Record r = gpurent::bench::numbered_record("spot-prices", "spp", i, "", "", offer,
                                             {{"offer_id", offer},
                                              {"price", std::to_string(1 + i % 3) + ".25"},
                                              {"currency", "USD"},
                                              {"from", gpurent::format_rfc3339((i / kOffers + 1) * kMinute)}});
  return r;
}

// The median time of `reps` runs of f inside a write transaction (the control loop's).
template <class F>
double in_write_ms(gpurent::Store& store, int reps, F&& f) {
  return median_ms(reps, [&] {
    if (auto s = store.write([&](StoreTx& tx) -> Status { return f(tx); }); !s) die("read", s.error());
  });
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  if (n < kOffers) {
    std::fprintf(stderr, "usage: spot_prices [N >= %d]\n", kOffers);
    return 2;
  }
  const std::string dir = std::filesystem::temp_directory_path() / ("gpurent_bench_spot_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto opened = gpurent::open_sqlite_store({dir + "/spot.db", true, 5000});
  if (!opened) die("open", opened.error());
  gpurent::Store& store = **opened;
  if (auto s = store.write([&](StoreTx& tx) -> Status {
        for (int i = 0; i < n; ++i)
          if (auto st = tx.insert(price(i)); !st) return st;
        return gpurent::ok_status();
      });
      !s)
    die("fill", s.error());
  const gpurent::TimeMs now = (n / kOffers + 1) * kMinute;  // every price in force by now
  size_t offers_seen = 0;
  auto in_force = [&](StoreTx& tx) -> Status {
    auto m = gpurent::spot_prices_in_force(tx, now);
    if (!m) return m.error();
    offers_seen = m->size();
    return gpurent::ok_status();
  };
  auto latest = [&](StoreTx& tx) -> Status {
    auto line = gpurent::spot_timeline(tx, offer_id(3));
    if (!line) return line.error();
    return line->empty() ? Status(gpurent::Error::make(gpurent::Code::kInternal, "no price")) : gpurent::ok_status();
  };
  const double walk_tick = in_write_ms(store, 5, in_force);
  const double walk_latest = in_write_ms(store, 5, latest);
  if (offers_seen != kOffers) std::fprintf(stderr, "walk saw %zu offers\n", offers_seen);
  if (auto s = store.write([&](StoreTx& tx) { return gpurent::backfill_spot_timelines(tx, now); }); !s)
    die("backfill", s.error());
  const double tick = in_write_ms(store, 51, in_force);
  const double latest_ms = in_write_ms(store, 51, latest);
  if (offers_seen != kOffers) std::fprintf(stderr, "timelines saw %zu offers\n", offers_seen);
  std::filesystem::remove_all(dir);
  std::printf(
      "spot_prices: %d prices of %d offers, tick read %.3f ms, latest check %.3f ms "
      "(baseline: walks %.1f ms and %.1f ms)\n",
      n, kOffers, tick, latest_ms, walk_tick, walk_latest);
  return 0;
}
