// Benchmark: the two store backends side by side in one run, through the Store interface the server
// uses. SQLite (open_sqlite_store, synchronous=FULL: the server's default) on a file in /tmp, and
// PostgreSQL 15 (open_postgres_store, synchronous_commit on: its default and the store's) on a
// private cluster this process starts (store/pg_test_cluster.h: initdb in /tmp, fsync on, reached
// over its unix socket; $GPURENT_TEST_PG_URL names another server instead) and removes at exit.
// Measured, per backend:
//  (a) acknowledged writes/s: N single-object inserts through Store::write, one transaction (one
//      commit, one fsync) each, one after another from one thread, as the control loop commits an
//      API write (the body of bench/store_writes.cc);
//  (b) usage samples/s: StoreTx::insert_usage_batch, B batches of S GPU samples (default 100 x
//      1,000), one batch per Store::write, each with its own idempotency key, samples distinct in
//      (node, GPU, time) and all in one month (PostgreSQL creates that month's partition in the
//      first batch's transaction: inside the timing);
//  (c) reads/s: Store::get("jobs", id) of the jobs written in (a), ids at random, from 4 threads at
//      once for D seconds (default 3); PostgreSQL's store opened with 4 reader connections.
// Not measured: HTTP, validation and JSON of the API (bench/http_load, bench/usage_ingest,
// bench/server_reads), list/count queries, usage reads and roll-ups, writes from several writers
// (the store has one), a PostgreSQL on another machine (here every commit's round trip is a local
// socket) or tuned (shared_buffers, wal settings are initdb's defaults), and durability itself
// (tests/crash_test.cc kills servers; this only times what the stores acknowledge).
// Usage: store_backends [N] [BATCHES] [READ_SECONDS]   (default 2000 100 3)
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench_records.h"
#include "store/pg_test_cluster.h"
#include "store/store.h"

namespace {

using gpurent::Record;
using gpurent::Store;
using gpurent::StoreTx;
using Clock = std::chrono::steady_clock;

constexpr int kBatchSize = 1000;
constexpr int kReadThreads = 4;

std::string g_sqlite_dir;  // removed at exit, also after an error

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "store_backends: %s\n", what.c_str());
  std::exit(1);  // runs the static destructors: the private cluster is stopped and removed
}

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string job_id(int i) {
  char id[32];
  std::snprintf(id, sizeof id, "job_%016x", i);
  return id;
}

nlohmann::json body(int i) { return gpurent::bench::job_body(i); }

struct Figures {
  double writes_s = 0, write_ms = 0, samples_s = 0, batch_ms = 0, reads_s = 0;
  int64_t reads = 0;
};

// (a) N inserts, one Store::write each.
void writes(Store& store, int n, Figures& f) {
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    Record r;
    r.kind = "jobs";
    r.id = job_id(i);
    r.name = "job-" + std::to_string(i);
    r.tenant_id = "ten_0000000000000001";
    r.project_id = "prj_0000000000000001";
    r.state = "pending";
    r.created_at = r.updated_at = 1;
    r.body = body(i);
    if (auto s = store.write([&](StoreTx& tx) { return tx.insert(r); }); !s) die("write: " + s.error().message);
  }
  const double secs = since(t0);
  f.writes_s = n / secs;
  f.write_ms = secs * 1000 / n;
}

// (b) `batches` batches of kBatchSize GPU samples, built before the clock starts.
void usage(Store& store, int batches, Figures& f) {
  const gpurent::TimeMs base = 1793577600000LL;  // 2026-11-02T00:00:00Z: every sample in November
  std::vector<gpurent::UsageBatchRows> all(batches);
  for (int b = 0; b < batches; ++b) {
    auto& batch = all[b];
    batch.idempotency_key = "bench-" + std::to_string(b);
    batch.content_sha256 = std::string(56, '0') + job_id(b).substr(12);  // any digest, one per key
    batch.received_at = base + 3600'000LL * 24;
    batch.submitted_by = "usr_0000000000000001";
    batch.gpu.reserve(kBatchSize);
    for (int k = 0; k < kBatchSize; ++k) {
      const int64_t seq = static_cast<int64_t>(b) * kBatchSize + k;
      gpurent::GpuUsageRow row;
      row.node_id = "nod_" + std::string(15, '0') + std::to_string(seq / 8 % 10);  // 10 nodes of 8 GPUs
      row.gpu = seq % 8;
      row.at = base + (seq / 80) * 1000;  // one sample per GPU and second
      row.utilization_pct = seq % 101;
      row.memory_used_mib = 40000 + seq % 1000;
      row.power_mw = 300000 + seq % 5000;
      row.sm_clock_mhz = 1980;
      batch.gpu.push_back(std::move(row));
    }
  }
  auto t0 = Clock::now();
  for (const auto& batch : all) {
    auto s = store.write([&](StoreTx& tx) -> gpurent::Status {
      auto out = tx.insert_usage_batch(batch);
      if (!out) return out.error();
      if (out->duplicate || out->gpu_samples != kBatchSize) die("batch " + batch.idempotency_key + " not stored whole");
      return gpurent::ok_status();
    });
    if (!s) die("usage batch: " + s.error().message);
  }
  const double secs = since(t0);
  f.samples_s = static_cast<double>(batches) * kBatchSize / secs;
  f.batch_ms = secs * 1000 / batches;
}

