// HTTP client of the gpurent REST API (/api/v1, JSON, bearer token) used by the CLI. Turns every
// failure into an ApiError: the server's RFC 7807 problem document, a non-problem HTTP error, a
// malformed response, or a transport failure (no response at all: status 0, exit code 3).
// One ApiClient holds one keep-alive connection; not thread-safe (the CLI is single-threaded).
#pragma once

#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/result.h"

namespace httplib {
class Client;
}

namespace gpurent {

using json = nlohmann::json;

// A server address: http[s]://HOST[:PORT][/BASE]. The scheme may be omitted ("host:8080" means
// http); IPv6 literals go in brackets ("http://[::1]:8080"). https needs a build of cpp-httplib
// with OpenSSL (CPPHTTPLIB_OPENSSL_SUPPORT); without it https addresses are refused.
struct ServerUrl {
  bool tls = false;       // https
  std::string host;       // without brackets
  int port = 80;          // default 80 for http, 443 for https
  std::string base_path;  // "" or "/prefix" (no trailing slash), for servers behind a path-routing proxy

  std::string str() const;  // canonical form, e.g. "http://127.0.0.1:8080" (port always shown)
};
Result<ServerUrl> parse_server_url(std::string_view text);

// Percent-encodes everything except RFC 3986 unreserved characters; for path segments and query values.
std::string url_encode(std::string_view s);

// A failed call. `status` is the HTTP status, 0 when no response arrived.
struct ApiError {
  int status = 0;
  std::string title;               // problem "title", or the HTTP reason phrase
  std::string detail;              // problem "detail": the one-line explanation shown to the user
  std::vector<FieldError> fields;  // problem "errors"
  std::string hint;                // optional advice (how to fix the address or the token)
  json problem;                    // the server's problem document as sent (null when it sent none)

  bool unreachable() const { return status == 0; }
  // 3 when the server could not be reached, 1 otherwise.
  int exit_code() const { return unreachable() ? 3 : 1; }
};

// Builds an ApiError from a non-2xx response: RFC 7807 fields when the body is a problem document,
// otherwise the status line and the start of the body.
ApiError api_error_from_response(int status, std::string_view body);
// The failure as an RFC 7807 problem document: the server's own when it sent one (every member
// kept), otherwise built from the fields above; "hint" added when there is one. For `-o json`.
json problem_json(const ApiError& e);
// "error: <detail>\n" then "  <field>: <reason>\n" per field error, then "hint: ...\n" if any.
std::string render_api_error(const ApiError& e);
// The error with the request's field names replaced by the flags the user typed ("starts_at" by
// "--from"), in the field errors and at the start of the detail; a path below a named field
// ("procurement_split[0].share_permille") becomes the flag. `field_flag` pairs (field, flag).
// The problem document (-o json) keeps the server's names.
ApiError name_flags(ApiError e, std::initializer_list<std::pair<std::string_view, std::string_view>> field_flag);

// The value of a successful call or the ApiError of a failed one.
template <class T>
using ApiResult = Result<T, ApiError>;

using Query = std::vector<std::pair<std::string, std::string>>;

struct ClientOptions {
  int connect_timeout_s = 5;
  int timeout_s = 60;  // read and write timeout per request
  // Sent as Accept-Language, so the server words its sentences (job reasons, alerts) in it;
  // empty sends none (English). The CLI fills it from the locale (locale_language()).
  std::string language;
};

// The language of a POSIX locale as a language tag: the first set of LC_ALL, LC_MESSAGES, LANG
// ("zh_CN.UTF-8" -> "zh-CN"); "" for none, "C" or "POSIX".
std::string locale_language(const char* lc_all, const char* lc_messages, const char* lang);

class ApiClient {
 public:
  // `token` empty: no Authorization header is sent.
  ApiClient(ServerUrl url, std::string token, ClientOptions opts = {});
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  // `path` is relative to /api/v1 and already encoded ("/nodes/nod_0123"). Results: the response
  // body as JSON (null when the server sent none, e.g. 204; a string holding the text of a
  // text/csv export, a text/html page or a text/markdown report).
  ApiResult<json> get(const std::string& path, const Query& query = {});
  ApiResult<json> post(const std::string& path, const json& body);
  ApiResult<json> put(const std::string& path, const json& body);
  ApiResult<json> del(const std::string& path);
  // PUT of raw bytes (Content-Type application/octet-stream) with a query string: a chunk of an
  // artifact's content. `bytes` is sent as it is, not copied.
  ApiResult<json> put_bytes(const std::string& path, const Query& query, std::string_view bytes);

  const ServerUrl& url() const { return url_; }

 private:
  enum class Method { kGet, kPost, kPut, kDelete };
  // `raw` (a PUT only): sent as application/octet-stream instead of `body`.
  ApiResult<json> call(Method m, const std::string& path, const Query& query, const json* body,
                       const std::string_view* raw = nullptr);

  ServerUrl url_;
  std::string token_;
  ClientOptions opts_;
  std::unique_ptr<httplib::Client> http_;
};

}  // namespace gpurent
