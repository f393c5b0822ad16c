// Artifacts and images as the store keeps them for the storage quota and the content store, run
// against every backend: each tenant's stored bytes follow its records' size_bytes through
// inserts, updates, removals and rolled-back writes; the "sha256" filter finds records by digest,
// and "corrects" measurements by the one they correct.
#include <gtest/gtest.h>

#include "store/store.h"
#include "store/store_backends_test_util.h"

namespace gpurent {
namespace {

class StoreContentTest : public StoreBackendTest {
 protected:
  Record sized(const std::string& kind, const std::string& id, const std::string& tenant, nlohmann::json size,
               const std::string& sha256 = "") {
    Record r = make_record(kind, id, id, tenant);
    r.body["size_bytes"] = std::move(size);
    if (!sha256.empty()) r.body["sha256"] = sha256;
    return r;
  }
  int64_t bytes(const std::string& tenant) {
    auto read = store_->tenant_stored_bytes(tenant);
    EXPECT_TRUE(read.ok()) << read.error().message;
    int64_t in_tx = -1;
    EXPECT_TRUE(store_
                    ->write([&](StoreTx& tx) -> Status {
                      auto b = tx.tenant_stored_bytes(tenant);
                      if (!b) return b.error();
                      in_tx = *b;
                      return ok_status();
                    })
                    .ok());
    const int64_t got = read.ok() ? *read : -1;
    EXPECT_EQ(in_tx, got) << "the write's read and the reader's agree";
    return got;
  }
  Status update_size(const std::string& kind, const std::string& id, nlohmann::json size) {
    return store_->write([&](StoreTx& tx) -> Status {
      auto r = tx.get(kind, id);
      if (!r) return r.error();
      r->body["size_bytes"] = std::move(size);
      r->body["received_bytes"] = 1;
      return tx.update(*r);
    });
  }
};

TEST_P(StoreContentTest, TenantStoredBytesFollowItsArtifactsAndImages) {
  EXPECT_EQ(bytes("ten_a"), 0);
  ASSERT_TRUE(insert(sized("artifacts", "art_1", "ten_a", 100)).ok());
  ASSERT_TRUE(insert(sized("images", "img_1", "ten_a", 50)).ok());
  ASSERT_TRUE(insert(sized("artifacts", "art_2", "ten_b", 7)).ok());
  // Not counted: a platform image (no tenant), another kind, a size that is not an integer.
  ASSERT_TRUE(insert(sized("images", "img_p", "", 1000)).ok());
  ASSERT_TRUE(insert(sized("volumes", "vol_1", "ten_a", 1000)).ok());
  ASSERT_TRUE(insert(sized("artifacts", "art_3", "ten_a", 1.5)).ok());
  ASSERT_TRUE(insert(sized("artifacts", "art_4", "ten_a", "9")).ok());
  EXPECT_EQ(bytes("ten_a"), 150);
  EXPECT_EQ(bytes("ten_b"), 7);
  EXPECT_EQ(bytes(""), 0);

  // An image's size is known once built; the same size again changes nothing.
  ASSERT_TRUE(update_size("images", "img_1", 4000).ok());
  EXPECT_EQ(bytes("ten_a"), 4100);
  ASSERT_TRUE(update_size("images", "img_1", 4000).ok());
  EXPECT_EQ(bytes("ten_a"), 4100);
  ASSERT_TRUE(update_size("artifacts", "art_3", 3).ok());  // now an integer
  EXPECT_EQ(bytes("ten_a"), 4103);
  ASSERT_TRUE(update_size("artifacts", "art_1", nullptr).ok());  // no longer one
  EXPECT_EQ(bytes("ten_a"), 4003);

  // A write that fails takes its change to the total with it.
  auto failed = store_->write([&](StoreTx& tx) -> Status {
    if (auto s = tx.insert(sized("artifacts", "art_5", "ten_a", 1'000'000)); !s) return s;
    if (auto s = tx.remove("images", "img_1"); !s) return s;
    return Error::make(Code::kConflict, "changed my mind");
  });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(bytes("ten_a"), 4003);

  // A refused operation inside a write that goes on and commits changes nothing either: a stale
  // version, a missing record.
  ASSERT_TRUE(store_
                  ->write([&](StoreTx& tx) -> Status {
                    auto r = tx.get("images", "img_1");
                    if (!r) return r.error();
                    r->body["size_bytes"] = 77;
                    r->version -= 1;
                    auto stale = tx.update(*r);
                    EXPECT_EQ(stale.ok() ? Code::kInternal : stale.error().code, Code::kConflict);
                    auto missing = tx.remove("artifacts", "art_9");
                    EXPECT_EQ(missing.ok() ? Code::kInternal : missing.error().code, Code::kNotFound);
                    return tx.insert(sized("artifacts", "art_6", "ten_b", 1));
                  })
                  .ok());
  EXPECT_EQ(bytes("ten_a"), 4003);
  EXPECT_EQ(bytes("ten_b"), 8);
  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.remove("artifacts", "art_6"); }).ok());

  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.remove("images", "img_1"); }).ok());
  ASSERT_TRUE(store_->write([&](StoreTx& tx) { return tx.remove("artifacts", "art_3"); }).ok());
  EXPECT_EQ(bytes("ten_a"), 0);
  EXPECT_EQ(bytes("ten_b"), 7);

  store_ = reopen();
  EXPECT_EQ(bytes("ten_b"), 7);
}

