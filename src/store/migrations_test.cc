#include "store/migrations.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "store/store_test_util.h"

namespace gpurent {
namespace {

Db open_db(const std::string& path) {
  auto db = Db::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, 1000);
  if (!db) throw std::runtime_error(db.error().message);
  return std::move(db).value();
}

struct Applied {
  int version;
  int64_t applied_at;
  std::string description;
};

std::vector<Applied> applied(Db& db) {
  std::vector<Applied> out;
  auto q = db.query("SELECT version, applied_at, description FROM schema_migrations ORDER BY version");
  EXPECT_TRUE(q.ok());
  while (q->step("test").value()) out.push_back({static_cast<int>(q->integer(0)), q->integer(1), q->text(2)});
  return out;
}

bool table_exists(Db& db, const std::string& name) {
  auto q = db.query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
  q->bind(1, name);
  return q->step("test").value();
}

TEST(Migrations, ListIsOrderedAndStartsAtOne) {
  auto list = sqlite_migrations();
  ASSERT_FALSE(list.empty());
  EXPECT_EQ(list.front().version, 1);
  for (size_t i = 1; i < list.size(); ++i) EXPECT_GT(list[i].version, list[i - 1].version);
}

TEST(Migrations, AppliedOnceAndIdempotentOnReopen) {
  TempDir dir;
  const std::string path = dir.file("m.db");
  const int latest = sqlite_migrations().back().version;
  {
    auto store = open_or_die(path);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->schema_version(), latest);
  }
  Db db = open_db(path);
  auto first = applied(db);
  ASSERT_EQ(first.size(), sqlite_migrations().size());
  EXPECT_GT(first[0].applied_at, 0);
  EXPECT_EQ(first[0].description, sqlite_migrations()[0].description);
  for (const char* t : {"objects", "api_tokens", "job_events", "audit_log"}) EXPECT_TRUE(table_exists(db, t)) << t;

  // Reopening applies nothing: same rows, same timestamps.
  {
    auto store = open_or_die(path);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->schema_version(), latest);
  }
  auto second = applied(db);
  ASSERT_EQ(second.size(), first.size());
  EXPECT_EQ(second[0].applied_at, first[0].applied_at);
  EXPECT_EQ(apply_migrations(db, sqlite_migrations(), 1).value(), latest);
  EXPECT_EQ(applied(db)[0].applied_at, first[0].applied_at);
}

TEST(Migrations, AppliesOnlyWhatIsPendingEachInItsOwnTransaction) {
  TempDir dir;
  Db db = open_db(dir.file("m.db"));
  const Migration v1[] = {{1, "t1", "CREATE TABLE t1 (a INTEGER)"}};
  ASSERT_EQ(apply_migrations(db, v1, 100).value(), 1);

  // v2 applies; v3 fails halfway: v2 stays, none of v3's statements remain.
  const Migration v3[] = {{1, "t1", "CREATE TABLE t1 (a INTEGER)"},
                          {2, "t2", "CREATE TABLE t2 (b INTEGER)"},
                          {3, "t3", "CREATE TABLE t3 (c INTEGER); CREATE TABLE t1 (again INTEGER)"}};
  auto r = apply_migrations(db, v3, 200);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("schema migration 3 (t3)"), std::string::npos) << r.error().message;
  EXPECT_EQ(applied_schema_version(db).value(), 2);
  EXPECT_TRUE(table_exists(db, "t2"));
  EXPECT_FALSE(table_exists(db, "t3"));
  EXPECT_FALSE(db.in_transaction());
  auto rows = applied(db);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].applied_at, 100);
  EXPECT_EQ(rows[1].applied_at, 200);
  EXPECT_EQ(rows[1].description, "t2");
}

TEST(Migrations, RefusesAFileFromANewerBinary) {
  TempDir dir;
  const std::string path = dir.file("m.db");
  {
    Db db = open_db(path);
    const int next = sqlite_migrations().back().version + 1;
    std::vector<Migration> newer(sqlite_migrations().begin(), sqlite_migrations().end());
    newer.push_back({next, "from the future", "CREATE TABLE future (x INTEGER)"});
    ASSERT_EQ(apply_migrations(db, newer, 1).value(), next);
  }
  auto store = open_sqlite_store({.path = path});
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("newer than this binary supports"), std::string::npos) << store.error().message;
  EXPECT_NE(store.error().message.find(path), std::string::npos);
}

TEST(Migrations, RefusesAnUnorderedList) {
  TempDir dir;
  Db db = open_db(dir.file("m.db"));
  const Migration bad[] = {{2, "b", "SELECT 1"}, {1, "a", "SELECT 1"}};
  auto r = apply_migrations(db, bad, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::kInternal);
  EXPECT_FALSE(table_exists(db, "schema_migrations"));
}

}  // namespace
}  // namespace gpurent

