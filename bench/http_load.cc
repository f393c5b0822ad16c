// bench/run http_load [--gpurent BUILD/gpurent] [--seconds N]
// The HTTP front under load, measured with wrk (Debian's package) on this machine:
//  1. engines: the same tiny authenticated GET handler behind cpp-httplib's server, tuned
//     (TCP_NODELAY, 8 worker threads, keep-alive: the baseline), and behind gpurent's HttpServer
//     (Boost.Beast, 8 workers); wrk requests/s and latency percentiles; then the latency of a
//     normal GET while 8 and 500 slow-header clients hold connections open.
//  2. with --gpurent: the real server (SQLite with fsync, rate limits off) with a small world:
//     authenticated GETs, job submissions and usage batches, each through wrk.
// Last line: http_load: <GET/s> req/s p99 <ms> ms (baseline: <GET/s> req/s p99 <ms> ms httplib tuned)
#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "core/yaml_json.h"
#include "server/http/http_server.h"
#include "server/http/router.h"

using namespace gpurent;
using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

struct WrkResult {
  double rps = 0, p50_ms = 0, p99_ms = 0;
  long non2xx = 0, errors = 0, requests = 0;
};

double to_ms(const std::string& v, const std::string& unit) {
  double x = std::stod(v);
  if (unit == "us") return x / 1000;
  if (unit == "s") return x * 1000;
  return x;
}

std::string run_cmd(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  while (p && std::fgets(buf, sizeof buf, p)) out += buf;
  if (p) ::pclose(p);
  return out;
}

WrkResult wrk(const std::string& url, int seconds, int conns, const std::string& extra) {
  std::string out = run_cmd("wrk -t1 -c" + std::to_string(conns) + " -d" + std::to_string(seconds) + "s --latency " +
                            extra + " " + url);
  WrkResult r;
  std::smatch m;
  if (std::regex_search(out, m, std::regex(R"(Requests/sec:\s+([0-9.]+))"))) r.rps = std::stod(m[1]);
  if (std::regex_search(out, m, std::regex(R"(50%\s+([0-9.]+)(us|ms|s))"))) r.p50_ms = to_ms(m[1], m[2]);
  if (std::regex_search(out, m, std::regex(R"(99%\s+([0-9.]+)(us|ms|s))"))) r.p99_ms = to_ms(m[1], m[2]);
  if (std::regex_search(out, m, std::regex(R"(Non-2xx or 3xx responses:\s+([0-9]+))"))) r.non2xx = std::stol(m[1]);
  if (std::regex_search(out, m, std::regex(R"(([0-9]+) requests in)"))) r.requests = std::stol(m[1]);
  if (std::regex_search(
          out, m, std::regex(R"(Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+))")))
    r.errors = std::stol(m[1]) + std::stol(m[2]) + std::stol(m[3]) + std::stol(m[4]);
  if (r.rps == 0) std::cerr << "wrk said:\n" << out << "\n";
  return r;
}

void print(const std::string& what, const WrkResult& r) {
  std::printf("  %-44s %10.0f req/s  p50 %7.2f ms  p99 %7.2f ms  non-2xx %ld  socket errors %ld\n", what.c_str(), r.rps,
              r.p50_ms, r.p99_ms, r.non2xx, r.errors);
}

const char* kToken = "gpr_0000000000000000000000000000000000000000000000000000000000000000";

// The client connections (ports) that got at least one answer: a server that serves only as many
// connections as it has threads shows it here, not in wrk's latency figures (which count only
// answered requests).
std::mutex served_mu;
std::map<int, SteadyClock::time_point> served_ports;  // port -> its first answer

// The handler both engines serve: checks the bearer token and answers a small JSON document.
void ping(const httplib::Request& req, httplib::Response& res) {
  {
    std::lock_guard<std::mutex> g(served_mu);
    served_ports.emplace(req.remote_port, SteadyClock::now());
  }
  if (req.get_header_value("Authorization") != std::string("Bearer ") + kToken) {
    res.status = 401;
    return;
  }
  static const std::string body = json{{"items", json::array({{{"id", "ten_1"}, {"name", "acme"}}})}}.dump();
  res.status = 200;
  res.set_content(body, "application/json");
}

