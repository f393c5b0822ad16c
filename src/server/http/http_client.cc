#include "server/http/http_client.h"

#include <httplib.h>

#include <chrono>

namespace gpurent {

Result<OutboundResponse> send_request(const OutboundRequest& r) {
  // url = scheme://host[:port]/path?query
  const size_t scheme_end = r.url.find("://");
  const size_t path_at = r.url.find('/', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  const std::string origin = path_at == std::string::npos ? r.url : r.url.substr(0, path_at);
  const std::string path = path_at == std::string::npos ? "/" : r.url.substr(path_at);
  httplib::Client cli(origin);
  cli.set_connection_timeout(r.connect_timeout_ms / 1000, (r.connect_timeout_ms % 1000) * 1000);
  cli.set_read_timeout(r.read_timeout_ms / 1000, (r.read_timeout_ms % 1000) * 1000);
  httplib::Request req;
  req.method = r.method == "POST" ? "POST" : "GET";
  req.path = path;
  for (const auto& [k, v] : r.headers) req.headers.emplace(k, v);
  if (req.method == "POST") {
    req.body = r.body;
    if (!req.has_header("Content-Type")) req.headers.emplace("Content-Type", r.content_type);
  }
  // The body as it arrives (decompressed, when the peer compressed it), cut off past the size or
  // the time allowed: a peer that sends without end, or a little at a time, costs a bounded amount.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(r.total_timeout_ms);
  std::string body;
  std::string cut;  // why the body was cut off
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    if (body.size() + n > static_cast<size_t>(r.max_body_bytes)) {
      cut = "the response is larger than " + std::to_string(r.max_body_bytes) + " bytes";
      return false;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      cut = "the response took longer than " + std::to_string(r.total_timeout_ms) + " ms";
      return false;
    }
    body.append(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  if (!cli.send(req, res, err)) {
    const std::string why = cut.empty() ? httplib::to_string(err) : cut;
    return Error::make(Code::kUnavailable, r.method + " " + r.url + ": " + why);
  }
  return OutboundResponse{res.status, std::move(body)};
}

}  // namespace gpurent
