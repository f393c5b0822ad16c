// Outbound HTTP for the services that call out (webhook delivery, DCGM exporter scrapes), so they
// need not include the HTTP library. One blocking request per call on its own connection, with a
// connect and a read timeout, and a bound on the response's size and on the time its body takes
// (after decompression: a compressed bomb stops at the bound). Thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace gpurent {

struct OutboundRequest {
  std::string method = "GET";  // GET or POST
  std::string url;             // http[s]://host[:port][/path[?query]]
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string content_type = "application/json";
  int64_t connect_timeout_ms = 5000;
  int64_t read_timeout_ms = 10000;   // between two reads
  int64_t total_timeout_ms = 30000;  // for the whole body
  int64_t max_body_bytes = 16 << 20;  // a larger response is cut off: an error, not a response
};

struct OutboundResponse {
  int status = 0;
  std::string body;
};

// kUnavailable (the library's reason) when no response came back; any HTTP status is a response.
Result<OutboundResponse> send_request(const OutboundRequest& r);

}  // namespace gpurent