int connect_to(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The slowest of 10 GETs on fresh connections while `slow` clients each hold a connection with
// half-sent headers; -1 when a GET failed.
double get_under_slowloris(int port, int slow) {
  std::vector<int> fds;
  for (int i = 0; i < slow; ++i) {
    int fd = connect_to(port);
    if (fd >= 0) {
      ::send(fd, "GET /ping HTTP/1.1\r\nHo", 22, MSG_NOSIGNAL);
      fds.push_back(fd);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  double worst = 0;
  for (int i = 0; i < 10; ++i) {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(5, 0);
    c.set_read_timeout(5, 0);
    auto t0 = SteadyClock::now();
    auto r = c.Get("/ping", {{"Authorization", std::string("Bearer ") + kToken}});
    double ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
    if (!r || r->status != 200) {
      worst = -1;
      break;
    }
    worst = std::max(worst, ms);
  }
  for (int fd : fds) ::close(fd);
  return worst;
}

std::string slow_text(double ms) { return ms < 0 ? std::string("timed out") : std::to_string(ms).substr(0, 6) + " ms"; }

struct Figures {
  WrkResult get, get256;
  size_t served256 = 0;  // of the 256 connections, how many got an answer
  double slow8 = 0, slow500 = 0;
};

// Every figure of one engine listening on `port`.
Figures measure(int port, int seconds) {
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/ping";
  const std::string auth = std::string("-H 'Authorization: Bearer ") + kToken + "'";
  Figures f;
  f.get = wrk(url, seconds, 32, auth);
  {
    std::lock_guard<std::mutex> g(served_mu);
    served_ports.clear();
  }
  f.get256 = wrk(url, seconds, 256, auth);
  {
    // Answers given after wrk stopped (requests left in the sockets of connections it waited on)
    // do not count.
    const auto end = SteadyClock::now() - std::chrono::milliseconds(500);
    std::lock_guard<std::mutex> g(served_mu);
    for (const auto& [p, at] : served_ports) f.served256 += at < end ? 1 : 0;
  }
  f.slow8 = get_under_slowloris(port, 8);
  f.slow500 = get_under_slowloris(port, 500);
  return f;
}

Figures engines_httplib(int seconds) {
  httplib::Server srv;
  srv.new_task_queue = [] { return new httplib::ThreadPool(8); };
  srv.set_tcp_nodelay(true);
  srv.set_keep_alive_max_count(1000000);
  srv.set_read_timeout(30, 0);
  srv.Get("/ping", ping);
  int port = srv.bind_to_any_port("127.0.0.1");
  std::thread t([&] { srv.listen_after_bind(); });
  while (!srv.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  Figures f = measure(port, seconds);
  srv.stop();
  t.join();
  return f;
}

Figures engines_beast(int seconds) {
  Router router;
  router.Get("/ping", ping);
  HttpServerOptions o;
  o.port = 0;
  o.worker_threads = 8;
  o.rate_limits = false;
  HttpServer srv(router, o);
  int port = srv.bind().value();
  std::thread t([&] { srv.run(); });
  Figures f = measure(port, seconds);
  srv.stop();
  t.join();
  return f;
}

// --- the real server ---------------------------------------------------------------------------

json yaml_file(const std::string& path) { return yaml_to_json(run_cmd("cat " + path)).value(); }

void real_server(const std::string& bin, int seconds) {
  std::string dir = std::filesystem::temp_directory_path() / ("gpurent-http-load-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string out_file = dir + "/stdout";
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(fd, 1);
    int err = ::open((dir + "/log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(err, 2);
    ::execl(bin.c_str(), bin.c_str(), "serve", "--port", "0", "--db", (dir + "/g.db").c_str(), "--no-scheduler",
            "--no-rate-limits", "--tenant-max-jobs", "10000000", "--log-level", "warn", "--firewall-interval-s", "0",
            nullptr);
    ::_exit(127);
  }
  std::string url;
  for (int i = 0; i < 200 && url.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(out_file);
    std::string line;
    if (std::getline(in, line) && !line.empty()) url = json::parse(line).value("url", "");
  }
  if (url.empty()) {
    std::cerr << "the server did not start: " << run_cmd("cat " + dir + "/log") << "\n";
    ::kill(pid, SIGKILL);
    return;
  }
  std::string token = run_cmd("cat " + dir + "/g.db.admin-token");
  token.erase(token.find_last_not_of("\n ") + 1);
  httplib::Client c(url);
  httplib::Headers auth{{"Authorization", "Bearer " + token}};
  auto post = [&](const std::string& path, const json& body) {
    auto r = c.Post(path, auth, body.dump(), "application/json");
    if (!r || r->status >= 300) std::cerr << path << ": " << (r ? r->body : "no answer") << "\n";
  };
  const std::string ex = std::string(GPURENT_SOURCE_DIR) + "/examples/";
  json sup = yaml_file(ex + "supplier.yaml");
  post("/api/v1/suppliers", sup);
  json node = yaml_file(ex + "node.yaml");
  post("/api/v1/nodes", node);
  post("/api/v1/tenants", json{{"name", "acme"}, {"currency", "USD"}, {"contact_email", "ops@acme.example"}});
  json project = yaml_file(ex + "project.yaml");
  project["tenant"] = "acme";
  post("/api/v1/projects", project);
  json job = yaml_file(ex + "job.yaml");
  job["project"] = project["name"];
  const std::string node_name = node["name"];

  std::printf("\nthe real server (%s; SQLite with fsync, rate limits off):\n", url.c_str());
  const std::string h = "-H 'Authorization: Bearer " + token + "'";
  WrkResult get = wrk(url + "/api/v1/tenants", seconds, 32, h);
  print("GET /api/v1/tenants, 32 connections", get);
  // Job submissions and usage batches: each request a new name / key (a wrk Lua script).
  auto lua = [&](const std::string& path, const std::string& body_with_slot) {
    std::string file = dir + "/" + std::to_string(std::hash<std::string>{}(path)) + ".lua";
    std::string b = json(body_with_slot).dump();
    std::ofstream(file) << "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
                        << "wrk.headers[\"Authorization\"] = \"Bearer " << token << "\"\n"
                        << "local n = 0\nlocal id = math.random(1, 1000000000)\n"
                        << "request = function()\n  n = n + 1\n  local body = string.gsub(" << b
                        << ", \"SLOT\", id .. \"-\" .. n)\n  return wrk.format(nil, \"" << path
                        << "\", nil, body)\nend\n";
    return "-s " + file;
  };
  json j = job;
  j["name"] = "SLOT";
  WrkResult jobs = wrk(url + "/api/v1/jobs", seconds, 8, lua("/api/v1/jobs", j.dump()));
  print("POST /api/v1/jobs, 8 connections", jobs);
  json batch = {{"idempotency_key", "SLOT"}, {"gpu_samples", json::array()}};
  for (int g = 0; g < 8; ++g)
    batch["gpu_samples"].push_back(
        {{"at", "2026-11-30T00:00:00Z"}, {"node", node_name}, {"gpu", g}, {"utilization_pct", 50}});
  // Each batch needs its own instant per GPU: the key's slot goes into nothing else, so the
  // samples repeat; the server stores each batch once under its key.
  WrkResult usage = wrk(url + "/api/v1/usage", seconds, 8, lua("/api/v1/usage", batch.dump()));
  print("POST /api/v1/usage (8 GPU samples), 8 connections", usage);
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  ::signal(SIGPIPE, SIG_IGN);
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &rl);
  int seconds = 5;
  std::string bin;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seconds" && i + 1 < argc)
      seconds = std::stoi(argv[++i]);
    else if (a == "--gpurent" && i + 1 < argc)
      bin = argv[++i];
  }
  if (run_cmd("command -v wrk").empty()) {
    std::cerr << "http_load: wrk is not installed (apt-get install wrk; scripts/install-deps.sh does)\n";
    return 2;
  }
  std::printf("engines: the same small authenticated GET, wrk -t1 -c32 -d%ds on this machine (%u cores)\n", seconds,
              std::thread::hardware_concurrency());
  Figures base = engines_httplib(seconds);
  Figures ours = engines_beast(seconds);
  print("cpp-httplib 0.11 tuned, 32 connections", base.get);
  print("gpurent HttpServer (Beast), 32 connections", ours.get);
  print("cpp-httplib 0.11 tuned, 256 connections", base.get256);
  print("gpurent HttpServer (Beast), 256 connections", ours.get256);
  std::printf("  connections of the 256 answered while wrk ran:  httplib %zu;  HttpServer %zu\n", base.served256,
              ours.served256);
  std::printf("  slowest of 10 GETs with 8 / 500 slow-header clients:  httplib %s / %s;  HttpServer %s / %s\n",
              slow_text(base.slow8).c_str(), slow_text(base.slow500).c_str(), slow_text(ours.slow8).c_str(),
              slow_text(ours.slow500).c_str());
  if (!bin.empty()) real_server(bin, seconds);
  std::printf("http_load: %.0f req/s p99 %.2f ms (baseline: %.0f req/s p99 %.2f ms httplib tuned)\n", ours.get.rps,
              ours.get.p99_ms, base.get.rps, base.get.p99_ms);
  return 0;
}
