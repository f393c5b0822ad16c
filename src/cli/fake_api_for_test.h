// Test helper (header-only, used by the CLI's *_test.cc): an in-process HTTP server on a free
// loopback port that records every request and answers from a table of canned responses keyed by
// "METHOD /path" (query string excluded; a "?k=v&..." suffix matches a specific query first).
// Unmatched requests get 404 problem+json. A route may instead answer through a function of the
// request (on_call), for a stateful fake such as a chunked upload; it runs on the server thread
// under the fake's lock, so it must not call the FakeApi. Thread-safe (the server thread records,
// tests read).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.h"
#include "core/clock.h"

namespace gpurent::testing {

struct Recorded {
  std::string method;
  std::string path;
  std::multimap<std::string, std::string> params;
  std::string authorization;
  std::string content_type;
  std::string body;
};

struct Canned {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};

class FakeApi {
 public:
  FakeApi() {
    auto handler = [this](const httplib::Request& req, httplib::Response& res) { handle(req, res); };
    srv_.Get(".*", handler);
    srv_.Post(".*", handler);
    srv_.Put(".*", handler);
    srv_.Delete(".*", handler);
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
    while (!srv_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeApi() {
    srv_.stop();
    thread_.join();
  }

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  void on(const std::string& method_path, Canned c) {
    std::lock_guard<std::mutex> l(mu_);
    canned_[method_path] = std::move(c);
  }
  // Answers "METHOD /path" (same matching as `on`, and before a canned answer of the same key)
  // with `respond(request)`.
  using Responder = std::function<Canned(const Recorded&)>;
  void on_call(const std::string& method_path, Responder respond) {
    std::lock_guard<std::mutex> l(mu_);
    responders_[method_path] = std::move(respond);
  }
  std::vector<Recorded> requests() const {
    std::lock_guard<std::mutex> l(mu_);
    return log_;
  }

 private:
  void handle(const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> l(mu_);
    Recorded r{req.method, req.path, {}, req.get_header_value("Authorization"), req.get_header_value("Content-Type"),
               req.body};
    std::string query;
    for (const auto& [k, v] : req.params) {
      r.params.emplace(k, v);
      query += (query.empty() ? "?" : "&") + k + "=" + v;
    }
    log_.push_back(r);
    for (const std::string& key : {req.method + " " + req.path + query, req.method + " " + req.path}) {
      if (auto f = responders_.find(key); f != responders_.end()) {
        const Canned c = f->second(r);
        res.status = c.status;
        if (!c.body.empty()) res.set_content(c.body, c.content_type.c_str());
        return;
      }
      if (canned_.count(key)) break;
    }
    auto it = canned_.find(req.method + " " + req.path + query);
    if (it == canned_.end()) it = canned_.find(req.method + " " + req.path);
    if (it == canned_.end()) {
      res.status = 404;
      res.set_content(R"({"title":"Not found","status":404,"detail":")" + req.path + R"( not found"})",
                      "application/problem+json");
      return;
    }
    res.status = it->second.status;
    if (!it->second.body.empty()) res.set_content(it->second.body, it->second.content_type.c_str());
  }

  httplib::Server srv_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::map<std::string, Canned> canned_;
  std::map<std::string, Responder> responders_;
  std::vector<Recorded> log_;
};

struct CliRun {
  int rc;
  std::string out, err;
};

// A test that runs the CLI in process against a FakeApi, with GPURENT_SERVER pointing at it, a
// token in the environment, no config file and a fixed clock (2026-01-01T01:00:00Z).
class CliFakeApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    env_["HOME"] = "/nonexistent-home-for-cli-tests";
    env_["GPURENT_SERVER"] = api_.url();
    env_["GPURENT_TOKEN"] = "gpr_env";
  }

  // `stdin_text` is what the command reads on standard input.
  CliRun run(std::vector<std::string> args, const std::string& stdin_text = "") {
    std::istringstream in(stdin_text);
    std::ostringstream out, err;
    auto env = [this](const std::string& k) -> std::optional<std::string> {
      auto it = env_.find(k);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    };
    auto serve = [this](const ServerOptions& o) {
      served_ = o;  // what `gpurent serve` would have run with
      return 0;
    };
    CliIo io{in, out, err, env, clock_, serve};
    int rc = run_cli(args, io);
    return {rc, out.str(), err.str()};
  }

  FakeApi api_;
  std::map<std::string, std::string> env_;
  FakeClock clock_{*parse_rfc3339("2026-01-01T01:00:00Z", "now")};
  std::optional<ServerOptions> served_;
};

}  // namespace gpurent::testing
