// The HTTP front's worker share: one address's requests take at most half the workers (the rest
// wait in its own line, at most a sixteenth of the queue), so another address is answered while
// they block. Real sockets from two loopback addresses; the slow handler blocks on a gate the
// test opens, so nothing here depends on timing but the generous waits for an answer.
#include "server/http/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gpurent {
namespace {

class Conn {
 public:
  Conn(int port, const char* from) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in src{};
    src.sin_family = AF_INET;
    ::inet_pton(AF_INET, from, &src.sin_addr);
    ok_ = fd_ >= 0 && ::bind(fd_, reinterpret_cast<sockaddr*>(&src), sizeof src) == 0;
    sockaddr_in dst{};
    dst.sin_family = AF_INET;
    dst.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
    ok_ = ok_ && ::connect(fd_, reinterpret_cast<sockaddr*>(&dst), sizeof dst) == 0;
  }
  ~Conn() {
    if (fd_ >= 0) ::close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  bool ok() const { return ok_; }
  bool get(const std::string& path) {
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    return ::send(fd_, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size());
  }
  // The status of the answer that arrives within `wait`, or -1.
  int status(std::chrono::milliseconds wait) {
    std::string out;
    const auto deadline = std::chrono::steady_clock::now() + wait;
    char buf[4096];
    while (out.size() < 12 && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    return out.size() >= 12 && out.rfind("HTTP/1.1 ", 0) == 0 ? std::stoi(out.substr(9, 3)) : -1;
  }

 private:
  int fd_ = -1;
  bool ok_ = false;
};

TEST(HttpServer, OneAddressTakesAtMostHalfTheWorkersAndOthersAreStillAnswered) {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  std::atomic<int> entered{0};
  Router router;
  router.Get("/slow", [&](const httplib::Request&, httplib::Response& res) {
    entered.fetch_add(1);
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return open; });
    res.status = 200;
  });
  router.Get("/fast", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  HttpServerOptions o;
  o.port = 0;
  o.worker_threads = 4;  // an address's share: 2
  o.rate_limits = false;
  o.limits.max_queued_requests = 128;  // an address's line: 8
  HttpServer server(router, o);
  auto port = server.bind();
  ASSERT_TRUE(port.ok()) << port.error().message;
  std::thread runner([&] { server.run(); });
  struct Stop {
    HttpServer& s;
    std::thread& t;
    std::mutex& mu;
    std::condition_variable& cv;
    bool& open;
    ~Stop() {
      {
        std::lock_guard<std::mutex> g(mu);
        open = true;
      }
      cv.notify_all();
      s.stop();
      t.join();
    }
  } stop{server, runner, mu, cv, open};

  // 2 on workers and 8 in line from 127.0.0.2; its 11th request is refused, not queued.
  std::vector<std::unique_ptr<Conn>> slow;
  for (int i = 0; i < 10; ++i) {
    slow.push_back(std::make_unique<Conn>(*port, "127.0.0.2"));
    ASSERT_TRUE(slow.back()->ok());
    ASSERT_TRUE(slow.back()->get("/slow"));
  }
  for (int i = 0; i < 100 && entered.load() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // time for more to enter, were they let
  EXPECT_EQ(entered.load(), 2);
  Conn over(*port, "127.0.0.2");
  ASSERT_TRUE(over.get("/slow"));
  EXPECT_EQ(over.status(std::chrono::seconds(10)), 503);

  // Another address is answered while all of those wait.
  Conn other(*port, "127.0.0.3");
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(other.get("/fast"));
  EXPECT_EQ(other.status(std::chrono::seconds(10)), 200);

  // Opened, every one of the ten is answered.
  {
    std::lock_guard<std::mutex> g(mu);
    open = true;
  }
  cv.notify_all();
  for (auto& c : slow) EXPECT_EQ(c->status(std::chrono::seconds(10)), 200);
  EXPECT_EQ(entered.load(), 10);
}

}  // namespace
}  // namespace gpurent
