#include "server/http/http_server.h"

#include <sys/resource.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "server/http/http_util.h"
#include "server/http/router.h"

namespace gpurent {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

namespace {

// The TLS context of --tls-cert/--tls-key into `tls` (none when neither is given); kInvalid naming
// the flag when a file cannot be used.
Status load_tls(const HttpServerOptions& o, std::optional<ssl::context>& tls) {
  if (o.tls_cert_file.empty() && o.tls_key_file.empty()) return ok_status();
  if (o.tls_cert_file.empty())
    return Error::invalid("--tls-cert", Message("http.needed_with").arg("flag", "--tls-key"));
  if (o.tls_key_file.empty()) return Error::invalid("--tls-key", Message("http.needed_with").arg("flag", "--tls-cert"));
  tls.emplace(ssl::context::tls_server);
  tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  beast::error_code ec;
  tls->use_certificate_chain_file(o.tls_cert_file, ec);
  if (ec)
    return Error::invalid("--tls-cert",
                          Message("http.cannot_use_file").arg("file", o.tls_cert_file).arg("why", ec.message()));
  tls->use_private_key_file(o.tls_key_file, ssl::context::pem, ec);
  if (ec)
    return Error::invalid("--tls-key",
                          Message("http.cannot_use_file").arg("file", o.tls_key_file).arg("why", ec.message()));
  return ok_status();
}

Result<net::ip::address> listen_address(const HttpServerOptions& o) {
  beast::error_code ec;
  auto addr = net::ip::make_address(o.host == "localhost" ? "127.0.0.1" : o.host, ec);
  if (ec) return Error::invalid("--host", Message("http.not_ip").arg("host", o.host).arg("why", ec.message()));
  return addr;
}

}  // namespace

Status check_listen_options(const HttpServerOptions& o) {
  std::optional<ssl::context> tls;
  if (auto s = load_tls(o, tls); !s) return s;
  if (auto a = listen_address(o); !a) return a.error();
  return ok_status();
}

namespace {

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool iequals(std::string_view a, std::string_view b) { return beast::iequals(a, b); }

// Whom the per-address caps and rate limits count: an IPv4 address, or an IPv6 /64 (one host
// usually holds a whole /64, so counting single IPv6 addresses would count nothing).
std::string limit_key(const net::ip::address& a) {
  if (a.is_v4()) return a.to_string();
  auto v6 = a.to_v6();
  if (v6.is_v4_mapped()) return net::ip::make_address_v4(net::ip::v4_mapped, v6).to_string();
  auto bytes = v6.to_bytes();
  for (size_t i = 8; i < bytes.size(); ++i) bytes[i] = 0;
  return net::ip::address_v6(bytes).to_string() + "/64";
}

// A problem+json answer built the way route handlers build theirs, with the HTTP status it is
// sent with (429, 431 and 411 have no error code of their own).
httplib::Response problem_response(int status, Code code, Message detail, const std::string& instance) {
  httplib::Response r;
  json p = problem_json(Error::make(code, std::move(detail)), instance);
  p["status"] = status;
  r.status = status;
  r.set_content(p.dump(-1, ' ', false, json::error_handler_t::replace), "application/problem+json");
  return r;
}

}  // namespace

class HttpServer::Impl {
 public:
  Impl(const Router& router, HttpServerOptions opts)
      : router_(router),
        opts_(std::move(opts)),
        limiter_(opts_.rate),
        control_(net::make_strand(ioc_)),
        acceptor_(control_),
        drain_timer_(control_),
        workers_(static_cast<size_t>(std::max(1, opts_.worker_threads))) {}

  Result<int> bind();
  void run();
  void stop();

