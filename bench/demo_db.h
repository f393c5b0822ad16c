// What the benchmarks on a database the demo left share (bench/firewall_reads.cc,
// bench/invoice_history.cc, bench/usage_series.cc, bench/usage_batches.cc): the catalogue, the SQLite store at a path
// (opening it applies pending migrations: run them on a copy of a stopped server's database), its tenants, the instant
// an optional AT argument names, and a stop with a message on any error (die, must).
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "io/files.h"
#include "store/store.h"

namespace gpurent::bench {

using Wall = std::chrono::steady_clock;
inline double since(Wall::time_point t0) { return std::chrono::duration<double>(Wall::now() - t0).count(); }

[[noreturn]] inline void die(const std::string& what, const Error& e) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), e.message.c_str());
  std::exit(1);
}

// The value of `r`, or a stop with `what` and its error.
template <class T>
T must(Result<T> r, const std::string& what) {
  if (!r) die(what, r.error());
  return std::move(*r);
}

// `arg` as an RFC 3339 instant (the benchmark's AT), or now when null.
inline TimeMs at_or_now(const char* arg) {
  if (!arg) return SystemClock().now();
  auto at = parse_rfc3339(arg, "AT");
  if (!at) die("AT", at.error());
  return *at;
}

struct DemoDb {
  GpuCatalog catalog;
  std::unique_ptr<Store> store;
  std::vector<Record> tenants;  // at most 1,000
};

inline DemoDb open_demo_db(const std::string& path) {
  auto catalog = load_catalog_file(default_catalog_path());
  if (!catalog) die("catalog", catalog.error());
  auto store = open_sqlite_store({path, false, 5000});
  if (!store) die(path, store.error());
  auto tenants = (*store)->list({"tenants", {}, "", 1000});
  if (!tenants) die("tenants", tenants.error());
  return {std::move(*catalog), std::move(*store), std::move(tenants->items)};
}

}  // namespace gpurent::bench
