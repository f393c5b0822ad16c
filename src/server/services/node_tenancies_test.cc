// The ledger's reads that must not walk a project's history in the single writer
// (allocation_ledger.h), on a real SQLite store: whether a tenant ran on a node (runs stored before
// each run noted its nodes are found by walking until the one-time backfill has noted them, and
// after it one record answers, "never" included); whether a closed run of a job was a given Slurm
// job (through the chain of the job's runs, the walk only where the chain does not reach back).
#include <gtest/gtest.h>

#include "server/services/allocation_ledger.h"
#include "store/store_test_util.h"

namespace gpurent {
namespace {

class NodeTenancies : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = open_or_die(dir_.file("t.db"));
    ASSERT_NE(store_, nullptr);
    for (const char* id : {"nod_1", "nod_2", "nod_3"}) {
      Record n;
      n.kind = "nodes";
      n.id = n.name = id;
      n.supplier_id = "sup_1";
      n.body = json::object();
      ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.insert(n); }).ok());
    }
  }
  // A run stored as an older gpurent stored it: no note of its nodes.
  void put_old_run(const std::string& id, const std::string& tenant, std::vector<std::string> nodes) {
    Record r;
    r.kind = "allocations";
    r.id = id;
    r.tenant_id = tenant;
    r.supplier_id = "sup_1";
    r.state = "closed";
    r.body = {{"placement", json::array()}};
    for (const auto& n : nodes) r.body["placement"].push_back({{"node_id", n}, {"node", n}, {"gpus", {0}}});
    ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.insert(r); }).ok());
  }
  bool ran(const std::string& tenant, const std::string& node) {
    bool out = false;
    EXPECT_TRUE(store_
                    ->write([&](StoreTx& tx) -> Status {
                      auto r = tenant_ran_on(tx, tenant, node);
                      if (!r) return r.error();
                      out = *r;
                      return ok_status();
                    })
                    .ok());
    return out;
  }
  int64_t noted() { return store_->count("node-tenancies", {}).value(); }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(NodeTenancies, OldRunsAreWalkedUntilNotedOnceThenOneRecordAnswers) {
  put_old_run("alc_1", "ten_a", {"nod_1", "nod_2"});
  put_old_run("alc_2", "ten_b", {"nod_3"});
  EXPECT_TRUE(ran("ten_a", "nod_2"));  // by walking: nothing noted yet
  EXPECT_FALSE(ran("ten_a", "nod_3"));
  EXPECT_EQ(noted(), 0);

  ASSERT_TRUE(store_->write([](StoreTx& tx) { return backfill_node_tenancies(tx, 1000); }).ok());
  EXPECT_EQ(noted(), 4);  // three (tenant, node) pairs and the marker
  ASSERT_TRUE(store_->write([](StoreTx& tx) { return backfill_node_tenancies(tx, 2000); }).ok());
  EXPECT_EQ(noted(), 4) << "a later start notes nothing again";

  // From now on the notes answer, not the runs: a run stored without one no longer counts.
  put_old_run("alc_3", "ten_b", {"nod_1"});
  EXPECT_TRUE(ran("ten_a", "nod_1"));
  EXPECT_TRUE(ran("ten_b", "nod_3"));
  EXPECT_FALSE(ran("ten_b", "nod_1"));
  EXPECT_FALSE(ran("ten_a", "nod_3"));
  EXPECT_FALSE(ran("ten_a", "nod_9"));  // no such node
}

// A closed run of job_1 with Slurm id `slurm`, naming `previous` (nullopt: recorded before the
// chain was kept).
Record closed_run(const std::string& id, int64_t slurm, std::optional<std::string> previous) {
  JobRun run;
  run.job_id = "job_1";
  run.job = "train";
  run.project_id = "prj_1";
  run.tenant_id = "ten_a";
  run.state = RunState::kClosed;
  run.slurm_job_id = slurm;
  run.previous_run = std::move(previous);
  Record r;
  r.kind = "allocations";
  r.id = id;
  r.tenant_id = "ten_a";
  r.project_id = "prj_1";
  r.state = "closed";
  r.body = to_json(run);
  return r;
}

