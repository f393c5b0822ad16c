#include "cli/client.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/fake_api_for_test.h"

namespace gpurent {
namespace {

TEST(ParseServerUrl, AcceptedForms) {
  struct Case {
    const char* in;
    const char* canonical;
    std::string host;
    int port;
    std::string base;
  } cases[] = {
      {"http://127.0.0.1:8080", "http://127.0.0.1:8080", "127.0.0.1", 8080, ""},
      {"http://gpurent.internal", "http://gpurent.internal:80", "gpurent.internal", 80, ""},
      {"localhost:9000", "http://localhost:9000", "localhost", 9000, ""},
      {"HTTP://Host:1/", "http://Host:1", "Host", 1, ""},
      {"  http://h:2  ", "http://h:2", "h", 2, ""},
      {"http://[::1]:8080", "http://[::1]:8080", "::1", 8080, ""},
      {"http://[::1]", "http://[::1]:80", "::1", 80, ""},
      {"http://proxy:80/gpurent/", "http://proxy:80/gpurent", "proxy", 80, "/gpurent"},
      {"http://h:8080/api/v1", "http://h:8080", "h", 8080, ""},
      {"http://h:8080/x/api/v1/", "http://h:8080/x", "h", 8080, "/x"},
  };
  for (const auto& c : cases) {
    auto u = parse_server_url(c.in);
    ASSERT_TRUE(u) << c.in << ": " << u.error().message;
    EXPECT_EQ(u->str(), c.canonical) << c.in;
    EXPECT_EQ(u->host, c.host) << c.in;
    EXPECT_EQ(u->port, c.port) << c.in;
    EXPECT_EQ(u->base_path, c.base) << c.in;
    EXPECT_FALSE(u->tls);
  }
}

TEST(ParseServerUrl, RejectedForms) {
  for (const char* in :
       {"", "   ", "ftp://h:21", "http://", "http://:8080", "http://h:", "http://h:0", "http://h:65536", "http://h:80x",
        "http://user:pw@h:80", "http://h:80/?q=1", "http://[::1", "http://[zz]:80", "http://h h:80", "http://[::1]x"}) {
    auto u = parse_server_url(in);
    EXPECT_FALSE(u) << "accepted '" << in << "'";
    if (!u) {
      EXPECT_EQ(u.error().fields.at(0).field, "server");
      EXPECT_NE(u.error().message.find("http://HOST:PORT"), std::string::npos) << u.error().message;
    }
  }
}

TEST(ParseServerUrl, Https) {
  auto u = parse_server_url("https://api.example.com");
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
  ASSERT_TRUE(u);
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->str(), "https://api.example.com:443");
#else
  ASSERT_FALSE(u);
  EXPECT_NE(u.error().message.find("https"), std::string::npos);
#endif
}

TEST(LocaleLanguage, TheFirstLocaleSetAsALanguageTag) {
  EXPECT_EQ(locale_language(nullptr, nullptr, "zh_CN.UTF-8"), "zh-CN");
  EXPECT_EQ(locale_language("", "en_US.UTF-8", "zh_CN.UTF-8"), "en-US");
  EXPECT_EQ(locale_language("de_DE@euro", "en_US", "zh_CN"), "de-DE");
  EXPECT_EQ(locale_language(nullptr, nullptr, "C.UTF-8"), "");
  EXPECT_EQ(locale_language("POSIX", nullptr, "zh_CN"), "");
  EXPECT_EQ(locale_language(nullptr, nullptr, nullptr), "");
  EXPECT_EQ(locale_language(nullptr, nullptr, "zh_CN\r\nX-Evil: 1"), "");
}

TEST(UrlEncode, KeepsUnreservedOnly) {
  EXPECT_EQ(url_encode("nod_0123abc-x.y~"), "nod_0123abc-x.y~");
  EXPECT_EQ(url_encode("a b/c?d&e=f#%"), "a%20b%2Fc%3Fd%26e%3Df%23%25");
  EXPECT_EQ(url_encode("上"), "%E4%B8%8A");
}

TEST(ApiErrorFromResponse, ProblemDocument) {
  ApiError e =
      api_error_from_response(422, R"J({"type":"https://gpurent.dev/problems/invalid","title":"Validation failed",
    "status":422,"detail":"gpus[2].numa_node: must be < numa_nodes (and 1 more)",
    "errors":[{"field":"gpus[2].numa_node","reason":"must be < numa_nodes"},{"field":"name","reason":"is required"}]})J");
  EXPECT_EQ(e.status, 422);
  EXPECT_EQ(e.title, "Validation failed");
  EXPECT_EQ(e.exit_code(), 1);
  ASSERT_EQ(e.fields.size(), 2u);
  EXPECT_EQ(render_api_error(e),
            "error: gpus[2].numa_node: must be < numa_nodes (and 1 more)\n"
            "  gpus[2].numa_node: must be < numa_nodes\n"
            "  name: is required\n");
}

