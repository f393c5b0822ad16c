// HTTP helpers shared by the route files: JSON and RFC 7807 problem+json responses, request body
// parsing (JSON, or YAML with Content-Type application/yaml), paging and time parameters.
// Stateless; safe from any thread.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/fields.h"
#include "core/result.h"

namespace gpurent {

using json = nlohmann::json;

void send_json(httplib::Response& res, int status, const json& body);
// RFC 7807: {"type","title","status","detail","instance","errors":[{"field","reason"}]}.
void send_problem(httplib::Response& res, const Error& e, const std::string& instance);
json problem_json(const Error& e, const std::string& instance);

// Parses the body as a JSON object (or YAML when Content-Type says so). kBadRequest on malformed input.
Result<json> parse_body(const httplib::Request& req);

// The query parameter `name` as an RFC 3339 time: nullopt when absent, and when malformed (the
// reason then goes into `errs` under `name`).
std::optional<TimeMs> time_param(const httplib::Request& req, const char* name, FieldErrors& errs);

struct PageParams {
  int limit = 100;
  std::string after;
};
Result<PageParams> page_params(const httplib::Request& req);

}  // namespace gpurent
