#include "server/services/metrics.h"

#include <gtest/gtest.h>

#include <regex>

#include "cli/version.h"

namespace gpurent {
namespace {

TEST(Metrics, ExportsBuildInfoInEveryView) {
  Metrics m;
  const std::regex info(
      "\n# TYPE gpurent_build_info gauge\ngpurent_build_info\\{compiler=\"(gcc|clang)-[0-9.]+\",version=\"" +
      std::regex_replace(std::string(kGpurentVersion), std::regex(R"([.+])"), R"(\$&)") + "\"\\} 1\n");
  EXPECT_TRUE(std::regex_search(m.render(true), info)) << m.render(true);
  EXPECT_TRUE(std::regex_search(m.render(false), info)) << m.render(false);  // the anonymous view too
}

TEST(Metrics, CountsRequestsByMethodRouteAndStatus) {
  Metrics m;
  m.observe_request("GET", "/api/v1/jobs/{ref}", 200, 0.002);
  m.observe_request("GET", "/api/v1/jobs/{ref}", 200, 0.003);
  m.observe_request("PATCH", "unmatched", 405, 0.0001);
  const std::string text = m.render(false);
  EXPECT_NE(text.find("gpurent_http_requests_total{method=\"GET\",route=\"/api/v1/jobs/{ref}\",status=\"200\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpurent_http_requests_total{method=\"PATCH\",route=\"unmatched\",status=\"405\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("gpurent_http_request_duration_seconds_count{route=\"/api/v1/jobs/{ref}\"} 2\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace gpurent
