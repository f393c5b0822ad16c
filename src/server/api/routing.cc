#include <spdlog/spdlog.h>

#include <chrono>
#include <map>
#include <optional>
#include <regex>

#include "server/api/app.h"
#include "server/http/http_util.h"
#include "server/http/openapi_doc.h"
#include "server/http/rate_limit.h"

namespace gpurent {

// The name /metrics (the `route` label) and the access log give a route: its path template as
// docs/openapi.json writes it ("/api/v1/jobs/{ref}/cancel"), found by the pattern the route was
// registered with, where each template parameter is the capture group ([^/]+). So every route is
// labelled the same way whatever name its file passed. A pattern the document lacks (a route not
// documented yet, which openapi_test reports) is labelled by its route_name when that is a path,
// else by the pattern with each group written {id}.
static std::string route_label(const std::string& pattern, const std::string& route_name) {
  static const std::map<std::string, std::string> kTemplates = [] {
    std::map<std::string, std::string> by_pattern;
    const json doc = json::parse(openapi_document(), nullptr, false);
    if (!doc.is_object() || !doc.contains("paths")) return by_pattern;
    const std::regex param(R"(\{[^}/]+\})");
    for (const auto& path : doc["paths"].items())
      by_pattern.emplace(std::regex_replace(path.key(), param, "([^/]+)"), path.key());
    return by_pattern;
  }();
  if (auto it = kTemplates.find(pattern); it != kTemplates.end()) return it->second;
  if (!route_name.empty() && route_name[0] == '/') return route_name;
  return std::regex_replace(pattern, std::regex(R"(\(\[\^/\]\+\))"), "{id}");
}

static int64_t steady_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A tenant user's request takes a token from its tenant's bucket too (rate_limit.h): all the
// tenant's users and tokens together. The front has taken the address's and the token's already.
static std::optional<RateLimiter::Decision> over_tenant_rate(App& app, const std::string& method,
                                                             const httplib::Request& req, const Principal& p) {
  if (!app.rate_limiter || p.tenant_id.empty()) return std::nullopt;
  auto d = app.rate_limiter->check_tenant(rate_class_of(method, req.path), p.tenant_id, steady_now_ms());
  if (d.allowed) return std::nullopt;
  return d;
}

// 429 as the HTTP front words it: problem+json with Retry-After in whole seconds.
static void send_429(httplib::Response& res, const RateLimiter::Decision& d, const httplib::Request& req) {
  json body = problem_json(
      Error::make(Code::kUnavailable, rate_limited_message(d.by, rate_class_of(req.method, req.path))), req.path);
  body["status"] = 429;
  res.status = 429;
  res.set_header("Retry-After", std::to_string((d.retry_after_ms + 999) / 1000));
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/problem+json");
}

bool take_metric_points(App& app, const std::string& tenant_id, int64_t points, const httplib::Request& req,
                        httplib::Response& res) {
  if (!app.rate_limiter) return true;
  auto d = app.rate_limiter->check_points(tenant_id, points, steady_now_ms());
  if (!d.allowed) send_429(res, d, req);
  return d.allowed;
}

void route(App& app, Router& srv, const char* method, const std::string& pattern, const std::string& route_name,
           AuthedHandler h) {
  auto wrapped = [&app, route_name = route_label(pattern, route_name), h = std::move(h), m = std::string(method)](
                     const httplib::Request& req, httplib::Response& res) {
    auto t0 = std::chrono::steady_clock::now();
    std::string user;
    try {
      auto p = authenticate(req, app.store, app.clock);
      if (!p) {
        send_problem(res, p.error(), req.path);
      } else if (auto limited = over_tenant_rate(app, m, req, *p)) {
        user = p->user_id;
        send_429(res, *limited, req);
      } else {
        user = p->user_id;
        h(req, res, *p);
      }
    } catch (const std::exception& e) {
      spdlog::error("{{\"event\":\"handler_exception\",\"route\":\"{}\",\"what\":{}}}", route_name,
                    json(std::string(e.what())).dump(-1, ' ', false, json::error_handler_t::replace));
      send_problem(res, Error::make(Code::kInternal, "internal error"), req.path);
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // A handler that set no status answers 200 (the server sends it).
    app.metrics.observe_request(m, route_name, res.status == -1 ? 200 : res.status, secs);
    // The path is the client's, decoded: it may be invalid UTF-8 (%ff), hence "replace".
    if (spdlog::should_log(spdlog::level::info))
      spdlog::info("{}", json({{"event", "http"},
                               {"method", m},
                               {"path", req.path},
                               {"route", route_name},
                               {"status", res.status == -1 ? 200 : res.status},
                               {"ms", static_cast<int64_t>(secs * 1e6) / 1000.0},
                               {"user", user},
                               {"remote", req.remote_addr}})
                             .dump(-1, ' ', false, json::error_handler_t::replace));
  };
  std::string mm(method);
  if (mm == "GET")
    srv.Get(pattern, wrapped);
  else if (mm == "POST")
    srv.Post(pattern, wrapped);
  else if (mm == "PUT")
    srv.Put(pattern, wrapped);
  else if (mm == "DELETE")
    srv.Delete(pattern, wrapped);
  else if (mm == "PATCH")
    srv.Patch(pattern, wrapped);
}

void route(App& app, Router& srv, const char* method, const std::string& pattern, const std::string& route_name,
           AppHandler h) {
  route(app, srv, method, pattern, route_name,
        [&app, h](const httplib::Request& req, httplib::Response& res, const Principal& p) { h(app, req, res, p); });
}

}  // namespace gpurent