namespace gpurent {
namespace {

// Version 4 rebuilds usage_batches with a scope per key: batches stored before it keep their
// keys, scoped to the tenant or supplier of the user who sent them (platform when that user is
// an operator or gone), so a batch sent again after the upgrade is still a duplicate.
TEST(Migrations, V4ScopesExistingUsageKeysByTheirSender) {
  TempDir dir;
  Db db = open_db(dir.file("v3.db"));
  auto all = sqlite_migrations();
  ASSERT_GE(all.size(), 4u);
  ASSERT_EQ(all[3].version, 4);
  ASSERT_TRUE(apply_migrations(db, all.subspan(0, 3), 100).ok());
  ASSERT_TRUE(db.exec("INSERT INTO objects (kind, id, name, tenant_id, created_at, updated_at, version, body) VALUES "
                      "('users', 'usr_t', 'dev', 'ten_1', 1, 1, 1, '{}'),"
                      "('users', 'usr_s', 'ops', '', 1, 1, 1, '{}')")
                  .ok());
  ASSERT_TRUE(db.exec("UPDATE objects SET supplier_id = 'sup_1' WHERE id = 'usr_s'").ok());
  ASSERT_TRUE(db.exec("INSERT INTO usage_batches (idempotency_key, content_sha256, received_at, submitted_by, "
                      "gpu_samples, job_samples) VALUES ('k', 'd1', 1, 'usr_t', 1, 0), ('k2', 'd2', 1, 'usr_s', 1, 0),"
                      "('k3', 'd3', 1, 'usr_gone', 0, 1)")
                  .ok());
  ASSERT_TRUE(apply_migrations(db, all, 200).ok());
  auto q = db.query("SELECT idempotency_key, scope FROM usage_batches ORDER BY seq");
  ASSERT_TRUE(q.ok());
  std::vector<std::pair<std::string, std::string>> rows;
  while (q->step("test").value()) rows.emplace_back(q->text(0), q->text(1));
  EXPECT_EQ(rows, (std::vector<std::pair<std::string, std::string>>{
                      {"k", "tenant:ten_1"}, {"k2", "supplier:sup_1"}, {"k3", "platform"}}));
  // The same key in another scope is a new batch; in its own scope it is refused by the index.
  EXPECT_TRUE(db.exec("INSERT INTO usage_batches (scope, idempotency_key, content_sha256, received_at, gpu_samples, "
                      "job_samples) VALUES ('tenant:ten_2', 'k', 'x', 2, 0, 0)")
                  .ok());
  EXPECT_FALSE(db.exec("INSERT INTO usage_batches (scope, idempotency_key, content_sha256, received_at, gpu_samples, "
                       "job_samples) VALUES ('tenant:ten_1', 'k', 'x', 2, 0, 0)")
                   .ok());
  EXPECT_TRUE(table_exists(db, "usage_batches"));
  EXPECT_FALSE(table_exists(db, "usage_batches_v4"));
}

// A version-2 file (before job metrics) upgrades on open and keeps its data; the new table works.
TEST(Migrations, AVersion2FileUpgradesToJobMetricsKeepingItsData) {
  TempDir dir;
  const std::string path = dir.file("v2.db");
  {
    Db db = open_db(path);
    auto all = sqlite_migrations();
    ASSERT_GE(all.size(), 3u);
    ASSERT_EQ(apply_migrations(db, all.first(2), 1).value(), 2);
    ASSERT_TRUE(db.exec("INSERT INTO objects (kind, id, name, created_at, updated_at, version, body)"
                        " VALUES ('tenants', 'ten_1', 'acme', 1, 1, 1, '{\"name\":\"acme\"}')")
                    .ok());
  }
  auto store = open_or_die(path);
  ASSERT_NE(store, nullptr);
  EXPECT_GE(store->schema_version(), 3);
  EXPECT_TRUE(store->get("tenants", "ten_1").ok());
  const JobMetricRow point{"job_a", "ten_1", "prj_1", "acc", 1, 0.5, true};
  ASSERT_TRUE(store->write([&](StoreTx& tx) { return tx.insert_job_metrics({point}); }).ok());
  auto rows = store->job_metrics({.tenant_id = "ten_1", .from = 0, .to = 10});
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  EXPECT_EQ(rows->size(), 1u);
}

// Version 7 fills each tenant's stored bytes from the artifacts and images already there (the
// object writes keep it from then on), by the rule the writes use: an integer size_bytes counts.
TEST(Migrations, TenantStorageStartsFromTheRecordsAlreadyStored) {
  TempDir dir;
  const std::string path = dir.file("v6.db");
  {
    Db db = open_db(path);
    auto all = sqlite_migrations();
    ASSERT_EQ(all[5].version, 6);
    ASSERT_EQ(apply_migrations(db, all.first(6), 1).value(), 6);
    for (const char* row : {"('artifacts', 'art_1', 'ten_a', '{\"size_bytes\":100,\"sha256\":\"aa\"}', 1, 1, 1)",
                            "('images', 'img_1', 'ten_a', '{\"size_bytes\":20}', 1, 1, 1)",
                            "('images', 'img_2', '', '{\"size_bytes\":5000}', 1, 1, 1)",
                            "('artifacts', 'art_2', 'ten_a', '{\"size_bytes\":1.5}', 1, 1, 1)",
                            "('volumes', 'vol_1', 'ten_a', '{\"size_bytes\":7}', 1, 1, 1)",
                            "('artifacts', 'art_3', 'ten_b', '{\"size_bytes\":3}', 1, 1, 1)"})
      ASSERT_TRUE(db.exec(std::string("INSERT INTO objects (kind, id, tenant_id, body, created_at, updated_at, version)"
                                      " VALUES ") +
                          row)
                      .ok())
          << row;
  }
  auto store = open_or_die(path);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->tenant_stored_bytes("ten_a").value(), 120);
  EXPECT_EQ(store->tenant_stored_bytes("ten_b").value(), 3);
  EXPECT_EQ(store->count("artifacts", {{"sha256", "aa"}}).value(), 1);
  ASSERT_TRUE(store->write([](StoreTx& tx) { return tx.remove("artifacts", "art_1"); }).ok());
  EXPECT_EQ(store->tenant_stored_bytes("ten_a").value(), 20);
}

// Version 9 copies each clause-less contract's first offer's template into it (every default when
// the offer is gone); contracts with clauses, and bodies that are not JSON objects, stay as they were.
TEST(Migrations, ContractsWithoutClausesGetTheirFirstOffersTemplate) {
  TempDir dir;
  Db db = open_db(dir.file("v8.db"));
  auto all = sqlite_migrations();
  ASSERT_EQ(all[7].version, 8);
  ASSERT_EQ(apply_migrations(db, all.first(8), 1).value(), 8);
  const char* rows[][2] = {
      {"offers", R"({"contract_template":{"min_fp16_tflops":"700","exit_notice_days":60}})"},
      {"contracts", R"({"name":"follows","offer_ids":["off_1"]})"},
      {"contracts", R"({"name":"nulled","offer_ids":["off_1"],"clauses":null})"},
      {"contracts", R"({"name":"own","offer_ids":["off_1"],"clauses":{"exit_notice_days":10}})"},
      {"contracts", R"({"name":"orphan","offer_ids":["off_gone"]})"},
      {"contracts", R"([1])"},
      {"contracts", "not json"},
  };
  for (size_t i = 0; i < std::size(rows); ++i) {
    auto q =
        db.query("INSERT INTO objects (kind, id, body, created_at, updated_at, version) VALUES (?1, ?2, ?3, 1, 1, 1)");
    const std::string id = i == 0 ? "off_1" : "ctr_" + std::to_string(i);
    q->bind(1, rows[i][0]).bind(2, id).bind(3, rows[i][1]);
    ASSERT_TRUE(q->step("test").ok()) << rows[i][1];
  }
  ASSERT_EQ(apply_migrations(db, all, 2).value(), all.back().version);
  auto q = db.query("SELECT id, version, body FROM objects WHERE kind = 'contracts' ORDER BY id");
  std::map<std::string, std::pair<int64_t, std::string>> got;
  while (q->step("test").value()) got[q->text(0)] = {q->integer(1), q->text(2)};
  const std::string tmpl = R"({"min_fp16_tflops":"700","exit_notice_days":60})";
  EXPECT_EQ(got["ctr_1"],
            std::make_pair(int64_t{2}, R"({"name":"follows","offer_ids":["off_1"],"clauses":)" + tmpl + "}"));
  EXPECT_EQ(got["ctr_2"],
            std::make_pair(int64_t{2}, R"({"name":"nulled","offer_ids":["off_1"],"clauses":)" + tmpl + "}"));
  EXPECT_EQ(got["ctr_3"], std::make_pair(int64_t{1}, std::string(rows[3][1])));
  EXPECT_EQ(got["ctr_4"],
            std::make_pair(int64_t{2}, std::string(R"({"name":"orphan","offer_ids":["off_gone"],"clauses":{}})")));
  EXPECT_EQ(got["ctr_5"], std::make_pair(int64_t{1}, std::string("[1]")));
  EXPECT_EQ(got["ctr_6"], std::make_pair(int64_t{1}, std::string("not json")));
}

}  // namespace
}  // namespace gpurent