TEST_P(StoreContentTest, RecordsAreFoundByTheirDigest) {
  const std::string d1(64, 'a'), d2(64, 'b');
  ASSERT_TRUE(insert(sized("artifacts", "art_1", "ten_a", 1, d1)).ok());
  ASSERT_TRUE(insert(sized("artifacts", "art_2", "ten_b", 1, d1)).ok());
  ASSERT_TRUE(insert(sized("images", "img_1", "ten_a", 1, d1)).ok());
  ASSERT_TRUE(insert(sized("artifacts", "art_3", "ten_a", 1, d2)).ok());
  ASSERT_TRUE(insert(sized("artifacts", "art_4", "ten_a", 1)).ok());

  EXPECT_EQ(store_->count("artifacts", {{"sha256", d1}}).value(), 2);
  EXPECT_EQ(store_->count("artifacts", {{"sha256", d1}, {"tenant_id", "ten_a"}}).value(), 1);
  EXPECT_EQ(store_->count("images", {{"sha256", d1}}).value(), 1);
  EXPECT_EQ(store_->count("artifacts", {{"sha256", ""}}).value(), 0);  // none has an empty one
  EXPECT_EQ(store_->count("artifacts", {{"sha256", "' OR 1=1 --"}}).value(), 0);
  auto page = store_->list({.kind = "artifacts", .eq = {{"sha256", d2}}});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].id, "art_3");
}

TEST_P(StoreContentTest, MeasurementsAreFoundByTheOneTheyCorrect) {
  for (const auto& [id, corrects] : std::vector<std::pair<std::string, std::string>>{
           {"msr_1", ""}, {"msr_2", "msr_1"}, {"msr_3", "msr_1"}, {"msr_4", "msr_2"}}) {
    Record r = make_record("measurements", id, "", "");
    r.supplier_id = "sup_1";
    if (!corrects.empty()) r.body["corrects"] = corrects;
    ASSERT_TRUE(insert(r).ok());
  }
  Record other = make_record("artifacts", "art_1", "a", "ten_a");
  other.body["corrects"] = "msr_1";  // another kind's body with the key: not a measurement
  ASSERT_TRUE(insert(other).ok());
  EXPECT_EQ(store_->count("measurements", {{"corrects", "msr_1"}}).value(), 2);
  EXPECT_EQ(store_->count("measurements", {{"corrects", "msr_2"}}).value(), 1);
  EXPECT_EQ(store_->count("artifacts", {{"corrects", "msr_1"}}).value(), 0);
  auto page = store_->list({.kind = "measurements", .eq = {{"corrects", "msr_1"}, {"supplier_id", "sup_1"}}});
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].id, "msr_2");
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreContentTest, ::testing::ValuesIn(kStoreBackends), backend_test_name);

}  // namespace
}  // namespace gpurent
