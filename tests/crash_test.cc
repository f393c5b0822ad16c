// Durability through the real server: writers create objects as fast as the server acknowledges
// them, the server is killed (SIGKILL) mid-stream or stopped (SIGTERM), and after a restart on the
// same database every acknowledged object must be there — an acknowledged write is durable. On
// both stores: an SQLite file, and a PostgreSQL database (`--db postgresql://…`; the cluster is
// the ctest run's, or the process's own: src/store/pg_test_cluster.h).
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "server_fixture.h"
#include "store/pg_test_cluster.h"

namespace gpurent::testing {
namespace {

using namespace std::chrono_literals;

// Creates objects in a tight loop on its own connection until told to stop or the server goes
// away, recording the id of every 201 it gets.
class Writer {
 public:
  // make_body(i) gives the i-th POST body for `path`.
  Writer(const ServerProcess& s, std::string path, std::function<json(int)> make_body)
      : url_(s.url()), token_(s.admin_token()), path_(std::move(path)), make_body_(std::move(make_body)) {
    thread_ = std::thread([this] { run(); });
  }
  ~Writer() { join(); }

  void server_going_away() { going_away_ = true; }
  void join() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  size_t acked() const { return acked_count_.load(); }
  std::vector<std::string> acked_ids() {
    std::lock_guard<std::mutex> l(mu_);
    return ids_;
  }
  // Failures seen while the server was meant to be up (should be none).
  std::vector<std::string> unexpected() {
    std::lock_guard<std::mutex> l(mu_);
    return unexpected_;
  }

 private:
  void run() {
    httplib::Client c(url_);
    c.set_keep_alive(true);
    c.set_connection_timeout(10, 0);
    c.set_read_timeout(10, 0);
    const httplib::Headers auth{{"Authorization", "Bearer " + token_}};
    for (int i = 0; !stop_; ++i) {
      auto res = c.Post(path_, auth, make_body_(i).dump(), "application/json");
      std::lock_guard<std::mutex> l(mu_);
      if (res && res->status == 201) {
        ids_.push_back(json::parse(res->body).at("id").get<std::string>());
        ++acked_count_;
        continue;
      }
      if (going_away_) return;  // refused or cut off by the shutdown: expected
      unexpected_.push_back(res ? std::to_string(res->status) + " " + res->body : httplib::to_string(res.error()));
      if (unexpected_.size() > 5) return;
    }
  }