  // Sessions touch the members above ioc_ until they end; destroying ioc_ ends the sessions
  // still pending, so ioc_ goes before them (members are destroyed in reverse order), and the
  // acceptor and the worker pool, which hold sessions or use ioc_, go first.
  const Router& router_;
  HttpServerOptions opts_;
  HttpStats stats_;
  std::mutex addr_mu_;
  std::unordered_map<std::string, size_t> per_address_;
  RateLimiter limiter_;
  std::atomic<bool> stopping_{false};
  // Content-Length bytes reserved by bodies being read, in all and per address (under addr_mu_).
  int64_t body_bytes_ = 0;
  std::unordered_map<std::string, int64_t> body_bytes_by_address_;
  // Requests handed to the workers, per address: how many are on the pool (queued or running)
  // and those waiting behind them (hand_to_workers). Empty once the pool has drained.
  struct Line {
    size_t running = 0;
    std::deque<std::function<void()>> waiting;
  };
  std::mutex lines_mu_;
  std::unordered_map<std::string, Line> lines_;
  std::optional<ssl::context> tls_;
  net::io_context ioc_;
  // The acceptor, the drain timer and stop() run on one strand, so several I/O threads never
  // touch them at once.
  net::strand<net::io_context::executor_type> control_;
  tcp::acceptor acceptor_;
  net::steady_timer drain_timer_;
  net::thread_pool workers_;

  void accept();
  void drain_tick(int ticks);
  bool admit_address(const std::string& addr) {
    std::lock_guard<std::mutex> g(addr_mu_);
    size_t& n = per_address_[addr];
    if (n >= opts_.limits.max_connections_per_address) {
      if (n == 0) per_address_.erase(addr);
      return false;
    }
    ++n;
    return true;
  }
  void release_address(const std::string& addr) {
    std::lock_guard<std::mutex> g(addr_mu_);
    auto it = per_address_.find(addr);
    if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
  }
  // Reserves n more body bytes (arrived, not announced) for a connection from addr: within the
  // server-wide budget and within one address's share of it (an eighth, at least one largest
  // body), so one address cannot take every write from everyone else.
  bool reserve_body(const std::string& addr, int64_t n) {
    const auto budget = static_cast<int64_t>(opts_.limits.max_body_bytes_in_flight);
    const int64_t share = std::max(budget / 8, static_cast<int64_t>(opts_.limits.max_body_bytes));
    std::lock_guard<std::mutex> g(addr_mu_);
    auto it = body_bytes_by_address_.find(addr);
    const int64_t mine = it == body_bytes_by_address_.end() ? 0 : it->second;
    if (body_bytes_ + n > budget || mine + n > share) return false;
    body_bytes_ += n;
    body_bytes_by_address_[addr] = mine + n;
    return true;
  }
  // Hands a request's work to the worker pool. One address (an IPv6 /64) has at most half the
  // workers' places at once (at least one); its further requests wait in its own line, at most
  // a sixteenth of the queue, and go to the pool one by one, behind other addresses' requests, as
  // its running ones end. So one address's flood of slow requests (a whole-platform report asked
  // in a loop) never holds every worker, and others' requests are still answered. False: its
  // line is full (the caller answers 503).
  bool hand_to_workers(const std::string& addr, std::function<void()> work) {
    const size_t share = static_cast<size_t>(std::max(1, opts_.worker_threads / 2));
    const size_t line_max = std::max<size_t>(1, opts_.limits.max_queued_requests / 16);
    std::lock_guard<std::mutex> g(lines_mu_);
    Line& l = lines_[addr];
    if (l.running < share) {
      ++l.running;
      net::post(workers_, [this, addr, work = std::move(work)]() mutable { run_in_line(addr, std::move(work)); });
      return true;
    }
    if (l.waiting.size() >= line_max) return false;
    l.waiting.push_back(std::move(work));
    return true;
  }
  // Runs one of addr's requests on a worker, then hands the pool its next waiting one.
  void run_in_line(const std::string& addr, std::function<void()> work) {
    work();
    std::function<void()> next;
    {
      std::lock_guard<std::mutex> g(lines_mu_);
      auto it = lines_.find(addr);
      if (it == lines_.end()) return;
      if (!it->second.waiting.empty()) {
        next = std::move(it->second.waiting.front());
        it->second.waiting.pop_front();
      } else if (--it->second.running == 0) {
        lines_.erase(it);
      }
    }
    if (next)
      net::post(workers_, [this, addr, next = std::move(next)]() mutable { run_in_line(addr, std::move(next)); });
  }
  void release_body(const std::string& addr, int64_t n) {
    std::lock_guard<std::mutex> g(addr_mu_);
    body_bytes_ -= n;
    auto it = body_bytes_by_address_.find(addr);
    if (it != body_bytes_by_address_.end() && (it->second -= n) <= 0) body_bytes_by_address_.erase(it);
  }
};

namespace {

// Longer targets answer 414: routes are regular expressions, and libstdc++ matches them by
// recursion, one frame per character.
constexpr size_t kMaxTargetBytes = 4096;
// A request that waited this long in its address's line for a worker is answered 503 unrun.
constexpr int64_t kMaxLineWaitMs = 30'000;

// One connection. Lives in a shared_ptr because each pending asynchronous operation holds it
// (Asio's ownership idiom): it ends when its last read, write or handler is done.
template <class Stream>
class Session : public std::enable_shared_from_this<Session<Stream>> {
 public:
  Session(HttpServer::Impl& srv, Stream&& stream, std::string address, std::string remote, uint16_t port)
      : srv_(srv), stream_(std::move(stream)), address_(std::move(address)), remote_(std::move(remote)), port_(port) {}
  ~Session() {
    release_body_budget();
    end_in_flight();
    srv_.stats_.open.fetch_sub(1);
    srv_.release_address(address_);
  }

