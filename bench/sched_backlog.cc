// bench/run sched_backlog [JOBS] [--gpurent BUILD/gpurent]
// What a deep queue costs everyone else. The scheduler's tick runs inside the single writer's
// transaction, so whatever it reads per tick is time every API write waits. Starts the real
// server (SQLite with fsync, rate limits off, ticks every second) with two 8-GPU nodes and an
// offer, measures 300 writes (PUT /api/v1/tenants/acme/billing, 10 ms apart: each spans about a
// third of a tick) with no job waiting — the baseline — then submits JOBS one-GPU jobs (default
// 5,000: 16 run, the rest wait) and measures the same 300 writes again, in the same run.
// Last line: sched_backlog: <max> ms max write wait with JOBS pending (baseline: <max> ms with none)
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench_server.h"

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

namespace {

struct Latency {
  double p50 = 0, p99 = 0, max = 0;
};

// 300 writes, 10 ms apart, on one kept-alive connection.
Latency measure_writes(httplib::Client& c, const httplib::Headers& auth) {
  std::vector<double> ms;
  for (int i = 0; i < 300; ++i) {
    const auto t0 = SteadyClock::now();
    auto r = c.Put("/api/v1/tenants/acme/billing", auth, R"({"payment":"postpaid"})", "application/json");
    if (!r || r->status != 200) {
      std::cerr << "sched_backlog: a write failed: " << (r ? r->body : "no answer") << "\n";
      std::exit(1);
    }
    ms.push_back(std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[ms.size() * 99 / 100], ms.back()};
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 5000;
  const std::string bin = bench::parse_args(argc, argv, jobs);
  bench::ServerChild server("sched_backlog", bin, {"--sched-interval-ms", "1000", "--tenant-max-jobs", "10000000"});
  if (!server.started()) {
    std::cerr << "sched_backlog: the server (" << bin << ") did not start\n";
    return 1;
  }
  const std::string url = server.url();
  auto client = server.client();
  httplib::Client& c = *client;
  const httplib::Headers auth = server.auth();
  auto post = [&](const std::string& path, const json& body) { server.post(c, path, body); };
  const std::string ex = std::string(GPURENT_SOURCE_DIR) + "/examples/";
  server.supplier_with_two_nodes(c);
  json offer = bench::yaml_file(ex + "offer.yaml");
  offer["supplier"] = "sup-a";
  offer["node_selector"] = {{"site", "site-a"}};
  post("/api/v1/offers", offer);
  post("/api/v1/tenants", json{{"name", "acme"}, {"currency", "CNY"}, {"contact_email", "ops@acme.example.com"}});
  json project = bench::yaml_file(ex + "project.yaml");
  project["tenant"] = "acme";
  post("/api/v1/projects", project);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const Latency base = measure_writes(c, auth);
  json job = bench::yaml_file(ex + "job.yaml");
  job["project"] = project["name"];
  job["workers"] = 1;
  job["gpus_per_worker"] = 1;
  job["resources"] = {{"cpu_cores", 8}, {"memory_gib", 64}};
  job["billing"].erase("max_price_per_gpu_hour");
  const auto s0 = SteadyClock::now();
  for (int i = 0; i < jobs; ++i) {
    job["name"] = "backlog-" + std::to_string(i);
    post("/api/v1/jobs", job);
  }
  const double submit_s = std::chrono::duration<double>(SteadyClock::now() - s0).count();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const Latency deep = measure_writes(c, auth);
  std::printf("the real server (%s; SQLite with fsync; ticks every 1 s; 2 nodes x 8 GPUs)\n", url.c_str());
  std::printf("  %d jobs submitted in %.1f s (%.0f/s)\n", jobs, submit_s, jobs / submit_s);
  std::printf("  300 writes, no job waiting:      p50 %.1f ms  p99 %.1f ms  max %.1f ms\n", base.p50, base.p99, base.max);
  std::printf("  300 writes, %d jobs waiting:  p50 %.1f ms  p99 %.1f ms  max %.1f ms\n", jobs - 16, deep.p50, deep.p99,
              deep.max);
  std::printf("sched_backlog: %.1f ms max write wait with %d pending (baseline: %.1f ms with none)\n", deep.max,
              jobs - 16, base.max);
  return 0;
}
