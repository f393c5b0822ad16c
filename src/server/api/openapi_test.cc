// Checks docs/openapi.json (embedded as openapi_document()) against the server it describes:
// the document is OpenAPI 3.0.x and every $ref resolves; its (method, path) pairs are exactly the
// routes the server registers that can succeed (a hard-coded list read from the route files in
// src/server/api/, the kinds and list filters registered in App::kinds, and a live probe of every
// method on every path), the routes that only ever answer 405 being left out; the responses of a
// server seeded with the demo world match the documented schemas, status codes and media types,
// with no undocumented keys; and /metrics counts every request under its path template.
// (tests/openapi/ runs Redocly, swagger-parser and Ajv over the same document and a live demo.)
#include "io/files.h"
#include "server/http/openapi_doc.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "cli/version.h"
#include "core/clock.h"
#include "server/api/app.h"
#include "server/http/http_server.h"
#include "server/services/bootstrap.h"
#include "server/http/http_util.h"
#include "server/api/resources.h"
#include "server/services/cost_firewall.h"
#include "server/services/scheduler_service.h"
#include "server/demo/seed.h"
#include "store/store_test_util.h"

namespace gpurent {
namespace {

const json& doc() {
  static const json d = json::parse(openapi_document());
  return d;
}

using Op = std::pair<std::string, std::string>;  // method (upper case), path template
const char* const kMethods[] = {"get", "put", "post", "delete", "patch", "head", "options", "trace"};

std::set<Op> documented_ops() {
  std::set<Op> out;
  for (const auto& [path, item] : doc().at("paths").items())
    for (const char* m : kMethods)
      if (item.contains(m)) {
        std::string up = m;
        for (char& c : up) c = static_cast<char>(std::toupper(c));
        out.insert({up, path});
      }
  return out;
}

const json& resolve(const json& j) {
  if (!j.is_object() || !j.contains("$ref")) return j;
  return doc().at(json::json_pointer(j["$ref"].get<std::string>().substr(1)));
}

const json& operation(const std::string& method, const std::string& path) {
  std::string m = method;
  for (char& c : m) c = static_cast<char>(std::tolower(c));
  return doc().at("paths").at(path).at(m);
}

// Every route the server registers that can succeed, read from the code: register_crud (GET list,
// POST when creatable, GET item, PUT when updatable, DELETE when deletable) and the route files.
const std::set<Op> kServerRoutes = {
    {"GET", "/healthz"},
    {"GET", "/readyz"},
    {"GET", "/metrics"},
    {"GET", "/api/v1/openapi.json"},
    {"GET", "/api/v1/gpu-models"},
    {"GET", "/api/v1/gpu-models/{id}"},
    {"GET", "/api/v1/suppliers"},
    {"POST", "/api/v1/suppliers"},
    {"GET", "/api/v1/suppliers/{ref}"},
    {"PUT", "/api/v1/suppliers/{ref}"},
    {"DELETE", "/api/v1/suppliers/{ref}"},
    {"GET", "/api/v1/nodes"},
    {"POST", "/api/v1/nodes"},
    {"GET", "/api/v1/nodes/{ref}"},
    {"PUT", "/api/v1/nodes/{ref}"},
    {"DELETE", "/api/v1/nodes/{ref}"},
    {"GET", "/api/v1/offers"},
    {"POST", "/api/v1/offers"},
    {"GET", "/api/v1/offers/{ref}"},
    {"PUT", "/api/v1/offers/{ref}"},
    {"DELETE", "/api/v1/offers/{ref}"},
    {"GET", "/api/v1/tenants"},
    {"POST", "/api/v1/tenants"},
    {"GET", "/api/v1/tenants/{ref}"},
    {"PUT", "/api/v1/tenants/{ref}"},
    {"DELETE", "/api/v1/tenants/{ref}"},
    {"GET", "/api/v1/projects"},
    {"POST", "/api/v1/projects"},
    {"GET", "/api/v1/projects/{ref}"},
    {"PUT", "/api/v1/projects/{ref}"},
    {"DELETE", "/api/v1/projects/{ref}"},
    {"GET", "/api/v1/projects/{ref}/quota"},
    {"PUT", "/api/v1/projects/{ref}/quota"},
    // project secrets (secrets.cc)
    {"GET", "/api/v1/projects/{ref}/secrets"},
    {"PUT", "/api/v1/projects/{ref}/secrets/{name}"},
    {"DELETE", "/api/v1/projects/{ref}/secrets/{name}"},
    // project artifacts (artifacts.cc)
    {"POST", "/api/v1/projects/{ref}/artifacts"},
    {"GET", "/api/v1/projects/{ref}/artifacts"},
    {"GET", "/api/v1/projects/{ref}/artifacts/{name}"},
    {"DELETE", "/api/v1/projects/{ref}/artifacts/{name}"},
    {"PUT", "/api/v1/projects/{ref}/artifacts/{name}/content"},
    // images (images.cc)
    {"POST", "/api/v1/images"},
    {"GET", "/api/v1/images"},
    {"GET", "/api/v1/images/{ref}"},
    {"DELETE", "/api/v1/images/{ref}"},
    {"PUT", "/api/v1/images/{ref}/archive"},
    {"GET", "/api/v1/users"},
    {"POST", "/api/v1/users"},
    {"GET", "/api/v1/users/{ref}"},
    {"PUT", "/api/v1/users/{ref}"},
    {"DELETE", "/api/v1/users/{ref}"},
    {"GET", "/api/v1/tokens"},
    {"POST", "/api/v1/tokens"},
    {"DELETE", "/api/v1/tokens/{id}"},
    {"GET", "/api/v1/me"},
    {"GET", "/api/v1/jobs"},
    {"POST", "/api/v1/jobs"},
    {"GET", "/api/v1/jobs/{ref}"},
    {"POST", "/api/v1/jobs/{ref}/cancel"},
    {"GET", "/api/v1/jobs/{ref}/events"},
    {"GET", "/api/v1/jobs/{ref}/cost"},
    {"GET", "/api/v1/offers/{ref}/history"},
    {"GET", "/api/v1/issued-invoices"},
    {"GET", "/api/v1/issued-invoices/{ref}"},
    {"POST", "/api/v1/issued-invoices/{ref}/pay"},
    {"POST", "/api/v1/issued-invoices/{ref}/void"},
    {"GET", "/api/v1/issued-invoices/{ref}/print"},
    {"GET", "/api/v1/issued-invoices/{ref}/verify"},
    {"GET", "/api/v1/credit-notes"},
    {"POST", "/api/v1/credit-notes"},
    {"GET", "/api/v1/credit-notes/{ref}"},
    {"POST", "/api/v1/invoices/close"},
    {"POST", "/api/v1/measurements/{ref}/accept"},
    {"POST", "/api/v1/measurements/{ref}/reject"},
    {"GET", "/api/v1/jobs/{ref}/logs"},
    {"GET", "/api/v1/faults"},
    {"GET", "/api/v1/faults/{ref}"},
    {"GET", "/api/v1/reservations"},
    {"POST", "/api/v1/reservations"},
    {"GET", "/api/v1/reservations/{ref}"},
    {"PUT", "/api/v1/reservations/{ref}"},
    {"DELETE", "/api/v1/reservations/{ref}"},
    {"GET", "/api/v1/volumes"},
    {"POST", "/api/v1/volumes"},
    {"GET", "/api/v1/volumes/{ref}"},
    {"PUT", "/api/v1/volumes/{ref}"},
    {"DELETE", "/api/v1/volumes/{ref}"},
    {"GET", "/api/v1/instances"},
    {"POST", "/api/v1/instances"},
    {"GET", "/api/v1/instances/{ref}"},
    {"DELETE", "/api/v1/instances/{ref}"},
    {"POST", "/api/v1/instances/{ref}/start"},
    {"POST", "/api/v1/instances/{ref}/stop"},
    {"POST", "/api/v1/instances/{ref}/restart"},
    {"GET", "/api/v1/instances/{ref}/preflight"},
    {"POST", "/api/v1/instances/{ref}/image"},
    {"POST", "/api/v1/instances/{ref}/attach"},
    {"POST", "/api/v1/instances/{ref}/detach"},
    {"POST", "/api/v1/usage"},
    {"GET", "/api/v1/usage/gpus"},
    {"GET", "/api/v1/usage/jobs"},
    {"GET", "/api/v1/contracts"},
    {"POST", "/api/v1/contracts"},
    {"GET", "/api/v1/contracts/{ref}"},
    {"PUT", "/api/v1/contracts/{ref}"},
    {"DELETE", "/api/v1/contracts/{ref}"},
    {"GET", "/api/v1/allocations"},
    {"GET", "/api/v1/allocations/{ref}"},
    {"GET", "/api/v1/alerts"},
    {"GET", "/api/v1/alerts/{ref}"},
    {"POST", "/api/v1/alerts/{ref}/lift"},
    {"GET", "/api/v1/webhooks"},
    {"POST", "/api/v1/webhooks"},
    {"GET", "/api/v1/webhooks/{ref}"},
    {"DELETE", "/api/v1/webhooks/{ref}"},
    {"GET", "/api/v1/invoices"},
    {"GET", "/api/v1/reports/reconciliation"},
    {"GET", "/api/v1/measurements"},
    {"POST", "/api/v1/measurements"},
    {"GET", "/api/v1/measurements/{ref}"},
    {"GET", "/api/v1/acceptance-runs"},
    {"POST", "/api/v1/acceptance-runs"},
    {"GET", "/api/v1/acceptance-runs/{ref}"},
    {"GET", "/api/v1/acceptance-runs/{ref}/report"},
    {"GET", "/api/v1/poc-runs"},
    {"POST", "/api/v1/poc-runs"},
    {"GET", "/api/v1/poc-runs/{ref}"},
    {"DELETE", "/api/v1/poc-runs/{ref}"},
    {"POST", "/api/v1/poc-runs/{ref}/results"},
    {"GET", "/api/v1/poc-runs/{ref}/report"},
    // the market (market.cc)
    {"GET", "/api/v1/market-orders"},
    {"POST", "/api/v1/market-orders"},
    {"GET", "/api/v1/market-orders/{ref}"},
    {"POST", "/api/v1/market-orders/{ref}/cancel"},
    {"POST", "/api/v1/market-orders/{ref}/replace"},
    {"GET", "/api/v1/market-trades"},
    {"GET", "/api/v1/market-trades/{ref}"},
    {"POST", "/api/v1/market-trades/{ref}/default"},
    {"GET", "/api/v1/market/quote"},
    {"GET", "/api/v1/market/depth"},
    {"GET", "/api/v1/market/prints"},
    {"GET", "/api/v1/market/index"},
    {"GET", "/api/v1/spot-prices"},
    {"POST", "/api/v1/spot-prices"},
    {"GET", "/api/v1/spot-prices/{ref}"},
    {"GET", "/api/v1/top-ups"},
    {"POST", "/api/v1/top-ups"},
    {"GET", "/api/v1/top-ups/{ref}"},
    {"GET", "/api/v1/tenants/{ref}/balance"},
    {"PUT", "/api/v1/tenants/{ref}/billing"},
    {"GET", "/api/v1/tenants/{ref}/procurement"},
    {"PUT", "/api/v1/tenants/{ref}/procurement"},
    {"POST", "/api/v1/payments/webhook"},
    {"POST", "/api/v1/advise/fingerprint"},
    {"POST", "/api/v1/advise/tco"},
    {"POST", "/api/v1/advise/mix"},
    {"POST", "/api/v1/advise/quotes"},
    {"POST", "/api/v1/advise/suppliers"},
    {"POST", "/api/v1/advise/poc"},
    {"POST", "/api/v1/advise/hedge"},
    // job metrics (routes_job_metrics.cc)
    {"GET", "/api/v1/jobs/{ref}/metrics"},
    {"POST", "/api/v1/jobs/{ref}/metrics"},
    // dashboard usage (routes_dashboard_usage.cc)
    {"GET", "/api/v1/dashboard/utilization"},
    {"GET", "/api/v1/dashboard/suppliers"},
    {"GET", "/api/v1/dashboard/fragmentation"},
    // dashboard cost (routes_dashboard_cost.cc)
    {"GET", "/api/v1/dashboard/costs"},
    {"GET", "/api/v1/dashboard/cost-performance"},
};
// Routes register_crud registers for the read-only kinds that only ever answer 405 (with Allow:
// GET, after checking the token): not in the document, whose operations all can succeed.
const std::set<Op> kNotAllowedRoutes = {
    {"PUT", "/api/v1/jobs/{ref}"},        {"DELETE", "/api/v1/jobs/{ref}"},        {"POST", "/api/v1/faults"},
    {"PUT", "/api/v1/faults/{ref}"},      {"DELETE", "/api/v1/faults/{ref}"},      {"POST", "/api/v1/allocations"},
    {"PUT", "/api/v1/allocations/{ref}"}, {"DELETE", "/api/v1/allocations/{ref}"}, {"POST", "/api/v1/alerts"},
    {"PUT", "/api/v1/alerts/{ref}"},      {"DELETE", "/api/v1/alerts/{ref}"},
    {"PUT", "/api/v1/spot-prices/{ref}"}, {"DELETE", "/api/v1/spot-prices/{ref}"},
    {"PUT", "/api/v1/measurements/{ref}"}, {"DELETE", "/api/v1/measurements/{ref}"},
    {"PUT", "/api/v1/acceptance-runs/{ref}"}, {"DELETE", "/api/v1/acceptance-runs/{ref}"},
    {"PUT", "/api/v1/poc-runs/{ref}"},
    {"POST", "/api/v1/issued-invoices"}, {"PUT", "/api/v1/issued-invoices/{ref}"},
    {"DELETE", "/api/v1/issued-invoices/{ref}"}, {"PUT", "/api/v1/credit-notes/{ref}"},
    {"DELETE", "/api/v1/credit-notes/{ref}"}, {"PUT", "/api/v1/top-ups/{ref}"},
    {"DELETE", "/api/v1/top-ups/{ref}"}, {"PUT", "/api/v1/instances/{ref}"},
    {"PUT", "/api/v1/market-orders/{ref}"}, {"DELETE", "/api/v1/market-orders/{ref}"}, {"POST", "/api/v1/market-trades"},
    {"PUT", "/api/v1/market-trades/{ref}"}, {"DELETE", "/api/v1/market-trades/{ref}"},
};
const std::set<std::string> kOpenPaths = {"/healthz", "/readyz", "/metrics", "/api/v1/openapi.json"};
// Routes without a bearer token whose request is signed instead (security: [] in the document):
// unsigned, they answer 401 like the token-checked ones.
const std::set<std::string> kSignedPaths = {"/api/v1/payments/webhook"};

// --- a validator for the subset of the OpenAPI 3.0 schema object the document uses ----------------
// Strict about objects: a key no schema in scope declares is an error unless additionalProperties
// allows it (or the schema is a free-form object), so a field added to a response but not to the
// document fails the test.
class Validator {
 public:
  std::vector<std::string> errors;