TEST(ApiErrorFromResponse, NonProblemBodies) {
  ApiError e = api_error_from_response(502, "<html><body>Bad gateway</body></html>\nmore");
  EXPECT_EQ(e.title, "Bad Gateway");
  EXPECT_EQ(render_api_error(e),
            "error: the server answered HTTP 502 Bad Gateway: <html><body>Bad gateway</body></html>\n");

  e = api_error_from_response(404, R"({"title":"Not found","status":404})");
  EXPECT_EQ(render_api_error(e), "error: the server answered HTTP 404 Not found\n");

  e = api_error_from_response(418, "");
  EXPECT_EQ(render_api_error(e), "error: the server answered HTTP 418\n");
}

TEST(ApiErrorFromResponse, HostileTextIsNeutralised) {
  ApiError e =
      api_error_from_response(400, R"({"detail":"bad\u001b[2J\nthing","errors":[{"field":"a\nb","reason":"r"}]})");
  e.hint = "check it";
  EXPECT_EQ(render_api_error(e), "error: bad?[2J thing\n  a b: r\nhint: check it\n");
}

int unused_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  ::close(fd);
  return port;
}

TEST(ApiClient, UnreachableServerIsExitCode3AndNamesTheAddress) {
  int port = unused_port();
  ApiClient c(*parse_server_url("http://127.0.0.1:" + std::to_string(port)), "t",
              {.connect_timeout_s = 2, .timeout_s = 2});
  auto r = c.get("/nodes");
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().unreachable());
  EXPECT_EQ(r.error().exit_code(), 3);
  EXPECT_NE(r.error().detail.find("http://127.0.0.1:" + std::to_string(port)), std::string::npos) << r.error().detail;
}

TEST(ApiClient, SendsTokenQueryAndJson) {
  testing::FakeApi api;
  api.on("GET /api/v1/nodes", {200, R"({"items":[{"name":"a"}],"next_after":null})"});
  api.on("POST /api/v1/tenants", {201, R"({"id":"ten_0000000000000001","name":"acme"})"});
  api.on("DELETE /api/v1/tenants/acme", {204, ""});

  ApiClient c(*parse_server_url(api.url()), "gpr_secret");
  auto r = c.get("/nodes", {{"gpu_model", "h100 sxm"}, {"after", "nod_1"}});
  ASSERT_TRUE(r) << r.error().detail;
  EXPECT_EQ((*r)["items"][0]["name"], "a");

  auto created = c.post("/tenants", json{{"name", "acme"}, {"price", "3.20"}});
  ASSERT_TRUE(created);
  EXPECT_EQ((*created)["id"], "ten_0000000000000001");

  auto deleted = c.del("/tenants/acme");
  ASSERT_TRUE(deleted);
  EXPECT_TRUE(deleted->is_null());

  auto reqs = api.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].authorization, "Bearer gpr_secret");
  EXPECT_EQ(reqs[0].params.find("gpu_model")->second, "h100 sxm");
  EXPECT_EQ(reqs[0].params.find("after")->second, "nod_1");
  EXPECT_EQ(reqs[1].method, "POST");
  EXPECT_EQ(reqs[1].content_type, "application/json");
  EXPECT_EQ(json::parse(reqs[1].body), (json{{"name", "acme"}, {"price", "3.20"}}));
}

TEST(ApiClient, NoTokenMeansNoAuthorizationHeader) {
  testing::FakeApi api;
  api.on("GET /api/v1/tenants", {200, R"({"items":[]})"});
  ApiClient c(*parse_server_url(api.url()), "");
  ASSERT_TRUE(c.get("/tenants"));
  EXPECT_EQ(api.requests().at(0).authorization, "");
}

TEST(ApiClient, BasePathIsPrefixed) {
  testing::FakeApi api;
  api.on("GET /prefix/api/v1/tenants", {200, R"({"items":[]})"});
  ApiClient c(*parse_server_url(api.url() + "/prefix"), "");
  auto r = c.get("/tenants");
  ASSERT_TRUE(r) << r.error().detail;
}

TEST(ApiClient, ProblemAndMalformedResponses) {
  testing::FakeApi api;
  api.on("GET /api/v1/nodes/x",
         {409, R"({"title":"Conflict","status":409,"detail":"version 3 is stale; current is 4"})",
          "application/problem+json"});
  api.on("GET /api/v1/nodes/y", {200, "not json", "text/plain"});
  ApiClient c(*parse_server_url(api.url()), "t");
  auto r = c.get("/nodes/x");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, 409);
  EXPECT_EQ(r.error().detail, "version 3 is stale; current is 4");
  EXPECT_EQ(r.error().exit_code(), 1);

  r = c.get("/nodes/y");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().status, 200);
  EXPECT_NE(r.error().detail.find("not JSON"), std::string::npos);
}

}  // namespace
}  // namespace gpurent
