// An instance's start waits for every earlier run of it the executor still sees, and a stopped
// instance whose requeued job's run is being stopped reads `stopping` until it has gone
// (services/instance_stop.h), on a real SQLite store.
#include "server/services/instance_stop.h"

#include <gtest/gtest.h>

#include <set>

#include "model/job.h"
#include "server/services/services_test_util.h"
#include "store/store_test_util.h"

namespace gpurent {
namespace {

class InstanceStop : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = open_sqlite_store({.path = dir_.file("t.db")});
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(*s);
  }
  // Instance "box" of tenant ten_1, started twice (job_a, then job_b).
  void put_box(bool want_running) {
    Instance i;
    i.name = "box";
    i.project = "p";
    i.tenant_id = "ten_1";
    i.project_id = "prj_1";
    i.job_ids = {"job_a", "job_b"};
    i.want_running = want_running;
    Record r;
    r.kind = "instances";
    r.id = "ins_1";
    r.tenant_id = "ten_1";
    put_instance(r, i);
    ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.insert(r); }).ok());
    for (const char* id : {"job_a", "job_b"}) {
      Record j;
      j.kind = "jobs";
      j.id = j.name = id;
      j.tenant_id = "ten_1";
      j.body = {{"labels", {{kInstanceLabel, "box"}}}};
      ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.insert(j); }).ok());
    }
  }
  Instance box() {
    auto r = store_->get("instances", "ins_1");
    EXPECT_TRUE(r.ok());
    auto i = decode_instance(r->body);
    EXPECT_TRUE(i.ok()) << i.error().message;
    return i.ok() ? *i : Instance{};
  }
  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(InstanceStop, AStartWaitsForEveryEarlierRunStillAlive) {
  put_box(true);
  ASSERT_EQ(box().job_ids.size(), 2u);
  Job j;
  j.labels[kInstanceLabel] = "box";
  Record b;
  b.id = "job_b";
  b.tenant_id = "ten_1";
  auto waits = [&](std::set<std::string> alive) {
    bool out = false;
    EXPECT_TRUE(store_
                    ->write([&](StoreTx& tx) -> Status {
                      auto w =
                          waits_for_earlier_run(tx, b, j, [&](const std::string& id) { return alive.count(id) > 0; });
                      if (!w) return w.error();
                      out = *w;
                      return ok_status();
                    })
                    .ok());
    return out;
  };
  // job_a was requeued and cancelled by a restart: no stopping_job, but its run lives on.
  EXPECT_TRUE(waits({"job_a"}));
  EXPECT_FALSE(waits({}));
  EXPECT_FALSE(waits({"job_b"})) << "its own earlier admission is the executor's other check";
}

TEST_F(InstanceStop, AStoppedInstancesLingeringRunMakesItStopping) {
  put_box(false);
  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return note_lingering_run(tx, "job_b", 5000); }).ok());
  EXPECT_EQ(box().stopping_job, "job_b");
  EXPECT_EQ(box().stopping_since, 5000);
  // Once set, the stop under way stays the one waited for.
  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return note_lingering_run(tx, "job_a", 6000); }).ok());
  EXPECT_EQ(box().stopping_job, "job_b");
  // A job of no instance, or unknown: nothing.
  EXPECT_TRUE(store_->write([&](StoreTx& tx) { return note_lingering_run(tx, "job_zz", 7000); }).ok());
}

TEST_F(InstanceStop, ARunningInstanceIsNotMarkedStopping) {
  put_box(true);  // a restart: its new start waits instead (AStartWaitsForEveryEarlierRunStillAlive)
  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return note_lingering_run(tx, "job_a", 5000); }).ok());
  EXPECT_EQ(box().stopping_job, "");
}

// A stop (or a release) whose latest job was preempted and requeued: the run it had may still be
// dying, and a released instance is found by name no more when the executor sees it, so the stop
// marks it stopping itself. A start that never ran leaves nothing to wait for.
TEST_F(InstanceStop, AJobRequeuedAfterARunMakesTheStopWaitForThatRun) {
  put_box(true);
  auto requeued = [&](const std::string& id, bool ran) {
    ASSERT_TRUE(store_
                    ->write([&](StoreTx& tx) -> Status {
                      auto j = tx.get("jobs", id);
                      if (!j) return j.error();
                      j->project_id = "prj_1";
                      j->state = "pending";
                      j->body["status"] = {{"state", "pending"}};
                      if (auto s = tx.update(*j); !s) return s;
                      if (!ran) return ok_status();
                      JobRun run;
                      run.job_id = id;
                      run.project_id = "prj_1";
                      run.tenant_id = "ten_1";
                      run.state = RunState::kClosed;
                      run.previous_run = "";
                      const Record r = run_record("alc_" + id, run);
                      if (auto s = tx.insert(r); !s) return s;
                      Record last;
                      last.kind = "last-runs";
                      last.id = last.name = "runs-of-" + id;
                      last.tenant_id = "ten_1";
                      last.body = {{"run", r.id}};
                      return tx.insert(last);
                    })
                    .ok());
  };
  auto stop = [&](TimeMs now) {
    Instance i = box();
    EXPECT_TRUE(store_->write([&](StoreTx& tx) { return stop_instance_job(tx, i, Message("test"), "usr_1", now, true); })
                    .ok());
    return i;
  };
  requeued("job_b", true);
  const Instance stopped = stop(5000);
  EXPECT_EQ(stopped.stopping_job, "job_b");
  EXPECT_EQ(stopped.stopping_since, 5000);
  EXPECT_FALSE(stopped.want_running);
  EXPECT_EQ(store_->get("jobs", "job_b")->state, "cancelled");

  ASSERT_TRUE(store_->write([](StoreTx& tx) { return tx.remove("jobs", "job_b"); }).ok());
  Record fresh;
  fresh.kind = "jobs";
  fresh.id = fresh.name = "job_b";
  fresh.tenant_id = "ten_1";
  fresh.body = {{"labels", {{kInstanceLabel, "box"}}}};
  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.insert(fresh); }).ok());
  ASSERT_TRUE(store_->write([](StoreTx& tx) { return tx.remove("last-runs", "runs-of-job_b"); }).ok());
  ASSERT_TRUE(store_->write([](StoreTx& tx) { return tx.remove("allocations", "alc_job_b"); }).ok());
  requeued("job_b", false);
  EXPECT_EQ(stop(6000).stopping_job, "") << "a start still waiting for its first placement";
}

}  // namespace
}  // namespace gpurent