  void check(const json& v, const json& schema_in, const std::string& at, bool closed = true) {
    const json& s = resolve(schema_in);
    if (v.is_null()) {
      if (!accepts_null(s)) err(at, "is null");
      return;
    }
    if (s.contains("allOf"))
      for (const auto& part : s["allOf"]) check(v, part, at, false);
    if (s.contains("oneOf")) {
      size_t matched = 0;
      for (const auto& part : s["oneOf"]) {
        Validator sub;
        sub.check(v, part, at);
        matched += sub.errors.empty();
      }
      if (matched != 1) err(at, "matches " + std::to_string(matched) + " oneOf alternatives");
    }
    if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end())
      err(at, "value " + v.dump() + " not in enum");
    const std::string type = s.value("type", "");
    if (type == "object" || (type.empty() && v.is_object() && closed && has_properties(s))) {
      if (!v.is_object()) return err(at, "is not an object: " + v.dump());
      for (const auto& r : s.value("required", json::array()))
        if (!v.contains(r.get<std::string>())) err(at, "lacks required '" + r.get<std::string>() + "'");
      const json& props = s.value("properties", json::object());
      for (const auto& [k, x] : v.items()) {
        if (props.contains(k)) check(x, props[k], at + "." + k);
        else if (s.contains("additionalProperties") && s["additionalProperties"].is_object())
          check(x, s["additionalProperties"], at + "." + k);
        else if (closed && !declared(s, k) && (has_properties(s) || s.value("additionalProperties", true) == false))
          err(at, "has undocumented key '" + k + "'");
      }
    } else if (type == "array") {
      if (!v.is_array()) return err(at, "is not an array");
      for (size_t i = 0; i < v.size(); ++i) check(v[i], s["items"], at + "[" + std::to_string(i) + "]");
      bound(at, v.size(), s, "minItems", "maxItems");
    } else if (type == "string") {
      if (!v.is_string()) return err(at, "is not a string: " + v.dump());
      const auto& str = v.get_ref<const std::string&>();
      size_t chars = 0;
      for (unsigned char c : str) chars += (c & 0xC0) != 0x80;
      bound(at, chars, s, "minLength", "maxLength");
      if (s.contains("pattern") && !std::regex_search(str, std::regex(s["pattern"].get<std::string>())))
        err(at, "'" + str + "' does not match " + s["pattern"].get<std::string>());
      if (s.value("format", "") == "date-time" && !parse_rfc3339(str, at)) err(at, "'" + str + "' is not RFC 3339");
    } else if (type == "integer") {
      if (!v.is_number_integer()) return err(at, "is not an integer: " + v.dump());
      const int64_t n = v.get<int64_t>();
      if (s.contains("minimum") && n < s["minimum"].get<int64_t>()) err(at, "below minimum: " + v.dump());
      if (s.contains("maximum") && n > s["maximum"].get<int64_t>()) err(at, "above maximum: " + v.dump());
    } else if (type == "boolean" && !v.is_boolean()) {
      err(at, "is not a boolean");
    }
  }

