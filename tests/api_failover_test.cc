// Several servers on one PostgreSQL database (issue 22): every server takes writes, one leads the
// once-only work (the scheduler) under a lease (services/leader_lease.h). Three servers, a client
// load of job submissions and usage batches through all three, and the leader killed with
// kill -9 five times in a row (each restarted as a follower): afterwards every acknowledged write
// is there, no job ran twice at once and no GPU was ever held by two runs at once (over the whole
// allocation ledger), and once the queue is worked off the month's invoice equals the one a single
// server bills for the same acknowledged writes. The takeover times are measured and printed. A leader that is only paused
// (SIGSTOP) while another takes over is deposed: its first write afterwards is refused and it exits.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <iterator>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/clock.h"
#include "server_fixture.h"
#include "store/pg_test_cluster.h"

namespace gpurent::testing {
namespace {

using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

// The servers' current URLs (a restarted server listens on a new port), shared with the writers.
class FailoverUrls {
 public:
  explicit FailoverUrls(size_t n) : urls_(n) {}
  void set(size_t i, std::string url) {
    std::lock_guard lock(mu_);
    urls_[i] = std::move(url);
  }
  std::string get(size_t i) const {
    std::lock_guard lock(mu_);
    return urls_[i];
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> urls_;
};

// POSTs bodies to one server, one after another with `pause` between them, as a careful client
// does: a write whose answer was lost (the server died, or was killed mid-request) is sent again
// until it is answered, so every write that was committed ends up acknowledged — a job by its name
// (201, or 409 "exists" for a retry whose first try had landed), a usage batch by its
// idempotency key (201, or 200 "duplicate"). Keeps each acknowledged write's body, for a replay.
class FailoverWriter {
 public:
  FailoverWriter(const FailoverUrls& urls, size_t server, std::string token, std::string path, std::function<json(int)> body,
                 std::string key_field, std::chrono::milliseconds pause)
      : urls_(urls), server_(server), token_(std::move(token)), path_(std::move(path)), body_(std::move(body)),
        key_field_(std::move(key_field)), pause_(pause) {
    thread_ = std::thread([this] { run(); });
  }
  ~FailoverWriter() { join(); }
  void join() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::vector<std::pair<std::string, json>> acked() {  // key -> body, in the order acknowledged
    std::lock_guard lock(mu_);
    return acked_;
  }
  std::vector<std::string> failures() {
    std::lock_guard lock(mu_);
    return failures_;
  }

 private:
  void run() {
    const httplib::Headers auth{{"Authorization", "Bearer " + token_}};
    bool retrying = false;  // the write of index i was sent before and its answer lost
    const auto give_up = [this] { return stop_ && SteadyClock::now() - stopped_at_ > 30s; };
    for (int i = 0; !stop_ || retrying;) {
      if (stop_ && stopped_at_ == SteadyClock::time_point{}) stopped_at_ = SteadyClock::now();
      if (give_up()) {
        std::lock_guard lock(mu_);
        failures_.push_back("write " + std::to_string(i) + " was never answered");
        return;
      }
      httplib::Client c(urls_.get(server_));
      c.set_connection_timeout(1, 0);
      c.set_read_timeout(10, 0);
      const json body = body_(i);
      auto res = c.Post(path_, auth, body.dump(), "application/json");
      if (!res) {  // down, or killed mid-request: maybe committed, not acknowledged; send it again
        retrying = true;
        std::this_thread::sleep_for(20ms);
        continue;
      }
      {
        std::lock_guard lock(mu_);
        if (res->status == 201 || (res->status == 200 && key_field_ == "idempotency_key") ||
            (res->status == 409 && retrying && key_field_ == "name"))
          acked_.emplace_back(body.value(key_field_, "?"), body);
        else if (failures_.size() < 10)
          failures_.push_back(std::to_string(res->status) + " " + res->body.substr(0, 300));
      }
      retrying = false;
      ++i;
      std::this_thread::sleep_for(pause_);
    }
  }