  std::string url_, token_, path_;
  std::function<json(int)> make_body_;
  std::atomic<bool> stop_{false}, going_away_{false};
  std::atomic<size_t> acked_count_{0};
  std::mutex mu_;
  std::vector<std::string> ids_, unexpected_;
  std::thread thread_;
};

// Runs writers for tenants and jobs until `acks` acknowledgements or `max_time`, then calls
// `interrupt` while they are still writing. Returns {tenant ids, job ids} acknowledged.
std::pair<std::vector<std::string>, std::vector<std::string>> write_until_interrupted(
    ServerProcess& s, const std::string& round, size_t acks, std::chrono::milliseconds max_time,
    const std::function<void()>& interrupt) {
  Writer tenants(s, "/api/v1/tenants", [&](int i) { return tenant_doc("crash-" + round + "-" + std::to_string(i)); });
  Writer jobs(s, "/api/v1/jobs", [&](int i) { return job_doc("durable", "job-" + round + "-" + std::to_string(i)); });
  auto deadline = std::chrono::steady_clock::now() + max_time;
  // Until `acks` or max_time; past max_time, until each writer has had one acknowledged (a loaded
  // machine may take longer for the first, 30 s at most).
  const auto last_chance = std::chrono::steady_clock::now() + std::max<std::chrono::milliseconds>(max_time, 30s);
  while ((tenants.acked() + jobs.acked() < acks && std::chrono::steady_clock::now() < deadline) ||
         ((tenants.acked() == 0 || jobs.acked() == 0) && std::chrono::steady_clock::now() < last_chance))
    std::this_thread::sleep_for(5ms);
  EXPECT_GT(tenants.acked(), 0u) << "no tenant write was acknowledged before the interruption";
  EXPECT_GT(jobs.acked(), 0u) << "no job write was acknowledged before the interruption";
  tenants.server_going_away();
  jobs.server_going_away();
  interrupt();  // while both writers are mid-stream
  tenants.join();
  jobs.join();
  ::testing::Test::RecordProperty("acknowledged_" + round, std::to_string(tenants.acked() + jobs.acked()));
  for (auto* w : {&tenants, &jobs})
    for (const auto& u : w->unexpected()) ADD_FAILURE() << "write failed while the server was up: " << u;
  return {tenants.acked_ids(), jobs.acked_ids()};
}

void expect_all_present(const ServerProcess& s, const std::vector<std::string>& tenant_ids,
                        const std::vector<std::string>& job_ids) {
  Resp ready = s.req("GET", "/readyz", "");
  EXPECT_EQ(ready.status, 200) << ready.describe();
  size_t missing = 0;
  for (const auto& id : tenant_ids) {
    Resp r = s.admin("GET", "/api/v1/tenants/" + id);
    if (r.status != 200 && ++missing <= 5) ADD_FAILURE() << "acknowledged tenant " << id << " lost: " << r.describe();
  }
  for (const auto& id : job_ids) {
    Resp r = s.admin("GET", "/api/v1/jobs/" + id);
    if (r.status != 200 && ++missing <= 5) ADD_FAILURE() << "acknowledged job " << id << " lost: " << r.describe();
  }
  EXPECT_EQ(missing, 0u) << "of " << tenant_ids.size() << " tenants and " << job_ids.size() << " jobs acknowledged";
  // A job and its first state event commit together.
  for (size_t i = 0; i < job_ids.size(); i += std::max<size_t>(1, job_ids.size() / 20)) {
    Resp ev = s.admin("GET", "/api/v1/jobs/" + job_ids[i] + "/events");
    ASSERT_EQ(ev.status, 200) << ev.describe();
    ASSERT_EQ(ev.body.at("items").size(), 1u) << job_ids[i] << ": " << ev.describe();
    EXPECT_EQ(ev.body["items"][0].value("to", ""), "pending");
  }
}

class Crash : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    // The writers hammer one token as fast as the store commits: rate limits are not what is tested.
    std::vector<std::string> args{"--no-rate-limits"};
    if (GetParam() == "postgres") {
      auto db = PgTestDatabase::create();
      ASSERT_TRUE(db) << db.error().message;
      pg_ = std::move(db).value();
      args.insert(args.end(), {"--db", pg_->uri()});
    }
    server_ = std::make_unique<ServerProcess>(args);
    expect_2xx(server_->admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
    json p = project_doc("acme", "durable");
    expect_2xx(server_->admin("POST", "/api/v1/projects", p), "project");
  }
  std::unique_ptr<PgTestDatabase> pg_;  // outlives the server
  std::unique_ptr<ServerProcess> server_;
};

TEST_P(Crash, KillNineLosesNoAcknowledgedWrite) {
  ServerProcess& s = *server_;
  std::vector<std::string> all_tenants, all_jobs;
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    auto [tenants, jobs] = write_until_interrupted(s, std::to_string(round), 400, 1500ms, [&] { s.kill9(); });
    EXPECT_EQ(s.last_exit_status(), 128 + SIGKILL);
    all_tenants.insert(all_tenants.end(), tenants.begin(), tenants.end());
    all_jobs.insert(all_jobs.end(), jobs.begin(), jobs.end());
    s.start();  // same database, same admin token file
    expect_all_present(s, all_tenants, all_jobs);
    // At most the one write in flight per writer may have committed without its acknowledgement.
    auto listed = list_ids(s, "/api/v1/tenants", s.admin_token());
    EXPECT_GE(listed.size(), all_tenants.size() + 1);
    EXPECT_LE(listed.size(), all_tenants.size() + 1 + (round + 1));
    // And the server takes writes again.
    EXPECT_EQ(s.admin("POST", "/api/v1/tenants", tenant_doc("after-" + std::to_string(round))).status, 201);
    all_tenants.push_back(s.admin("GET", "/api/v1/tenants/after-" + std::to_string(round)).body.value("id", "?"));
  }
}

TEST_P(Crash, CleanStopKeepsEverythingAndExitsZero) {
  ServerProcess& s = *server_;
  const std::string token = s.admin_token();
  auto [tenants, jobs] = write_until_interrupted(s, "term", 100, 1000ms, [&] { s.stop(); });
  EXPECT_EQ(s.last_exit_status(), 0) << s.log();
  s.start();
  EXPECT_EQ(s.admin_token(), token) << "a valid admin token must be kept across restarts";
  expect_all_present(s, tenants, jobs);
  // A clean stop finishes the writes it accepted: nothing half-done, nothing unacknowledged
  // beyond the one in flight per writer.
  auto listed = list_ids(s, "/api/v1/tenants", s.admin_token());
  EXPECT_GE(listed.size(), tenants.size() + 1);
  EXPECT_LE(listed.size(), tenants.size() + 2);
  s.restart();
  EXPECT_EQ(s.last_exit_status(), 0);
  expect_all_present(s, tenants, jobs);
}

// One server per SQLite database (each keeps its scheduler in memory): a second one on the same
// file is refused at start, saying why; once the first is gone, however it went, one may start.
TEST(SqliteServer, ASecondServerOnTheSameDatabaseIsRefused) {
  ServerProcess s;
  auto serve_again = [&] {
    std::string out;
    int st = -1;
    const std::string cmd = std::string("timeout 20 ") + GPURENT_BIN + " serve --port 0 --db " + s.db_path() +
                            " --admin-token-file " + s.dir() + "/second-token 2>&1";
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[4096];
      while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
      st = pclose(p);
    }
    return std::pair{out, WIFEXITED(st) ? WEXITSTATUS(st) : -1};
  };
  auto [out, rc] = serve_again();
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("another gpurent server is serving database"), std::string::npos) << out;
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants").status, 200) << "the first one serves on";
  s.kill9();
  s.start();  // the kernel released the lock with the killed process
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants").status, 200);
}

INSTANTIATE_TEST_SUITE_P(Stores, Crash, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

}  // namespace
}  // namespace gpurent::testing