 private:
  void err(const std::string& at, const std::string& what) { errors.push_back(at + " " + what); }
  // OpenAPI 3.0.3: nullable adds null to the schema's own type; an allOf wrapper (no type of its
  // own) takes null when every part does.
  static bool accepts_null(const json& s) {
    if (s.value("nullable", false)) return true;
    if (s.contains("type") || !s.contains("allOf") || s["allOf"].empty()) return false;
    for (const auto& part : s["allOf"])
      if (!accepts_null(resolve(part))) return false;
    return true;
  }
  void bound(const std::string& at, size_t n, const json& s, const char* lo, const char* hi) {
    if (s.contains(lo) && n < s[lo].get<size_t>()) err(at, std::string("violates ") + lo);
    if (s.contains(hi) && n > s[hi].get<size_t>()) err(at, std::string("violates ") + hi);
  }
  static bool has_properties(const json& s) {
    if (s.contains("properties")) return true;
    for (const auto& part : s.value("allOf", json::array()))
      if (has_properties(resolve(part))) return true;
    return false;
  }
  static bool declared(const json& s, const std::string& key) {
    if (s.value("properties", json::object()).contains(key)) return true;
    for (const auto& part : s.value("allOf", json::array()))
      if (declared(resolve(part), key)) return true;
    return false;
  }
};

// --- static checks -------------------------------------------------------------------------------

TEST(OpenApi, IsOpenApi30WithInfoServersAndBearerAuth) {
  EXPECT_EQ(doc().at("openapi").get<std::string>().rfind("3.0.", 0), 0u);
  EXPECT_EQ(doc().at("info").at("title"), "gpurent API");
  EXPECT_EQ(doc().at("info").at("version"), "0.1.0");
  EXPECT_NE(doc().at("info").at("description").get<std::string>().find("简体中文"), std::string::npos);
  EXPECT_EQ(doc().at("servers").at(0).at("url"), "http://127.0.0.1:8080");
  const json& bearer = doc().at("components").at("securitySchemes").at("bearerAuth");
  EXPECT_EQ(bearer.at("type"), "http");
  EXPECT_EQ(bearer.at("scheme"), "bearer");
  EXPECT_EQ(doc().at("security"), json::parse(R"([{"bearerAuth": []}])"));
}

TEST(OpenApi, EveryRefResolves) {
  size_t refs = 0;
  std::function<void(const json&, const std::string&)> walk = [&](const json& j, const std::string& at) {
    if (j.is_object()) {
      for (const auto& [k, v] : j.items()) {
        if (k == "$ref") {
          ++refs;
          ASSERT_TRUE(v.is_string()) << at;
          const std::string r = v.get<std::string>();
          ASSERT_EQ(r.rfind("#/", 0), 0u) << at << ": only local references are expected: " << r;
          EXPECT_TRUE(doc().contains(json::json_pointer(r.substr(1)))) << at << ": unresolved " << r;
        } else {
          walk(v, at + "/" + k);
        }
      }
    } else if (j.is_array()) {
      for (size_t i = 0; i < j.size(); ++i) walk(j[i], at + "/" + std::to_string(i));
    }
  };
  walk(doc(), "");
  EXPECT_GT(refs, 100u);
}

TEST(OpenApi, OperationsAreExactlyTheServerRoutes) {
  const auto ops = documented_ops();
  for (const auto& op : kServerRoutes)
    EXPECT_TRUE(ops.count(op)) << "route not documented: " << op.first << " " << op.second;
  for (const auto& op : ops)
    EXPECT_TRUE(kServerRoutes.count(op)) << "documented but not served: " << op.first << " " << op.second;
  for (const auto& op : kNotAllowedRoutes)
    EXPECT_FALSE(ops.count(op)) << "documented although it only answers 405: " << op.first << " " << op.second;
}

// Every operation can succeed (client generators make a method of each) and says why it can fail.
TEST(OpenApi, EveryOperationHasASuccessAndAnErrorResponse) {
  for (const auto& [method, path] : documented_ops()) {
    bool success = false, error = false;
    for (const auto& [code, resp] : operation(method, path).at("responses").items()) {
      success |= code[0] == '2';
      error |= code[0] == '4';
    }
    EXPECT_TRUE(success) << method << " " << path << " has no 2xx response";
    EXPECT_TRUE(error) << method << " " << path << " has no 4xx response";
  }
}

TEST(OpenApi, OnlySystemRoutesAreOpenAndErrorsAreProblemJson) {
  std::set<std::string> ids;
  for (const auto& [method, path] : documented_ops()) {
    const json& op = operation(method, path);
    EXPECT_TRUE(ids.insert(op.at("operationId").get<std::string>()).second) << "duplicate operationId at " << path;
    if (kOpenPaths.count(path) || kSignedPaths.count(path)) {
      EXPECT_EQ(op.at("security"), json::array()) << path;
      if (kSignedPaths.count(path)) {
        EXPECT_TRUE(op.at("responses").contains("401")) << method << " " << path;
      }
    } else {
      EXPECT_FALSE(op.contains("security")) << method << " " << path << " must use the global bearerAuth";
      EXPECT_TRUE(op.at("responses").contains("401")) << method << " " << path;
    }
    for (const auto& [code, resp] : op.at("responses").items()) {
      if (code[0] != '4') continue;
      const json& content = resolve(resp).at("content");
      ASSERT_TRUE(content.contains("application/problem+json")) << method << " " << path << " " << code;
      EXPECT_EQ(content["application/problem+json"]["schema"]["$ref"], "#/components/schemas/Problem");
    }
  }
}

// --- the live server -----------------------------------------------------------------------------

struct Reply {
  int status = -1;
  std::string content_type;
  json body;
  httplib::Headers headers;
};

// The server's routes on an HttpServer in this process, over a SQLite file in a temporary
// folder, with the demo world seeded through the POST path. Registers what run_server() registers.
class LiveServer {
 public:
  LiveServer()
      : store_(open_or_die(dir_.file("db"), false)),
        catalog_(load_catalog_file(default_catalog_path()).value()),
        loop_(*store_),
        app_{{*store_, catalog_, loop_, clock_, metrics_, opts_}, kinds_} {
    opts_.db_path = dir_.file("db");  // the demo seeding writes its tokens file beside it
    opts_.cold_start_ms = 0;          // admitted jobs run at the next tick: the ledger gets runs
    spdlog::set_level(spdlog::level::warn);  // no access log lines in the test output
    register_all_routes(app_, router_);
    HttpServerOptions h;
    h.port = 0;
    h.rate_limits = false;
    http_ = std::make_unique<HttpServer>(router_, h);
    port_ = http_->bind().value();
    thread_ = std::thread([this] { http_->run(); });
  }
  ~LiveServer() {
    http_->stop();
    thread_.join();
    loop_.stop();
  }

