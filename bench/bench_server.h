// What the HTTP benchmarks share (bench/sched_backlog.cc, bench/market_api.cc): the real server as
// a child process on a SQLite database in a temporary folder (its URL and the admin token), its
// folder removed and the child stopped at the end; and the small world they build through the API
// (a supplier of two 8-GPU H100 nodes at site-a in cn-east, from examples/).
#pragma once

#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "core/yaml_json.h"

namespace bench {

using json = nlohmann::json;

inline json yaml_file(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return gpurent::yaml_to_json(text).value();
}

// The arguments `[N] [--gpurent BUILD/gpurent]` of an HTTP benchmark: N (default `n`) and the
// server binary (default: gpurent beside the benchmark).
inline std::string parse_args(int argc, char** argv, int& n) {
  std::string bin = std::filesystem::path(argv[0]).parent_path() / "gpurent";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gpurent" && i + 1 < argc)
      bin = argv[++i];
    else
      n = std::stoi(a);
  }
  return bin;
}

// `bin serve --port 0 --db DIR/g.db --no-rate-limits --log-level warn --firewall-interval-s 0`
// followed by `flags`. `name` prefixes the folder and error messages.
class ServerChild {
 public:
  ServerChild(const std::string& name, const std::string& bin, const std::vector<std::string>& flags) : name_(name) {
    dir_ = std::filesystem::temp_directory_path() / ("gpurent-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const std::string out_file = dir_ + "/stdout";
    std::vector<std::string> args = {bin, "serve", "--port", "0", "--db", dir_ + "/g.db", "--no-rate-limits",
                                     "--log-level", "warn", "--firewall-interval-s", "0"};
    args.insert(args.end(), flags.begin(), flags.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, 1);
      int err = ::open((dir_ + "/log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(err, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(bin.c_str(), argv.data());
      ::_exit(127);
    }
    for (int i = 0; i < 200 && url_.empty(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      std::ifstream in(out_file);
      std::string line;
      if (std::getline(in, line) && !line.empty()) url_ = json::parse(line).value("url", "");
    }
    std::ifstream tf(dir_ + "/g.db.admin-token");
    std::getline(tf, token_);
  }
  ~ServerChild() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    std::filesystem::remove_all(dir_);
  }
  ServerChild(const ServerChild&) = delete;
  ServerChild& operator=(const ServerChild&) = delete;

  bool started() const { return !url_.empty(); }
  // A kept-alive client with TCP_NODELAY.
  std::unique_ptr<httplib::Client> client() const {
    auto c = std::make_unique<httplib::Client>(url_);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    return c;
  }
  const std::string& url() const { return url_; }
  httplib::Headers auth() const { return {{"Authorization", "Bearer " + token_}}; }

  // POSTs `body`; exits the benchmark with the answer when it is not a 2xx.
  json post(httplib::Client& c, const std::string& path, const json& body) const {
    auto r = c.Post(path, auth(), body.dump(), "application/json");
    if (!r || r->status >= 300) {
      std::cerr << name_ << ": " << path << ": " << (r ? r->body : "no answer") << "\n";
      std::exit(1);
    }
    return json::parse(r->body);
  }

  // Supplier "sup-a" (site-a, cn-east) with nodes node-1 and node-2, 8 H100 SXM each (`nodes`
  // of them: node-1 … node-N, at most 999).
  void supplier_with_two_nodes(httplib::Client& c, int nodes = 2) const {
    const std::string ex = std::string(GPURENT_SOURCE_DIR) + "/examples/";
    json sup = yaml_file(ex + "supplier.yaml");
    sup["name"] = "sup-a";
    sup["sites"] = json::array({{{"name", "site-a"}, {"region", "cn-east"}, {"city", "Shanghai"}, {"tier", 3}}});
    post(c, "/api/v1/suppliers", sup);
    for (int n = 1; n <= nodes; ++n) {
      json node = yaml_file(ex + "node.yaml");
      node["name"] = "node-" + std::to_string(n);
      node["supplier"] = "sup-a";
      node["site"] = "site-a";
      char tail[4];
      std::snprintf(tail, sizeof tail, "%03d", n % 1000);
      for (auto& g : node["gpus"]) {
        std::string u = g["uuid"];
        g["uuid"] = u.substr(0, u.size() - 3) + tail;  // hex digits either way: still a UUID
      }
      post(c, "/api/v1/nodes", node);
    }
  }

  // An offer that sells those nodes (examples/offer.yaml: CNY, cn-east): market trades are billed
  // under it.
  void offer_for_the_nodes(httplib::Client& c) const {
    const std::string ex = std::string(GPURENT_SOURCE_DIR) + "/examples/";
    json offer = yaml_file(ex + "offer.yaml");
    offer["name"] = "sup-a-h100";
    offer["supplier"] = "sup-a";
    offer["node_selector"] = {{"site", "site-a"}};
    post(c, "/api/v1/offers", offer);
  }

 private:
  std::string name_, dir_, url_, token_;
  pid_t pid_ = -1;
};

// The server for bench `name`, started; nullptr (having said why on stderr) when it did not start.
inline std::unique_ptr<ServerChild> start_server(const std::string& name, const std::string& bin,
                                                 const std::vector<std::string>& flags) {
  auto server = std::make_unique<ServerChild>(name, bin, flags);
  if (server->started()) return server;
  std::cerr << name << ": the server (" << bin << ") did not start\n";
  return nullptr;
}

}  // namespace bench