  const FailoverUrls& urls_;
  size_t server_;
  std::string token_, path_;
  std::function<json(int)> body_;
  std::string key_field_;
  std::chrono::milliseconds pause_;
  std::atomic<bool> stop_{false};
  SteadyClock::time_point stopped_at_{};
  std::mutex mu_;
  std::vector<std::pair<std::string, json>> acked_;
  std::vector<std::string> failures_;
  std::thread thread_;
};

json failover_readyz(const std::string& url) {
  httplib::Client c(url);
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(10, 0);
  auto res = c.Get("/readyz");
  if (!res || res->status != 200) return json();
  return json::parse(res->body, nullptr, false);
}

// The index of the server that says it leads, or -1.
int failover_leader_of(const std::vector<std::unique_ptr<ServerProcess>>& servers) {
  for (size_t i = 0; i < servers.size(); ++i) {
    if (!servers[i]->running()) continue;
    const json r = failover_readyz(servers[i]->url());
    if (r.is_object() && r["checks"].value("role", "") == "leader") return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> failover_args(const std::string& url) {
  return {"--db", url, "--leader-lease-ms", "3000", "--sched-interval-ms", "200", "--cold-start-ms", "500",
          "--no-rate-limits", "--firewall-interval-s", "0"};
}

// The jobs not finished yet (pending, admitted or running), up to 1,000 of each.
size_t failover_unfinished(const ServerProcess& s) {
  size_t n = 0;
  for (const char* state : {"pending", "admitted", "running"})
    n += expect_2xx(s.admin("GET", std::string("/api/v1/jobs?limit=1000&state=") + state), state).body.at("items").size();
  return n;
}

bool failover_drained(const ServerProcess& s, std::chrono::seconds limit) {
  const auto t0 = SteadyClock::now();
  while (failover_unfinished(s) > 0) {
    if (SteadyClock::now() - t0 > limit) return false;
    std::this_thread::sleep_for(250ms);
  }
  return true;
}

// A tenant's invoice of the month as two runs of the same writes must bill it: every line's kind,
// rule, project, job, offer, billing mode, quantity, unit, prices and amounts, and the totals —
// without what differs by when and where a run happened to go (its allocation id, its times, the
// period's end, the description that names its node and GPUs, the server-made ids).
json failover_invoice(const ServerProcess& s, const std::string& tenant, const std::string& month) {
  std::function<json(const json&)> strip = [&](const json& v) -> json {
    if (v.is_array()) {
      json out = json::array();
      for (const json& e : v) out.push_back(strip(e));
      std::vector<std::string> keys;
      for (const json& e : out) keys.push_back(e.dump());
      std::sort(keys.begin(), keys.end());
      json sorted = json::array();
      for (const std::string& k : keys) sorted.push_back(json::parse(k));
      return sorted;
    }
    if (!v.is_object()) return v;
    json out = json::object();
    for (const auto& [k, e] : v.items())
      if (k != "allocation" && k != "from" && k != "to" && k != "description" && k != "period" && k != "rated_until" &&
          !k.ends_with("_id"))
        out[k] = strip(e);
    return out;
  };
  return strip(expect_2xx(s.admin("GET", "/api/v1/invoices?tenant=" + tenant + "&month=" + month), "invoice").body);
}

std::vector<json> failover_allocations(const ServerProcess& s) {
  std::vector<json> out;
  std::string after;
  for (;;) {
    Resp r = expect_2xx(s.admin("GET", "/api/v1/allocations?limit=1000" + (after.empty() ? "" : "&after=" + after)),
                        "allocations");
    for (const json& a : r.body.at("items")) out.push_back(a);
    if (r.body.at("next_after").is_null()) return out;
    after = r.body["next_after"].get<std::string>();
  }
}

TimeMs failover_ms_of(const json& v, TimeMs none) {
  if (!v.is_string()) return none;
  auto t = parse_rfc3339(v.get<std::string>(), "at");
  return t ? *t : none;
}

// The lines one invoice has and the other has not (the first few), and both totals.
std::string failover_difference(const json& a, const json& b) {
  auto lines = [](const json& inv) {
    std::multiset<std::string> out;
    for (const json& section : inv.value("sections", json::array()))
      for (const json& l : section.value("lines", json::array())) out.insert(l.dump());
    return out;
  };
  const auto la = lines(a), lb = lines(b);
  std::vector<std::string> only_a, only_b;
  std::set_difference(la.begin(), la.end(), lb.begin(), lb.end(), std::back_inserter(only_a));
  std::set_difference(lb.begin(), lb.end(), la.begin(), la.end(), std::back_inserter(only_b));
  std::string out = "totals " + a.value("totals", json()).dump() + " vs " + b.value("totals", json()).dump() + "\n";
  out += std::to_string(only_a.size()) + " lines only after the failovers, " + std::to_string(only_b.size()) +
         " only in the replay\n";
  for (size_t i = 0; i < only_a.size() && i < 5; ++i) out += "  failovers: " + only_a[i] + "\n";
  for (size_t i = 0; i < only_b.size() && i < 5; ++i) out += "  replay:    " + only_b[i] + "\n";
  return out;
}

// Two GPU nodes, one offer billed to the second (not the example's started minute, which would
// hide a run billed a few seconds too long), tenants acme and beta.
void failover_world(const ServerProcess& s) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a")), "supplier");
  for (const char* n : {"node-1", "node-2"}) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("sup-a", n)), n);
  json offer = offer_doc("sup-a", "offer-a");
  offer["min_increment_seconds"] = 1;
  expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer");
  acme_and_beta(s);
}

TEST(PostgresFailover, KillingTheLeaderFiveTimesLosesNoWriteAndRunsNothingTwice) {
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  std::vector<std::unique_ptr<ServerProcess>> servers;
  servers.push_back(std::make_unique<ServerProcess>(failover_args((*db)->uri())));
  ServerProcess& first = *servers[0];
  ASSERT_EQ(failover_readyz(first.url())["checks"].value("role", ""), "leader");
  failover_world(first);
  for (int i = 1; i < 3; ++i) servers.push_back(std::make_unique<ServerProcess>(failover_args((*db)->uri())));
  for (int i = 1; i < 3; ++i) EXPECT_EQ(failover_readyz(servers[i]->url())["checks"].value("role", ""), "follower");

  FailoverUrls urls(3);
  for (int i = 0; i < 3; ++i) urls.set(i, servers[i]->url());
  const std::string token = first.admin_token();  // the admin's tokens are valid on every server
  const std::string month = format_rfc3339(SystemClock().now()).substr(0, 7);
  const TimeMs sample_at = (SystemClock().now() - 120'000) / 1000 * 1000;
  std::vector<std::unique_ptr<FailoverWriter>> writers;
  for (size_t i = 0; i < 3; ++i) {
    writers.push_back(std::make_unique<FailoverWriter>(
        urls, i, token, "/api/v1/jobs",
        [i](int k) {
          json j = job_doc("vision", "job-" + std::to_string(i) + "-" + std::to_string(k));
          j["expected_duration_seconds"] = 2;  // short runs: GPUs are taken and given back all along
          return j;
        },
        "name", 300ms));  // about ten jobs a second over the three: a queue the GPUs can work off afterwards
    writers.push_back(std::make_unique<FailoverWriter>(
        urls, i, token, "/api/v1/usage",
        [i, sample_at](int k) {
          const std::string key = "agent-" + std::to_string(i) + ":" + std::to_string(k);
          return json{{"idempotency_key", key},
                      {"gpu_samples",
                       {{{"at", format_rfc3339(sample_at + k)},
                         {"node", "node-" + std::to_string(1 + i % 2)},
                         {"gpu", static_cast<int>(i)},
                         {"utilization_pct", k % 100},
                         {"memory_used_mib", 1000},
                         {"power_mw", 300'000}}}}};
        },
        "idempotency_key", 10ms));
  }

  std::vector<double> takeover_s;
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::this_thread::sleep_for(1500ms);  // load on every server, the scheduler placing
    const int leader = failover_leader_of(servers);
    ASSERT_GE(leader, 0) << "no server leads";
    const int64_t old_token = failover_readyz(servers[leader]->url())["leader"].value("token", int64_t{0});
    const auto t0 = SteadyClock::now();
    servers[leader]->kill9();
    int next = -1;
    while (next < 0 && SteadyClock::now() - t0 < 20s) {
      std::this_thread::sleep_for(20ms);
      next = failover_leader_of(servers);
    }
    ASSERT_GE(next, 0) << "no follower took over within 20 s";
    takeover_s.push_back(std::chrono::duration<double>(SteadyClock::now() - t0).count());
    std::printf("failover: round %d: server %d led (token %lld), server %d took over after %.3f s\n", round, leader,
                static_cast<long long>(old_token), next, takeover_s.back());
    EXPECT_GT(failover_readyz(servers[next]->url())["leader"].value("token", int64_t{0}), old_token);
    servers[leader]->start();  // back as a follower, on a new port
    urls.set(leader, servers[leader]->url());
    EXPECT_EQ(failover_readyz(servers[leader]->url())["checks"].value("role", ""), "follower");
  }
  std::this_thread::sleep_for(1000ms);
  for (auto& w : writers) w->join();
  // Only the killed leaders went away: no server was deposed while it led under the load (its
  // loop stalled past the lease) or otherwise exited by itself.
  for (size_t i = 0; i < servers.size(); ++i)
    EXPECT_TRUE(failover_readyz(servers[i]->url()).is_object()) << "server " << i << " is gone: " << servers[i]->log();
  // The queue is worked off: every job runs to its end (two seconds each, on 16 GPUs).
  const auto drain0 = SteadyClock::now();
  ASSERT_TRUE(failover_drained(*servers[0], 300s)) << failover_unfinished(*servers[0]) << " jobs still unfinished";
  const double drain_s = std::chrono::duration<double>(SteadyClock::now() - drain0).count();

  // Every acknowledged write is there, whichever server took it and whichever dies later.
  ServerProcess& any = *servers[0];
  size_t jobs = 0, batches = 0, missing = 0;
  for (size_t w = 0; w < writers.size(); ++w) {
    for (const auto& f : writers[w]->failures()) ADD_FAILURE() << "writer " << w << ": " << f;
    for (const auto& [key, body] : writers[w]->acked()) {
      if (w % 2 == 0) {
        ++jobs;
        Resp r = any.admin("GET", "/api/v1/jobs/" + key);
        if (r.status != 200 && ++missing <= 5) ADD_FAILURE() << "acknowledged job " << key << " lost: " << r.describe();
      } else {
        ++batches;  // checked below through the samples it stored
      }
    }
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_GT(jobs, 30u) << "too little load to prove anything";
  EXPECT_GT(batches, 30u) << "too little load to prove anything";
  // Usage: each acknowledged batch held one sample at its own instant on its node and GPU.
  for (size_t i = 0; i < 3; ++i) {
    const auto acked = writers[2 * i + 1]->acked();
    Resp pts = expect_2xx(any.admin("GET", "/api/v1/usage/gpus?node=node-" + std::to_string(1 + i % 2) +
                                               "&gpu=" + std::to_string(i) + "&from=" + format_rfc3339(sample_at) +
                                               "&to=" + format_rfc3339(sample_at + 1'000'000) + "&limit=100000"),
                          "usage");
    std::set<std::string> stored;
    for (const json& p : pts.body.at("points")) stored.insert(p.value("at", ""));
    size_t lost = 0;
    for (const auto& [key, body] : acked) {
      const int k = std::stoi(key.substr(key.find(':') + 1));
      if (!stored.count(format_rfc3339(sample_at + k)) && ++lost <= 5)
        ADD_FAILURE() << "acknowledged usage batch " << key << " lost";
    }
    EXPECT_EQ(lost, 0u) << "server " << i;
  }

  // The allocation ledger: no GPU held by two runs at once, no job running twice at once.
  const auto allocs = failover_allocations(any);
  ASSERT_GT(allocs.size(), 10u) << "the scheduler ran too little to prove anything";
  const TimeMs open_end = INT64_MAX;
  std::map<std::pair<std::string, int64_t>, std::vector<std::pair<TimeMs, TimeMs>>> by_gpu;
  std::map<std::string, std::vector<std::pair<TimeMs, TimeMs>>> by_job;
  for (const json& a : allocs) {
    const TimeMs from = failover_ms_of(a.value("requested_at", json()), 0), to = failover_ms_of(a.value("ended_at", json()), open_end);
    by_job[a.value("job_id", "")].push_back({from, to});
    for (const json& p : a.value("placement", json::array()))
      for (const json& g : p.value("gpus", json::array())) by_gpu[{p.value("node_id", ""), g.get<int64_t>()}].push_back({from, to});
  }
  auto overlaps = [](std::vector<std::pair<TimeMs, TimeMs>> v) {
    std::sort(v.begin(), v.end());
    for (size_t k = 1; k < v.size(); ++k)
      if (v[k].first < v[k - 1].second) return true;
    return false;
  };
  for (const auto& [gpu, spans] : by_gpu)
    EXPECT_FALSE(overlaps(spans)) << "GPU " << gpu.second << " of node " << gpu.first << " held by two runs at once";
  for (const auto& [job, spans] : by_job) EXPECT_FALSE(overlaps(spans)) << "job " << job << " ran twice at once";

  // Each acknowledged job ran once, to its end.
  for (size_t w = 0; w < writers.size(); w += 2)
    for (const auto& [name, body] : writers[w]->acked()) {
      Resp r = any.admin("GET", "/api/v1/jobs/" + name);
      if (r.status != 200) continue;  // reported above
      EXPECT_EQ(r.body["status"].value("state", ""), "succeeded") << name;
      EXPECT_EQ(by_job[r.body.value("id", "")].size(), 1u) << name << " ran " << by_job[r.body.value("id", "")].size() << " times";
    }

  std::sort(takeover_s.begin(), takeover_s.end());
  std::printf("failover: %zu jobs and %zu usage batches acknowledged, %zu allocations, queue worked off in %.1f s "
              "after the writers stopped; takeover after kill -9 (lease 3 s): p50 %.2f s, max %.2f s\n",
              jobs, batches, allocs.size(), drain_s, takeover_s[takeover_s.size() / 2], takeover_s.back());
  ::testing::Test::RecordProperty("takeover_p50_ms", static_cast<int>(takeover_s[takeover_s.size() / 2] * 1000));
  ::testing::Test::RecordProperty("takeover_max_ms", static_cast<int>(takeover_s.back() * 1000));

  // The month's invoice is the one a single server bills for the same acknowledged writes: one
  // server on SQLite, the same world, every acknowledged job and usage batch sent to it once.
  const json billed = failover_invoice(any, "acme", month);
  size_t lines = 0;
  for (const json& section : billed.value("sections", json::array())) lines += section.value("lines", json::array()).size();
  EXPECT_GE(lines, jobs) << "fewer invoice lines than jobs: the comparison would prove little\n" << billed.dump(1);
  servers.clear();  // the two cores for the replay
  ServerProcess single({"--sched-interval-ms", "200", "--cold-start-ms", "500", "--no-rate-limits", "--firewall-interval-s", "0"});
  failover_world(single);
  httplib::Client c = single.client();
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);  // else each request waits out Nagle and a delayed ACK: 40 ms
  const httplib::Headers auth{{"Authorization", "Bearer " + single.admin_token()}};
  const auto replay0 = SteadyClock::now();
  for (size_t w = 0; w < writers.size(); ++w)
    for (const auto& [key, body] : writers[w]->acked()) {
      auto res = c.Post(w % 2 == 0 ? "/api/v1/jobs" : "/api/v1/usage", auth, body.dump(), "application/json");
      ASSERT_TRUE(res && res->status == 201) << "replaying " << key << ": " << (res ? res->body : "no answer");
    }
  const double posted_s = std::chrono::duration<double>(SteadyClock::now() - replay0).count();
  ASSERT_TRUE(failover_drained(single, 300s)) << failover_unfinished(single) << " jobs still unfinished in the replay";
  const double replay_s = std::chrono::duration<double>(SteadyClock::now() - replay0).count();
  if (format_rfc3339(SystemClock().now()).substr(0, 7) != month)
    GTEST_SKIP() << "the run crossed the end of " << month << ": its invoice is split over two months";
  const json replayed = failover_invoice(single, "acme", month);
  ASSERT_EQ(replayed, billed) << "the month's invoice after five failovers differs from a single server's replay:\n"
                              << failover_difference(billed, replayed);
  std::printf("failover: the month's invoice (%zu lines) equals a single server's replay of the acknowledged "
              "writes (replayed in %.1f s, %.1f s of it sending): %s\n",
              lines, replay_s, posted_s, billed.value("totals", json()).dump().c_str());
}

// Three servers started at the same moment on an empty database: all come up, one leads, there
// is one admin user, and each server's admin token works on every server.
TEST(PostgresFailover, ThreeServersStartedAtOnceOnAnEmptyDatabase) {
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  std::vector<std::unique_ptr<ServerProcess>> servers(3);
  std::vector<std::string> errors(3);
  // A child's parent-death signal (server_fixture.cc) follows the thread that forked it: the
  // starting threads live until the servers are gone.
  std::promise<void> finished;
  std::shared_future<void> done = finished.get_future().share();
  std::atomic<int> started{0};
  std::vector<std::thread> starting;
  for (size_t i = 0; i < 3; ++i)
    starting.emplace_back([&, i] {
      try {
        servers[i] = std::make_unique<ServerProcess>(failover_args((*db)->uri()));
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
      ++started;
      done.wait();
    });
  struct Release {
    std::vector<std::unique_ptr<ServerProcess>>& servers;
    std::promise<void>& finished;
    std::vector<std::thread>& threads;
    ~Release() {
      for (auto& s : servers) s.reset();
      finished.set_value();
      for (auto& t : threads) t.join();
    }
  } release{servers, finished, starting};
  while (started < 3) std::this_thread::sleep_for(10ms);
  for (size_t i = 0; i < 3; ++i) ASSERT_TRUE(servers[i]) << "server " << i << " did not start: " << errors[i];
  int leaders = 0;
  for (auto& s : servers) {
    const json r = failover_readyz(s->url());
    ASSERT_TRUE(r.is_object()) << s->url() << " does not answer /readyz: " << s->req("GET", "/readyz", "").describe()
                               << s->log();
    leaders += r["checks"].value("role", "") == "leader";
  }
  EXPECT_EQ(leaders, 1);
  for (auto& s : servers) {
    Resp users = s->admin("GET", "/api/v1/users?name=admin");
    ASSERT_EQ(users.status, 200) << users.describe();
    EXPECT_EQ(users.body.at("items").size(), 1u) << users.describe();
    for (auto& other : servers)
      EXPECT_EQ(other->req("GET", "/api/v1/tenants", s->admin_token()).status, 200) << "a token from " << s->url();
  }
}

TEST(PostgresFailover, APausedLeaderIsDeposedAndExitsOnItsNextWrite) {
  auto db = PgTestDatabase::create();
  ASSERT_TRUE(db) << db.error().message;
  ServerProcess a(failover_args((*db)->uri()));
  ServerProcess b(failover_args((*db)->uri()));
  ASSERT_EQ(failover_readyz(a.url())["checks"].value("role", ""), "leader") << a.listening_event().dump() << a.log();
  ASSERT_EQ(failover_readyz(b.url())["checks"].value("role", ""), "follower");
  a.send_signal(SIGSTOP);
  const auto t0 = SteadyClock::now();
  while (failover_readyz(b.url())["checks"].value("role", "") != "leader" && SteadyClock::now() - t0 < 20s)
    std::this_thread::sleep_for(50ms);
  ASSERT_EQ(failover_readyz(b.url())["checks"].value("role", ""), "leader") << b.log();
  a.send_signal(SIGCONT);  // it still believes it leads: its next fenced write finds the lease taken
  ASSERT_TRUE(a.wait_exited(10s)) << "the deposed leader kept running: " << a.log();
  EXPECT_EQ(a.last_exit_status(), 3) << a.log();
  EXPECT_NE(a.log().find("leader_deposed"), std::string::npos) << a.log();
  // The new leader works on: a job submitted to it is placed.
  expect_2xx(b.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a")), "supplier");
  expect_2xx(b.admin("POST", "/api/v1/nodes", node_doc("sup-a", "node-1")), "node");
  expect_2xx(b.admin("POST", "/api/v1/offers", offer_doc("sup-a", "offer-a")), "offer");
  acme_and_beta(b);
  const std::string id = expect_2xx(b.admin("POST", "/api/v1/jobs", job_doc("vision", "after")), "job").body.at("id");
  wait_for(b, "/api/v1/jobs/" + id, [](const json& j) { return j.value("status", json::object()).value("state", "") == "running"; });
}

}  // namespace
}  // namespace gpurent::testing
