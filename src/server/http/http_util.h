// HTTP helpers shared by the route files: JSON and RFC 7807 problem+json responses, request body
// parsing (JSON, or YAML with Content-Type application/yaml), paging and time parameters.
// Stateless; safe from any thread.
#pragma once

#include <httplib.h>

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/fields.h"
#include "core/result.h"

namespace gpurent {

using json = nlohmann::json;

// Sends `body` as JSON. Every object member "<x>_message" holding a message ({"code","args"},
// core/message.h) sets its sibling "<x>" to the message rendered in the language of the request
// this thread answers (ResponseLanguage); in English the stored text is already that.
void send_json(httplib::Response& res, int status, const json& body);

// The language the current request is answered in, for the thread that answers it: the Router
// sets it from ?lang= and Accept-Language for the length of a dispatch. "en" outside one.
class ResponseLanguage {
 public:
  explicit ResponseLanguage(std::string lang);
  ~ResponseLanguage();
  ResponseLanguage(const ResponseLanguage&) = delete;
  ResponseLanguage& operator=(const ResponseLanguage&) = delete;
  static const std::string& current();

 private:
  std::string previous_;
};

// Renders, in `lang`, every "<x>_message" member of `j` (at any depth) into its sibling "<x>".
void localize_messages(json& j, const std::string& lang);
// RFC 7807: {"type","title","status","detail","instance","errors":[{"field","reason"}]}.
void send_problem(httplib::Response& res, const Error& e, const std::string& instance);
json problem_json(const Error& e, const std::string& instance);

// Parses the body as a JSON object (or YAML when Content-Type says so). kBadRequest on malformed input.
Result<json> parse_body(const httplib::Request& req);

// The query parameter `name` as an RFC 3339 time: nullopt when absent, and when malformed (the
// reason then goes into `errs` under `name`).
std::optional<TimeMs> time_param(const httplib::Request& req, const char* name, FieldErrors& errs);

// Refuses a query parameter that is not one of `allowed` (a typo such as ?formt=csv must not pass
// as the default) and one given more than once (?limit=1&limit=1000: which was meant is not
// known). kInvalid naming every such parameter; ?lang= is taken by the Router before a route runs.
Status only_params(const httplib::Request& req, std::initializer_list<std::string_view> allowed);

struct PageParams {
  int limit = 100;
  std::string after;
};
Result<PageParams> page_params(const httplib::Request& req);

}  // namespace gpurent