  void start() {
    // A new connection's handshake and its first request's headers share one deadline.
    header_deadline_ = std::chrono::steady_clock::now() + ms(srv_.opts_.limits.header_timeout_ms);
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      lowest().expires_at(header_deadline_);
      stream_.async_handshake(ssl::stream_base::server, [self = this->shared_from_this()](beast::error_code ec) {
        if (ec) return self->fail(ec);
        self->wait_for_request(true);
      });
    } else {
      wait_for_request(true);
    }
  }

 private:
  static std::chrono::milliseconds ms(int64_t v) { return std::chrono::milliseconds(v); }
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  void end_in_flight() {
    if (in_flight_) srv_.stats_.queued.fetch_sub(1);
    in_flight_ = false;
  }

  void release_body_budget() {
    if (body_reserved_ > 0) srv_.release_body(address_, body_reserved_);
    body_reserved_ = 0;
  }

  void fail(beast::error_code ec) {
    if (ec == beast::error::timeout) srv_.stats_.timeouts.fetch_add(1);
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
  }

  // Waits for the first byte of the next request: the idle deadline on a kept-alive connection,
  // the header deadline on a new one.
  void wait_for_request(bool first) {
    if (!first && buffer_.size() > 0) {  // pipelined bytes are already here
      header_deadline_ = std::chrono::steady_clock::now() + ms(srv_.opts_.limits.header_timeout_ms);
      return read_header();
    }
    buffer_.shrink_to_fit();  // an idle connection keeps no buffer
    if (first)
      lowest().expires_at(header_deadline_);
    else
      lowest().expires_after(ms(srv_.opts_.limits.idle_timeout_ms));
    stream_.async_read_some(
        buffer_.prepare(4096), [self = this->shared_from_this(), first](beast::error_code ec, size_t n) {
          if (ec) return self->fail(ec);
          self->buffer_.commit(n);
          // A kept-alive connection's next request: its headers' time starts now.
          if (!first)
            self->header_deadline_ = std::chrono::steady_clock::now() + ms(self->srv_.opts_.limits.header_timeout_ms);
          self->read_header();
        });
  }

