// HttpServer: gpurent's HTTP/1.1 front (Boost.Beast over Asio, optionally TLS with OpenSSL).
// Event-driven: connections live on one or two I/O threads and cost memory, not threads; every
// read and write has a deadline (a request's headers, its body, the idle time between kept-alive
// requests, a response), header and body sizes are bounded whether the body has a Content-Length
// or is chunked, and a rate limiter answers 429 before a body is read. Complete requests go to a
// pool of worker threads that run the Router's handlers (which may block on SQLite), so a slow
// client never holds a worker and a slow handler never holds the I/O threads.
// Construct, bind(), then run() on one thread until stop() (from any thread). Not copyable.
// docs/architecture.md ("HTTP layer") says why this and not cpp-httplib's thread-per-connection.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "server/http/rate_limit.h"

namespace gpurent {

class Router;

struct HttpLimits {
  size_t max_header_bytes = 16 * 1024;  // request line and headers; more answers 431
  size_t max_body_bytes = 1 << 20;      // Content-Length or chunked; more answers 413
  int64_t header_timeout_ms = 10'000;   // from a request's first byte (or the connection) to its last header
  int64_t body_timeout_ms = 30'000;     // to read the body once the headers are in
  int64_t idle_timeout_ms = 30'000;     // a kept-alive connection waiting for its next request
  int64_t write_timeout_ms = 30'000;    // to write a response
  size_t max_connections = 10'000;      // open at once; more are answered 503 and closed
  size_t max_connections_per_address = 512;
  size_t max_queued_requests = 4096;  // waiting for a worker; more answer 503
  // Bytes of request bodies received and not yet answered, across connections (counted as they
  // arrive, not as a Content-Length announces them): a body that would pass it answers 503. One
  // address (an IPv6 /64) may hold an eighth of it (at least max_body_bytes).
  size_t max_body_bytes_in_flight = 256u << 20;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 = any free port (bind() returns it)
  int io_threads = 1;
  int worker_threads = 8;
  HttpLimits limits;
  bool rate_limits = true;
  RateLimits rate;
  std::string tls_cert_file;  // PEM chain; with tls_key_file: every connection is TLS
  std::string tls_key_file;
  std::vector<std::string> cors_origins;  // origins allowed cross-origin ("*" = any); empty = same origin only
};

// Counters for /metrics; updated by the server, read from any thread.
struct HttpStats {
  std::atomic<int64_t> open{0};          // connections open now
  std::atomic<int64_t> accepted{0};      // connections accepted in all
  std::atomic<int64_t> refused_busy{0};  // connections refused by the caps
  std::atomic<int64_t> timeouts{0};      // connections closed by a deadline
  std::atomic<int64_t> too_large{0};     // 413, 414 and 431 answers
  std::atomic<int64_t> malformed{0};     // 400 answers from the HTTP parser
  std::atomic<int64_t> overloaded{0};    // 503 answers: the worker queue was full
  std::atomic<int64_t> queued{0};        // requests on a worker, or whose answer is being written
};

// What bind() checks before it listens, without listening: the TLS files load and --host is an
// address. kInvalid naming the flag. (run_server asks before it opens the store.)
Status check_listen_options(const HttpServerOptions& o);

class HttpServer {
 public:
  HttpServer(const Router& router, HttpServerOptions opts);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Loads the TLS files when given and listens; returns the port. kInvalid naming the flag when
  // a TLS file cannot be used; kUnavailable when the address cannot be bound.
  Result<int> bind();
  // Serves until stop(): accepted connections, then the handlers still running, finish first.
  void run();
  void stop();

  bool tls() const;
  const HttpStats& stats() const;
  RateLimiter& rate_limiter();  // thread-safe: the routes check tenants' buckets in it

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpurent
