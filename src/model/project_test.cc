#include "model/project.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "model/model_test_util.h"

#include "core/yaml_json.h"

namespace gpurent {
namespace {

using testing_util::fails_only_on;
using testing_util::load_example;
using testing_util::test_catalog;

json valid_project() {
  return json::parse(R"({"name":"vision","tenant":"acme","display_name":"Vision research",
    "quota":{"gpus_per_model":{"h100-sxm5-80gb":64,"*":8},"max_gpus_per_job":32,"max_concurrent_jobs":20,
             "monthly_budget":"120000.50","budget_action":"alert"}})");
}


std::string read_example(const std::string& name) {
  std::ifstream in(std::string(GPURENT_SOURCE_DIR) + "/examples/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Project, ParsesAndRoundTrips) {
  auto p = parse_project(valid_project(), Currency::kCNY);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->name, "vision");
  EXPECT_EQ(p->tenant, "acme");
  EXPECT_EQ(p->quota.gpus_per_model.at("h100-sxm5-80gb"), 64);
  EXPECT_EQ(p->quota.max_gpus_per_job, 32);
  EXPECT_EQ(p->quota.max_concurrent_jobs, 20);
  EXPECT_EQ(p->quota.monthly_budget, Money(120000'500000, Currency::kCNY));
  EXPECT_EQ(p->quota.budget_action, BudgetAction::kAlert);
  json doc = to_json(*p);
  EXPECT_EQ(doc["quota"]["monthly_budget"], "120000.50");
  auto again = parse_project(doc, Currency::kCNY);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, *p);
  EXPECT_EQ(to_json(*again), doc);
}

TEST(Project, DefaultsFailClosed) {
  auto p = parse_project(json::parse(R"({"name":"scratch"})"), Currency::kUSD);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->tenant, "");
  EXPECT_EQ(p->display_name, "scratch");
  EXPECT_TRUE(p->quota.gpus_per_model.empty());
  EXPECT_EQ(p->quota.gpu_limit("h100-sxm5-80gb"), 0);
  EXPECT_EQ(p->quota.max_gpus_per_job, std::nullopt);
  EXPECT_EQ(p->quota.monthly_budget, std::nullopt);
  EXPECT_EQ(p->quota.budget_action, BudgetAction::kHold);
  json doc = to_json(*p);
  EXPECT_FALSE(doc.contains("tenant"));
  EXPECT_EQ(doc["quota"]["budget_action"], "hold");
  EXPECT_EQ(*parse_project(doc, Currency::kUSD), *p);
}

TEST(Project, GpuLimitFallsBackToWildcard) {
  auto p = parse_project(valid_project(), Currency::kUSD).value();
  EXPECT_EQ(p.quota.gpu_limit("h100-sxm5-80gb"), 64);
  EXPECT_EQ(p.quota.gpu_limit("l40s-48gb"), 8);
  p.quota.gpus_per_model.erase("*");
  EXPECT_EQ(p.quota.gpu_limit("l40s-48gb"), 0);
}

TEST(Project, ServerSetTenantIdIsEmittedButNeverRead) {
  auto p = parse_project(valid_project(), Currency::kUSD).value();
  p.tenant_id = "ten_0123456789abcdef";
  json doc = to_json(p);
  EXPECT_EQ(doc["tenant_id"], "ten_0123456789abcdef");
  doc["id"] = "prj_0123456789abcdef";
  doc["version"] = 2;
  auto back = parse_project(doc, Currency::kUSD);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->tenant_id, "");  // a client cannot choose its tenant id
  back->tenant_id = p.tenant_id;
  EXPECT_EQ(*back, p);
  IndexCols idx = index_of(p);
  EXPECT_EQ(idx.name, "vision");
  EXPECT_EQ(idx.tenant_id, "ten_0123456789abcdef");
}

TEST(Project, AcceptsTenantById) {
  json body = valid_project();
  body["tenant"] = "ten_0123456789abcdef";
  EXPECT_TRUE(parse_project(body, Currency::kUSD).ok());
}

