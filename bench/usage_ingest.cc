// Benchmark: HTTP usage ingest into SQLite. Runs the real server code (run_server, as `gpurent
// serve` does, synchronous=FULL: every acknowledged batch is fsynced) in this process on a
// temporary database and a loopback port, then POSTs /api/v1/usage over HTTP from 2 client
// threads: batches of B GPU samples (default 5000). Baseline in the same run: the same kind of
// samples posted one per request (one batch, one transaction, one fsync each), as an agent
// without batching would. Bodies are built before the clock starts.
// Usage: usage_ingest [BATCHES] [BATCH_SIZE]   (default 40 x 5000)
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/clock.h"
#include "core/yaml_json.h"
#include "server/server.h"

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

void die(const std::string& what) {
  std::fprintf(stderr, "usage_ingest: %s\n", what.c_str());
  std::exit(1);
}

// One batch body: `n` samples spread over the node's 8 GPUs, unique (GPU, time) per sample.
std::string body(const std::string& key, int64_t first, int n, gpurent::TimeMs base) {
  std::string out = "{\"idempotency_key\":\"" + key + "\",\"gpu_samples\":[";
  for (int k = 0; k < n; ++k) {
    const int64_t seq = first + k;
    const gpurent::TimeMs at = base + (seq / 8) * 10;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%s{\"at\":\"%s\",\"node\":\"node-1\",\"gpu\":%lld,\"utilization_pct\":%lld,\"memory_used_mib\":%lld,"
                  "\"power_mw\":%lld,\"sm_clock_mhz\":1980}",
                  k ? "," : "", gpurent::format_rfc3339(at).c_str(), static_cast<long long>(seq % 8),
                  static_cast<long long>(seq % 101), static_cast<long long>(40000 + seq % 1000),
                  static_cast<long long>(300000 + seq % 5000));
    out += buf;
  }
  return out + "]}";
}

// Posts bodies[i] for i = next++ from `threads` connections; returns seconds taken.
double post_all(const std::string& url, const std::string& token, const std::vector<std::string>& bodies, int threads) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  auto t0 = Clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      httplib::Client c(url);
      c.set_keep_alive(true);
      c.set_read_timeout(60, 0);
      c.set_write_timeout(60, 0);
      const httplib::Headers auth{{"Authorization", "Bearer " + token}};
      for (size_t i; (i = next++) < bodies.size() && !failed;) {
        auto r = c.Post("/api/v1/usage", auth, bodies[i], "application/json");
        if (!r || r->status != 201) {
          std::fprintf(stderr, "POST failed: %s\n",
                       r ? (std::to_string(r->status) + " " + r->body.substr(0, 300)).c_str()
                         : httplib::to_string(r.error()).c_str());
          failed = true;
        }
      }
    });
  for (auto& t : ts) t.join();
  if (failed) die("a POST failed");
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::atoi(argv[1]) : 40;
  const int batch_size = argc > 2 ? std::atoi(argv[2]) : 5000;
  const int singles = 400;
  if (batches <= 0 || batch_size <= 0 || batch_size > 100000)
    die("usage: usage_ingest [BATCHES>0] [BATCH_SIZE 1..100000]");

  char tmpl[] = "/tmp/gpurent-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  gpurent::ServerOptions opts;
  opts.port = free_port();
  opts.db_path = dir + "/bench.db";
  opts.log_level = "warn";
  opts.scheduler = false;
  opts.threads = 4;
  opts.max_body_bytes = 64u << 20;  // a 5000-sample batch is ~0.9 MB; larger batch sizes need more
  // The server's signal thread stops it on SIGTERM; block the signals here so that thread gets them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread server([&] { gpurent::run_server(opts); });
  const std::string url = "http://127.0.0.1:" + std::to_string(opts.port);
  httplib::Client c(url);
  for (int i = 0; i < 500 && !c.Get("/healthz"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::string token;
  std::ifstream(opts.db_path + ".admin-token") >> token;
  const httplib::Headers auth{{"Authorization", "Bearer " + token}};
  auto post = [&](const std::string& path, const json& j) {
    auto r = c.Post(path, auth, j.dump(), "application/json");
    if (!r || r->status != 201) die("setup POST " + path + " failed" + (r ? ": " + r->body : ""));
  };
  // The shipped examples, renamed (as the API tests do).
  auto example = [](const char* file) {
    std::ifstream in(std::string(GPURENT_SOURCE_DIR) + "/examples/" + file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto j = gpurent::yaml_to_json(text);
    if (!j) die(std::string("cannot read examples/") + file);
    return *j;
  };
  json supplier = example("supplier.yaml");
  supplier["name"] = "sup-a";
  supplier["sites"] = json::array({{{"name", "site-a"}, {"region", "cn-east"}, {"city", "Shanghai"}, {"tier", 3}}});
  post("/api/v1/suppliers", supplier);
  json node = example("node.yaml");
  node["name"] = "node-1";
  node["supplier"] = "sup-a";
  node["site"] = "site-a";
  post("/api/v1/nodes", node);

  const gpurent::TimeMs base = gpurent::SystemClock().now() - 24 * 3600'000LL;
  std::vector<std::string> big, small;
  for (int i = 0; i < batches; ++i)
    big.push_back(body("bench-" + std::to_string(i), static_cast<int64_t>(i) * batch_size, batch_size, base));
  const int64_t after = static_cast<int64_t>(batches) * batch_size;
  for (int i = 0; i < singles; ++i) small.push_back(body("single-" + std::to_string(i), after + i, 1, base));

  const double secs = post_all(url, token, big, 2);
  const double rate = static_cast<double>(after) / secs;
  const double single_secs = post_all(url, token, small, 2);
  const double baseline = singles / single_secs;
  kill(getpid(), SIGTERM);
  server.join();
  std::filesystem::remove_all(dir);
  std::printf("batched: %d batches x %d GPU samples in %.2f s; one sample per request: %d requests in %.2f s\n",
              batches, batch_size, secs, singles, single_secs);
  std::printf("usage_ingest: %.0f samples/s (baseline: %.0f samples/s)\n", rate, baseline);
  return 0;
}
