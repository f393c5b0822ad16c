// Benchmark: reading usage series from the SQLite store, what every invoice, cost-firewall pass,
// job cost and dashboard read does per card (Store::gpu_usage) and per job (Store::job_usage), on a
// database the demo left (`gpurent serve --demo --demo-days 2` writes one), its first half of
// samples rolled up into minutes first. Measured: every card's and every job's whole series through
// the store (two queries in primary-key order, merged).
// Baseline in the same run: the one UNION ALL query ordered by time that the store ran before
// 2026-12-07 (SQLite sorted the raw samples in a temporary B-tree). Both must give the same points,
// or the benchmark fails. It rolls up DB's older half: run it on a copy of a stopped server's
// database.
// Usage: usage_series DB [ROUNDS]  (ROUNDS default 3)
#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "demo_db.h"
#include "store/sqlite_db.h"
#include "store/store_rows.h"

using namespace gpurent;
using namespace gpurent::bench;

namespace {

// The store's series queries before 2026-12-07.
const std::string kOldGpuSeries =
    "SELECT minute AS t, 1 AS rolled, samples, samples, util_sum, util_max, mem_n, mem_sum, mem_max, power_n,"
    " power_sum, power_max, clock_n, clock_sum, clock_max, gr_n, gr_sum, gr_max FROM usage_gpu_minutes"
    " WHERE node_id = ?1 AND gpu = ?2 AND minute >= ?3 AND minute < ?4"
    " UNION ALL SELECT at, 0, 1, 1, utilization_pct, utilization_pct,"
    " memory_used_mib IS NOT NULL, coalesce(memory_used_mib, 0), coalesce(memory_used_mib, 0),"
    " power_mw IS NOT NULL, coalesce(power_mw, 0), coalesce(power_mw, 0),"
    " sm_clock_mhz IS NOT NULL, coalesce(sm_clock_mhz, 0), coalesce(sm_clock_mhz, 0),"
    " gr_engine_active_pct IS NOT NULL, coalesce(gr_engine_active_pct, 0), coalesce(gr_engine_active_pct, 0)"
    " FROM usage_gpu_samples WHERE node_id = ?1 AND gpu = ?2 AND at >= ?3 AND at < ?4"
    " ORDER BY 1, 2 DESC LIMIT ?5";
const std::string kOldJobSeries =
    "SELECT minute AS t, 1 AS rolled, samples, storage_io_bytes, egress_bytes, input_tokens, output_tokens, requests"
    " FROM usage_job_minutes WHERE job_id = ?1 AND minute >= ?2 AND minute < ?3"
    " UNION ALL SELECT at, 0, 1, storage_io_bytes, egress_bytes, input_tokens, output_tokens, requests"
    " FROM usage_job_samples WHERE job_id = ?1 AND at >= ?2 AND at < ?3 ORDER BY 1, 2 DESC LIMIT ?4";
constexpr int kLimit = 1'000'000;
constexpr TimeMs kFrom = 0, kTo = 4'102'444'800'000;  // 2100-01-01: every point

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: usage_series DB [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  if (rounds < 1) return std::fprintf(stderr, "ROUNDS must be at least 1\n"), 2;
  const DemoDb demo = open_demo_db(argv[1]);
  Db db = must(Db::open(argv[1], SQLITE_OPEN_READONLY, 5000), "opening " + std::string(argv[1]));

  // Half the samples rolled up into minutes, as a month's history is (raw samples are kept 168 h),
  // so both tables are read and merged.
  TimeMs middle = 0;
  {  // the read statement done before the write
    auto span = must(db.query("SELECT min(at), max(at) FROM usage_gpu_samples"), "the samples' span");
    if (!must(span.step("the samples' span"), "the samples' span") || span.is_null(0))
      return std::fprintf(stderr, "%s holds no raw GPU samples\n", argv[1]), 1;
    middle = span.integer(0) + (span.integer(1) - span.integer(0)) / 2;
  }
  {
    Status rolled = demo.store->write([&](StoreTx& tx) -> Status {
      auto r = tx.roll_up_usage(middle, 0);
      return r ? ok_status() : Status(r.error());
    });
    if (!rolled) die("rolling up", rolled.error());
  }
  auto cards_q = must(db.query("SELECT node_id, gpu FROM usage_gpus ORDER BY node_id, gpu"), "cards");
  const auto cards =
      must(cards_q.collect("listing cards", [](Query& r) { return std::make_pair(r.text(0), r.integer(1)); }), "cards");
  auto jobs_q = must(db.query("SELECT job_id FROM usage_jobs ORDER BY job_id"), "jobs");
  const auto jobs = must(jobs_q.collect("listing jobs", [](Query& r) { return r.text(0); }), "jobs");

  double now_s = 0, before_s = 0;
  size_t points = 0;
  for (int r = -1; r < rounds; ++r) {  // round -1 warms the page cache and is not counted
    std::vector<std::vector<GpuUsagePoint>> gpu_now, gpu_before;
    std::vector<std::vector<JobUsagePoint>> job_now, job_before;
    auto read_now = [&] {
      const auto t0 = Wall::now();
      for (const auto& [node, gpu] : cards)
        gpu_now.push_back(must(demo.store->gpu_usage(node, gpu, kFrom, kTo, kLimit), "gpu_usage " + node));
      for (const auto& job : jobs)
        job_now.push_back(must(demo.store->job_usage(job, kFrom, kTo, kLimit), "job_usage " + job));
      if (r >= 0) now_s += since(t0);
    };
    auto read_before = [&] {
      const auto t0 = Wall::now();
      for (const auto& [node, gpu] : cards) {
        auto q = must(db.query(kOldGpuSeries), "old GPU series");
        q.bind(1, node).bind(2, gpu).bind(3, kFrom).bind(4, kTo).bind(5, int64_t{kLimit});
        gpu_before.push_back(must(q.collect("old GPU series", [](Query& row) { return read_gpu_point(row); }), "old"));
      }
      for (const auto& job : jobs) {
        auto q = must(db.query(kOldJobSeries), "old job series");
        q.bind(1, job).bind(2, kFrom).bind(3, kTo).bind(4, int64_t{kLimit});
        job_before.push_back(must(q.collect("old job series", [](Query& row) { return read_job_point(row); }), "old"));
      }
      if (r >= 0) before_s += since(t0);
    };
    if (r % 2 == 0)
      read_now(), read_before();
    else
      read_before(), read_now();
    if (gpu_now != gpu_before || job_now != job_before) {
      std::fprintf(stderr, "usage_series: the two reads differ\n");
      return 1;
    }
    if (r >= 0)
      for (const auto& v : gpu_now) points += v.size();
  }
  size_t minutes = 0;
  {
    auto q = must(db.query("SELECT count(*) FROM usage_gpu_minutes"), "minutes");
    if (must(q.step("counting minutes"), "counting minutes")) minutes = static_cast<size_t>(q.integer(0));
  }
  std::printf("%zu cards, %zu jobs, %zu GPU points per round (%zu of them rolled-up minutes); %d rounds\n",
              cards.size(), jobs.size(), points / static_cast<size_t>(rounds), minutes, rounds);
  std::printf("usage_series: %.1f ms per read of every series (baseline: %.1f ms per read of every series)\n",
              1000 * now_s / rounds, 1000 * before_s / rounds);
  return 0;
}