  void read_header() {
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(srv_.opts_.limits.max_header_bytes));
    parser_->body_limit(srv_.opts_.limits.max_body_bytes);
    lowest().expires_at(header_deadline_);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](beast::error_code ec, size_t) { self->on_header(ec); });
  }

  // Answers an error the HTTP parser found, then closes.
  bool answer_parse_error(beast::error_code ec) {
    if (ec == http::error::header_limit) {
      srv_.stats_.too_large.fetch_add(1);
      reply_and_close(
          431,
          problem_response(431, Code::kTooLarge,
                  Message("http.headers_too_large").arg("bytes", std::to_string(srv_.opts_.limits.max_header_bytes)),
                  ""));
    } else if (ec == http::error::body_limit) {
      srv_.stats_.too_large.fetch_add(1);
      reply_and_close(
          413, problem_response(413, Code::kTooLarge,
                       Message("http.body_too_large").arg("bytes", std::to_string(srv_.opts_.limits.max_body_bytes)),
                       target()));
    } else if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
               ec != http::error::end_of_stream && ec != http::error::partial_message) {
      srv_.stats_.malformed.fetch_add(1);
      reply_and_close(400, problem_response(400, Code::kBadRequest, Message("http.malformed").arg("why", ec.message()), ""));
    } else {
      return false;
    }
    return true;
  }

  std::string target() const {
    if (!parser_ || !parser_->is_header_done()) return "";
    auto t = parser_->get().target();
    auto q = t.find('?');
    return std::string(q == std::string_view::npos ? t : t.substr(0, q));
  }

  void on_header(beast::error_code ec) {
    if (ec) {
      if (!answer_parse_error(ec)) fail(ec);
      return;
    }
    auto& h = parser_->get();
    const std::string method(h.method_string());
    head_ = h.method() == http::verb::head;
    // The header section's fields: a chunked body's trailer adds more to the same message, which
    // handle() leaves out (an Authorization there would pass the token's rate limit checked here).
    header_fields_ = static_cast<size_t>(std::distance(h.begin(), h.end()));
    if (h.target().size() > kMaxTargetBytes) {
      srv_.stats_.too_large.fetch_add(1);
      return reply_and_close(
          414, problem_response(414, Code::kTooLarge,
                       Message("http.target_too_long").arg("bytes", std::to_string(kMaxTargetBytes)), ""));
    }
    const std::string path = target();
    // The API's rule (docs/api.md): a body-carrying method says how long its body is, or chunks it.
    if ((method == "POST" || method == "PUT" || method == "PATCH") && !parser_->content_length() &&
        !parser_->chunked()) {
      srv_.stats_.malformed.fetch_add(1);
      return reply_and_close(
          411, problem_response(411, Code::kBadRequest, Message("http.length_required").arg("method", method), path));
    }
    if (srv_.opts_.rate_limits) {
      std::string token;
      auto auth = h.find(http::field::authorization);
      if (auth != h.end()) token = std::string(auth->value().substr(0, 128));
      auto d = srv_.limiter_.check(rate_class_of(method, path), address_, token, steady_ms());
      if (!d.allowed) {
        auto r =
            problem_response(429, Code::kUnavailable, rate_limited_message(d.by, rate_class_of(method, path)), path);
        r.set_header("Retry-After", std::to_string((d.retry_after_ms + 999) / 1000));
        // A body not yet read is not read: the connection closes after the answer.
        return reply(429, std::move(r), !parser_->is_done() || !h.keep_alive());
      }
    }
    auto expect = h.find(http::field::expect);
    if (expect != h.end() && iequals(expect->value(), "100-continue") && !parser_->is_done()) {
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      lowest().expires_after(ms(srv_.opts_.limits.write_timeout_ms));
      return net::async_write(stream_, net::buffer(kContinue),
                              [self = this->shared_from_this()](beast::error_code e, size_t) {
                                if (e) return self->fail(e);
                                self->read_body();
                              });
    }
    read_body();
  }

  void read_body() {
    lowest().expires_after(ms(srv_.opts_.limits.body_timeout_ms));
    read_body_some();
  }

  // Reads the body as it arrives. The bytes that have arrived — not those a Content-Length
  // announces — count against a server-wide budget and an address's share of it (reserve_body), so
  // connections that announce large bodies and send nothing (or trickle) hold none of it: taking
  // everyone's writes takes really sending that many bytes, and holding them.
  void read_body_some() {
    const auto have = static_cast<int64_t>(parser_->get().body().size());
    if (have > body_reserved_) {
      if (!srv_.reserve_body(address_, have - body_reserved_)) {
        srv_.stats_.overloaded.fetch_add(1);
        auto r = problem_response(503, Code::kUnavailable, Message("http.too_many_bodies"), target());
        r.set_header("Retry-After", "1");
        return reply_and_close(503, std::move(r));
      }
      body_reserved_ = have;
    }
    if (parser_->is_done()) return handle();
    http::async_read_some(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) {
        if (!self->answer_parse_error(ec)) self->fail(ec);
        return;
      }
      self->read_body_some();
    });
  }

  void handle() {
    auto msg = parser_->release();
    parser_.reset();
    keep_alive_ = msg.keep_alive();
    auto req = std::make_shared<httplib::Request>();
    req->method = std::string(msg.method_string());
    std::string_view t = msg.target();
    size_t q = t.find('?');
    req->target = std::string(t);
    req->path = httplib::detail::decode_url(std::string(t.substr(0, q)), false);
    if (q != std::string_view::npos) httplib::detail::parse_query_text(std::string(t.substr(q + 1)), req->params);
    size_t field = 0;
    for (const auto& f : msg) {
      if (field++ == header_fields_) break;  // the rest came in a chunked body's trailer
      req->headers.emplace(std::string(f.name_string()), std::string(f.value()));
    }
    req->body = beast::buffers_to_string(msg.body().data());
    req->version = msg.version() == 10 ? "HTTP/1.0" : "HTTP/1.1";
    req->remote_addr = remote_;
    req->remote_port = port_;

    if (req->method == "OPTIONS") return reply_response(preflight(*req), *req);
    if (srv_.stopping_.load()) {
      keep_alive_ = false;
      return reply_response(problem_response(503, Code::kUnavailable, Message("http.stopping"), req->path), *req);
    }
    if (static_cast<size_t>(srv_.stats_.queued.load()) >= srv_.opts_.limits.max_queued_requests) {
      srv_.stats_.overloaded.fetch_add(1);
      auto r = problem_response(503, Code::kUnavailable, Message("http.busy"), req->path);
      r.set_header("Retry-After", "1");
      return reply_response(std::move(r), *req);
    }
    srv_.stats_.queued.fetch_add(1);
    in_flight_ = true;  // until its answer is written (or the connection ends): stop() waits for it
    const auto handed = std::chrono::steady_clock::now();
    const bool taken = srv_.hand_to_workers(address_, [self = this->shared_from_this(), req, handed] {
      httplib::Response res;
      if (self->srv_.stopping_.load()) {
        // Still waiting when the server stops: answered, not run (its answer might never go out).
        res = problem_response(503, Code::kUnavailable, Message("http.stopping"), req->path);
      } else if (std::chrono::steady_clock::now() - handed > ms(kMaxLineWaitMs)) {
        // Waited in its address's line past the limit (that address's running requests are slow):
        // its body is let go instead of held while ever more wait behind.
        self->srv_.stats_.overloaded.fetch_add(1);
        res = problem_response(503, Code::kUnavailable, Message("http.busy"), req->path);
        res.set_header("Retry-After", "1");
      } else {
        self->srv_.router_.dispatch(*req, res);
      }
      net::post(self->stream_.get_executor(),
                [self, req, res = std::move(res)]() mutable { self->reply_response(std::move(res), *req); });
    });
    if (!taken) {  // this address's own line is full: others are still served
      end_in_flight();
      srv_.stats_.overloaded.fetch_add(1);
      auto r = problem_response(503, Code::kUnavailable, Message("http.busy"), req->path);
      r.set_header("Retry-After", "1");
      return reply_response(std::move(r), *req);
    }
  }

  bool origin_allowed(const std::string& origin) const {
    for (const auto& o : srv_.opts_.cors_origins)
      if (o == "*" || o == origin) return true;
    return false;
  }

  // CORS preflight (and plain OPTIONS): 204 with the allowed methods and headers for an allowed
  // origin, 403 for another; without an Origin, the methods the API uses.
  httplib::Response preflight(const httplib::Request& req) {
    httplib::Response r;
    std::string origin = req.get_header_value("Origin");
    if (!origin.empty() && !origin_allowed(origin)) {
      r = problem_response(403, Code::kForbidden, Message("http.cors_refused").arg("origin", origin), req.path);
      return r;
    }
    r.status = 204;
    r.set_header("Allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
    if (!origin.empty()) {
      r.set_header("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE");
      r.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type, If-Match, Idempotency-Key");
      r.set_header("Access-Control-Max-Age", "600");
    }
    return r;
  }

  void reply_response(httplib::Response res, const httplib::Request& req) {
    std::string origin = req.get_header_value("Origin");
    if (!origin.empty() && origin_allowed(origin)) {
      res.set_header("Access-Control-Allow-Origin", origin);
      res.set_header("Access-Control-Expose-Headers", "Retry-After, ETag, Location");
      res.set_header("Vary", "Origin");
    }
    if (req.path.compare(0, 5, "/api/") == 0) res.set_header("Cache-Control", "no-store");
    int status = res.status == -1 ? 200 : res.status < 100 || res.status > 599 ? 500 : res.status;
    reply(status, std::move(res), !keep_alive_);
  }

  void reply_and_close(int status, httplib::Response res) { reply(status, std::move(res), true); }

  void reply(int status, httplib::Response res, bool close) {
    auto out = std::make_shared<http::response<http::string_body>>();
    out->version(11);
    out->result(static_cast<unsigned>(status));
    for (const auto& [k, v] : res.headers) {
      if (iequals(k, "Content-Length") || iequals(k, "Connection") || iequals(k, "Transfer-Encoding")) continue;
      out->insert(k, v);
    }
    static constexpr const char* kSecurity[][2] = {
        {"X-Content-Type-Options", "nosniff"}, {"X-Frame-Options", "DENY"}, {"Referrer-Policy", "no-referrer"}};
    for (const auto& [k, v] : kSecurity) out->set(k, v);
    // The dashboard loads only its own files; ECharts sets inline styles. The directives that do
    // not fall back to default-src are named: no <base>, no plugins, forms post only here.
    out->set("Content-Security-Policy",
             "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; "
             "base-uri 'none'; object-src 'none'; form-action 'self'");
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>)
      out->set(http::field::strict_transport_security, "max-age=31536000");
    out->keep_alive(!close && !srv_.stopping_.load());
    if (status < 200 || status == 204 || status == 304) {
      out->erase(http::field::content_type);  // these answers have no body (RFC 9110 6.4.1)
    } else if (head_) {
      out->content_length(res.body.size());  // what GET would send, and no body (RFC 9110 9.3.2)
    } else {
      out->body() = std::move(res.body);
      out->prepare_payload();
    }
    release_body_budget();
    lowest().expires_after(ms(srv_.opts_.limits.write_timeout_ms));
    http::async_write(stream_, *out, [self = this->shared_from_this(), out](beast::error_code ec, size_t) {
      self->end_in_flight();
      if (ec) return self->fail(ec);
      if (!out->keep_alive()) return self->close();
      self->wait_for_request(false);
    });
  }

  // Ends the connection after a response: TLS says goodbye; plain TCP half-closes, then reads and
  // drops what the client is still sending (a refused body) for a moment, so the close does not
  // reset the connection before the client has read the answer.
  void close() {
    if constexpr (std::is_same_v<Stream, beast::ssl_stream<beast::tcp_stream>>) {
      lowest().expires_after(ms(2000));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) { self->fail({}); });
    } else {
      beast::error_code ignored;
      lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
      lowest().expires_after(ms(1000));
      drained_ = 0;
      drain();
    }
  }
  void drain() {
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(16 * 1024),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > (4u << 20)) return self->fail({});
                              self->drain();
                            });
  }

  HttpServer::Impl& srv_;
  Stream stream_;
  std::string address_;  // what the per-address limits count (an IPv6 address as its /64)
  std::string remote_;   // the client's own address, for the handlers and the access log
  uint16_t port_;
  beast::flat_buffer buffer_{128 * 1024};  // at most: the headers and what arrives with them
  // A dynamic body grows as bytes arrive (a string body would reserve a whole announced
  // Content-Length at its first byte), so the bytes counted against the body budget are the
  // memory a body holds.
  std::optional<http::request_parser<http::dynamic_body>> parser_;
  bool keep_alive_ = true;
  bool head_ = false;          // the request being answered is a HEAD
  size_t header_fields_ = 0;   // fields of its header section (on_header), before any trailer
  bool in_flight_ = false;     // counted in stats_.queued until its answer is written
  int64_t body_reserved_ = 0;  // this request's share of the body budget
  size_t drained_ = 0;
  std::chrono::steady_clock::time_point header_deadline_;
};

}  // namespace

