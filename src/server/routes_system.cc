// Unauthenticated operational endpoints: liveness, readiness, Prometheus metrics, the OpenAPI document.
#include "server/app.h"
#include "server/http_util.h"
#include "server/openapi_doc.h"

namespace gpurent {

void register_system_routes(App& app, httplib::Server& srv) {
  srv.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"status", "ok"}});
  });
  srv.Get("/readyz", [&app](const httplib::Request&, httplib::Response& res) {
    bool store_ok = app.store.healthy();
    bool loop_ok = app.loop.running();
    json body = {{"status", store_ok && loop_ok ? "ready" : "not_ready"},
                 {"checks",
                  {{"store", store_ok ? "ok" : "failing"},
                   {"schema_version", app.store.schema_version()},
                   {"control_loop", loop_ok ? "ok" : "stopped"},
                   {"catalog_models", app.catalog.models().size()}}}};
    send_json(res, store_ok && loop_ok ? 200 : 503, body);
  });
  srv.Get("/metrics", [&app](const httplib::Request&, httplib::Response& res) {
    for (const char* kind :
         {"suppliers", "nodes", "offers", "tenants", "projects", "users", "reservations", "jobs", "faults"}) {
      auto n = app.store.count(kind, {});
      if (n) app.metrics.set_gauge("objects", "kind", kind, static_cast<double>(*n));
    }
    app.metrics.set_gauge("queue", "", "", static_cast<double>(app.loop.queue_depth()));
    res.set_content(app.metrics.render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  srv.Get("/api/v1/openapi.json", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(openapi_document(), "application/json");
  });
}

}  // namespace gpurent