  // Bootstraps the admin only; returns its token.
  std::string admin_token() {
    auto admin = ensure_admin(*store_, loop_, clock_, dir_.file("admin-token"));
    EXPECT_TRUE(admin.ok()) << admin.error().message;
    return admin.ok() ? admin->token : "";
  }

  // Bootstraps the admin and seeds the demo world; returns the admin's token.
  std::string seed() {
    auto admin = ensure_admin(*store_, loop_, clock_, dir_.file("admin-token"));
    EXPECT_TRUE(admin.ok()) << admin.error().message;
    std::filesystem::create_directories(dir_.file("no-price-lists"));  // empty: the built-in lists
    auto seeded = seed_demo_if_empty(app_, admin->user_id, dir_.file("no-price-lists"), clock_.now());
    EXPECT_TRUE(seeded.ok()) << seeded.error().message;
    auto invoices = seed_demo_invoices(app_, admin->user_id);
    EXPECT_TRUE(invoices.ok()) << invoices.error().message;
    return admin->token;
  }

  // Runs the real scheduler: places the demo's jobs, then fails the node of the first admitted
  // one so a fault is recorded.
  void schedule_and_fail_a_node(const std::string& tok) {
    SchedulerService sched(app_);
    ASSERT_TRUE(sched.run_once().ok());
    Reply admitted = call("GET", "/api/v1/jobs?state=admitted&limit=1", tok);
    ASSERT_FALSE(admitted.body["items"].empty()) << "the scheduler admitted none of the demo's jobs";
    const std::string node = admitted.body["items"][0]["status"]["placement"][0]["node"];
    json n = call("GET", "/api/v1/nodes/" + node, tok).body;
    n["state"] = "unavailable";
    n["state_reason"] = "openapi test: Xid 79";
    ASSERT_EQ(call("PUT", "/api/v1/nodes/" + node, tok, n.dump()).status, 200);
    ASSERT_TRUE(sched.run_once().ok());
  }

  // Gives a demo project a zero budget and runs the cost firewall once, so alerts exist.
  void raise_alerts(const std::string& tok) {
    Reply projects = call("GET", "/api/v1/projects?limit=1", tok);
    ASSERT_FALSE(projects.body["items"].empty());
    const std::string quota = "/api/v1/projects/" + projects.body["items"][0]["id"].get<std::string>() + "/quota";
    json q = call("GET", quota, tok).body;
    q["monthly_budget"] = "0.00";
    ASSERT_EQ(call("PUT", quota, tok, q.dump()).status, 200);
    CostFirewall firewall(app_, 0);
    auto raised = firewall.run_once(clock_.now());
    ASSERT_TRUE(raised.ok()) << raised.error().message;
    ASSERT_GT(*raised, 0);
  }

  Reply call(const std::string& method, const std::string& path, const std::string& token = "",
             const std::string& body = "", const std::string& content_type = "application/json") {
    httplib::Client cli("127.0.0.1", port_);
    httplib::Request req;
    req.method = method;
    req.path = path;
    if (!token.empty()) req.headers.emplace("Authorization", "Bearer " + token);
    if (!body.empty()) {
      req.headers.emplace("Content-Type", content_type);
      req.body = body;
    }
    auto res = cli.send(req);
    Reply out;
    if (!res) return out;
    out.status = res->status;
    out.headers = res->headers;
    out.content_type = res->get_header_value("Content-Type");
    out.content_type = out.content_type.substr(0, out.content_type.find(';'));
    if (out.content_type.find("json") != std::string::npos) out.body = json::parse(res->body, nullptr, false);
    return out;
  }

  const std::map<std::string, KindSpec>& kinds() const { return kinds_; }
  Metrics& metrics() { return metrics_; }
  size_t routes_registered() const { return router_.size(); }

 private:
  TempDir dir_;
  std::unique_ptr<Store> store_;
  GpuCatalog catalog_;
  ControlLoop loop_;
  SystemClock clock_;
  Metrics metrics_;
  ServerOptions opts_;
  std::map<std::string, KindSpec> kinds_;
  App app_;
  Router router_;
  std::unique_ptr<HttpServer> http_;
  int port_ = -1;
  std::thread thread_;
};

std::string concrete(std::string path) {
  return std::regex_replace(path, std::regex("\\{[a-z]+\\}"), "probe-x");
}

TEST(OpenApi, KindsAndListFiltersMatchTheRegisteredSpecs) {
  LiveServer srv;
  ASSERT_EQ(srv.kinds().size(), 23u);
  for (const auto& [kind, spec] : srv.kinds()) {
    const std::string base = "/api/v1/" + kind;
    std::set<std::string> params, expected = {"limit", "after"};
    for (const auto& [param, column] : spec.filters) expected.insert(param);
    if (spec.updated_since) expected.insert("updated_since");
    for (const auto& p : operation("GET", base).at("parameters")) params.insert(resolve(p).at("name").get<std::string>());
    EXPECT_EQ(params, expected) << "query parameters of GET " << base;
    // A method the kind does not allow is left out of the document (it answers 405).
    const json& item = doc().at("paths").at(base + "/{ref}");
    ASSERT_EQ(doc().at("paths").at(base).contains("post"), spec.creatable || spec.create_elsewhere) << base;
    if (spec.creatable) {
      EXPECT_TRUE(operation("POST", base).at("responses").at("201").at("headers").contains("Location")) << base;
    }
    ASSERT_EQ(item.contains("put"), spec.updatable) << base;
    if (spec.updatable) {
      EXPECT_TRUE(item.at("put").at("responses").contains("200")) << base;
    }
    ASSERT_EQ(item.contains("delete"), spec.deletable) << base;
    if (spec.deletable) {
      EXPECT_TRUE(item.at("delete").at("responses").contains("204")) << base;
    }
  }
}

// The two lists above are every route the server registers: a new route file's route fails this
// until it is documented (and listed in kServerRoutes).
TEST(OpenApi, TheListsNameEveryRegisteredRoute) {
  LiveServer srv;
  EXPECT_EQ(srv.routes_registered(), kServerRoutes.size() + kNotAllowedRoutes.size());
}

TEST(OpenApi, EveryDocumentedMethodIsServedAndNoOther) {
  LiveServer srv;
  const auto ops = documented_ops();
  std::set<std::string> paths;
  for (const auto& op : ops) paths.insert(op.second);
  for (const auto& path : paths)
    for (const char* m : {"GET", "POST", "PUT", "DELETE", "PATCH"}) {
      Reply r = srv.call(m, concrete(path));
      ASSERT_NE(r.status, -1) << m << " " << path;
      const bool served = ops.count({m, path}) > 0;
      // Without a token every served route answers 401 (the open ones 200); a method the path
      // does not have answers 405 (with Allow), or 401 where a 405-only route checks the token first.
      const int want = served ? (kOpenPaths.count(path) ? 200 : 401) : kNotAllowedRoutes.count({m, path}) ? 401 : 405;
      EXPECT_EQ(r.status, want) << m << " " << path;
    }
  // With a token, the 405-only routes answer 405 naming the methods the path has.
  const std::string tok = srv.admin_token();
  for (const auto& [m, path] : kNotAllowedRoutes) {
    Reply r = srv.call(m, concrete(path), tok, m == "DELETE" ? "" : "{}");
    EXPECT_EQ(r.status, 405) << m << " " << path;
    ASSERT_TRUE(r.headers.count("Allow")) << m << " " << path;
    const std::string allow = r.headers.find("Allow")->second;
    const bool deletable = path == "/api/v1/instances/{ref}" || path == "/api/v1/poc-runs/{ref}";
    EXPECT_EQ(allow, deletable ? "GET, DELETE" : "GET") << m << " " << path;
  }
}

// The rows of gpurent_http_requests_total: (method, route, status) -> count.
std::map<std::tuple<std::string, std::string, std::string>, double> request_counts(const std::string& text) {
  std::map<std::tuple<std::string, std::string, std::string>, double> out;
  static const std::regex row(
      R"re(^gpurent_http_requests_total\{method="([^"]*)",route="([^"]*)",status="([^"]*)"\} (\S+)$)re");
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row)) out[{m[1], m[2], m[3]}] = std::stod(m[4]);
  }
  return out;
}

