#include "server/http/http_client.h"

#include <httplib.h>

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
  httplib::Headers headers;
  for (const auto& [k, v] : r.headers) headers.emplace(k, v);
  auto res = r.method == "POST" ? cli.Post(path, headers, r.body, r.content_type) : cli.Get(path, headers);
  if (!res) return Error::make(Code::kUnavailable, r.method + " " + r.url + ": " + httplib::to_string(res.error()));
  return OutboundResponse{res->status, res->body};
}

}  // namespace gpurent
