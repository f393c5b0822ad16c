#include "server/http/router.h"

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "server/http/http_util.h"

#include "core/message.h"

namespace gpurent {

void Router::add(const char* method, const std::string& pattern, Handler h) {
  Route r;
  r.method = method;
  size_t i = pattern.find_first_of("\\^$.|?*+()[]{}");
  r.literal = pattern.substr(0, i);
  r.exact = i == std::string::npos;
  r.re = std::regex(pattern);
  r.handler = std::move(h);
  routes_.push_back(std::move(r));
}

bool Router::set_static_dir(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  static_dir_ = dir;
  while (static_dir_.size() > 1 && static_dir_.back() == '/') static_dir_.pop_back();
  return true;
}

bool Router::path_matches(const Route& r, httplib::Request& req) const {
  if (r.exact) {
    if (req.path != r.literal) return false;
    req.matches = std::smatch();
    return true;
  }
  if (req.path.compare(0, r.literal.size(), r.literal) != 0) return false;
  return std::regex_match(req.path, req.matches, r.re);
}

static const char* content_type_for(const std::string& path) {
  static const std::pair<const char*, const char*> kTypes[] = {{".html", "text/html; charset=utf-8"},
                                                               {".js", "text/javascript; charset=utf-8"},
                                                               {".css", "text/css; charset=utf-8"},
                                                               {".json", "application/json"},
                                                               {".svg", "image/svg+xml"},
                                                               {".png", "image/png"},
                                                               {".ico", "image/x-icon"},
                                                               {".woff2", "font/woff2"},
                                                               {".map", "application/json"},
                                                               {".txt", "text/plain; charset=utf-8"}};
  for (const auto& [ext, type] : kTypes) {
    size_t n = std::char_traits<char>::length(ext);
    if (path.size() >= n && path.compare(path.size() - n, n, ext) == 0) return type;
  }
  return "application/octet-stream";
}

bool Router::serve_static(const httplib::Request& req, httplib::Response& res) const {
  if (static_dir_.empty() || req.path.empty() || req.path[0] != '/') return false;
  // No way out of the folder: refuse any "." or ".." segment and NUL bytes (the path is decoded).
  std::string rel = req.path;
  if (rel.find('\0') != std::string::npos) return false;
  for (size_t pos = 0; pos < rel.size();) {
    size_t next = rel.find('/', pos + 1);
    std::string seg = rel.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    if (seg == "." || seg == "..") return false;
    if (next == std::string::npos) break;
    pos = next;
  }
  std::string file = static_dir_ + rel;
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    if (file.back() != '/') file += '/';
    file += "index.html";
    if (::stat(file.c_str(), &st) != 0) return false;
  }
  if (!S_ISREG(st.st_mode) || st.st_size > (64 << 20)) return false;
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  res.status = 200;
  res.set_content(ss.str(), content_type_for(file));
  return true;
}

// The method as /metrics labels it: HEAD runs GET's route, and a method outside the usual seven
// (any token is a valid HTTP method) is "other", so a client cannot mint label values.
static std::string method_label(const std::string& method) {
  if (method == "HEAD") return "GET";
  for (const char* m : {"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
    if (method == m) return method;
  return "other";
}

void Router::dispatch(httplib::Request& req, httplib::Response& res) const {
  const auto t0 = std::chrono::steady_clock::now();
  const char* unrouted = answer(req, res);
  if (unrouted && unrouted_) {
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    unrouted_(method_label(req.method), unrouted, res.status == -1 ? 200 : res.status, secs);
  }
}

const char* Router::answer(httplib::Request& req, httplib::Response& res) const {
  const bool head = req.method == "HEAD";
  // ?lang= (taken out of the parameters, so no route sees it) or Accept-Language: the language
  // sentences are rendered in (server/http/http_util.h). An unknown ?lang= is an error.
  std::string lang = pick_language("", req.get_header_value("Accept-Language"));
  if (auto it = req.params.find("lang"); it != req.params.end()) {
    lang = match_language(it->second);
    if (lang.empty()) {
      std::string known;
      for (const auto& l : message_languages()) known += (known.empty() ? "" : ", ") + l;
      send_problem(
          res, Error::invalid("lang", Message("http.unknown_language").arg("lang", it->second).arg("available", known)),
          req.path);
      return "unmatched";
    }
    req.params.erase("lang");
  }
  const ResponseLanguage language(lang);
  const std::string& method = head ? std::string("GET") : req.method;
  try {
    for (const auto& r : routes_) {
      if (r.method != method || !path_matches(r, req)) continue;
      r.handler(req, res);
      return nullptr;
    }
    if (method == "GET" && serve_static(req, res)) return "static";
    std::string allow;
    for (const auto& r : routes_)
      if (r.method != method && path_matches(r, req) && allow.find(r.method) == std::string::npos)
        allow += (allow.empty() ? "" : ", ") + r.method;
    if (!allow.empty()) {
      send_problem(
          res,
          Error::make(
              Code::kMethodNotAllowed,
              Message("http.method_not_allowed").arg("method", req.method).arg("path", req.path).arg("allowed", allow)),
          req.path);
      res.set_header("Allow", allow);
      return "unmatched";
    }
    send_problem(res,
                 Error::make(Code::kNotFound, Message("http.no_route").arg("method", req.method).arg("path", req.path)),
                 req.path);
    return "unmatched";
  } catch (const std::exception&) {
    // A handler threw that does not catch its own (the API's routes do, and count the request
    // under their route: server/api/routing.cc, server/api/system.cc).
    res = httplib::Response();
    send_problem(res, Error::make(Code::kInternal, "internal error"), req.path);
    return "unmatched";
  }
}

}  // namespace gpurent