Result<int> HttpServer::Impl::bind() {
  // Many connections are normal: the soft descriptor limit goes up to the hard one.
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &rl);
  }
  // Connections past the descriptor limit could not be accepted anyway; 256 stay for the store,
  // logs and the Slurm tools.
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 512)
    opts_.limits.max_connections = std::min<size_t>(opts_.limits.max_connections, rl.rlim_cur - 256);
  if (auto s = load_tls(opts_, tls_); !s) return s.error();
  beast::error_code ec;
  auto addr = listen_address(opts_);
  if (!addr) return addr.error();
  tcp::endpoint ep(*addr, static_cast<uint16_t>(opts_.port));
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return Error::make(Code::kUnavailable, Message("http.cannot_listen")
                                               .arg("host", opts_.host)
                                               .arg("port", std::to_string(opts_.port))
                                               .arg("why", ec.message()));
  return static_cast<int>(acceptor_.local_endpoint().port());
}

void HttpServer::Impl::accept() {
  acceptor_.async_accept(net::make_strand(ioc_), [this](beast::error_code ec, tcp::socket sock) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {  // out of descriptors or memory: the connection waits in the backlog; try again soon
      drain_timer_.expires_after(std::chrono::milliseconds(100));
      drain_timer_.async_wait([this](beast::error_code e) {
        if (!e && !stopping_.load()) accept();
      });
      return;
    }
    if (!ec) {
      beast::error_code e2;
      sock.set_option(tcp::no_delay(true), e2);
      auto ep = sock.remote_endpoint(e2);
      std::string addr = e2 ? std::string("?") : limit_key(ep.address());
      std::string remote = e2 ? std::string("?") : ep.address().to_string();
      stats_.accepted.fetch_add(1);
      if (static_cast<size_t>(stats_.open.load()) >= opts_.limits.max_connections || !admit_address(addr)) {
        stats_.refused_busy.fetch_add(1);
        // Too many connections: say so in one write, without waiting for the request.
        static const std::string kBusy = [] {
          std::string body = problem_response(503, Code::kUnavailable, Message("http.too_many_connections"), "").body;
          return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nRetry-After: 1\r\n"
                 "Connection: close\r\nContent-Length: " +
                 std::to_string(body.size()) + "\r\n\r\n" + body;
        }();
        sock.non_blocking(true, e2);
        sock.write_some(net::buffer(kBusy), e2);
        sock.close(e2);
      } else {
        stats_.open.fetch_add(1);
        uint16_t port = e2 ? 0 : ep.port();
        if (tls_) {
          std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
              *this, beast::ssl_stream<beast::tcp_stream>(beast::tcp_stream(std::move(sock)), *tls_), addr, remote,
              port)
              ->start();
        } else {
          std::make_shared<Session<beast::tcp_stream>>(*this, beast::tcp_stream(std::move(sock)), addr, remote, port)
              ->start();
        }
      }
    }
    accept();
  });
}

