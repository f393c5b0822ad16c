// Job metrics through the real server: POST/GET /api/v1/jobs/{ref}/metrics round trip (by id and
// by name, exact values, grouping and time order, ranges, replacement at an instant), validation
// naming the field, the direction rule (409), who may read and write (other tenants: 404), and
// the points a tenant's jobs may report a second (--rate-metric-points: 429 past it).
#include <gtest/gtest.h>

#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

std::string t(TimeMs ms) { return format_rfc3339(ms); }

json pt(const std::string& name, double value, TimeMs at) { return {{"name", name}, {"value", value}, {"at", t(at)}}; }

class JobMetricsApi : public ::testing::Test {
 protected:
  void SetUp() override {
    expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
    expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
    job_id = expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("vision", "train-1")), "job").body.at("id");
    member = make_user_token(s, "mia", "tenant_member", "acme");
  }
  std::string path(const std::string& ref) const { return "/api/v1/jobs/" + ref + "/metrics"; }

  ServerProcess s{{"--no-scheduler"}};
  std::string job_id, member;
  const TimeMs base = (SystemClock().now() - 3600'000) / 1000 * 1000;  // a whole second, an hour ago
};

TEST_F(JobMetricsApi, RoundTripGroupsByMetricInTimeOrder) {
  json body = {{"points",
                {pt("val_accuracy", 0.731, base + 2000), pt("val_accuracy", 0.5, base),
                 {{"name", "loss"}, {"value", 2.25}, {"at", t(base)}, {"higher_is_better", false}},
                 {{"name", "loss"}, {"value", 1}, {"at", t(base + 1000)}, {"higher_is_better", false}}}}};
  Resp r = s.req("POST", path("train-1"), member, body);  // by name, as the tenant's member
  ASSERT_EQ(r.status, 201) << r.describe();
  EXPECT_EQ(r.body, json({{"job_id", job_id}, {"accepted", 4}}));

  const TimeMs before = SystemClock().now();
  Resp now_pt = s.req("POST", path(job_id), member, json{{"points", {{{"name", "throughput"}, {"value", 1e300}}}}});
  ASSERT_EQ(now_pt.status, 201) << now_pt.describe();

  Resp g = s.req("GET", path(job_id), member);
  ASSERT_EQ(g.status, 200) << g.describe();
  EXPECT_EQ(g.body.value("job_id", ""), job_id);
  const json& m = g.body.at("metrics");
  ASSERT_EQ(m.size(), 3u) << g.describe();
  EXPECT_EQ(m[0], json::parse(R"({"name": "loss", "higher_is_better": false, "points": [
      {"at": ")" + t(base) + R"(", "value": 2.25}, {"at": ")" + t(base + 1000) + R"(", "value": 1.0}]})"));
  EXPECT_EQ(m[1].value("name", ""), "throughput");
  EXPECT_TRUE(m[1].value("higher_is_better", false));  // the default
  EXPECT_EQ(m[1]["points"][0]["value"].get<double>(), 1e300);
  const TimeMs at = parse_rfc3339(m[1]["points"][0].value("at", ""), "at").value();
  EXPECT_GE(at, before);  // at defaults to the server's clock
  EXPECT_LE(at, SystemClock().now());
  EXPECT_EQ(m[2].value("name", ""), "val_accuracy");
  ASSERT_EQ(m[2]["points"].size(), 2u);
  EXPECT_EQ(m[2]["points"][0].value("at", ""), t(base));
  EXPECT_EQ(m[2]["points"][1]["value"].get<double>(), 0.731);  // exact

  // [from, to) narrows every metric; a metric with no point in the range is left out.
  Resp ranged = s.req("GET", path("train-1") + "?from=" + t(base + 1000) + "&to=" + t(base + 2000), member);
  ASSERT_EQ(ranged.status, 200) << ranged.describe();
  ASSERT_EQ(ranged.body["metrics"].size(), 1u) << ranged.describe();
  EXPECT_EQ(ranged.body["metrics"][0]["points"], json::parse(R"([{"at": ")" + t(base + 1000) + R"(", "value": 1.0}])"));

  // A point at a stored instant replaces its value (a retried report lands once).
  ASSERT_EQ(s.req("POST", path("train-1"), member, json{{"points", {pt("val_accuracy", 0.75, base + 2000)}}}).status,
            201);
  Resp again = s.req("GET", path("train-1") + "?from=" + t(base + 2000) + "&to=" + t(base + 2001), member);
  ASSERT_EQ(again.body["metrics"].size(), 1u) << again.describe();
  EXPECT_EQ(again.body["metrics"][0]["points"], json::parse(R"([{"at": ")" + t(base + 2000) + R"(", "value": 0.75}])"));
}

