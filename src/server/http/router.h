// Router: the API's routes by method and path pattern, and the dashboard's static files. The
// handlers speak cpp-httplib's Request and Response (plain structs here: the HTTP server that
// fills them is server/http/http_server.h, not httplib's). Patterns are regular expressions over
// the decoded path, matched whole; capture groups land in req.matches.
// Built once before the server starts, then read-only: dispatch() is safe from any thread.
#pragma once

#include <httplib.h>

#include <functional>
#include <regex>
#include <string>
#include <vector>

namespace gpurent {

class Router {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  void Get(const std::string& pattern, Handler h) { add("GET", pattern, std::move(h)); }
  void Post(const std::string& pattern, Handler h) { add("POST", pattern, std::move(h)); }
  void Put(const std::string& pattern, Handler h) { add("PUT", pattern, std::move(h)); }
  void Delete(const std::string& pattern, Handler h) { add("DELETE", pattern, std::move(h)); }
  void Patch(const std::string& pattern, Handler h) { add("PATCH", pattern, std::move(h)); }

  // Serves GET and HEAD requests that match no route from the files under `dir` ("/" maps to
  // index.html); false when `dir` is not a folder.
  bool set_static_dir(const std::string& dir);

  // Runs the first route whose method and pattern match (HEAD runs GET's: the server sends its
  // headers and length without the body),
  // else a static file, else answers 404 (405 with Allow when the path exists for other methods)
  // as problem+json. Handlers' exceptions become a 500 problem.
  void dispatch(httplib::Request& req, httplib::Response& res) const;

  // Told of each request that no route answered, so that /metrics counts every request: `route`
  // is "static" (a dashboard file) or "unmatched" (404, 405, or an unknown ?lang= refused before
  // routing); `method` is GET for HEAD (as for routes), "other" for a method outside the usual
  // seven. Routes count their own requests. Set before the server starts.
  using Observer = std::function<void(const std::string& method, const std::string& route, int status, double seconds)>;
  void set_unrouted_observer(Observer o) { unrouted_ = std::move(o); }

  size_t size() const { return routes_.size(); }

 private:
  struct Route {
    std::string method;
    std::string literal;  // the pattern's leading characters without regex syntax
    bool exact = false;   // the whole pattern is literal: compare, do not run the regex
    std::regex re;
    Handler handler;
  };
  void add(const char* method, const std::string& pattern, Handler h);
  // dispatch() without the observer: the label of what answered when no route did, else null.
  const char* answer(httplib::Request& req, httplib::Response& res) const;
  bool serve_static(const httplib::Request& req, httplib::Response& res) const;
  bool path_matches(const Route& r, httplib::Request& req) const;

  std::vector<Route> routes_;
  std::string static_dir_;
  Observer unrouted_;
};

}  // namespace gpurent
