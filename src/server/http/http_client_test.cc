// Outbound requests (http_client.h) against a real HTTP server on loopback: an answer is read
// whole; one that never ends, or trickles in, is cut off at the size or time allowed and is an
// error saying which, so a hostile peer (a node's exporter, a webhook receiver) costs a bounded
// amount of memory and time.
#include "server/http/http_client.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <thread>

namespace gpurent {
namespace {

class Peer : public ::testing::Test {
 protected:
  void SetUp() override {
    srv_.Get("/ok", [](const httplib::Request&, httplib::Response& res) { res.set_content("hello", "text/plain"); });
    srv_.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.status = 201;
      res.set_content(req.get_header_value("Content-Type") + " " + req.body, "text/plain");
    });
    srv_.Get("/endless", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [](size_t, httplib::DataSink& sink) {
        const std::string chunk(64 << 10, 'x');
        return sink.write(chunk.data(), chunk.size());
      });
    });
    srv_.Get("/trickle", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/plain", [](size_t, httplib::DataSink& sink) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return sink.write("x", 1);
      });
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
    while (!srv_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  void TearDown() override {
    srv_.stop();
    if (thread_.joinable()) thread_.join();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

  httplib::Server srv_;
  std::thread thread_;
  int port_ = 0;
};

TEST_F(Peer, ReadsAnAnswerWhole) {
  auto got = send_request({.method = "GET", .url = url("/ok")});
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(got->body, "hello");
  auto posted = send_request({.method = "POST", .url = url("/echo"), .body = "{\"a\":1}"});
  ASSERT_TRUE(posted.ok()) << posted.error().message;
  EXPECT_EQ(posted->status, 201);
  EXPECT_EQ(posted->body, "application/json {\"a\":1}");
}

TEST_F(Peer, CutsOffAnAnswerPastItsSize) {
  auto got = send_request({.method = "GET", .url = url("/endless"), .max_body_bytes = 1 << 20});
  ASSERT_FALSE(got.ok()) << "an endless answer is an error, not a body";
  EXPECT_NE(got.error().message.find("larger than 1048576 bytes"), std::string::npos) << got.error().message;
}

TEST_F(Peer, CutsOffAnAnswerThatTrickles) {
  auto got = send_request({.method = "GET", .url = url("/trickle"), .total_timeout_ms = 500});
  ASSERT_FALSE(got.ok()) << "a body that never ends, a byte at a time, is an error";
  EXPECT_NE(got.error().message.find("longer than 500 ms"), std::string::npos) << got.error().message;
}

}  // namespace
}  // namespace gpurent