TEST(Project, RejectsEachBadField) {
  struct Case {
    const char* patch;
    const char* field;
    const char* reason;
  };
  const Case cases[] = {
      {R"({"name":null})", "name", "is required"},
      {R"({"name":"Vision"})", "name", "lowercase letters"},
      {R"({"tenant":"Acme Corp"})", "tenant", "an id such as"},
      {R"({"tenant":""})", "tenant", "must not be empty"},
      {R"({"display_name":""})", "display_name", "must not be empty"},
      {R"({"quota":[]})", "quota", "must be a JSON object"},
      {R"({"quota":{"gpus_per_model":{"H100":4}}})", "quota.gpus_per_model.H100", "not a catalog GPU model id"},
      {R"({"quota":{"gpus_per_model":{"h100-sxm5-80gb":-1}}})", "quota.gpus_per_model.h100-sxm5-80gb",
       "must be at least 0 (got -1)"},
      {R"({"quota":{"gpus_per_model":{"h100-sxm5-80gb":100001}}})", "quota.gpus_per_model.h100-sxm5-80gb",
       "must be at most 100000"},
      {R"({"quota":{"gpus_per_model":{"h100-sxm5-80gb":"4"}}})", "quota.gpus_per_model.h100-sxm5-80gb",
       "must be an integer"},
      {R"({"quota":{"gpus_per_model":[4]}})", "quota.gpus_per_model", "must be a JSON object"},
      {R"({"quota":{"max_gpus_per_job":1.5}})", "quota.max_gpus_per_job", "whole number"},
      {R"({"quota":{"max_concurrent_jobs":-1}})", "quota.max_concurrent_jobs", "must be at least 0"},
      {R"({"quota":{"monthly_budget":100.5}})", "quota.monthly_budget", "floating-point"},
      {R"({"quota":{"monthly_budget":"-5"}})", "quota.monthly_budget", "must not be negative"},
      {R"({"quota":{"monthly_budget":"1.1234567"}})", "quota.monthly_budget", "more than 6 decimals"},
      {R"({"quota":{"monthly_budget":"1,000"}})", "quota.monthly_budget", "not a decimal amount"},
      {R"({"quota":{"budget_action":"freeze"}})", "quota.budget_action", "expected one of: alert, hold"},
      {R"({"quota":{"gpus":4}})", "quota.gpus", "unknown field"},
      {R"({"budget":1})", "budget", "unknown field"},
  };
  for (const auto& c : cases) {
    json body = valid_project();
    body.merge_patch(json::parse(c.patch));
    EXPECT_TRUE(fails_only_on(parse_project(body, Currency::kUSD), c.field, c.reason)) << c.patch;
  }
  json body = valid_project();
  body["quota"]["gpus_per_model"]["h100-sxm5-80gb"] = nullptr;  // merge_patch would delete it
  EXPECT_TRUE(fails_only_on(parse_project(body, Currency::kUSD), "quota.gpus_per_model.h100-sxm5-80gb",
                            "must be an integer"));
  EXPECT_TRUE(fails_only_on(parse_project(json::array(), Currency::kUSD), "", "must be a JSON object"));
}

TEST(Project, ParseQuotaNamesFieldsUnderItsPath) {
  json q = valid_project()["quota"];
  auto ok = parse_quota(q, Currency::kUSD, "");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(*ok, parse_project(valid_project(), Currency::kUSD)->quota);
  EXPECT_EQ(*parse_quota(to_json(*ok), Currency::kUSD, ""), *ok);

  q["max_gpus_per_job"] = -3;
  EXPECT_TRUE(fails_only_on(parse_quota(q, Currency::kUSD, ""), "max_gpus_per_job", "at least 0"));
  EXPECT_TRUE(fails_only_on(parse_quota(q, Currency::kUSD, "quota"), "quota.max_gpus_per_job", "at least 0"));
  EXPECT_TRUE(fails_only_on(parse_quota(json("x"), Currency::kUSD, "quota"), "quota", "must be a JSON object"));
  EXPECT_TRUE(fails_only_on(parse_quota(json::parse(R"({"id":"x"})"), Currency::kUSD, ""), "id", "unknown field"));
}

TEST(Project, QuotaBoundsModelCount) {
  json body = valid_project();
  body["quota"]["gpus_per_model"] = json::object();
  for (size_t i = 0; i <= kMaxQuotaModels; ++i) body["quota"]["gpus_per_model"]["m" + std::to_string(i)] = 1;
  EXPECT_TRUE(fails_only_on(parse_project(body, Currency::kUSD), "quota.gpus_per_model", "at most 256"));

  const std::string huge(200000, 'h');  // must be refused before any regex sees it
  body["quota"]["gpus_per_model"] = {{huge, 1}};
  EXPECT_TRUE(fails_only_on(parse_project(body, Currency::kUSD), "quota.gpus_per_model." + huge,
                            "not a catalog GPU model id"));

  body["quota"]["gpus_per_model"] = {{"H100", 1}};
  FieldError e = testing_util::only_field_error(parse_project(body, Currency::kUSD));
  EXPECT_EQ(e.coded.code, "project.quota.bad_model_key");
  EXPECT_EQ(render(e.coded, "zh"), "不是 GPU 目录中的型号 ID（小写字母、数字和“-”），也不是 \"*\"");
  body["quota"]["gpus_per_model"] = {{"h100-sxm5-80gb", nullptr}};
  EXPECT_EQ(testing_util::only_field_error(parse_project(body, Currency::kUSD)).coded.code, "field.integer");
}

TEST(Project, ExampleFileParses) {
  auto doc = yaml_to_json(read_example("project.yaml"));
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  auto p = parse_project(*doc, Currency::kUSD);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->name, "vision");
  EXPECT_EQ(p->quota.gpu_limit("h100-sxm5-80gb"), 64);
  EXPECT_EQ(p->quota.gpu_limit("a10-24gb"), 8);
  EXPECT_EQ(p->quota.monthly_budget->micros(), 120000'000000);
  EXPECT_EQ(p->quota.budget_action, BudgetAction::kHold);
  EXPECT_EQ(*parse_project(to_json(*p), Currency::kUSD), *p);
}

}  // namespace
}  // namespace gpurent
