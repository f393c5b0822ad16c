// Benchmark: what a tenant's many artifacts cost the others. Each artifact create checks the
// tenant's storage quota inside the single writer, and each delete asks whether any other record
// still names the content. One SQLite store (WAL, synchronous=FULL, the server's default) holding
// N artifacts of one tenant, in the same run:
//  * the quota read as the server does it (StoreTx::tenant_stored_bytes: the row the object writes
//    keep, schema version 7) against the baseline, the walk it replaced (every artifact and image
//    of the tenant read and their size_bytes summed, in the write);
//  * "does another record name this digest" through the "sha256" filter (its index) against the
//    baseline walk of every artifact and image;
//  * what keeping them costs a write: single-object writes (one commit each) of jobs (which
//    neither touches) and of artifacts (which add to the tenant's row and to the digest index),
//    and of artifacts into a second store whose digest index was dropped (raw SQL).
// Usage: artifact_quota [N] [WRITES]   (default 100000 artifacts, 4000 writes per configuration)
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "bench_records.h"
#include "bench_timing.h"
#include "store/store.h"

namespace {

using gpurent::Record;
using gpurent::Status;
using gpurent::StoreTx;
using Clock = gpurent::bench::BenchClock;
using gpurent::bench::die;
using gpurent::bench::median_ms;
using gpurent::bench::ms_since;

constexpr const char* kTenant = "ten_00000000000000aa";

std::string digest(int i) {
  char hex[65];
  std::snprintf(hex, sizeof hex, "%064x", i);
  return hex;
}

Record artifact(int i, const std::string& tenant) {
  Record r = gpurent::bench::numbered_record("artifacts", "art", i, "prj_00000000000000aa/model-" + std::to_string(i),
                                             tenant, "ready",
                                             {{"name", "model-" + std::to_string(i)},
                                              {"kind", "model"},
                                              {"sha256", digest(i)},
                                              {"size_bytes", 1000 + i % 7},
                                              {"received_bytes", 1000 + i % 7},
                                              {"description", "a checkpoint of the bench's tenant"}});
  r.project_id = "prj_00000000000000aa";
  return r;
}

Record job(int i) {
  return gpurent::bench::numbered_record("jobs", "job", i, "job-" + std::to_string(i), kTenant, "pending",
                                         gpurent::bench::job_body(i));
}

std::unique_ptr<gpurent::Store> open(const std::string& path) {
  auto s = gpurent::open_sqlite_store({path, true, 5000});
  if (!s) die("open " + path, s.error());
  return std::move(s).value();
}

// The walk the quota check did before schema version 7.
int64_t walked_bytes(StoreTx& tx, const std::string& tenant) {
  int64_t sum = 0;
  for (const char* kind : {"artifacts", "images"}) {
    auto all = gpurent::list_all(tx, kind, {{"tenant_id", tenant}});
    if (!all) die("walk", all.error());
    for (const Record& r : *all)
      if (r.body.contains("size_bytes") && r.body["size_bytes"].is_number_integer())
        sum += r.body["size_bytes"].get<int64_t>();
  }
  return sum;
}

// Writes per second, one commit each: `n` records made by make(i).
template <class Make>
double write_rate(gpurent::Store& store, int first, int n, Make&& make) {
  const auto t0 = Clock::now();
  for (int i = first; i < first + n; ++i) {
    Record r = make(i);
    if (auto s = store.write([&](StoreTx& tx) { return tx.insert(r); }); !s) die("write", s.error());
  }
  return n / (ms_since(t0) / 1000.0);
}

void drop_digest_index(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) std::exit(1);
  char* err = nullptr;
  if (sqlite3_exec(db, "DROP INDEX objects_by_sha256", nullptr, nullptr, &err) != SQLITE_OK) {
    std::fprintf(stderr, "dropping the digest index: %s\n", err ? err : "?");
    std::exit(1);
  }
  sqlite3_close(db);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::max(1, std::atoi(argv[1])) : 100'000;
  const int writes = argc > 2 ? std::max(1, std::atoi(argv[2])) : 4000;
  char tmpl[] = "/tmp/gpurent-bench-quota-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  const std::string dir = tmpl;

