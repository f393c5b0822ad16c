// Whether a tenant ran on a node (allocation_ledger.h, tenant_ran_on) on a real SQLite store: runs
// stored before each run noted its nodes are found by walking until the one-time backfill has
// noted them, and after it one record answers, "never" included.
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

}  // namespace
}  // namespace gpurent
