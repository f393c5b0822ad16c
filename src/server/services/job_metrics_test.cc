// Validation of job metric reports and the GET answer's shape (server/job_metrics.h).
#include "server/services/job_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

namespace gpurent {
namespace {

using json = nlohmann::json;

constexpr TimeMs kNow = 1'764'430'000'000;  // 2025-11-29T15:26:40Z

std::vector<std::string> fields_of(const Error& e) {
  std::vector<std::string> out;
  for (const auto& f : e.fields) out.push_back(f.field);
  return out;
}

std::string reason_for(const Error& e, const std::string& field) {
  for (const auto& f : e.fields)
    if (f.field == field) return f.reason;
  return "";
}

TEST(JobMetricPoints, ParsesWithDefaults) {
  json body = json::parse(R"({"points": [
      {"name": "val_accuracy", "value": 0.731, "at": "2025-11-29T10:00:00Z", "higher_is_better": true},
      {"name": "loss", "value": 2, "higher_is_better": false},
      {"name": "eval.bleu-4_x", "value": -1.5e-3}]})");
  auto rows = parse_job_metric_points(body, kNow);
  ASSERT_TRUE(rows.ok()) << rows.error().message;
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].name, "val_accuracy");
  EXPECT_EQ((*rows)[0].value, 0.731);
  EXPECT_EQ((*rows)[0].at, parse_rfc3339("2025-11-29T10:00:00Z", "at").value());
  EXPECT_TRUE((*rows)[0].higher_is_better);
  EXPECT_EQ((*rows)[1].value, 2.0);  // a JSON integer is a number too
  EXPECT_EQ((*rows)[1].at, kNow);    // at defaults to the server's clock
  EXPECT_FALSE((*rows)[1].higher_is_better);
  EXPECT_TRUE((*rows)[2].higher_is_better);  // default
  EXPECT_EQ((*rows)[2].value, -1.5e-3);
  EXPECT_TRUE((*rows)[2].job_id.empty());  // the route fills the job's ids
}

TEST(JobMetricPoints, NamesEveryBadFieldByPath) {
  json body = {{"points",
                {{{"name", "Val_Acc"}, {"value", 1}},
                 {{"name", std::string(65, 'a')}, {"value", 1}},
                 {{"name", "ok"}, {"value", "0.5"}, {"foo", 1}},
                 {{"name", "ok"}},
                 {{"name", "ok"}, {"value", true}, {"higher_is_better", "yes"}},
                 {{"value", 1}, {"at", "yesterday"}},
                 42}},
               {"extra", 1}};
  auto r = parse_job_metric_points(body, kNow);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::kInvalid);
  const auto f = fields_of(r.error());
  for (const char* want : {"points[0].name", "points[1].name", "points[2].value", "points[2].foo", "points[3].value",
                           "points[4].value", "points[4].higher_is_better", "points[5].name", "points[5].at",
                           "points[6]", "extra"})
    EXPECT_NE(std::find(f.begin(), f.end(), want), f.end()) << want;
  EXPECT_EQ(reason_for(r.error(), "points[2].foo"), "unknown field");
  EXPECT_NE(reason_for(r.error(), "points[0].name").find("lowercase"), std::string::npos);
  EXPECT_NE(reason_for(r.error(), "points[1].name").find("at most 64"), std::string::npos);
  EXPECT_EQ(r.error().message.rfind("points[0].name: ", 0), 0u) << r.error().message;
}

