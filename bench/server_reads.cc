// Benchmark: API reads/s through HTTP with one `gpurent serve` and with three on the same
// PostgreSQL database (issue 22: several servers, one leader). Starts a private PostgreSQL 15
// cluster and a database (store/pg_test_cluster.h; $GPURENT_TEST_PG_URL names another server),
// then the real binary as child processes: `gpurent serve --db postgresql://… --state-dir DIR
// --port 0 --no-rate-limits`, the first one with --demo (it leads and seeds the demo world: 52
// nodes, 11 jobs, and its simulated meter keeps writing usage in the background, as a live leader
// would), the others followers. K client threads (default 6: two per server when three), each
// with one kept-alive connection (cpp-httplib) and the admin token, send GETs as fast as they are
// answered, after a 1 s warm-up:
//  * GET /api/v1/nodes?limit=100 (52 nodes, about 110 KB of JSON each answer);
//  * GET /api/v1/jobs/{id}, cycling over the demo's jobs (a point read, about 1 KB).
// First all K threads against the first server alone, then (two more servers started) the K
// threads spread round-robin over the three. Printed: requests/s, per server, and the CPU used
// over the window, in cores, from /proc: the benchmark's client threads, the gpurent servers, the
// PostgreSQL cluster (its postmaster's processes) and the rest (other work on the machine); and
// requests per second of the servers' CPU ("per core": requests/s over their cores), which says
// whether more servers did more with the same CPU or only got more of it. A non-200 answer fails
// the run.
// Not measured: writes (bench/store_backends, bench/http_load), a load balancer, TLS, servers on
// machines of their own: on one machine the clients, the three servers and PostgreSQL share the
// same cores, so more servers only help as far as one server left cores idle.
// The binary: $GPURENT_BIN, else `gpurent` beside this benchmark (the build folder), else
// build/gpurent under the source tree. Children, state folders and the cluster are removed at the
// end, also on an error or Ctrl-C (the children also die with this process: PR_SET_PDEATHSIG).
// Usage: server_reads [SECONDS] [CLIENT_THREADS]   (default 5 s per measurement, 6 threads)
#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "store/pg_test_cluster.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kMaxServers = 3;
// Children to kill on the way out; written before a child can be signalled, read from handlers.
volatile pid_t g_pids[kMaxServers] = {0, 0, 0};
std::string g_state_root;

void kill_children() {
  for (auto& p : g_pids)
    if (p > 0) {
      ::kill(p, SIGKILL);
      ::waitpid(p, nullptr, 0);
      p = 0;
    }
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "server_reads: %s\n", what.c_str());
  std::exit(1);  // atexit: the children; static destructors: the cluster
}

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string gpurent_bin() {
  if (const char* b = std::getenv("GPURENT_BIN"); b != nullptr && *b != '\0') return b;
  std::error_code ec;
  const fs::path beside = fs::read_symlink("/proc/self/exe", ec).parent_path() / "gpurent";
  if (!ec && access(beside.c_str(), X_OK) == 0) return beside.string();
  return std::string(GPURENT_SOURCE_DIR) + "/build/gpurent";
}

struct Server {
  pid_t pid = 0;
  int out_fd = -1;
  std::string dir, url;
  json listening;
  std::thread drain;  // reads the rest of stdout so the child never blocks on it
};