// /metrics labels each request with the document's path template of the route that answered it,
// whatever the route file named it; what no route answered is counted as route="unmatched"; and
// gpurent_build_info says which build runs.
TEST(OpenApi, MetricsCountEveryRequestUnderItsPathTemplate) {
  LiveServer srv;
  const auto ops = documented_ops();
  for (const auto& [m, path] : ops) srv.call(m, concrete(path));                // 401, or 200 for the open ones
  for (const auto& [m, path] : kNotAllowedRoutes) srv.call(m, concrete(path));  // 401 (the token first)
  EXPECT_EQ(srv.call("GET", "/api/v1/no-such-route").status, 404);
  EXPECT_EQ(srv.call("PATCH", "/api/v1/tenants").status, 405);
  EXPECT_EQ(srv.call("GET", "/healthz?lang=xx").status, 422);  // refused before routing

  const auto counts = request_counts(srv.metrics().render(false));
  std::set<std::string> labels;
  for (const auto& [key, n] : counts) labels.insert(std::get<1>(key));
  for (const auto& label : labels)
    EXPECT_TRUE(doc().at("paths").contains(label) || label == "unmatched")
        << "route label not a documented path: " << label;
  for (const auto& [m, path] : ops) {
    const std::string status = kOpenPaths.count(path) ? "200" : "401";
    EXPECT_EQ(counts.count({m, path, status}), 1u) << m << " " << path << " not counted under its template";
  }
  for (const auto& [m, path] : kNotAllowedRoutes)
    EXPECT_EQ(counts.count({m, path, "401"}), 1u) << m << " " << path << " not counted under its template";
  const auto count = [&](const char* m, const char* status) {
    auto it = counts.find({m, "unmatched", status});
    return it == counts.end() ? 0.0 : it->second;
  };
  EXPECT_EQ(count("GET", "404"), 1);
  EXPECT_EQ(count("PATCH", "405"), 1);
  EXPECT_EQ(count("GET", "422"), 1);

  const std::string scraped = srv.metrics().render(false);
  const size_t at = scraped.find("\ngpurent_build_info{compiler=\"");
  ASSERT_NE(at, std::string::npos) << scraped;
  const std::string row = scraped.substr(at + 1, scraped.find('\n', at + 1) - at - 1);
  EXPECT_NE(row.find(std::string(",version=\"") + kGpurentVersion + "\"} 1"), std::string::npos) << row;
}

// Checks a reply against the documented response of (method, path) for its status.
void expect_documented(const Reply& r, const std::string& method, const std::string& path) {
  const json& responses = operation(method, path).at("responses");
  const std::string code = std::to_string(r.status);
  ASSERT_TRUE(responses.contains(code)) << method << " " << path << " answered undocumented " << code << ": "
                                        << r.body.dump();
  const json& resp = resolve(responses[code]);
  if (!resp.contains("content")) return;
  ASSERT_TRUE(resp["content"].contains(r.content_type)) << method << " " << path << " " << code << " "
                                                        << r.content_type;
  if (r.content_type.find("json") == std::string::npos) return;
  Validator v;
  v.check(r.body, resp["content"][r.content_type]["schema"], method + " " + path + " " + code + ": $");
  for (size_t i = 0; i < v.errors.size() && i < 5; ++i) ADD_FAILURE() << v.errors[i];
  if (v.errors.size() > 5) ADD_FAILURE() << "... and " << v.errors.size() - 5 << " more schema errors";
  const json headers = resp.value("headers", json::object());
  for (const auto& [name, h] : headers.items())
    EXPECT_TRUE(r.headers.count(name)) << method << " " << path << " " << code << " lacks header " << name;
}

// GET `target` (a path without templates, perhaps with a query), checked against the document's
// entry for its path; the reply, for further checks.
Reply get_documented(LiveServer& srv, const std::string& tok, const std::string& target) {
  Reply r = srv.call("GET", target, tok);
  expect_documented(r, "GET", target.substr(0, target.find('?')));
  return r;
}