TEST(JobMetricPoints, AtMayBeAtMostFiveMinutesAhead) {
  auto at = [](TimeMs t) { return json{{"points", {{{"name", "acc"}, {"value", 1}, {"at", format_rfc3339(t)}}}}}; };
  EXPECT_TRUE(parse_job_metric_points(at(kNow + 5 * 60'000), kNow).ok());
  auto late = parse_job_metric_points(at(kNow + 5 * 60'000 + 1), kNow);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(fields_of(late.error()), std::vector<std::string>{"points[0].at"});
  EXPECT_NE(late.error().message.find("5 minutes ahead"), std::string::npos);
  EXPECT_TRUE(parse_job_metric_points(at(kNow - 365LL * 86'400'000), kNow).ok());  // the past is fine
}

TEST(JobMetricPoints, BoundsThePointList) {
  EXPECT_EQ(fields_of(parse_job_metric_points(json::object(), kNow).error()), std::vector<std::string>{"points"});
  EXPECT_EQ(fields_of(parse_job_metric_points({{"points", json::array()}}, kNow).error()),
            std::vector<std::string>{"points"});
  EXPECT_EQ(fields_of(parse_job_metric_points({{"points", "x"}}, kNow).error()), std::vector<std::string>{"points"});
  json one = {{"name", "acc"}, {"value", 0.5}};
  json full = {{"points", json::array()}};
  for (size_t i = 0; i < kMaxMetricPoints; ++i) full["points"].push_back(one);
  auto ok = parse_job_metric_points(full, kNow);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), kMaxMetricPoints);
  full["points"].push_back(one);
  auto over = parse_job_metric_points(full, kNow);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.error().message.find("at most 10000"), std::string::npos) << over.error().message;
}

TEST(JobMetricPoints, ReportsTheFirstHundredErrors) {
  json body = {{"points", json::array()}};
  for (int i = 0; i < 5000; ++i) body["points"].push_back({{"name", "acc"}, {"value", "bad"}});
  auto r = parse_job_metric_points(body, kNow);
  ASSERT_FALSE(r.ok());
  EXPECT_LE(r.error().fields.size(), 101u);
  EXPECT_EQ(r.error().fields.back().field, "points");
}

TEST(JobMetricPoints, NonFiniteValuesAreRefused) {
  // JSON text cannot carry them, but a body built another way (YAML .inf) can.
  json body = {{"points", {{{"name", "acc"}, {"value", std::numeric_limits<double>::infinity()}}}}};
  auto r = parse_job_metric_points(body, kNow);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(reason_for(r.error(), "points[0].value"), "must be a finite number");
}

TEST(JobMetricPoints, StoreErrorsAreRenamedToTheRequestsPoints) {
  Error e = Error::make(Code::kConflict, "rows[3].higher_is_better: is false but ...");
  e.fields.push_back({"rows[3].higher_is_better", "is false but ..."});
  Error out = rows_to_points(e);
  EXPECT_EQ(out.code, Code::kConflict);
  EXPECT_EQ(out.fields[0].field, "points[3].higher_is_better");
  EXPECT_EQ(out.message, "points[3].higher_is_better: is false but ...");
  Error other = rows_to_points(Error::make(Code::kInternal, "disk full"));
  EXPECT_EQ(other.message, "disk full");
}

TEST(JobMetricsJson, GroupsRowsByMetricInTimeOrder) {
  std::vector<JobMetricRow> rows = {{"job_1", "ten_1", "prj_1", "loss", 1000, 2.5, false},
                                    {"job_1", "ten_1", "prj_1", "loss", 2000, 1.25, false},
                                    {"job_1", "ten_1", "prj_1", "val_accuracy", 1500, 0.731, true}};
  json out = job_metrics_json("job_1", rows);
  EXPECT_EQ(out, json::parse(R"({"job_id": "job_1", "metrics": [
      {"name": "loss", "higher_is_better": false, "points": [
          {"at": "1970-01-01T00:00:01.000Z", "value": 2.5}, {"at": "1970-01-01T00:00:02.000Z", "value": 1.25}]},
      {"name": "val_accuracy", "higher_is_better": true, "points": [
          {"at": "1970-01-01T00:00:01.500Z", "value": 0.731}]}]})"));
  EXPECT_EQ(job_metrics_json("job_2", {}), json::parse(R"({"job_id": "job_2", "metrics": []})"));
}

}  // namespace
}  // namespace gpurent