// Starts one server; returns once it printed its {"event":"listening"} line.
void start_server(Server& s, int index, const std::string& bin, const std::string& db_uri, bool demo) {
  s.dir = g_state_root + "/server" + std::to_string(index + 1);
  fs::create_directories(s.dir);
  std::vector<std::string> args = {bin,    "serve",       "--port", "0",           "--host", "127.0.0.1",       "--db",
                                   db_uri, "--state-dir", s.dir,    "--log-level", "warn",   "--no-rate-limits"};
  if (demo) args.push_back("--demo");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) die("pipe2 failed");
  const int log_fd = ::open((s.dir + "/server.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) die("cannot open " + s.dir + "/server.log");
  const pid_t pid = ::fork();
  if (pid < 0) die("fork failed");
  if (pid == 0) {  // child: async-signal-safe calls only until exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  g_pids[index] = pid;
  ::close(out[1]);
  ::close(log_fd);
  s.pid = pid;
  s.out_fd = out[0];

  std::string line;
  const auto deadline = Clock::now() + std::chrono::seconds(180);  // --demo seeds before it listens
  for (bool done = false; !done;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0)
      die("server " + std::to_string(index + 1) + ": no listening line in 180 s; log:\n" +
          read_file(s.dir + "/server.log"));
    pollfd p{s.out_fd, POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    char c;
    const ssize_t r = ::read(s.out_fd, &c, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      die("server " + std::to_string(index + 1) + " exited before listening; log:\n" +
          read_file(s.dir + "/server.log"));
    if (c == '\n')
      done = true;
    else
      line.push_back(c);
  }
  s.listening = json::parse(line, nullptr, false);
  if (s.listening.is_discarded() || s.listening.value("event", "") != "listening")
    die("unexpected first line: " + line);
  s.url = s.listening.value("url", "");
  const int fd = s.out_fd;
  s.drain = std::thread([fd] {
    char buf[4096];
    while (::read(fd, buf, sizeof buf) > 0 || errno == EINTR) {
    }
  });
}

void stop_servers(std::vector<Server>& servers) {
  for (auto& s : servers)
    if (s.pid > 0) ::kill(s.pid, SIGTERM);
  for (size_t i = 0; i < servers.size(); ++i) {
    auto& s = servers[i];
    if (s.pid <= 0) continue;
    int status = 0;
    const auto deadline = Clock::now() + std::chrono::seconds(15);
    while (::waitpid(s.pid, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        ::kill(s.pid, SIGKILL);
        ::waitpid(s.pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    g_pids[i] = 0;
    s.pid = 0;
    if (s.drain.joinable()) s.drain.join();
    ::close(s.out_fd);
  }
}

// CPU time, in seconds: the whole machine's busy and total time (/proc/stat), and a process's.
struct MachineCpu {
  double busy = 0, total = 0;
};
MachineCpu machine_cpu() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;
  double v[10] = {};
  for (double& x : v) in >> x;
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  double total = 0;
  for (int i = 0; i < 8; ++i) total += v[i];  // guest time is already in user
  return {(total - v[3] - v[4]) / hz, total / hz};
}
double process_cpu(pid_t pid) {
  const std::string text = read_file("/proc/" + (pid ? std::to_string(pid) : std::string("self")) + "/stat");
  const auto close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream in(text.substr(close_paren + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {  // fields 14 and 15: utime, stime
    if (i == 14) utime = std::atof(field.c_str());
    if (i == 15) stime = std::atof(field.c_str());
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The private cluster's postmaster (from its postmaster.pid), 0 when the server is not ours.
pid_t postmaster_pid() {
  auto cluster = gpurent::PgTestCluster::shared();
  if (!cluster) return 0;
  const std::string& url = (*cluster)->admin_url();  // host='<folder>' port=... (start_private)
  const auto at = url.find("host='");
  if (at == std::string::npos) return 0;
  const auto end = url.find('\'', at + 6);
  std::ifstream in(url.substr(at + 6, end - at - 6) + "/data/postmaster.pid");
  long pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

// CPU of the postmaster and its children (the backends, the WAL writer, ...), in seconds.
double postgres_cpu(pid_t postmaster) {
  if (postmaster <= 0) return 0;
  double sum = process_cpu(postmaster);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const std::string text = read_file("/proc/" + name + "/stat");
    const auto close_paren = text.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream in(text.substr(close_paren + 2));
    std::string state;
    long ppid = 0;
    in >> state >> ppid;
    if (ppid == postmaster) sum += process_cpu(static_cast<pid_t>(std::atol(name.c_str())));
  }
  return sum;
}

struct Measure {
  double rate = 0;
  std::vector<double> per_server;
  double machine_cores = 0, client_cores = 0, server_cores = 0, pg_cores = 0, other_cores = 0, cores = 0;
};

// `threads` clients spread round-robin over `urls`, each GETting path(i) for i = 0, 1, ...
Measure measure(const std::vector<std::string>& urls, const std::vector<pid_t>& pids, const std::string& token,
                pid_t postmaster, const std::function<std::string(int64_t)>& path, int threads, double seconds) {
  std::vector<std::atomic<int64_t>> counts(urls.size());
  std::atomic<bool> stop{false};
  std::mutex err_mu;
  std::string error;
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      const size_t server = static_cast<size_t>(t) % urls.size();
      httplib::Client c(urls[server]);
      c.set_keep_alive(true);
      c.set_read_timeout(30, 0);
      const httplib::Headers auth{{"Authorization", "Bearer " + token}};
      for (int64_t i = t; !stop.load(std::memory_order_relaxed); i += threads) {
        const std::string p = path(i);
        auto r = c.Get(p, auth);
        if (!r || r->status != 200) {
          std::lock_guard lock(err_mu);
          if (error.empty())
            error = "GET " + p + " on " + urls[server] + ": " +
                    (r ? std::to_string(r->status) + " " + r->body.substr(0, 300) : httplib::to_string(r.error()));
          stop = true;
          return;
        }
        counts[server].fetch_add(1, std::memory_order_relaxed);
      }
    });
  std::this_thread::sleep_for(std::chrono::seconds(1));  // warm-up: connections, caches
  auto snapshot = [&] {
    std::vector<int64_t> v;
    for (auto& c : counts) v.push_back(c.load());
    return v;
  };
  auto servers_cpu = [&] {
    double s = 0;
    for (pid_t p : pids) s += process_cpu(p);
    return s;
  };
  const auto c0 = snapshot();
  const MachineCpu m0 = machine_cpu();
  const double self0 = process_cpu(0), srv0 = servers_cpu(), pg0 = postgres_cpu(postmaster);
  const auto t0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const auto c1 = snapshot();
  const double secs = since(t0);
  const MachineCpu m1 = machine_cpu();
  const double self1 = process_cpu(0), srv1 = servers_cpu(), pg1 = postgres_cpu(postmaster);
  stop = true;
  for (auto& t : ts) t.join();
  if (!error.empty()) die(error);
  Measure out;
  for (size_t i = 0; i < urls.size(); ++i) {
    out.per_server.push_back(static_cast<double>(c1[i] - c0[i]) / secs);
    out.rate += out.per_server.back();
  }
  out.machine_cores = (m1.busy - m0.busy) / secs;
  out.cores = (m1.total - m0.total) / secs;
  out.client_cores = (self1 - self0) / secs;
  out.server_cores = (srv1 - srv0) / secs;
  out.pg_cores = (pg1 - pg0) / secs;
  out.other_cores = std::max(0.0, out.machine_cores - out.client_cores - out.server_cores - out.pg_cores);
  return out;
}

void print(const char* what, int servers, const Measure& m) {
  std::string per;
  for (double r : m.per_server) per += (per.empty() ? "" : " + ") + std::to_string(static_cast<long>(r + 0.5));
  std::printf("%-20s %7d %10.0f  %-20s %5.2f of %.0f %7.2f %7.2f %7.2f %7.2f %10.0f\n", what, servers, m.rate,
              per.c_str(), m.machine_cores, m.cores, m.client_cores, m.server_cores, m.pg_cores, m.other_cores,
              m.server_cores > 0 ? m.rate / m.server_cores : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 5;
  const int threads = argc > 2 ? std::atoi(argv[2]) : 6;
  if (seconds <= 0 || threads < 3 || threads > 256) die("usage: server_reads [SECONDS>0] [CLIENT_THREADS 3..256]");
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string bin = gpurent_bin();
  if (access(bin.c_str(), X_OK) != 0) die(bin + " is not an executable: build it (ninja gpurent) or set GPURENT_BIN");

  auto db = gpurent::PgTestDatabase::create();
  if (!db) die("PostgreSQL: " + db.error().message);
  char tmpl[] = "/tmp/gpurent-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) die("mkdtemp failed");
  g_state_root = tmpl;
  // Registered after the cluster started, so it runs before the cluster is stopped.
  std::atexit([] {
    kill_children();
    std::error_code ec;
    if (!g_state_root.empty()) fs::remove_all(g_state_root, ec);
  });
  signal(SIGINT, [](int) { std::exit(130); });
  signal(SIGTERM, [](int) { std::exit(143); });

  std::vector<Server> servers(kMaxServers);
  auto t0 = Clock::now();
  start_server(servers[0], 0, bin, (*db)->uri(), /*demo=*/true);
  std::printf("server 1 (--demo, leader) listening at %s after %.1f s\n", servers[0].url.c_str(), since(t0));
  std::string token =
      read_file(servers[0].listening.value("admin_token_file", servers[0].dir + "/gpurent.admin-token"));
  while (!token.empty() && (token.back() == '\n' || token.back() == ' ')) token.pop_back();
  if (token.empty()) die("no admin token in " + servers[0].listening.dump());

  std::vector<std::string> job_ids;
  for (int attempt = 0; job_ids.empty(); ++attempt) {  // the demo's jobs may land just after it listens
    httplib::Client c(servers[0].url);
    auto r = c.Get("/api/v1/jobs?limit=100", httplib::Headers{{"Authorization", "Bearer " + token}});
    if (!r || r->status != 200) die("listing jobs failed" + (r ? ": " + r->body.substr(0, 300) : std::string()));
    const json page = json::parse(r->body);
    for (const auto& j : page.at("items")) job_ids.push_back(j.at("id"));
    if (job_ids.empty() && attempt == 100) die("the demo has no jobs after 10 s: " + r->body.substr(0, 300));
    if (job_ids.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  {
    httplib::Client c(servers[0].url);
    const httplib::Headers auth{{"Authorization", "Bearer " + token}};
    auto n = c.Get("/api/v1/nodes?limit=100", auth);
    auto j = c.Get("/api/v1/jobs/" + job_ids[0], auth);
    if (!n || n->status != 200 || !j || j->status != 200) die("a first GET failed");
    std::printf("answers: nodes?limit=100 %zu items, %zu bytes; jobs/{id} about %zu bytes (%zu jobs)\n",
                json::parse(n->body).at("items").size(), n->body.size(), j->body.size(), job_ids.size());
  }
  auto nodes = [](int64_t) { return std::string("/api/v1/nodes?limit=100"); };
  auto job = [&](int64_t i) { return "/api/v1/jobs/" + job_ids[static_cast<size_t>(i) % job_ids.size()]; };

  std::printf(
      "%d client threads (keep-alive), %.1f s per measurement after 1 s warm-up; CPU in cores over the window\n",
      threads, seconds);
  std::printf("%-20s %7s %10s  %-20s %12s %7s %7s %7s %7s %10s\n", "request", "servers", "requests/s", "per server",
              "machine busy", "client", "servers", "pg", "other", "per core");
  const pid_t postmaster = postmaster_pid();
  const Measure one_nodes = measure({servers[0].url}, {servers[0].pid}, token, postmaster, nodes, threads, seconds);
  print("GET nodes?limit=100", 1, one_nodes);
  const Measure one_job = measure({servers[0].url}, {servers[0].pid}, token, postmaster, job, threads, seconds);
  print("GET jobs/{id}", 1, one_job);

  for (int i = 1; i < kMaxServers; ++i) start_server(servers[i], i, bin, (*db)->uri(), /*demo=*/false);
  std::string roles;
  for (int i = 0; i < kMaxServers; ++i) {
    httplib::Client c(servers[i].url);
    auto r = c.Get("/readyz");
    const json ready = r ? json::parse(r->body, nullptr, false) : json();
    const std::string role =
        ready.is_object() ? ready.value(json::json_pointer("/checks/role"), std::string("?")) : "?";
    roles += (i ? ", " : "") + std::string("server ") + std::to_string(i + 1) + " " + role;
  }
  std::printf("three servers on one database: %s\n", roles.c_str());
  std::vector<std::string> urls;
  std::vector<pid_t> pids;
  for (auto& s : servers) {
    urls.push_back(s.url);
    pids.push_back(s.pid);
  }
  const Measure three_nodes = measure(urls, pids, token, postmaster, nodes, threads, seconds);
  print("GET nodes?limit=100", 3, three_nodes);
  const Measure three_job = measure(urls, pids, token, postmaster, job, threads, seconds);
  print("GET jobs/{id}", 3, three_job);

  stop_servers(servers);
  std::error_code ec;
  fs::remove_all(g_state_root, ec);
  g_state_root.clear();
  db->reset();
  std::printf("server_reads: %.0f requests/s with three servers (baseline: %.0f requests/s with one)\n",
              three_nodes.rate, one_nodes.rate);
  return 0;
}
