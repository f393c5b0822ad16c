// `gpurent backup`, `restore` and `migrate`, in process: what they print, their exit codes (0
// done, 2 a wrong argument, 1 a failure or refusal) and errors naming the flag. The SQLite cases
// run anywhere; the PgStoreCommands cases need the PostgreSQL test cluster (ctest gives them its
// fixture, as it does the store's Pg* suites).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "cli/cli.h"
#include "store/pg_test_cluster.h"
#include "store/store_records_test_util.h"
#include "store/store_test_util.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Ran {
  int rc;
  std::string out, err;
};

class StoreCommands : public ::testing::Test {
 protected:
  Ran run(const std::vector<std::string>& args) {
    std::istringstream in;
    std::ostringstream out, err;
    auto env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
    auto serve = [](const ServerOptions&) { return 0; };
    CliIo io{in, out, err, env, clock_, serve};
    const int rc = run_cli(args, io);
    return {rc, out.str(), err.str()};
  }
  // A SQLite store with a record in every table, at `name` in the test's folder.
  std::string seeded(const std::string& name) {
    const std::string path = dir_.file(name);
    auto s = open_sqlite_store({.path = path});
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    if (s) {
      testing_records::seed_every_table(**s);
      sqlite_version_ = std::to_string((*s)->schema_version());
    }
    return path;
  }
  static std::unique_ptr<Store> open(const std::string& db) {
    auto s = is_postgres_url(db) ? open_postgres_store({.url = db}) : open_sqlite_store({.path = db});
    EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
    return s ? std::move(s).value() : nullptr;
  }

  TempDir dir_;
  FakeClock clock_{1'800'000'000'000};
  std::string sqlite_version_;  // the schema version a SQLite store is at
};

TEST_F(StoreCommands, BackupAndRestoreASqliteStore) {
  const std::string db = seeded("live.db"), bak = dir_.file("live.backup");
  Ran r = run({"backup", "--db", db, "--to", bak});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "backed up " + db + " (sqlite store, schema version " + sqlite_version_ + ") to " + bak + ": " +
                       std::to_string(fs::file_size(bak)) + " bytes\n");
  EXPECT_EQ(r.err, "");

  const std::string copy = dir_.file("copy.db");
  r = run({"restore", "--from", bak, "--db", copy});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "restored " + bak + " (sqlite backup, schema version " + sqlite_version_ + ") into " + copy +
                       "; it opens at schema version " + sqlite_version_ + "\n");
  {
    auto a = open(db), b = open(copy);
    ASSERT_TRUE(a && b);
    testing_records::expect_same_records(*a, *b);
  }
  // Again into the same file: refused (exit 1) until --force.
  r = run({"restore", "--from", bak, "--db", copy});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: " + copy +
                       " already exists and is not empty; restore into a new file, or replace it with --force (stop "
                       "any server using it first)\n");
  r = run({"restore", "--from", bak, "--db", copy, "--force"});
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST_F(StoreCommands, JsonOutputAndProblemDocuments) {
  const std::string db = seeded("live.db"), bak = dir_.file("b");
  Ran r = run({"backup", "--db", db, "--to", bak, "-o", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  json doc = json::parse(r.out);
  EXPECT_EQ(doc["backend"], "sqlite");
  EXPECT_EQ(std::to_string(doc["schema_version"].get<int>()), sqlite_version_);
  EXPECT_EQ(doc["bytes"], static_cast<int64_t>(fs::file_size(bak)));
  EXPECT_EQ(doc["to"], bak);
  r = run({"backup", "--db", db, "--to", bak, "-o", "json"});  // the file exists now
  EXPECT_EQ(r.rc, 2);
  json problem = json::parse(r.err);
  EXPECT_EQ(problem["exit_code"], 2);
  EXPECT_EQ(problem["errors"][0]["field"], "--to");
}

TEST_F(StoreCommands, WrongArgumentsExitTwoNamingTheFlag) {
  const std::string db = seeded("live.db");
  Ran r = run({"backup", "--db", db});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--to is required"), std::string::npos) << r.err;
  r = run({"restore", "--from", dir_.file("none.backup"), "--db", dir_.file("x.db")});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "error: --from: " + dir_.file("none.backup") + " does not exist\n");
  r = run({"restore", "--from", db + "-not-there", "--db", "postgresql://nobody@127.0.0.1:1/x"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("error: --from: "), std::string::npos) << r.err;
  r = run({"migrate", "--from", db, "--to", dir_.file("other.db")});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "error: --to: must be a postgresql:// URL (the database to move the store to)\n");
  r = run({"migrate", "--from", "postgresql://a@b/c", "--to", "postgresql://a@b/d"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("error: --from: must be a SQLite file"), std::string::npos) << r.err;
  // Unreachable PostgreSQL is a failure, not a usage error.
  r = run({"migrate", "--from", db, "--to", "postgresql://gpurent@127.0.0.1:1/x?connect_timeout=1"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("connecting to PostgreSQL"), std::string::npos) << r.err;
}

TEST_F(StoreCommands, HelpSaysWhatEachCommandDoes) {
  Ran r = run({"--help"});
  EXPECT_EQ(r.rc, 0);
  for (const char* s : {"backup", "restore", "migrate"}) EXPECT_NE(r.out.find(s), std::string::npos) << s;
  r = run({"restore", "--help"});
  EXPECT_EQ(r.rc, 0);
  for (const char* s : {"--from", "--db", "--force"}) EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

class PgStoreCommands : public StoreCommands {};

TEST_F(PgStoreCommands, MigrateThenBackUpAndRestoreThePostgresStore) {
  auto target = PgTestDatabase::create(), copy = PgTestDatabase::create();
  ASSERT_TRUE(target.ok() && copy.ok()) << (target.ok() ? copy.error().message : target.error().message);
  const std::string db = seeded("live.db"), to = (*target)->uri(), dump = dir_.file("pg.dump");
  Ran r = run({"migrate", "--from", db, "--to", to});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto migrated = open(to);
  ASSERT_NE(migrated, nullptr);
  const std::string pg_version = std::to_string(migrated->schema_version());
  migrated.reset();
  EXPECT_NE(r.out.find("migrated " + db + " (SQLite schema version " + sqlite_version_ + ") to " + to +
                       " (PostgreSQL schema version " + pg_version + ")"),
            std::string::npos)
      << r.out;
  std::istringstream lines(r.out);
  std::string line, objects;
  while (std::getline(lines, line))
    if (line.starts_with("objects ")) objects = line;
  EXPECT_TRUE(objects.ends_with(" 7")) << r.out;
  EXPECT_NE(r.out.find("verified: the row counts of 13 tables"), std::string::npos) << r.out;
  r = run({"migrate", "--from", db, "--to", to});  // not empty any more
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("migrate into an empty database"), std::string::npos) << r.err;

  r = run({"backup", "--db", to, "--to", dump});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("(postgres store, schema version " + pg_version + ")"), std::string::npos) << r.out;
  r = run({"restore", "--from", dump, "--db", (*copy)->uri()});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto lite = open(db), pg = open((*copy)->uri());
  ASSERT_TRUE(lite && pg);
  testing_records::expect_same_records(*lite, *pg);
}

}  // namespace
}  // namespace gpurent
