// Benchmark: how the demo's replay writes its GPU samples (src/server/demo/demo_history.cc). Takes
// the samples a demo database holds (`gpurent serve --demo --demo-days 2` writes one: every card of
// its nodes, a sample a minute while busy, every 5 minutes while idle) and writes them into a fresh
// SQLite store (the server's settings: WAL, a sync on every commit) as usage batches of MINUTES
// of samples each, one transaction per batch. Measured: batches of an hour (the replay since
// 2026-12-07). Baseline in the same run: a batch per 5-minute step (the replay before it), which
// rewrote every card's last page of samples on every commit. Both stores must hold the same rows
// (every column). Batches cover whole slots [t, t + MINUTES) (the replay's end at a step); no job
// rows or metrics (the demo writes those too, a small part).
// Reads DB only; writes its two stores beside it (DB.bench-*), removed at the end.
// Usage: usage_batches DB [MINUTES] [ROUNDS]  (MINUTES default 60, ROUNDS default 1)
#include <sqlite3.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "demo_db.h"
#include "store/sqlite_db.h"

using namespace gpurent;
using namespace gpurent::bench;

namespace {

std::optional<int64_t> opt(const Query& q, int col) {
  if (q.is_null(col)) return std::nullopt;
  return q.integer(col);
}

void remove_store(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", ".lock"}) std::filesystem::remove(path + suffix);
}

int64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : 0;
}

// Writes `rows` (sorted by time) into a fresh store at `path`, one batch per `minutes`; seconds.
double write_batches(const std::string& path, const std::vector<GpuUsageRow>& rows, int64_t minutes) {
  remove_store(path);
  auto store = must(open_sqlite_store({path, true, 5000}), path);
  const TimeMs every = minutes * kMsPerMinute;
  const auto t0 = Wall::now();
  for (size_t i = 0; i < rows.size();) {
    UsageBatchRows b;
    const TimeMs slot = rows[i].at - rows[i].at % every;
    b.idempotency_key = "bench-" + std::to_string(slot);
    b.content_sha256 = b.idempotency_key;
    b.received_at = slot;
    b.submitted_by = "bench";
    for (; i < rows.size() && rows[i].at - rows[i].at % every == slot; ++i) b.gpu.push_back(rows[i]);
    Status st = store->write([&](StoreTx& tx) -> Status {
      auto r = tx.insert_usage_batch(b);
      return r ? ok_status() : Status(r.error());
    });
    if (!st) die("writing a batch", st.error());
  }
  return since(t0);
}

// Every GPU sample `path` holds, in key order, as text (the batch that wrote it aside).
std::vector<std::string> stored_rows(const std::string& path) {
  Db db = must(Db::open(path, SQLITE_OPEN_READONLY, 5000), path);
  auto q = must(db.query("SELECT node_id || '/' || gpu || '/' || at || '/' || utilization_pct || '/' ||"
                         " coalesce(memory_used_mib, '-') || '/' || coalesce(power_mw, '-') || '/' ||"
                         " coalesce(sm_clock_mhz, '-') || '/' || coalesce(gr_engine_active_pct, '-')"
                         " FROM usage_gpu_samples ORDER BY node_id, gpu, at"),
                "reading back");
  return must(q.collect("reading back", [](Query& r) { return r.text(0); }), "reading back");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: usage_batches DB [MINUTES] [ROUNDS]\n");
    return 2;
  }
  const std::string src = argv[1];
  const int64_t minutes = argc > 2 ? std::atoll(argv[2]) : 60;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 1;
  if (minutes < 1 || rounds < 1) return std::fprintf(stderr, "MINUTES and ROUNDS must be at least 1\n"), 2;

  std::vector<GpuUsageRow> rows;
  {
    Db db = must(Db::open(src, SQLITE_OPEN_READONLY, 5000), src);
    auto q = must(db.query("SELECT node_id, gpu, at, utilization_pct, memory_used_mib, power_mw, sm_clock_mhz,"
                           " gr_engine_active_pct FROM usage_gpu_samples ORDER BY at, node_id, gpu"),
                  "reading samples");
    while (must(q.step("reading samples"), "reading samples"))
      rows.push_back({q.text(0), q.integer(1), q.integer(2), q.integer(3), opt(q, 4), opt(q, 5), opt(q, 6), opt(q, 7)});
  }
  if (rows.empty()) return std::fprintf(stderr, "%s holds no GPU samples\n", src.c_str()), 1;

  const std::string measured = src + ".bench-measured", baseline = src + ".bench-baseline";
  double measured_s = 0, baseline_s = 0;
  int64_t measured_db = 0, baseline_db = 0;
  for (int r = 0; r < rounds; ++r) {
    if (r % 2 == 0) {
      measured_s += write_batches(measured, rows, minutes);
      baseline_s += write_batches(baseline, rows, 5);
    } else {
      baseline_s += write_batches(baseline, rows, 5);
      measured_s += write_batches(measured, rows, minutes);
    }
    if (stored_rows(measured) != stored_rows(baseline)) {
      std::fprintf(stderr, "usage_batches: the two stores hold different rows\n");
      return 1;
    }
    measured_db = file_bytes(measured), baseline_db = file_bytes(baseline);
  }
  remove_store(measured);
  remove_store(baseline);
  std::printf("%zu GPU samples over %.1f days; databases %.1f MB and %.1f MB; %d round(s)\n", rows.size(),
              static_cast<double>(rows.back().at - rows.front().at) / kMsPerDay, measured_db / 1e6, baseline_db / 1e6,
              rounds);
  std::printf("usage_batches: %.2f s to write them in %lld-minute batches (baseline: %.2f s in 5-minute batches)\n",
              measured_s / rounds, static_cast<long long>(minutes), baseline_s / rounds);
  return 0;
}
