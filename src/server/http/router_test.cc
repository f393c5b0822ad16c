#include "server/http/router.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

namespace gpurent {
namespace {

httplib::Response run(const Router& r, const std::string& method, const std::string& path) {
  httplib::Request req;
  req.method = method;
  req.path = path;
  httplib::Response res;
  r.dispatch(req, res);
  return res;
}

TEST(Router, MatchesMethodAndWholePathAndCapturesGroups) {
  Router r;
  std::string seen;
  r.Get("/api/v1/jobs",
        [&](const httplib::Request&, httplib::Response& res) { res.set_content("list", "text/plain"); });
  r.Get("/api/v1/jobs/([^/]+)", [&](const httplib::Request& req, httplib::Response& res) {
    seen = req.matches[1];
    res.set_content("one", "text/plain");
  });
  r.Post("/api/v1/jobs/([^/]+)/cancel", [&](const httplib::Request&, httplib::Response& res) { res.status = 202; });
  EXPECT_EQ(run(r, "GET", "/api/v1/jobs").body, "list");
  EXPECT_EQ(run(r, "GET", "/api/v1/jobs/j-1").body, "one");
  EXPECT_EQ(seen, "j-1");
  EXPECT_EQ(run(r, "POST", "/api/v1/jobs/j-1/cancel").status, 202);
  EXPECT_EQ(run(r, "GET", "/api/v1/jobsx").status, 404);  // literal routes compare whole paths
  EXPECT_EQ(run(r, "GET", "/api/v1/jobs/a/b").status, 404);
}

TEST(Router, HeadRunsGetWithoutABodyAndOtherMethodsGet405WithAllow) {
  Router r;
  r.Get("/x", [](const httplib::Request&, httplib::Response& res) { res.set_content("body", "text/plain"); });
  auto head = run(r, "HEAD", "/x");
  EXPECT_EQ(head.status, -1);    // untouched: the server sends 200
  EXPECT_EQ(head.body, "body");  // the server sends its length, not the body
  auto del = run(r, "DELETE", "/x");
  EXPECT_EQ(del.status, 405);
  EXPECT_EQ(del.get_header_value("Allow"), "GET");
  auto missing = run(r, "GET", "/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(nlohmann::json::parse(missing.body)["detail"], "no such route: GET /nope");
}

// What no route answers is reported to the observer (for /metrics), with a bounded method label;
// what a route answers is not (routes count their own requests).
TEST(Router, RequestsNoRouteAnsweredAreReportedAsUnmatched) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("gpurent-router-obs-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "index.html") << "<html>";
  Router r;
  r.Get("/x", [](const httplib::Request&, httplib::Response& res) { res.set_content("body", "text/plain"); });
  ASSERT_TRUE(r.set_static_dir(dir.string()));
  std::vector<std::string> seen;
  r.set_unrouted_observer([&](const std::string& method, const std::string& route, int status, double secs) {
    EXPECT_GE(secs, 0);
    seen.push_back(method + " " + route + " " + std::to_string(status));
  });
  run(r, "GET", "/x");
  EXPECT_TRUE(seen.empty());
  run(r, "GET", "/nope");
  run(r, "DELETE", "/x");
  run(r, "BREW", "/x");
  run(r, "HEAD", "/nope");
  run(r, "GET", "/index.html");
  httplib::Request req;
  req.method = "GET";
  req.path = "/x";
  req.params.emplace("lang", "xx");
  httplib::Response res;
  r.dispatch(req, res);
  EXPECT_EQ(res.status, 422);
  EXPECT_EQ(seen, (std::vector<std::string>{"GET unmatched 404", "DELETE unmatched 405", "other unmatched 405",
                                            "GET unmatched 404", "GET static 200", "GET unmatched 422"}));
  fs::remove_all(dir);
}

TEST(Router, ALongPathIsMatchedWithoutExhaustingTheStack) {
  // The HTTP front refuses targets over 4 KiB (414); up to that, regex routes must hold.
  Router r;
  r.Get("/api/v1/jobs/([^/]+)", [](const httplib::Request& req, httplib::Response& res) {
    res.set_content(std::to_string(req.matches[1].length()), "text/plain");
  });
  EXPECT_EQ(run(r, "GET", "/api/v1/jobs/" + std::string(4096, 'a')).body, "4096");
  EXPECT_EQ(run(r, "GET", "/api/v1/jobs/" + std::string(4096, 'a') + "/x").status, 404);
}

TEST(Router, AHandlerThatThrowsIsA500Problem) {
  Router r;
  r.Get("/boom", [](const httplib::Request&, httplib::Response&) { throw std::runtime_error("x"); });
  auto res = run(r, "GET", "/boom");
  EXPECT_EQ(res.status, 500);
  EXPECT_EQ(res.get_header_value("Content-Type"), "application/problem+json");
}

TEST(Router, StaticFilesStayInsideTheirFolder) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("gpurent-router-" + std::to_string(::getpid()));
  fs::create_directories(dir / "assets");
  std::ofstream(dir / "index.html") << "<html>";
  std::ofstream(dir / "assets" / "app.js") << "js";
  std::ofstream(dir.parent_path() / ("secret-" + std::to_string(::getpid()))) << "secret";
  Router r;
  ASSERT_TRUE(r.set_static_dir(dir.string()));
  EXPECT_FALSE(r.set_static_dir((dir / "nope").string()));
  auto index = run(r, "GET", "/");
  EXPECT_EQ(index.body, "<html>");
  EXPECT_EQ(index.get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(run(r, "GET", "/assets/app.js").get_header_value("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(run(r, "GET", "/../secret-" + std::to_string(::getpid())).status, 404);
  EXPECT_EQ(run(r, "GET", "/assets/../../secret-" + std::to_string(::getpid())).status, 404);
  EXPECT_EQ(run(r, "POST", "/index.html").status, 404);
  fs::remove_all(dir);
  fs::remove(dir.parent_path() / ("secret-" + std::to_string(::getpid())));
}

}  // namespace
}  // namespace gpurent
