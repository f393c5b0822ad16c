// Benchmark: acknowledged single-object writes per second through Store::write (one transaction
// per write, as every API write is), with synchronous=FULL (the server's default: durable on
// power loss) and NORMAL (durable on a process crash), against a baseline in the same run: the
// same rows inserted with the raw sqlite3 C API, one autocommit INSERT each, same pragmas.
// Usage: store_writes [N]   (default 2000 writes per configuration)
#include <sqlite3.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "bench_records.h"
#include "store/store.h"

namespace {

using gpurent::Record;
using gpurent::StoreTx;
using Clock = std::chrono::steady_clock;

std::string temp_dir() {
  char tmpl[] = "/tmp/gpurent-bench-XXXXXX";
  return mkdtemp(tmpl);
}

nlohmann::json body(int i) { return gpurent::bench::job_body(i); }

double store_rate(bool full, int n) {
  std::string dir = temp_dir();
  auto store = gpurent::open_sqlite_store({dir + "/bench.db", full, 5000});
  if (!store) {
    std::fprintf(stderr, "open: %s\n", store.error().message.c_str());
    std::exit(1);
  }
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    Record r;
    r.kind = "jobs";
    char id[32];
    std::snprintf(id, sizeof id, "job_%016x", i);
    r.id = id;
    r.name = "job-" + std::to_string(i);
    r.tenant_id = "ten_0000000000000001";
    r.state = "pending";
    r.created_at = r.updated_at = 1;
    r.body = body(i);
    auto s = (*store)->write([&](StoreTx& tx) { return tx.insert(r); });
    if (!s) {
      std::fprintf(stderr, "write: %s\n", s.error().message.c_str());
      std::exit(1);
    }
  }
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  std::filesystem::remove_all(dir);
  return n / secs;
}

double raw_rate(bool full, int n) {
  std::string dir = temp_dir();
  sqlite3* db = nullptr;
  sqlite3_open((dir + "/raw.db").c_str(), &db);
  sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
  sqlite3_exec(db, full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL", nullptr, nullptr, nullptr);
  sqlite3_exec(db, "CREATE TABLE t(kind TEXT, id TEXT, name TEXT, tenant_id TEXT, body TEXT, PRIMARY KEY(kind,id))",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "INSERT INTO t VALUES('jobs', ?1, ?2, 'ten_1', ?3)", -1, &st, nullptr);
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    std::string id = "job_" + std::to_string(i), name = "job-" + std::to_string(i), b = body(i).dump();
    sqlite3_bind_text(st, 1, id.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, name.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, b.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(st) != SQLITE_DONE) {
      std::fprintf(stderr, "raw insert failed: %s\n", sqlite3_errmsg(db));
      std::exit(1);
    }
    sqlite3_reset(st);
  }
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  sqlite3_finalize(st);
  sqlite3_close(db);
  std::filesystem::remove_all(dir);
  return n / secs;
}

}  // namespace

int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (n <= 0) {
    std::fprintf(stderr, "usage: store_writes [N>0]\n");
    return 2;
  }
  double normal = store_rate(false, n), raw_normal = raw_rate(false, n);
  std::printf("synchronous=NORMAL: store %.0f writes/s, raw sqlite3 %.0f writes/s (%d writes each)\n", normal,
              raw_normal, n);
  double full = store_rate(true, n), raw_full = raw_rate(true, n);
  std::printf("synchronous=FULL:   store %.0f writes/s, raw sqlite3 %.0f writes/s (%d writes each)\n", full, raw_full,
              n);
  std::printf("store_writes: %.0f writes/s (baseline: %.0f writes/s)\n", full, raw_full);
  return 0;
}
