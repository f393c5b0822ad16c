// Helpers shared by the services' unit tests: a fixture on a fresh SQLite store, and a run's
// record as the allocation ledger stores one.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "model/job_run.h"
#include "store/store_test_util.h"

namespace gpurent {

// A test on a fresh SQLite store in its own folder; put() inserts a record or fails the test.
class StoreFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = open_or_die(dir_.file("t.db"));
    ASSERT_NE(store_, nullptr);
  }
  void put(const Record& r) {
    ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.insert(r); }).ok());
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

// Run `run`'s "allocations" record `id`, indexed by its tenant, project and state.
inline Record run_record(const std::string& id, const JobRun& run) {
  Record r;
  r.kind = "allocations";
  r.id = id;
  r.tenant_id = run.tenant_id;
  r.project_id = run.project_id;
  r.state = run.state == RunState::kClosed ? "closed" : "open";
  r.body = to_json(run);
  return r;
}

}  // namespace gpurent