TEST(OpenApi, LiveResponsesMatchTheDocument) {
  LiveServer srv;
  const std::string tok = srv.seed();
  srv.schedule_and_fail_a_node(tok);
  srv.raise_alerts(tok);
  for (const char* p : {"/healthz", "/readyz", "/metrics", "/api/v1/openapi.json"})
    expect_documented(srv.call("GET", p), "GET", p);
  expect_documented(srv.call("GET", "/api/v1/gpu-models?vendor=nvidia&form_factor=sxm", tok), "GET",
                    "/api/v1/gpu-models");
  expect_documented(srv.call("GET", "/api/v1/gpu-models/H100-SXM", tok), "GET", "/api/v1/gpu-models/{id}");
  expect_documented(srv.call("GET", "/api/v1/gpu-models/no-such-gpu", tok), "GET", "/api/v1/gpu-models/{id}");

  std::map<std::string, json> first;  // kind -> first object of the demo world
  for (const auto& [kind, spec] : srv.kinds()) {
    const std::string base = "/api/v1/" + kind;
    Reply all = srv.call("GET", base + "?limit=1000", tok);
    expect_documented(all, "GET", base);
    ASSERT_FALSE(all.body["items"].empty()) << "the demo world has no " << kind;
    first[kind] = all.body["items"][0];
    Reply page = srv.call("GET", base + "?limit=1", tok);
    expect_documented(page, "GET", base);
    if (all.body["items"].size() > 1) {
      EXPECT_TRUE(page.body["next_after"].is_string()) << kind;
    }
    const std::string id = first[kind]["id"];
    expect_documented(srv.call("GET", base + "/" + id, tok), "GET", base + "/{ref}");
    for (const auto& [param, column] : spec.filters)
      expect_documented(srv.call("GET", base + "?" + param + "=x", tok), "GET", base);
  }
  expect_documented(srv.call("GET", "/api/v1/nodes?limit=0", tok), "GET", "/api/v1/nodes");
  expect_documented(srv.call("GET", "/api/v1/nodes?colour=red", tok), "GET", "/api/v1/nodes");
  expect_documented(srv.call("GET", "/api/v1/nodes", ""), "GET", "/api/v1/nodes");
  expect_documented(srv.call("GET", "/api/v1/nodes/nod_0000000000000000", tok), "GET", "/api/v1/nodes/{ref}");

  // Projects and their quota.
  const std::string prj = "/api/v1/projects/" + first["projects"]["id"].get<std::string>();
  Reply quota = srv.call("GET", prj + "/quota", tok);
  expect_documented(quota, "GET", "/api/v1/projects/{ref}/quota");
  expect_documented(srv.call("PUT", prj + "/quota", tok, quota.body.dump()), "PUT", "/api/v1/projects/{ref}/quota");
  expect_documented(srv.call("PUT", prj + "/quota", tok, R"({"max_gpus_per_job": -3})"), "PUT",
                    "/api/v1/projects/{ref}/quota");

  // Its secrets: set (201), replaced (200), refused (422), listed, deleted (204), then 404.
  const std::string sec = prj + "/secrets/openapi-key";
  Reply set = srv.call("PUT", sec, tok, R"({"value": "s3cr3t\nline"})");
  expect_documented(set, "PUT", "/api/v1/projects/{ref}/secrets/{name}");
  EXPECT_EQ(set.status, 201);
  expect_documented(srv.call("PUT", sec, tok, R"({"value": "other"})"), "PUT", "/api/v1/projects/{ref}/secrets/{name}");
  expect_documented(srv.call("PUT", sec, tok, R"({"value": ""})"), "PUT", "/api/v1/projects/{ref}/secrets/{name}");
  Reply secrets = srv.call("GET", prj + "/secrets", tok);
  expect_documented(secrets, "GET", "/api/v1/projects/{ref}/secrets");
  EXPECT_EQ(secrets.status, 200);
  expect_documented(srv.call("DELETE", sec, tok), "DELETE", "/api/v1/projects/{ref}/secrets/{name}");
  expect_documented(srv.call("DELETE", sec, tok), "DELETE", "/api/v1/projects/{ref}/secrets/{name}");

  // Its artifacts: created (201), again (409), refused (422), uploaded in two chunks (200), a wrong
  // offset (409), a wrong digest (422), listed, shown, deleted (204), then 404.
  const std::string arts = prj + "/artifacts", art = arts + "/openapi-w";
  const char* kArts = "/api/v1/projects/{ref}/artifacts";
  const char* kArt = "/api/v1/projects/{ref}/artifacts/{name}";
  const char* kContent = "/api/v1/projects/{ref}/artifacts/{name}/content";
  const std::string hello = R"({"name": "openapi-w", "kind": "model", "size_bytes": 5,
      "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"})";
  Reply created = srv.call("POST", arts, tok, hello);
  expect_documented(created, "POST", kArts);
  EXPECT_EQ(created.status, 201);
  expect_documented(srv.call("POST", arts, tok, hello), "POST", kArts);
  expect_documented(srv.call("POST", arts, tok, R"({"name": "x", "size_bytes": -1, "sha256": "00"})"), "POST", kArts);
  Reply part = srv.call("PUT", art + "/content?offset=0", tok, "hel", "application/octet-stream");
  expect_documented(part, "PUT", kContent);
  EXPECT_EQ(part.body["received_bytes"], 3);
  expect_documented(srv.call("PUT", art + "/content?offset=0", tok, "hel", "application/octet-stream"), "PUT", kContent);
  Reply done = srv.call("PUT", art + "/content?offset=3", tok, "lo", "application/octet-stream");
  expect_documented(done, "PUT", kContent);
  EXPECT_EQ(done.body["state"], "ready");
  expect_documented(srv.call("GET", arts, tok), "GET", kArts);
  expect_documented(srv.call("GET", art, tok), "GET", kArt);
  expect_documented(srv.call("DELETE", art, tok), "DELETE", kArt);
  expect_documented(srv.call("GET", art, tok), "GET", kArt);
  ASSERT_EQ(srv.call("POST", arts, tok, hello).status, 201);
  Reply wrong = srv.call("PUT", art + "/content?offset=0", tok, "jello", "application/octet-stream");
  expect_documented(wrong, "PUT", kContent);
  EXPECT_EQ(wrong.status, 422);
  expect_documented(srv.call("DELETE", art, tok), "DELETE", kArt);

  // Images: the demo's public ones listed and shown; one uploaded (201, chunk 200, ready), a
  // recipe queued, a refused one (422), a duplicate (409), deleted (204), then 404.
  Reply images = srv.call("GET", "/api/v1/images", tok);
  expect_documented(images, "GET", "/api/v1/images");
  EXPECT_GE(images.body["items"].size(), 2u) << "the demo's python and notebook images";
  expect_documented(srv.call("GET", "/api/v1/images/python", tok), "GET", "/api/v1/images/{ref}");
  const std::string archive = R"({"name": "openapi-img", "archive": {"format": "rootfs-tar", "size_bytes": 5,
      "sha256": "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}})";
  Reply img = srv.call("POST", "/api/v1/images", tok, archive);
  expect_documented(img, "POST", "/api/v1/images");
  EXPECT_EQ(img.status, 201);
  expect_documented(srv.call("POST", "/api/v1/images", tok, archive), "POST", "/api/v1/images");
  expect_documented(srv.call("POST", "/api/v1/images", tok, R"({"name": "x"})"), "POST", "/api/v1/images");
  expect_documented(srv.call("POST", "/api/v1/images", tok, R"({"name": "openapi-r", "recipe": {"packages": ["hello"]}})"),
                    "POST", "/api/v1/images");
  Reply loaded = srv.call("PUT", "/api/v1/images/openapi-img/archive?offset=0", tok, "hello", "application/octet-stream");
  expect_documented(loaded, "PUT", "/api/v1/images/{ref}/archive");
  EXPECT_EQ(loaded.body["state"], "ready");
  expect_documented(srv.call("PUT", "/api/v1/images/openapi-img/archive?offset=0", tok, "hello", "application/octet-stream"),
                    "PUT", "/api/v1/images/{ref}/archive");
  expect_documented(srv.call("GET", "/api/v1/images/openapi-img", tok), "GET", "/api/v1/images/{ref}");
  expect_documented(srv.call("DELETE", "/api/v1/images/openapi-img", tok), "DELETE", "/api/v1/images/{ref}");
  expect_documented(srv.call("DELETE", "/api/v1/images/openapi-img", tok), "DELETE", "/api/v1/images/{ref}");
  expect_documented(srv.call("GET", "/api/v1/images/openapi-img", tok), "GET", "/api/v1/images/{ref}");

  // Jobs: events, cancel (twice: the second is an illegal transition), and the 405s.
  const std::string job = "/api/v1/jobs/" + first["jobs"]["id"].get<std::string>();
  expect_documented(srv.call("GET", job + "/events", tok), "GET", "/api/v1/jobs/{ref}/events");
  expect_documented(srv.call("GET", job + "/cost", tok), "GET", "/api/v1/jobs/{ref}/cost");
  expect_documented(srv.call("GET", job + "/logs", tok), "GET", "/api/v1/jobs/{ref}/logs");
  Reply cancelled = srv.call("POST", job + "/cancel", tok, R"({"reason": "openapi test"})");
  expect_documented(cancelled, "POST", "/api/v1/jobs/{ref}/cancel");
  EXPECT_EQ(cancelled.body["status"]["state"], "cancelled");
  expect_documented(srv.call("POST", job + "/cancel", tok), "POST", "/api/v1/jobs/{ref}/cancel");
  for (const char* m : {"PUT", "DELETE"}) {  // not in the document: jobs are kept as they are
    Reply r = srv.call(m, job, tok, std::string(m) == "PUT" ? first["jobs"].dump() : "");
    EXPECT_EQ(r.status, 405) << m;
    EXPECT_EQ(r.content_type, "application/problem+json") << m;
  }

  // A tenant's whole life, in YAML and JSON, with optimistic concurrency.
  Reply made = srv.call("POST", "/api/v1/tenants", tok, "name: openapi-t\ncontact_email: ops@openapi.example\n",
                        "application/yaml");
  expect_documented(made, "POST", "/api/v1/tenants");
  ASSERT_EQ(made.status, 201);
  const std::string tenant = "/api/v1/tenants/" + made.body["id"].get<std::string>();
  ASSERT_TRUE(made.headers.count("Location"));
  EXPECT_EQ(made.headers.find("Location")->second, tenant);
  json edit = made.body;
  edit["display_name"] = "OpenAPI test";
  Reply updated = srv.call("PUT", tenant, tok, edit.dump());
  expect_documented(updated, "PUT", "/api/v1/tenants/{ref}");
  EXPECT_EQ(updated.body["version"], 2);
  expect_documented(srv.call("PUT", tenant, tok, edit.dump()), "PUT", "/api/v1/tenants/{ref}");  // stale: 409
  expect_documented(srv.call("PUT", tenant + "/procurement", tok, R"({"procurement_split": []})"), "PUT",
                    "/api/v1/tenants/{ref}/procurement");
  expect_documented(srv.call("PUT", tenant + "/procurement", tok, R"({"procurement_split": [{"supplier": "nope", "share_permille": 1}]})"),
                    "PUT", "/api/v1/tenants/{ref}/procurement");  // unknown supplier: 422
  expect_documented(srv.call("GET", tenant + "/procurement", tok), "GET", "/api/v1/tenants/{ref}/procurement");
  expect_documented(srv.call("POST", "/api/v1/tenants", tok, "{not json"), "POST", "/api/v1/tenants");
  expect_documented(srv.call("POST", "/api/v1/tenants", tok, R"({"name": "X", "colour": 1})"), "POST",
                    "/api/v1/tenants");
  expect_documented(srv.call("DELETE", tenant, tok), "DELETE", "/api/v1/tenants/{ref}");
  expect_documented(srv.call("DELETE", "/api/v1/suppliers/" + first["nodes"]["supplier_id"].get<std::string>(), tok),
                    "DELETE", "/api/v1/suppliers/{ref}");  // still has nodes: 409

  // Tokens: mint (the secret once), list, revoke.
  const std::string user = first["users"]["id"];
  Reply minted = srv.call("POST", "/api/v1/tokens", tok, json({{"user", user}, {"name", "openapi"}}).dump());
  expect_documented(minted, "POST", "/api/v1/tokens");
  expect_documented(srv.call("GET", "/api/v1/me", tok), "GET", "/api/v1/me");
  expect_documented(srv.call("GET", "/api/v1/me?x=1", tok), "GET", "/api/v1/me");  // unknown parameter: 422
  ASSERT_TRUE(minted.body.contains("token"));
  expect_documented(srv.call("GET", "/api/v1/me", minted.body["token"].get<std::string>()), "GET", "/api/v1/me");
  expect_documented(srv.call("POST", "/api/v1/tokens", tok, json({{"user", user}, {"name", "openapi"}}).dump()),
                    "POST", "/api/v1/tokens");  // name in use: 409
  expect_documented(srv.call("GET", "/api/v1/tokens?user=" + user, tok), "GET", "/api/v1/tokens");
  ASSERT_TRUE(minted.body.contains("id"));
  expect_documented(srv.call("DELETE", "/api/v1/tokens/" + minted.body["id"].get<std::string>(), tok), "DELETE",
                    "/api/v1/tokens/{id}");
  expect_documented(srv.call("DELETE", "/api/v1/tokens/tok_0000000000000000", tok), "DELETE", "/api/v1/tokens/{id}");
}

