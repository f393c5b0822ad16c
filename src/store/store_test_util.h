// Helpers shared by the store tests: a temporary directory removed at scope exit, and a compact
// way to make Records. Test-only; not thread-safe.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdio>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "store/store.h"

namespace gpurent {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpurent_store_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline Record make_record(std::string kind, std::string id, std::string name, std::string tenant_id = "",
                          std::string supplier_id = "") {
  Record r;
  r.kind = std::move(kind);
  r.id = std::move(id);
  r.name = std::move(name);
  r.tenant_id = std::move(tenant_id);
  r.supplier_id = std::move(supplier_id);
  r.created_at = 1'700'000'000'000;
  r.updated_at = r.created_at;
  r.body = {{"id", r.id}, {"name", r.name}};
  return r;
}

inline std::unique_ptr<Store> open_or_die(const std::string& path, bool synchronous_full = true) {
  auto s = open_sqlite_store({.path = path, .synchronous_full = synchronous_full});
  if (!s) ADD_FAILURE() << "open_sqlite_store(" << path << "): " << s.error().message;
  return s ? std::move(s).value() : nullptr;
}

// Inserts records in one write; returns the write's status.
inline Status insert_all(Store& store, const std::vector<Record>& records) {
  return store.write([&](StoreTx& tx) -> Status {
    for (const auto& r : records)
      if (auto s = tx.insert(r); !s) return s;
    return ok_status();
  });
}

// In a forked child: writes a job and its first event per transaction into `store` until killed,
// reporting each id on `fd` only after write() returned ok (what the SIGKILL durability tests
// compare with what survived). Exits 3 on a failed write, 4 on a failed report.
[[noreturn]] inline void write_jobs_until_killed(Store& store, int fd) {
  for (int i = 0; i < 10'000'000; ++i) {
    char id[32];
    int n = std::snprintf(id, sizeof id, "job_%016d\n", i);
    std::string job_id(id, n - 1);
    auto s = store.write([&](StoreTx& tx) -> Status {
      if (auto s = tx.insert(make_record("jobs", job_id, job_id, "ten_1")); !s) return s;
      return tx.append_job_event({.job_id = job_id, .at = i, .from_state = "", .to_state = "queued"});
    });
    if (!s) _exit(3);
    if (write(fd, id, n) != n) _exit(4);  // n < PIPE_BUF: atomic
  }
  _exit(0);
}

}  // namespace gpurent