TEST_F(JobMetricsApi, BadInputNamesTheField) {
  json bad = {{"points",
               {pt("ok", 1, base), {{"name", "Bad Name"}, {"value", 1}}, {{"name", "x"}, {"value", 1}, {"foo", 2}},
                {{"name", "x"}, {"value", "0.5"}}, pt("x", 1, SystemClock().now() + 3600'000)}}};
  Resp r = s.req("POST", path(job_id), member, bad);
  ASSERT_EQ(r.status, 422) << r.describe();
  EXPECT_EQ(r.error_fields(),
            (std::vector<std::string>{"points[1].name", "points[2].foo", "points[3].value", "points[4].at"}));
  EXPECT_EQ(r.reason_for("points[2].foo"), "unknown field");
  EXPECT_NE(r.reason_for("points[4].at").find("5 minutes ahead"), std::string::npos) << r.describe();

  EXPECT_EQ(s.req("POST", path(job_id), member, json{{"points", json::array()}}).reason_for("points"),
            "must hold at least 1 point");
  EXPECT_EQ(s.req("POST", path(job_id), member, json{{"point", json::array()}}).error_fields(),
            (std::vector<std::string>{"points", "point"}));
  json many = {{"points", json::array()}};
  for (int i = 0; i < 10'001; ++i) many["points"].push_back({{"name", "a"}, {"value", i}});
  Resp over = s.req("POST", path(job_id), member, many);
  EXPECT_EQ(over.status, 422) << over.describe();
  EXPECT_EQ(over.error_fields(), std::vector<std::string>{"points"});

  // Unreadable bodies are 400, also a number beyond double's range.
  EXPECT_EQ(s.raw("POST", path(job_id), member, R"({"points": [{"name": "a", "value": 1e999}]})", "application/json")
                .status,
            400);
  EXPECT_EQ(s.raw("POST", path(job_id), member, "{", "application/json").status, 400);

  EXPECT_EQ(s.req("GET", path(job_id) + "?from=yesterday", member).error_fields(), std::vector<std::string>{"from"});
  Resp inverted = s.req("GET", path(job_id) + "?from=" + t(base) + "&to=" + t(base), member);
  EXPECT_EQ(inverted.status, 422);
  EXPECT_EQ(inverted.reason_for("to"), "must be after from");

  // Nothing of the refused requests was stored.
  EXPECT_EQ(s.req("GET", path(job_id), member).body.at("metrics"), json::array());
}

TEST_F(JobMetricsApi, DirectionConflictIs409NamingThePoint) {
  json loss = {{"name", "loss"}, {"value", 2.0}, {"at", t(base)}, {"higher_is_better", false}};
  ASSERT_EQ(s.req("POST", path(job_id), member, json{{"points", {loss}}}).status, 201);
  json flipped = loss;
  flipped["at"] = t(base + 1000);
  flipped["higher_is_better"] = true;
  Resp r = s.req("POST", path(job_id), member, json{{"points", {pt("acc", 0.1, base), flipped}}});
  ASSERT_EQ(r.status, 409) << r.describe();
  EXPECT_EQ(r.error_fields(), std::vector<std::string>{"points[1].higher_is_better"});
  EXPECT_NE(r.body.value("detail", "").find("'loss'"), std::string::npos) << r.describe();
  // Omitted means true, which also disagrees.
  Resp omitted = s.req("POST", path(job_id), member, json{{"points", {pt("loss", 1.5, base + 2000)}}});
  EXPECT_EQ(omitted.status, 409) << omitted.describe();
  // Two points of a new metric disagreeing within one request.
  json mixed = {{"points", {pt("bleu", 10, base), {{"name", "bleu"}, {"value", 11}, {"higher_is_better", false}}}}};
  Resp inner = s.req("POST", path(job_id), member, mixed);
  EXPECT_EQ(inner.status, 409) << inner.describe();
  EXPECT_EQ(inner.error_fields(), std::vector<std::string>{"points[1].higher_is_better"});
  // The refused requests stored nothing (not even their agreeing points).
  Resp g = s.req("GET", path(job_id), member);
  ASSERT_EQ(g.body.at("metrics").size(), 1u) << g.describe();
  EXPECT_EQ(g.body["metrics"][0]["points"].size(), 1u);
}

// What a tenant can make a job keep is bounded (kMaxJobMetricPoints points, kMaxJobMetricNames
// names): past it the request is a 422 naming points, in either language, and stores nothing.
TEST_F(JobMetricsApi, AJobKeepsAtMostAHundredMetricNames) {
  json body = {{"points", json::array()}};
  for (int i = 0; i < 99; ++i) body["points"].push_back(pt("m" + std::to_string(i), i, base));
  expect_2xx(s.req("POST", path(job_id), member, body), "99 names");
  json two = {{"points", {pt("m99", 1, base), pt("m100", 1, base)}}};
  Resp over = s.req("POST", path(job_id), member, two);
  EXPECT_EQ(over.status, 422) << over.describe();
  EXPECT_NE(over.reason_for("points").find("more than 100 metric names"), std::string::npos) << over.describe();
  Resp zh = s.req("POST", path(job_id) + "?lang=zh", member, two);
  EXPECT_NE(zh.reason_for("points").find("最多保留 100 个"), std::string::npos) << zh.describe();
  EXPECT_EQ(s.req("GET", path(job_id), member).body.at("metrics").size(), 99u);
  expect_2xx(s.req("POST", path(job_id), member, json{{"points", {pt("m99", 1, base)}}}), "the 100th");
}

TEST_F(JobMetricsApi, TenantIsolationAndRoles) {
  ASSERT_EQ(s.req("POST", path(job_id), member, json{{"points", {pt("acc", 0.5, base)}}}).status, 201);
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("other")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("other", "nlp")), "project");
  const std::string other_job = expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("nlp", "train-9")), "job").body.at("id");
  const std::string outsider = make_user_token(s, "otto", "tenant_admin", "other");

  // Another tenant's job is not there, by id or by name, for reading and writing.
  for (const std::string& ref : {job_id, std::string("train-1")}) {
    EXPECT_EQ(s.req("GET", path(ref), outsider).status, 404) << ref;
    EXPECT_EQ(s.req("POST", path(ref), outsider, json{{"points", {pt("acc", 0.9, base)}}}).status, 404) << ref;
  }
  EXPECT_EQ(s.req("GET", path(other_job), member).status, 404);
  EXPECT_EQ(s.req("POST", path("no-such-job"), member, json{{"points", {pt("acc", 0.9, base)}}}).status, 404);

  // The tenant's viewer reads but may not write; its admin and the operator write.
  const std::string viewer = make_user_token(s, "vic", "viewer", "acme");
  EXPECT_EQ(s.req("GET", path(job_id), viewer).body.at("metrics").size(), 1u);
  Resp refused = s.req("POST", path(job_id), viewer, json{{"points", {pt("acc", 0.9, base + 1)}}});
  EXPECT_EQ(refused.status, 403) << refused.describe();
  const std::string admin = make_user_token(s, "ada", "tenant_admin", "acme");
  EXPECT_EQ(s.req("POST", path("train-1"), admin, json{{"points", {pt("acc", 0.6, base + 1000)}}}).status, 201);
  EXPECT_EQ(s.admin("POST", path(job_id), json{{"points", {pt("acc", 0.7, base + 2000)}}}).status, 201);
  EXPECT_EQ(s.admin("POST", path(other_job), json{{"points", {pt("acc", 0.1, base)}}}).status, 201);

  // Suppliers see no jobs; no token is 401.
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a")), "supplier");
  const std::string agent = make_user_token(s, "agent", "supplier", "", "sup-a");
  EXPECT_EQ(s.req("GET", path(job_id), agent).status, 404);
  EXPECT_EQ(s.req("GET", path(job_id), "").status, 401);

  // Each job keeps its own points.
  Resp mine = s.req("GET", path(job_id), member);
  ASSERT_EQ(mine.body["metrics"].size(), 1u);
  EXPECT_EQ(mine.body["metrics"][0]["points"].size(), 3u);
  EXPECT_EQ(s.admin("GET", path(other_job)).body["metrics"][0]["points"].size(), 1u);
}

// Each point is a row the single writer stores: a tenant's jobs share a budget of points a second
// (100 here; the burst holds one full batch, 10,000), whoever reports them; another tenant's jobs
// have their own.
TEST(JobMetricsRate, ATenantsJobsShareABudgetOfPointsASecond) {
  ServerProcess s({"--no-scheduler", "--rate-metric-points", "100"});
  for (const char* t : {"acme", "beta"}) expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc(t)), t);
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "acme's project");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("beta", "nlp")), "beta's project");
  const std::string a1 = expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("vision", "a1")), "a1").body["id"];
  const std::string a2 = expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("vision", "a2")), "a2").body["id"];
  const std::string b1 = expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("nlp", "b1")), "b1").body["id"];
  const std::string member = make_user_token(s, "mia", "tenant_member", "acme");
  const TimeMs base = (SystemClock().now() - 4 * 3600'000) / 1000 * 1000;  // 10,000 s of points end in the past
  auto points = [&](int n, int from) {
    json body = {{"points", json::array()}};
    for (int i = 0; i < n; ++i) body["points"].push_back(pt("loss", 1.0 / (i + 1), base + (from + i) * 1000));
    return body;
  };
  expect_2xx(s.req("POST", "/api/v1/jobs/" + a1 + "/metrics", member, points(9'900, 0)), "9,900 points");
  // Another job of the same tenant, by another caller (the operator): the same budget.
  Resp over = s.admin("POST", "/api/v1/jobs/" + a2 + "/metrics", points(150, 0));
  ASSERT_EQ(over.status, 429) << over.describe();
  EXPECT_EQ(over.content_type, "application/problem+json");
  EXPECT_NE(over.body.value("detail", "").find("job metric points from this tenant's jobs"), std::string::npos)
      << over.describe();
  EXPECT_GT(over.headers.count("Retry-After"), 0u) << over.describe();
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/" + a2 + "/metrics").body["metrics"].size(), 0u) << "nothing stored";
  expect_2xx(s.admin("POST", "/api/v1/jobs/" + b1 + "/metrics", points(150, 0)), "beta's job");
  Resp m = s.req("GET", "/metrics", "");
  EXPECT_NE(m.text.find("gpurent_metric_points_limit_per_second 100\n"), std::string::npos) << m.text.substr(0, 2000);
  EXPECT_NE(m.text.find("gpurent_metric_points_limit_burst 10000\n"), std::string::npos) << m.text.substr(0, 2000);
}

}  // namespace
}  // namespace gpurent::testing
