#include "cli/client.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "cli/output.h"
#include "cli/version.h"

namespace gpurent {

// ---- addresses ----

static std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string ServerUrl::str() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return std::string(tls ? "https" : "http") + "://" + h + ":" + std::to_string(port) + base_path;
}

Result<ServerUrl> parse_server_url(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Error::invalid(
        "server", "'" + std::string(text) + "' is not a server address (" + why + "); expected http://HOST:PORT");
  };
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return bad("empty");

  ServerUrl u;
  if (size_t p = s.find("://"); p != std::string_view::npos) {
    std::string scheme = lower(s.substr(0, p));
    if (scheme == "https") {
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
      u.tls = true;
#else
      return bad("https is not supported by this build; use http:// or a local TLS-terminating proxy");
#endif
    } else if (scheme != "http") {
      return bad("unsupported scheme '" + scheme + "'");
    }
    s.remove_prefix(p + 3);
  }
  u.port = u.tls ? 443 : 80;

  size_t path_at = s.find('/');
  std::string_view authority = s.substr(0, path_at);
  std::string_view path = path_at == std::string_view::npos ? std::string_view() : s.substr(path_at);
  if (path.find_first_of("?#") != std::string_view::npos) return bad("query and fragment are not allowed");
  if (authority.find('@') != std::string_view::npos) return bad("credentials belong in --token, not in the address");

  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed '[' in IPv6 address");
    u.host = std::string(authority.substr(1, close - 1));
    if (u.host.empty() || u.host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos)
      return bad("malformed IPv6 address");
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return bad("unexpected text after ']'");
      port_text = rest.substr(1);
      if (port_text.empty()) return bad("empty port");
    }
  } else {
    size_t colon = authority.find(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      if (port_text.empty()) return bad("empty port");
    }
    if (u.host.empty()) return bad("no host");
    for (char c : u.host)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_')
        return bad("invalid character '" + std::string(1, c) + "' in host");
  }
  if (!port_text.empty()) {
    if (port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string_view::npos)
      return bad("port must be a number");
    int port = std::stoi(std::string(port_text));
    if (port < 1 || port > 65535) return bad("port must be between 1 and 65535");
    u.port = port;
  }

  std::string base(path);
  while (!base.empty() && base.back() == '/') base.pop_back();
  // Tolerate an address copied with the API prefix: the client adds /api/v1 itself.
  if (base.size() >= 7 && base.compare(base.size() - 7, 7, "/api/v1") == 0) base.resize(base.size() - 7);
  while (!base.empty() && base.back() == '/') base.pop_back();
  for (char c : base)
    if (std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c)))
      return bad("whitespace in path");
  u.base_path = base;
  return u;
}

std::string url_encode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// ---- errors ----

static const char* reason_phrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

ApiError api_error_from_response(int status, std::string_view body) {
  ApiError e;
  e.status = status;
  json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_object()) {
    e.problem = doc;
    if (auto it = doc.find("title"); it != doc.end() && it->is_string()) e.title = it->get<std::string>();
    if (auto it = doc.find("detail"); it != doc.end() && it->is_string()) e.detail = it->get<std::string>();
    if (auto it = doc.find("errors"); it != doc.end() && it->is_array()) {
      for (const auto& fe : *it) {
        if (!fe.is_object()) continue;
        FieldError f;
        if (auto v = fe.find("field"); v != fe.end() && v->is_string()) f.field = v->get<std::string>();
        if (auto v = fe.find("reason"); v != fe.end() && v->is_string()) f.reason = v->get<std::string>();
        if (!f.field.empty() || !f.reason.empty()) e.fields.push_back(std::move(f));
      }
    }
  }
  if (e.title.empty()) e.title = reason_phrase(status);
  if (e.detail.empty()) {
    e.detail = "the server answered HTTP " + std::to_string(status);
    if (!e.title.empty()) e.detail += " " + e.title;
    if (!doc.is_object()) {
      std::string_view first = body.substr(0, body.find('\n'));
      if (first.size() > 200) first = first.substr(0, 200);
      if (!first.empty()) e.detail += ": " + std::string(first);
    }
  }
  return e;
}