void HttpServer::Impl::run() {
  accept();
  std::vector<std::thread> extra;
  for (int i = 1; i < opts_.io_threads; ++i) extra.emplace_back([this] { ioc_.run(); });
  ioc_.run();
  for (auto& t : extra) t.join();
  workers_.join();  // a handler past the drain's patience still finishes (its answer goes nowhere)
}

// Runs on the I/O threads: no new connections; once no request waits for or runs on a worker
// (10 s at most) and one more tick has let their answers go out, the I/O threads stop.
void HttpServer::Impl::drain_tick(int ticks) {
  const bool idle = stats_.queued.load() == 0;
  if ((idle && ticks > 0) || ticks >= 100) {
    ioc_.stop();
    return;
  }
  drain_timer_.expires_after(std::chrono::milliseconds(100));
  drain_timer_.async_wait([this, ticks](beast::error_code) { drain_tick(ticks + 1); });
}

// Only asks: safe from a signal-waiting thread while run() is busy on another.
void HttpServer::Impl::stop() {
  if (stopping_.exchange(true)) return;
  net::post(control_, [this] {
    beast::error_code ec;
    acceptor_.close(ec);
    drain_tick(0);
  });
}

HttpServer::HttpServer(const Router& router, HttpServerOptions opts)
    : impl_(std::make_unique<Impl>(router, std::move(opts))) {}
HttpServer::~HttpServer() { impl_->stop(); }
Result<int> HttpServer::bind() { return impl_->bind(); }
void HttpServer::run() { impl_->run(); }
void HttpServer::stop() { impl_->stop(); }
bool HttpServer::tls() const { return impl_->tls_.has_value(); }
const HttpStats& HttpServer::stats() const { return impl_->stats_; }
RateLimiter& HttpServer::rate_limiter() { return impl_->limiter_; }

}  // namespace gpurent