  auto store = open(dir + "/store.db");
  const auto fill0 = Clock::now();
  for (int at = 0; at < n; at += 1000) {
    Status s = store->write([&](StoreTx& tx) -> Status {
      for (int i = at; i < std::min(n, at + 1000); ++i)
        if (auto w = tx.insert(artifact(i, kTenant)); !w) return w;
      return gpurent::ok_status();
    });
    if (!s) die("fill", s.error());
  }
  std::printf("filled %d artifacts of one tenant in %.1f s\n", n, ms_since(fill0) / 1000);

  int64_t kept = -1, walked = -2;
  const double read_ms = median_ms(9, [&] {
    (void)store->write([&](StoreTx& tx) -> Status {
      auto b = tx.tenant_stored_bytes(kTenant);
      if (!b) die("read", b.error());
      kept = *b;
      return gpurent::ok_status();
    });
  });
  const double walk_ms = median_ms(3, [&] {
    (void)store->write([&](StoreTx& tx) -> Status {
      walked = walked_bytes(tx, kTenant);
      return gpurent::ok_status();
    });
  });
  if (kept != walked) {
    std::fprintf(stderr, "the kept total %lld differs from the walk's %lld\n", static_cast<long long>(kept),
                 static_cast<long long>(walked));
    return 1;
  }
  std::printf("quota read in the writer: %.3f ms (baseline walk: %.1f ms), both %lld bytes\n", read_ms, walk_ms,
              static_cast<long long>(kept));

  const std::string wanted = digest(n / 2);
  int64_t found = 0, scanned = 0;
  const double find_ms = median_ms(9, [&] {
    auto c = store->count("artifacts", {{"sha256", wanted}});
    if (!c) die("find", c.error());
    found = *c;
  });
  const double scan_ms = median_ms(3, [&] {
    scanned = 0;
    for (const char* kind : {"artifacts", "images"}) {
      auto all = gpurent::list_all(*store, kind);
      if (!all) die("scan", all.error());
      for (const Record& r : *all) scanned += r.body.value("sha256", "") == wanted;
    }
  });
  if (found != 1 || scanned != 1) {
    std::fprintf(stderr, "digest lookups disagree: %lld by index, %lld by walking\n", static_cast<long long>(found),
                 static_cast<long long>(scanned));
    return 1;
  }
  std::printf("content named elsewhere: %.3f ms by digest (baseline walk of every record: %.1f ms)\n", find_ms,
              scan_ms);

  // Write cost: the store as it is against one without the digest index.
  auto plain = open(dir + "/plain.db");
  plain.reset();
  drop_digest_index(dir + "/plain.db");
  plain = open(dir + "/plain.db");
  auto with = open(dir + "/with.db");
  // Alternating rounds, each store first in turn, so a slow spell of the disk falls on both.
  constexpr int kRounds = 4;
  const int per = std::max(1, writes / kRounds);
  double jobs_with = 0, jobs_plain = 0, arts_with = 0, arts_plain = 0;
  auto art = [](int i) { return artifact(i, kTenant); };
  for (int round = 0; round < kRounds; ++round) {
    const int first = round * per;
    if (round % 2 == 0) {
      jobs_with += write_rate(*with, first, per, job) / kRounds;
      jobs_plain += write_rate(*plain, first, per, job) / kRounds;
      arts_with += write_rate(*with, first, per, art) / kRounds;
      arts_plain += write_rate(*plain, first, per, art) / kRounds;
    } else {
      jobs_plain += write_rate(*plain, first, per, job) / kRounds;
      jobs_with += write_rate(*with, first, per, job) / kRounds;
      arts_plain += write_rate(*plain, first, per, art) / kRounds;
      arts_with += write_rate(*with, first, per, art) / kRounds;
    }
  }
  std::printf(
      "single writes per second: jobs %.0f (second store: %.0f), artifacts %.0f (without the digest index: %.0f)\n",
      jobs_with, jobs_plain, arts_with, arts_plain);

  store.reset();
  with.reset();
  plain.reset();
  std::filesystem::remove_all(dir);
  std::printf(
      "artifact_quota: %d artifacts, quota read %.3f ms, digest lookup %.3f ms (baseline: walks %.1f ms and %.1f ms)\n",
      n, read_ms, find_ms, walk_ms, scan_ms);
  return 0;
}