// (c) get() by random id from kReadThreads threads for `seconds`.
void reads(Store& store, int n, double seconds, Figures& f) {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> done{0};
  std::vector<std::thread> ts;
  auto t0 = Clock::now();
  for (int t = 0; t < kReadThreads; ++t)
    ts.emplace_back([&, t] {
      std::mt19937 rng(12345 + t);
      std::uniform_int_distribution<int> pick(0, n - 1);
      int64_t mine = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        auto r = store.get("jobs", job_id(pick(rng)));
        if (!r) die("get: " + r.error().message);
        ++mine;
      }
      done += mine;
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : ts) t.join();
  f.reads = done;
  f.reads_s = static_cast<double>(done) / since(t0);
}

Figures run(Store& store, int n, int batches, double read_s) {
  Figures f;
  writes(store, n, f);
  usage(store, batches, f);
  reads(store, n, read_s, f);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int batches = argc > 2 ? std::atoi(argv[2]) : 100;
  const double read_s = argc > 3 ? std::atof(argv[3]) : 3;
  if (n <= 0 || batches <= 0 || read_s <= 0) die("usage: store_backends [N>0] [BATCHES>0] [READ_SECONDS>0]");
  // Ctrl-C and SIGTERM end the run through exit(), so that the private cluster is removed.
  signal(SIGINT, [](int) { std::exit(130); });
  signal(SIGTERM, [](int) { std::exit(143); });

  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  char tmpl[] = "/tmp/gpurent-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) die("mkdtemp failed");
  const std::string dir = g_sqlite_dir = tmpl;
  std::atexit([] {
    std::error_code ec;
    if (!g_sqlite_dir.empty()) std::filesystem::remove_all(g_sqlite_dir, ec);
  });
  Figures lite;
  {
    auto store = gpurent::open_sqlite_store({dir + "/bench.db", /*synchronous_full=*/true, 5000});
    if (!store) die("open SQLite: " + store.error().message);
    lite = run(**store, n, batches, read_s);
  }
  std::filesystem::remove_all(dir);

  auto t0 = Clock::now();
  auto db = gpurent::PgTestDatabase::create();
  if (!db) die("PostgreSQL: " + db.error().message);
  const double pg_setup_s = since(t0);
  Figures pg;
  {
    auto store = gpurent::open_postgres_store({(*db)->url(), kReadThreads, 10});
    if (!store) die("open PostgreSQL: " + store.error().message);
    pg = run(**store, n, batches, read_s);
  }

  std::printf("store_backends: %d writes, %d usage batches of %d GPU samples, %d reader threads for %.1f s each\n", n,
              batches, kBatchSize, kReadThreads, read_s);
  std::printf("(PostgreSQL cluster and database ready in %.1f s, not timed)\n", pg_setup_s);
  std::printf("%-34s %14s %14s\n", "", "SQLite FULL", "PostgreSQL");
  std::printf("%-34s %14.0f %14.0f\n", "acknowledged writes/s", lite.writes_s, pg.writes_s);
  std::printf("%-34s %14.2f %14.2f\n", "  ms per write", lite.write_ms, pg.write_ms);
  std::printf("%-34s %14.0f %14.0f\n", "usage samples/s (batches of 1000)", lite.samples_s, pg.samples_s);
  std::printf("%-34s %14.1f %14.1f\n", "  ms per batch", lite.batch_ms, pg.batch_ms);
  std::printf("%-34s %14.0f %14.0f\n", "get() by id/s, 4 threads", lite.reads_s, pg.reads_s);
  std::printf("store_backends: %.0f writes/s on PostgreSQL (baseline: %.0f writes/s on SQLite)\n", pg.writes_s,
              lite.writes_s);
  db->reset();  // drop the database before the cluster goes
  return 0;
}
