// `gpurent serve --db postgresql://…`: the whole server on the PostgreSQL store. The demo world,
// replayed through the live services at a fixed clock (ids then come from a counter), must bill
// exactly as it does on SQLite: every tenant's invoice of the month, as JSON and as FOCUS CSV, byte
// for byte, and the same jobs in the same states. Durability under kill -9 on PostgreSQL is in
// crash_test.cc (its /postgres cases).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <thread>

#include "server_fixture.h"
#include "store/pg_test_cluster.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

std::string demo_price_lists() {
  fs::path p = fs::path(GPURENT_SOURCE_DIR) / ".." / "shared" / "data";
  return fs::exists(p / "prices") ? fs::weakly_canonical(p).string() : "";
}

// Everything the comparison reads from one server: per tenant, its month's invoice (JSON, FOCUS
// CSV); and every job's name -> state.
std::map<std::string, std::string> pg_billing_view(const ServerProcess& s, const std::string& month) {
  std::map<std::string, std::string> out;
  Resp tenants = expect_2xx(s.admin("GET", "/api/v1/tenants?limit=1000"), "tenants");
  for (const json& t : tenants.body.at("items")) {
    const std::string name = t.at("name");
    Resp inv = s.admin("GET", "/api/v1/invoices?tenant=" + name + "&month=" + month);
    EXPECT_EQ(inv.status, 200) << name << ": " << inv.describe();
    out["invoice " + name] = inv.body.dump(1);
    Resp focus = s.admin("GET", "/api/v1/invoices?tenant=" + name + "&month=" + month + "&format=focus");
    EXPECT_EQ(focus.status, 200) << name << ": " << focus.describe();
    out["focus " + name] = focus.text;
  }
  Resp jobs = expect_2xx(s.admin("GET", "/api/v1/jobs?limit=1000"), "jobs");
  for (const json& j : jobs.body.at("items"))
    out["job " + j.value("id", "?")] = j.value("name", "") + " " + j.value("state", "");
  return out;
}

TEST(Postgres, TheDemoReplayBillsExactlyAsOnSqlite) {
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  const std::string at = "2026-11-28T12:00:00Z";
  std::vector<std::string> args = {"--demo",        "--demo-days", "1", "--demo-clock", at, "--firewall-interval-s",
                                   "0",             "--no-rate-limits"};
  if (const std::string data = demo_price_lists(); !data.empty()) args.insert(args.end(), {"--data-dir", data});

  ServerProcess lite(args);
  std::vector<std::string> pg_args = args;
  pg_args.insert(pg_args.end(), {"--db", (*db)->uri()});
  ServerProcess pg(pg_args);
  // The listening line names the database without a password, and the server's files are in its
  // --state-dir.
  EXPECT_EQ(pg.listening_event().value("db", ""), (*db)->uri()) << pg.listening_event().dump();
  EXPECT_EQ(pg.listening_event().value("admin_token_file", ""), pg.dir() + "/admin-token");
  EXPECT_TRUE(fs::exists(pg.dir() + "/gpurent.demo-tokens.json")) << "the demo users' tokens are not in --state-dir";
  // Each is on the store it should be: SQLite has one server; PostgreSQL elects a leader.
  EXPECT_EQ(lite.req("GET", "/readyz", "").body["checks"].value("role", ""), "single");
  EXPECT_EQ(pg.req("GET", "/readyz", "").body["checks"].value("role", ""), "leader");

  const auto want = pg_billing_view(lite, at.substr(0, 7));
  const auto got = pg_billing_view(pg, at.substr(0, 7));
  ASSERT_GT(want.size(), 4u);
  EXPECT_EQ(got.size(), want.size());
  int invoices_with_lines = 0;  // sections with lines, over every tenant
  for (const auto& [key, text] : want) {
    auto it = got.find(key);
    ASSERT_NE(it, got.end()) << key << " is missing on PostgreSQL";
    EXPECT_EQ(it->second, text) << key << " differs between SQLite and PostgreSQL";
    if (key.starts_with("invoice "))
      for (const json& section : json::parse(text).value("sections", json::array()))
        if (section.value("lines", json::array()).size() > 0) ++invoices_with_lines;
  }
  EXPECT_GE(invoices_with_lines, 2) << "the replay billed nothing: the comparison would prove little";

  // Restarted on the same database, it reads back what it wrote (nothing seeded twice).
  pg.restart();
  EXPECT_FALSE(pg.listening_event().value("demo", json::object()).value("seeded", true)) << pg.listening_event().dump();
  EXPECT_EQ(pg_billing_view(pg, at.substr(0, 7)), got);
}

// /readyz polled (every 200 ms, up to `secs`) with `token` until it answers `status`; its last answer.
Resp readyz_until(const ServerProcess& s, const std::string& token, int status, int secs) {
  Resp r = s.req("GET", "/readyz", token);
  for (int i = 0; i < secs * 5 && r.status != status; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    r = s.req("GET", "/readyz", token);
  }
  return r;
}