json problem_json(const ApiError& e) {
  json doc = e.problem.is_object() ? e.problem : json::object();
  if (!doc.contains("title")) doc["title"] = !e.title.empty() ? e.title : e.unreachable() ? std::string("Server unreachable") : std::string("Error");
  if (!doc.contains("status") && e.status != 0) doc["status"] = e.status;
  if (!doc.contains("detail")) doc["detail"] = e.detail.empty() ? e.title : e.detail;
  if (!doc.contains("errors") && !e.fields.empty()) {
    doc["errors"] = json::array();
    for (const auto& f : e.fields) doc["errors"].push_back({{"field", f.field}, {"reason", f.reason}});
  }
  if (!e.hint.empty()) doc["hint"] = e.hint;
  return doc;
}

ApiError name_flags(ApiError e, std::initializer_list<std::pair<std::string_view, std::string_view>> field_flag) {
  // The flag for `field` (itself or a path below it: "x[0].y", "x.y"), or nullopt.
  auto flag_of = [&](std::string_view field) -> std::optional<std::string_view> {
    for (const auto& [name, flag] : field_flag)
      if (field.substr(0, name.size()) == name &&
          (field.size() == name.size() || field[name.size()] == '[' || field[name.size()] == '.'))
        return flag;
    return std::nullopt;
  };
  for (auto& f : e.fields)
    if (auto flag = flag_of(f.field)) f.field = std::string(*flag);
  // "field: reason", or "field：reason" (the full-width colon of the zh catalogue).
  for (const char* sep : {": ", "："})
    if (const size_t colon = e.detail.find(sep); colon != std::string::npos)
      if (auto flag = flag_of(std::string_view(e.detail).substr(0, colon))) {
        e.detail = std::string(*flag) + e.detail.substr(colon);
        break;
      }
  return e;
}

std::string render_api_error(const ApiError& e) {
  const std::string detail = e.detail.empty() ? e.title : e.detail;
  std::string out = "error: " + printable(detail) + "\n";
  // The server's detail repeats a lone field error ("name: ... already exists"); list fields only
  // when they add something.
  bool repeats = e.fields.size() == 1 && detail == e.fields[0].field + ": " + e.fields[0].reason;
  if (!repeats)
    for (const auto& f : e.fields) {
      out += "  ";
      if (!f.field.empty()) out += printable(f.field) + ": ";
      out += printable(f.reason) + "\n";
    }
  if (!e.hint.empty()) out += "hint: " + e.hint + "\n";
  return out;
}

// ---- client ----

ApiClient::ApiClient(ServerUrl url, std::string token, ClientOptions opts)
    : url_(std::move(url)), token_(std::move(token)), opts_(opts) {
  std::string h = url_.host.find(':') != std::string::npos ? "[" + url_.host + "]" : url_.host;
  http_ = std::make_unique<httplib::Client>(std::string(url_.tls ? "https" : "http") + "://" + h + ":" +
                                            std::to_string(url_.port));
  http_->set_connection_timeout(opts_.connect_timeout_s, 0);
  http_->set_read_timeout(opts_.timeout_s, 0);
  http_->set_write_timeout(opts_.timeout_s, 0);
  http_->set_keep_alive(true);
}

ApiClient::~ApiClient() = default;

std::string locale_language(const char* lc_all, const char* lc_messages, const char* lang) {
  std::string l;
  for (const char* v : {lc_all, lc_messages, lang})
    if (v && *v) {
      l = v;
      break;
    }
  l = l.substr(0, l.find_first_of(".@"));
  if (l == "C" || l == "POSIX") return "";
  for (char& c : l) {
    if (c == '_') c = '-';
    else if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') return "";
  }
  return l;
}

