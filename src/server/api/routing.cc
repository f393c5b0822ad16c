#include <spdlog/spdlog.h>

#include <chrono>

#include "server/api/app.h"
#include "server/http/http_util.h"

namespace gpurent {

void route(App& app, Router& srv, const char* method, const std::string& pattern, const std::string& route_name,
           AuthedHandler h) {
  auto wrapped = [&app, route_name, h = std::move(h), m = std::string(method)](const httplib::Request& req,
                                                                               httplib::Response& res) {
    auto t0 = std::chrono::steady_clock::now();
    std::string user;
    try {
      auto p = authenticate(req, app.store, app.clock);
      if (!p) {
        send_problem(res, p.error(), req.path);
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
    app.metrics.observe_request(m, route_name, res.status, secs);
    // The path is the client's, decoded: it may be invalid UTF-8 (%ff), hence "replace".
    if (spdlog::should_log(spdlog::level::info))
      spdlog::info("{}", json({{"event", "http"},
                               {"method", m},
                               {"path", req.path},
                               {"route", route_name},
                               {"status", res.status},
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
