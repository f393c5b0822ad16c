// Unauthenticated operational endpoints: liveness, readiness, Prometheus metrics, the OpenAPI document.
#include <spdlog/spdlog.h>

#include <chrono>

#include "server/api/app.h"
#include "server/services/leader_lease.h"
#include "server/http/http_server.h"
#include "server/http/http_util.h"
#include "server/http/openapi_doc.h"
#include "server/services/record_faults.h"

namespace gpurent {

// The HTTP front's counters and the rate limits in force, in Prometheus text.
static std::string http_metrics_text(const HttpStats& st, const RateLimiter* limiter) {
  std::string out;
  auto metric = [&out](const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  auto line = [&out](const std::string& name, int64_t v) { out += name + " " + std::to_string(v) + "\n"; };
  metric("gpurent_http_connections_open", "gauge", "Client connections open now");
  line("gpurent_http_connections_open", st.open.load());
  metric("gpurent_http_connections_total", "counter", "Client connections accepted");
  line("gpurent_http_connections_total", st.accepted.load());
  metric("gpurent_http_refused_total", "counter", "Connections or requests refused by the HTTP front, by reason");
  line("gpurent_http_refused_total{reason=\"connection_cap\"}", st.refused_busy.load());
  line("gpurent_http_refused_total{reason=\"deadline\"}", st.timeouts.load());
  line("gpurent_http_refused_total{reason=\"too_large\"}", st.too_large.load());
  line("gpurent_http_refused_total{reason=\"malformed\"}", st.malformed.load());
  line("gpurent_http_refused_total{reason=\"overloaded\"}", st.overloaded.load());
  metric("gpurent_http_requests_in_flight", "gauge", "Requests waiting for or running on a worker");
  line("gpurent_http_requests_in_flight", st.queued.load());
  if (!limiter) return out;
  auto refused = limiter->refused();
  const auto& l = limiter->limits();
  // Each family's lines together, as the exposition format wants.
  const auto cls = [](size_t i) { return std::string(rate_class_name(static_cast<RateClass>(i))); };
  metric("gpurent_rate_limited_total", "counter", "Requests answered 429, by class");
  for (size_t i = 0; i < 3; ++i)
    line("gpurent_rate_limited_total{class=\"" + cls(i) + "\"}", static_cast<int64_t>(refused[i]));
  metric("gpurent_rate_limit_per_second", "gauge", "Rate limit in force: requests a second, by class and scope");
  for (size_t i = 0; i < 3; ++i) {
    line("gpurent_rate_limit_per_second{class=\"" + cls(i) + "\",scope=\"token\"}", l.per_token[i].per_second);
    line("gpurent_rate_limit_per_second{class=\"" + cls(i) + "\",scope=\"address\"}", l.per_address[i].per_second);
    line("gpurent_rate_limit_per_second{class=\"" + cls(i) + "\",scope=\"tenant\"}", l.per_tenant[i].per_second);
  }
  metric("gpurent_rate_limit_burst", "gauge", "Rate limit in force: bucket size, by class and scope");
  for (size_t i = 0; i < 3; ++i) {
    line("gpurent_rate_limit_burst{class=\"" + cls(i) + "\",scope=\"token\"}", l.per_token[i].burst);
    line("gpurent_rate_limit_burst{class=\"" + cls(i) + "\",scope=\"address\"}", l.per_address[i].burst);
    line("gpurent_rate_limit_burst{class=\"" + cls(i) + "\",scope=\"tenant\"}", l.per_tenant[i].burst);
  }
  metric("gpurent_metric_points_limit_per_second", "gauge", "Job metric points a second one tenant's jobs may report");
  line("gpurent_metric_points_limit_per_second", l.metric_points_per_tenant.per_second);
  metric("gpurent_metric_points_limit_burst", "gauge", "Job metric points one tenant's jobs may report at once");
  line("gpurent_metric_points_limit_burst", l.metric_points_per_tenant.burst);
  return out;
}

// An open route (no token needed) counted in /metrics under its path, like the API's routes
// (server/api/routing.cc); a handler that throws is answered 500 and counted so.
static Router::Handler counted(App& app, const char* path, Router::Handler h) {
  return [&app, path, h = std::move(h)](const httplib::Request& req, httplib::Response& res) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
      h(req, res);
    } catch (const std::exception& e) {
      spdlog::error("{}", json({{"event", "handler_exception"}, {"route", path}, {"what", e.what()}})
                              .dump(-1, ' ', false, json::error_handler_t::replace));
      res = httplib::Response();
      send_problem(res, Error::make(Code::kInternal, "internal error"), req.path);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    app.metrics.observe_request("GET", path, res.status == -1 ? 200 : res.status, secs);
  };
}

// An open route's caller: false without a token, true with an operator's; another token is 403
// (`forbidden` says what only operators read), a bad one 401. A token the store cannot check (it
// is down) reads as none: these routes are how an operator learns that the store is down.
static Result<bool> asked_by_operator(App& app, const httplib::Request& req, const char* forbidden) {
  if (!req.has_header("Authorization")) return false;
  auto p = authenticate(req, app.store, app.clock);
  if (!p && p.error().code == Code::kUnavailable) return false;
  if (!p) return p.error();
  if (!p->is_operator()) return Error::make(Code::kForbidden, Message(forbidden));
  return true;
}

void register_system_routes(App& app, Router& srv) {
  // Requests no route answers (unknown paths and methods, static files) are counted too.
  srv.set_unrouted_observer([&app](const std::string& method, const std::string& route, int status, double secs) {
    app.metrics.observe_request(method, route, status, secs);
  });
  const Router::Handler healthz = [](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"status", "ok"}});
  };
  // Without a token: whether the server is ready and how many stored records no longer decode. With
  // an operator's token: also which ones and why (their ids and reasons are tenants' data).
  const Router::Handler readyz = [&app](const httplib::Request& req, httplib::Response& res) {
    auto operator_view = asked_by_operator(app, req, "api.system.readyz_operator_only");
    if (!operator_view) return send_problem(res, operator_view.error(), req.path);
    bool store_ok = app.store.healthy();
    bool loop_ok = app.loop.running();
    // Stored records a reader found undecodable (server/record_faults.h): the server still serves,
    // but the requests that need them fail until an operator fixes or deletes them.
    const auto faults = record_faults().list();
    json undecodable = json::array();
    for (const auto& f : faults)
      undecodable.push_back({{"kind", f.kind}, {"id", f.id}, {"reason", f.reason}, {"seen", f.seen}});
    json body = {{"status", store_ok && loop_ok ? "ready" : "not_ready"},
                 {"checks",
                  {{"store", store_ok ? "ok" : "failing"},
                   {"schema_version", app.store.schema_version()},
                   {"control_loop", loop_ok ? "ok" : "stopped"},
                   {"catalog_models", app.catalog.models().size()},
                   {"records", faults.empty() ? "ok" : std::to_string(faults.size()) + " undecodable"}}}};
    if (!faults.empty() && *operator_view) body["undecodable_records"] = undecodable;
    // Which server does the once-only work (the scheduler, the firewall…) when several share one
    // PostgreSQL database; "single" on SQLite.
    if (app.leader) {
      const LeaseView v = app.leader->view();
      body["checks"]["role"] = v.leader ? "leader" : "follower";
      body["leader"] = {{"holder", v.holder}, {"token", v.token}, {"self", app.leader->holder()}};
    } else {
      body["checks"]["role"] = "single";
    }
    send_json(res, store_ok && loop_ok ? 200 : 503, body);
  };
  // Without a token: the process's own figures (HTTP, the control loop's queue, the limits). With
  // an operator's token: also the stored objects by kind, which tell how big the business is.
  const Router::Handler metrics = [&app](const httplib::Request& req, httplib::Response& res) {
    auto operator_view = asked_by_operator(app, req, "api.system.metrics_operator_only");
    if (!operator_view) return send_problem(res, operator_view.error(), req.path);
    if (*operator_view)
      for (const char* kind :
           {"suppliers", "nodes", "offers", "tenants", "projects", "users", "reservations", "jobs", "faults"}) {
        auto n = app.store.count(kind, {});
        if (n) app.metrics.set_objects(kind, *n);
      }
    app.metrics.set_queue_depth(static_cast<int64_t>(app.loop.queue_depth()));
    const auto undecodable = record_faults().count_by_kind();
    for (const char* kind : {"contracts", "measurements", "allocations"})
      app.metrics.set_undecodable(kind, 0);
    for (const auto& [kind, n] : undecodable) app.metrics.set_undecodable(kind, n);
    std::string text = app.metrics.render(*operator_view);
    if (app.http_stats) text += http_metrics_text(*app.http_stats, app.rate_limiter);
    res.set_content(text, "text/plain; version=0.0.4; charset=utf-8");
  };
  const Router::Handler openapi = [](const httplib::Request&, httplib::Response& res) {
    res.set_content(openapi_document(), "application/json");
  };
  srv.Get("/healthz", counted(app, "/healthz", healthz));
  srv.Get("/readyz", counted(app, "/readyz", readyz));
  srv.Get("/metrics", counted(app, "/metrics", metrics));
  srv.Get("/api/v1/openapi.json", counted(app, "/api/v1/openapi.json", openapi));
}

}  // namespace gpurent