ApiResult<json> ApiClient::get(const std::string& path, const Query& query) {
  return call(Method::kGet, path, query, nullptr);
}
ApiResult<json> ApiClient::post(const std::string& path, const json& body) {
  return call(Method::kPost, path, {}, &body);
}
ApiResult<json> ApiClient::put(const std::string& path, const json& body) {
  return call(Method::kPut, path, {}, &body);
}
ApiResult<json> ApiClient::del(const std::string& path) { return call(Method::kDelete, path, {}, nullptr); }
ApiResult<json> ApiClient::put_bytes(const std::string& path, const Query& query, std::string_view bytes) {
  return call(Method::kPut, path, query, nullptr, &bytes);
}

ApiResult<json> ApiClient::call(Method m, const std::string& path, const Query& query, const json* body,
                                const std::string_view* raw) {
  std::string target = url_.base_path + "/api/v1" + path;
  for (size_t i = 0; i < query.size(); ++i)
    target += (i == 0 ? "?" : "&") + url_encode(query[i].first) + "=" + url_encode(query[i].second);

  httplib::Headers headers = {{"Accept", "application/json, application/problem+json"},
                              {"User-Agent", std::string("gpurent-cli/") + kGpurentVersion}};
  if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
  if (!opts_.language.empty()) headers.emplace("Accept-Language", opts_.language);
  const std::string payload = body ? body->dump(-1, ' ', false, json::error_handler_t::replace) : "";
  const char* ctype = "application/json";

  httplib::Result r = [&] {
    switch (m) {
      case Method::kGet:
        return http_->Get(target, headers);
      case Method::kPost:
        return http_->Post(target, headers, payload, ctype);
      case Method::kPut:
        if (raw) return http_->Put(target, headers, raw->data(), raw->size(), "application/octet-stream");
        return http_->Put(target, headers, payload, ctype);
      case Method::kDelete:
        return http_->Delete(target, headers);
    }
    return http_->Get(target, headers);
  }();

  if (!r) {
    ApiError e;
    const std::string where = "the gpurent server at " + url_.str();
    switch (r.error()) {
      case httplib::Error::Connection:
        e.detail = "cannot connect to " + where + " (connection refused, or the host is unreachable)";
        break;
      case httplib::Error::ConnectionTimeout:
        e.detail =
            "cannot connect to " + where + ": no answer within " + std::to_string(opts_.connect_timeout_s) + " s";
        break;
      case httplib::Error::Read:
        e.detail = "no response from " + where + " (the connection closed, or nothing arrived within " +
                   std::to_string(opts_.timeout_s) + " s)";
        break;
      case httplib::Error::Write:
        e.detail = "sending the request to " + where + " failed";
        break;
      case httplib::Error::SSLConnection:
        e.detail = "TLS handshake with " + where + " failed";
        break;
      case httplib::Error::SSLServerVerification:
        e.detail = "the TLS certificate of " + where + " is not trusted";
        break;
      default:
        e.detail = "request to " + where + " failed: " + httplib::to_string(r.error());
    }
    return e;
  }
  const int status = r->status;
  if (status < 200 || status > 299) return api_error_from_response(status, r->body);
  if (r->body.empty() || status == 204) return json(nullptr);
  // Text exports (CSV) and printable pages (HTML) come back as a JSON string holding the text.
  const std::string type = r->get_header_value("Content-Type");
  if (type.rfind("text/csv", 0) == 0 || type.rfind("text/html", 0) == 0 || type.rfind("text/markdown", 0) == 0)
    return json(r->body);
  json doc = json::parse(r->body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    ApiError e;
    e.status = status;
    e.title = "Invalid response";
    e.detail = "the server at " + url_.str() + " answered HTTP " + std::to_string(status) +
               " with a body that is not JSON (is this a gpurent server?)";
    return e;
  }
  return doc;
}

}  // namespace gpurent
