// /api/v1/gpu-models: the read-only GPU catalog (datasheet figures with a source per figure).
#include "catalog/gpu_model.h"
#include "server/http/http_util.h"
#include "server/api/resources.h"

namespace gpurent {
namespace {

// ?vendor= and ?form_factor= take the catalog's names; anything else (a typo, another parameter)
// is a 400 that names the allowed values.
Status check_catalog_params(const httplib::Request& req) {
  const std::map<std::string, std::vector<std::string>> allowed = {{"vendor", enum_names(kVendorNames)},
                                                                   {"form_factor", enum_names(kFormFactorNames)}};
  if (auto st = only_params(req, {"vendor", "form_factor"}); !st) return st;
  for (const auto& [k, v] : req.params)
    if (auto st = check_one_of(k, v, allowed.at(k)); !st) return st;
  return ok_status();
}

}  // namespace

void register_catalog_routes(App& app, Router& srv) {
  route(app, srv, "GET", "/api/v1/gpu-models", "/api/v1/gpu-models",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal&) {
          if (auto st = check_catalog_params(req); !st) return send_problem(res, st.error(), req.path);
          std::string vendor = req.get_param_value("vendor");
          std::string ff = req.get_param_value("form_factor");
          json items = json::array();
          for (const auto& m : app.catalog.models()) {
            json j = to_json(m);
            if (!vendor.empty() && j.value("vendor", "") != vendor) continue;
            if (!ff.empty() && j.value("form_factor", "") != ff) continue;
            items.push_back(std::move(j));
          }
          send_json(res, 200, {{"items", items}, {"next_after", nullptr}});
        });
  route(app, srv, "GET", "/api/v1/gpu-models/([^/]+)", "/api/v1/gpu-models/{id}",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal&) {
          const GpuModel* m = app.catalog.find(req.matches[1].str());
          if (!m) return send_problem(res, not_found_error("gpu-models", req.matches[1].str()), req.path);
          send_json(res, 200, to_json(*m));
        });
}

}  // namespace gpurent