TEST(OpenApi, UsageResponsesMatchTheDocument) {
  LiveServer srv;
  const std::string tok = srv.seed();
  const json node = srv.call("GET", "/api/v1/nodes?limit=1", tok).body["items"][0];
  const json job = srv.call("GET", "/api/v1/jobs?limit=1", tok).body["items"][0];
  const TimeMs at = (SystemClock().now() - 3600'000) / 60'000 * 60'000;
  json batch = {{"idempotency_key", "openapi-1"},
                {"gpu_samples", {{{"at", format_rfc3339(at)}, {"node", node["id"]}, {"gpu", 0}, {"utilization_pct", 50},
                                  {"power_mw", 300000}}}},
                {"job_samples", {{{"at", format_rfc3339(at)}, {"job", job["id"]}, {"egress_bytes", 10}}}}};
  Reply created = srv.call("POST", "/api/v1/usage", tok, batch.dump());
  EXPECT_EQ(created.status, 201);
  expect_documented(created, "POST", "/api/v1/usage");
  expect_documented(srv.call("POST", "/api/v1/usage", tok, batch.dump()), "POST", "/api/v1/usage");  // 200 duplicate
  batch["job_samples"][0]["egress_bytes"] = 11;
  expect_documented(srv.call("POST", "/api/v1/usage", tok, batch.dump()), "POST", "/api/v1/usage");  // 409
  expect_documented(srv.call("POST", "/api/v1/usage", tok, R"({"idempotency_key": "x"})"), "POST", "/api/v1/usage");
  expect_documented(srv.call("POST", "/api/v1/usage", tok, "{"), "POST", "/api/v1/usage");
  const std::string range = "&from=" + format_rfc3339(at) + "&to=" + format_rfc3339(at + 60'000);
  Reply series = srv.call("GET", "/api/v1/usage/gpus?node=" + node["id"].get<std::string>() + "&gpu=0" + range, tok);
  EXPECT_EQ(series.body["points"].size(), 1u);
  expect_documented(series, "GET", "/api/v1/usage/gpus");
  expect_documented(srv.call("GET", "/api/v1/usage/gpus?node=nope&gpu=0", tok), "GET", "/api/v1/usage/gpus");
  expect_documented(srv.call("GET", "/api/v1/usage/gpus?gpu=0", tok), "GET", "/api/v1/usage/gpus");
  Reply usage = srv.call("GET", "/api/v1/usage/jobs?job=" + job["id"].get<std::string>() + range, tok);
  EXPECT_EQ(usage.body["totals"]["egress_bytes"], 10);
  expect_documented(usage, "GET", "/api/v1/usage/jobs");
  expect_documented(srv.call("GET", "/api/v1/usage/jobs?tenant=" + job["tenant_id"].get<std::string>() + range, tok),
                    "GET", "/api/v1/usage/jobs");
  expect_documented(srv.call("GET", "/api/v1/usage/jobs?job=a&project=b", tok), "GET", "/api/v1/usage/jobs");

}

TEST(OpenApi, JobMetricResponsesMatchTheDocument) {
  LiveServer srv;
  const std::string tok = srv.seed();
  const std::string job = "/api/v1/jobs/" + srv.call("GET", "/api/v1/jobs?limit=1", tok).body["items"][0]["id"].get<std::string>();
  const std::string at = format_rfc3339(SystemClock().now() - 60'000);
  const std::string report =
      R"({"points": [{"name": "val_accuracy", "value": 0.731, "at": ")" + at + R"("}, {"name": "loss", "value": 1.5,
          "higher_is_better": false}]})";
  Reply created = srv.call("POST", job + "/metrics", tok, report);
  EXPECT_EQ(created.status, 201);
  expect_documented(created, "POST", "/api/v1/jobs/{ref}/metrics");
  expect_documented(srv.call("POST", job + "/metrics", tok, R"({"points": [{"name": "loss", "value": 1}]})"), "POST",
                    "/api/v1/jobs/{ref}/metrics");  // direction conflict: 409
  expect_documented(srv.call("POST", job + "/metrics", tok, R"({"points": [{"name": "X", "value": "1"}]})"), "POST",
                    "/api/v1/jobs/{ref}/metrics");  // 422
  expect_documented(srv.call("POST", job + "/metrics", tok, "{"), "POST", "/api/v1/jobs/{ref}/metrics");
  expect_documented(srv.call("POST", "/api/v1/jobs/job_0000000000000000/metrics", tok, report), "POST",
                    "/api/v1/jobs/{ref}/metrics");  // 404
  Reply got = srv.call("GET", job + "/metrics", tok);
  EXPECT_EQ(got.body["metrics"].size(), 2u);
  expect_documented(got, "GET", "/api/v1/jobs/{ref}/metrics");
  expect_documented(srv.call("GET", job + "/metrics?from=" + at + "&to=" + at, tok), "GET",
                    "/api/v1/jobs/{ref}/metrics");  // 422
}