TEST_F(NodeTenancies, AClosedRunIsFoundThroughItsJobsChain) {
  auto was = [&](int64_t slurm) {
    bool out = false;
    EXPECT_TRUE(store_
                    ->write([&](StoreTx& tx) -> Status {
                      auto r = closed_run_was(tx, "job_1", "prj_1", slurm);
                      if (!r) return r.error();
                      out = *r;
                      return ok_status();
                    })
                    .ok());
    return out;
  };
  auto put = [&](const Record& r) { ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.insert(r); }).ok()); };
  // Recorded before the chain: no last-runs record, the runs walked.
  put(closed_run("alc_1", 11, std::nullopt));
  EXPECT_TRUE(was(11));
  EXPECT_FALSE(was(13));
  // Its next run closes with the chain kept, naming none before it (unknown): the walk still finds 11.
  put(closed_run("alc_2", 12, std::nullopt));
  Record last;
  last.kind = "last-runs";
  last.id = last.name = "runs-of-job_1";
  last.tenant_id = "ten_a";
  last.body = {{"run", "alc_2"}};
  put(last);
  EXPECT_TRUE(was(12));
  EXPECT_TRUE(was(11));
  // A job whose chain reaches its first run: only its own runs, through the links.
  put(closed_run("alc_3", 21, std::string()));
  put(closed_run("alc_4", 22, std::string("alc_3")));
  ASSERT_TRUE(store_
                  ->write([&](StoreTx& tx) -> Status {
                    auto r = tx.get("last-runs", "runs-of-job_1");
                    if (!r) return r.error();
                    r->body = {{"run", "alc_4"}};
                    return tx.update(*r);
                  })
                  .ok());
  EXPECT_TRUE(was(22));
  EXPECT_TRUE(was(21));
  // Runs the whole chain does not link (here the two from before, a world gpurent does not write)
  // are no longer read: proof the project's runs are not walked.
  EXPECT_FALSE(was(11));
}

// The newest closed run a predicate accepts (an instance's last GPU host): through the chain,
// newest first; for a job from before the chain, the newest of the project's runs by start.
TEST_F(NodeTenancies, TheNewestClosedRunWhereAPredicateHoldsFollowsTheChain) {
  auto put = [&](Record r, TimeMs running_at) {
    r.body["running_at"] = format_rfc3339(running_at);
    ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.insert(r); }).ok());
  };
  auto newest = [&](const std::function<bool(const JobRun&)>& pred) {
    std::string out = "none";
    EXPECT_TRUE(store_
                    ->write([&](StoreTx& tx) -> Status {
                      auto r = newest_closed_run_where(tx, "job_1", "prj_1", pred);
                      if (!r) return r.error();
                      if (*r) out = std::to_string((*r)->slurm_job_id.value_or(0));
                      return ok_status();
                    })
                    .ok());
    return out;
  };
  const auto any = [](const JobRun&) { return true; };
  // Before the chain: the walk, newest by start (not by the order stored).
  put(closed_run("alc_1", 12, std::nullopt), 2000);
  put(closed_run("alc_2", 11, std::nullopt), 1000);
  EXPECT_EQ(newest(any), "12");
  EXPECT_EQ(newest([](const JobRun& r) { return r.slurm_job_id == 11; }), "11");
  EXPECT_EQ(newest([](const JobRun&) { return false; }), "none");
  // With the chain: its links, newest first.
  put(closed_run("alc_3", 21, std::string()), 3000);
  put(closed_run("alc_4", 22, std::string("alc_3")), 4000);
  Record last;
  last.kind = "last-runs";
  last.id = last.name = "runs-of-job_1";
  last.tenant_id = "ten_a";
  last.body = {{"run", "alc_4"}};
  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.insert(last); }).ok());
  EXPECT_EQ(newest(any), "22");
  EXPECT_EQ(newest([](const JobRun& r) { return r.slurm_job_id == 21; }), "21");
  EXPECT_EQ(newest([](const JobRun& r) { return r.slurm_job_id == 12; }), "none")
      << "the whole chain answers: runs it does not link are not walked";
}

}  // namespace
}  // namespace gpurent