// The database goes away under a running server: /readyz says so (503, store failing) to every
// caller, an operator's token included — the token cannot be checked then, and an error about it
// would hide the outage from the operator asking — and says ready again once it is back.
TEST(Postgres, ReadyzReportsAStoreOutageWithOrWithoutAToken) {
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  ServerProcess s({"--db", (*db)->uri(), "--firewall-interval-s", "0", "--no-rate-limits"});
  ASSERT_EQ(s.req("GET", "/readyz", s.admin_token()).status, 200);

  ASSERT_TRUE((*db)->allow_connections(false));
  for (const std::string& token : {s.admin_token(), std::string()}) {
    SCOPED_TRACE(token.empty() ? "no token" : "an operator's token");
    Resp down = readyz_until(s, token, 503, 20);
    EXPECT_EQ(down.status, 503) << down.describe();
    EXPECT_EQ(down.body["status"], "not_ready") << down.describe();
    EXPECT_EQ(down.body["checks"]["store"], "failing") << down.describe();
  }
  // An API route still needs its token checked: 503 too, never "unknown token".
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants").status, 503);

  ASSERT_TRUE((*db)->allow_connections(true));
  Resp back = readyz_until(s, s.admin_token(), 200, 30);
  EXPECT_EQ(back.status, 200) << back.describe();
  EXPECT_EQ(back.body["status"], "ready") << back.describe();
}

// Run a command line; its output (stdout and stderr) and exit status.
std::pair<std::string, int> pg_run(const std::string& cmd);

std::string gpurent_bin() {
  const char* bin = std::getenv("GPURENT_TEST_BIN");
  return bin && *bin ? bin : GPURENT_BIN;
}

// The demo world, backed up while its server runs, restored into a new file, and migrated into
// PostgreSQL: a server on each copy (the same pinned clock) bills every tenant exactly as the
// original does.
TEST(Postgres, BackupRestoreAndMigrateKeepEveryInvoice) {
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  const std::string at = "2026-11-28T12:00:00Z", month = at.substr(0, 7);
  std::vector<std::string> args = {"--demo-clock", at, "--firewall-interval-s", "0", "--no-rate-limits"};
  if (const std::string data = demo_price_lists(); !data.empty()) args.insert(args.end(), {"--data-dir", data});
  std::vector<std::string> demo = args;
  demo.insert(demo.end(), {"--demo", "--demo-days", "1"});
  ServerProcess original(demo);
  const auto want = pg_billing_view(original, month);

  const std::string backup = original.dir() + "/backup.db", restored = original.dir() + "/restored.db";
  auto [b_out, b_status] = pg_run(gpurent_bin() + " backup --db " + original.db_path() + " --to " + backup);
  ASSERT_EQ(b_status, 0) << b_out;  // while the original server runs
  auto [r_out, r_status] = pg_run(gpurent_bin() + " restore --from " + backup + " --db " + restored);
  ASSERT_EQ(r_status, 0) << r_out;
  auto [m_out, m_status] = pg_run(gpurent_bin() + " migrate --from " + backup + " --to '" + (*db)->uri() + "'");
  ASSERT_EQ(m_status, 0) << m_out;

  for (const std::string& store : {restored, (*db)->uri()}) {
    SCOPED_TRACE(store);
    std::vector<std::string> on = args;
    on.insert(on.end(), {"--db", store, "--no-scheduler"});  // nothing moves: the copy is what is read
    ServerProcess copy(on);
    const auto got = pg_billing_view(copy, month);
    EXPECT_EQ(got.size(), want.size());
    for (const auto& [key, text] : want) {
      auto it = got.find(key);
      ASSERT_NE(it, got.end()) << key << " is missing";
      EXPECT_EQ(it->second, text) << key << " differs";
    }
  }
}

// Run a command line; its output (stdout and stderr) and exit status.
std::pair<std::string, int> pg_run(const std::string& cmd) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return {"popen failed", -1};
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int st = ::pclose(p);
  return {out, WIFEXITED(st) ? WEXITSTATUS(st) : -1};
}

TEST(Postgres, AKeyValueConnectionStringIsRefusedNotTakenForAFile) {
  const char* bin = std::getenv("GPURENT_TEST_BIN");
  const fs::path dir = fs::temp_directory_path() / "gpurent-pg-keyvalue";
  auto [out, status] = pg_run(std::string(bin && *bin ? bin : GPURENT_BIN) + " serve --port 0 --db 'host=/tmp dbname=x' "
                              "--state-dir " + dir.string());
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("postgresql:// URL"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists("host=/tmp dbname=x")) << "an SQLite file was created under the connection string's name";
  std::error_code ec;
  fs::remove_all(dir, ec);
}

TEST(Postgres, AnUnreachableDatabaseIsAClearErrorAtStart) {
  // Port 1 on loopback: nothing listens there; the password must not reach the output.
  const char* bin = std::getenv("GPURENT_TEST_BIN");
  const std::string cmd = std::string(bin && *bin ? bin : GPURENT_BIN) +
                          " serve --port 0 --db 'postgresql://app:s3cret@127.0.0.1:1/gpurent?connect_timeout=2' "
                          "--state-dir " + fs::temp_directory_path().string() + "/gpurent-pg-unreachable 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  EXPECT_NE(status, 0) << out;
  EXPECT_NE(out.find("cannot open database"), std::string::npos) << out;
  EXPECT_NE(out.find("127.0.0.1"), std::string::npos) << out;
  EXPECT_EQ(out.find("s3cret"), std::string::npos) << "the password was printed: " << out;
  std::error_code ec;
  fs::remove_all(fs::temp_directory_path() / "gpurent-pg-unreachable", ec);
}

}  // namespace
}  // namespace gpurent::testing