// The dashboard's utilization heatmap and supplier health over the demo world after a scheduling
// pass and a node failure (allocations, a fault), with one GPU sample on an allocation's node.
TEST(OpenApi, DashboardUsageResponsesMatchTheDocument) {
  LiveServer srv;
  const std::string tok = srv.seed();
  srv.schedule_and_fail_a_node(tok);
  const json alloc = srv.call("GET", "/api/v1/allocations?limit=1", tok).body["items"][0];
  const TimeMs at = SystemClock().now() - 1000;
  json batch = {{"idempotency_key", "openapi-dashboard"},
                {"gpu_samples", {{{"at", format_rfc3339(at)}, {"node", alloc["placement"][0]["node_id"]},
                                  {"gpu", 0}, {"utilization_pct", 55}}}}};
  ASSERT_EQ(srv.call("POST", "/api/v1/usage", tok, batch.dump()).status, 201);
  Reply util = get_documented(srv, tok, "/api/v1/dashboard/utilization");
  EXPECT_EQ(util.status, 200);
  EXPECT_FALSE(util.body["cards"].empty()) << util.body.dump();
  const std::string tenant = alloc["tenant_id"];
  EXPECT_EQ(get_documented(srv, tok, "/api/v1/dashboard/utilization?tenant=" + tenant).status, 200);
  EXPECT_EQ(get_documented(srv, tok, "/api/v1/dashboard/utilization?from=yesterday").status, 422);
  EXPECT_EQ(get_documented(srv, tok, "/api/v1/dashboard/utilization?node=no-such-node").status, 404);
  Reply health = get_documented(srv, tok, "/api/v1/dashboard/suppliers");
  EXPECT_EQ(health.status, 200);
  EXPECT_FALSE(health.body["suppliers"].empty()) << health.body.dump();
  EXPECT_EQ(get_documented(srv, tok, "/api/v1/dashboard/suppliers?supplier=no-such-supplier").status, 404);
  Reply frag = get_documented(srv, tok, "/api/v1/dashboard/fragmentation");
  EXPECT_EQ(frag.status, 200);
  EXPECT_FALSE(frag.body["models"].empty()) << frag.body.dump();
  EXPECT_EQ(get_documented(srv, tok, "/api/v1/dashboard/suppliers?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z").status,
            422);
}

TEST(OpenApi, BillingResponsesMatchTheDocument) {
  LiveServer srv;
  const std::string tok = srv.seed();
  srv.schedule_and_fail_a_node(tok);
  srv.raise_alerts(tok);
  // Billing: invoices (JSON and CSV), reconciliation, alerts and their lift, webhooks.
  const std::string tenant_ref = srv.call("GET", "/api/v1/allocations?limit=1", tok).body["items"][0]["tenant_id"];
  const std::string month = format_rfc3339(SystemClock().now()).substr(0, 7);
  Reply inv = srv.call("GET", "/api/v1/invoices?tenant=" + tenant_ref + "&month=" + month, tok);
  EXPECT_EQ(inv.status, 200);
  EXPECT_FALSE(inv.body["sections"].empty()) << "the demo's runs are billed";
  expect_documented(inv, "GET", "/api/v1/invoices");
  expect_documented(srv.call("GET", "/api/v1/invoices?tenant=" + tenant_ref + "&month=" + month + "&format=csv", tok),
                    "GET", "/api/v1/invoices");
  expect_documented(srv.call("GET", "/api/v1/invoices?tenant=" + tenant_ref + "&month=13", tok), "GET", "/api/v1/invoices");
  expect_documented(srv.call("GET", "/api/v1/invoices?month=" + month, tok), "GET", "/api/v1/invoices");
  Reply rec = srv.call("GET", "/api/v1/reports/reconciliation?tenant=" + tenant_ref + "&month=" + month, tok);
  EXPECT_EQ(rec.status, 200);
  expect_documented(rec, "GET", "/api/v1/reports/reconciliation");
  // The cost dashboards (routes_dashboard_cost.cc) over the same runs, budgets and alerts; a run's
  // job reports a metric so cost-performance has a row.
  Reply costs = get_documented(srv, tok, "/api/v1/dashboard/costs");
  EXPECT_EQ(costs.status, 200);
  ASSERT_FALSE(costs.body["tenants"].empty());
  EXPECT_EQ(get_documented(srv, tok, "/api/v1/dashboard/costs?tenant=no-such-tenant").status, 404);
  EXPECT_EQ(get_documented(srv, tok, "/api/v1/dashboard/costs?from=2026-01-01&to=2026-03-01").status, 422);
  const json run = srv.call("GET", "/api/v1/allocations?limit=1", tok).body["items"][0];
  const TimeMs started = *parse_rfc3339(run["running_at"].get<std::string>(), "running_at");
  json points = {{"points", {{{"name", "val_accuracy"}, {"value", 0.5}, {"at", format_rfc3339(started)}},
                             {{"name", "val_accuracy"}, {"value", 0.6}, {"at", format_rfc3339(started + 1000)}}}}};
  EXPECT_EQ(srv.call("POST", "/api/v1/jobs/" + run["job_id"].get<std::string>() + "/metrics", tok, points.dump()).status,
            201);
  Reply cp = get_documented(srv, tok, "/api/v1/dashboard/cost-performance");
  EXPECT_EQ(cp.status, 200);
  EXPECT_FALSE(cp.body["jobs"].empty()) << cp.body.dump();
  EXPECT_EQ(get_documented(srv, tok, "/api/v1/dashboard/cost-performance?colour=red").status, 422);
  Reply alerts = srv.call("GET", "/api/v1/alerts?state=active", tok);
  ASSERT_FALSE(alerts.body["items"].empty());
  const std::string alert = "/api/v1/alerts/" + alerts.body["items"][0]["id"].get<std::string>();
  Reply lifted = srv.call("POST", alert + "/lift", tok);
  EXPECT_EQ(lifted.status, 200);
  expect_documented(lifted, "POST", "/api/v1/alerts/{ref}/lift");
  expect_documented(srv.call("POST", alert + "/lift", tok), "POST", "/api/v1/alerts/{ref}/lift");  // 409
  Reply hook = srv.call("POST", "/api/v1/webhooks", tok,
                        R"({"name": "ops", "type": "feishu", "url": "https://open.feishu.cn/open-apis/bot/v2/hook/x", "secret": "s"})");
  EXPECT_EQ(hook.status, 201);
  expect_documented(hook, "POST", "/api/v1/webhooks");
  expect_documented(srv.call("POST", "/api/v1/webhooks", tok, R"({"name": "bad", "type": "wecom", "url": "ftp://x"})"),
                    "POST", "/api/v1/webhooks");
  expect_documented(srv.call("GET", "/api/v1/webhooks", tok), "GET", "/api/v1/webhooks");
  expect_documented(srv.call("GET", "/api/v1/webhooks/ops", tok), "GET", "/api/v1/webhooks/{ref}");
  expect_documented(srv.call("DELETE", "/api/v1/webhooks/ops", tok), "DELETE", "/api/v1/webhooks/{ref}");
  expect_documented(srv.call("GET", "/api/v1/webhooks/ops", tok), "GET", "/api/v1/webhooks/{ref}");
}

}  // namespace
}  // namespace gpurent
