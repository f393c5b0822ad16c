#include "model/supplier.h"

#include <gtest/gtest.h>

#include "model/model_test_util.h"

#include <fstream>
#include <functional>
#include <sstream>

#include "core/yaml_json.h"

namespace gpurent {
namespace {

using testing_util::BadCase;
using testing_util::expect_each_case_fails;
using testing_util::fails_only_on;
using testing_util::load_example;

json valid_supplier() {
  return json::parse(R"js({
    "name": "huadong-compute",
    "display_name": "华东算力 (Huadong Compute)",
    "region": "cn-east",
    "country": "CN",
    "sites": [
      {"name": "sh-pudong-1", "region": "cn-east", "city": "上海", "tier": 3},
      {"name": "hz-xiaoshan", "region": "cn-east-2", "city": "Hangzhou"}
    ],
    "certifications": ["iso27001", "mlps3", "soc2"],
    "due_diligence": {
      "gpu_supply_days": 14, "allreduce_8gpu_1gb_ms": 5, "fault_locate_minutes": 30,
      "restore_hours": 4, "cuda_update_days": 21, "exit_path_tested": true,
      "monthly_failure_rate_bp": 35, "notes": "IB fabric rebuilt 2025-Q3"
    },
    "contact_email": "noc@huadong-compute.example.cn"
  })js");
}

// field path -> reason, for every error of a rejected body.
std::map<std::string, std::string> errors_of(const json& body) {
  auto r = parse_supplier(body);
  std::map<std::string, std::string> out;
  if (r.ok()) return out;
  EXPECT_EQ(r.error().code, Code::kInvalid);
  for (const auto& e : r.error().fields) out[e.field] = e.reason;
  return out;
}

TEST(Supplier, ValidExampleParses) {
  auto r = parse_supplier(valid_supplier());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Supplier& s = *r;
  EXPECT_EQ(s.name, "huadong-compute");
  EXPECT_EQ(s.display_name, "华东算力 (Huadong Compute)");
  EXPECT_EQ(s.country, "CN");
  ASSERT_EQ(s.sites.size(), 2u);
  EXPECT_EQ(s.sites[0].tier, 3);
  EXPECT_FALSE(s.sites[1].tier.has_value());
  EXPECT_EQ(s.sites[0].city, "上海");
  ASSERT_EQ(s.certifications.size(), 3u);
  EXPECT_EQ(s.certifications[1], Certification::kMlps3);
  EXPECT_EQ(s.due_diligence.monthly_failure_rate_bp, 35);
  EXPECT_EQ(s.due_diligence.exit_path_tested, true);
  IndexCols ix = index_of(s);
  EXPECT_EQ(ix.name, "huadong-compute");
  EXPECT_EQ(ix.region, "cn-east");
  EXPECT_EQ(ix.tenant_id, "");
}

TEST(Supplier, RoundTrips) {
  Supplier s = parse_supplier(valid_supplier()).value();
  json doc = to_json(s);
  auto again = parse_supplier(doc);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, s);
  EXPECT_EQ(to_json(*again), doc);
  EXPECT_EQ(doc["certifications"], json::parse(R"(["iso27001","mlps3","soc2"])"));
}

TEST(Supplier, MinimalBodyGetsDefaults) {
  json body = {{"name", "acme"}, {"region", "us-west-2"}, {"country", "US"}, {"contact_email", "ops@acme.com"}};
  Supplier s = parse_supplier(body).value();
  EXPECT_EQ(s.display_name, "acme");
  EXPECT_TRUE(s.sites.empty());
  EXPECT_TRUE(s.certifications.empty());
  EXPECT_EQ(s.due_diligence, DueDiligence{});
  json doc = to_json(s);
  EXPECT_EQ(doc["due_diligence"], json::object());
  EXPECT_EQ(parse_supplier(doc).value(), s);
}

TEST(Supplier, AcceptsServerKeysSoAGetCanBePutBack) {
  json body = valid_supplier();
  body["id"] = "sup_0123456789abcdef";
  body["created_at"] = "2026-01-01T00:00:00.000Z";
  body["updated_at"] = "2026-01-01T00:00:00.000Z";
  body["version"] = 3;
  EXPECT_TRUE(parse_supplier(body).ok());
}

TEST(Supplier, ExplicitNullLeavesADueDiligenceAnswerUnanswered) {
  json body = valid_supplier();
  body["due_diligence"]["exit_path_tested"] = nullptr;
  Supplier s = parse_supplier(body).value();
  EXPECT_FALSE(s.due_diligence.exit_path_tested.has_value());
}

TEST(Supplier, RejectsEachBadFieldWithItsPath) {
  const std::vector<BadCase> cases = {
      {"missing name", [](json& b) { b.erase("name"); }, "name", "is required"},
      {"name not a slug", [](json& b) { b["name"] = "Huadong Compute"; }, "name", "lowercase letters"},
      {"region wrong type", [](json& b) { b["region"] = 42; }, "region", "must be a string"},
      {"region not a region", [](json& b) { b["region"] = "east"; }, "region", "a region such as cn-east"},
      {"country lowercase", [](json& b) { b["country"] = "cn"; }, "country", "ISO 3166-1 alpha-2"},
      {"display name absurdly long", [](json& b) { b["display_name"] = std::string(300, 'x'); }, "display_name",
       "at most 256"},
      {"site tier out of range", [](json& b) { b["sites"][1]["tier"] = 5; }, "sites[1].tier",
       "must be at most 4 (got 5)"},
      {"site tier negative", [](json& b) { b["sites"][0]["tier"] = -1; }, "sites[0].tier", "at least 1"},
      {"duplicate site", [](json& b) { b["sites"][1]["name"] = "sh-pudong-1"; }, "sites[1].name",
       "duplicate site name"},
      {"site without city", [](json& b) { b["sites"][0].erase("city"); }, "sites[0].city", "is required"},
      {"sites not a list", [](json& b) { b["sites"] = "sh-pudong-1"; }, "sites", "must be a list"},
      {"unknown certification", [](json& b) { b["certifications"][1] = "iso9999"; }, "certifications[1]",
       "unknown value 'iso9999'"},
      {"duplicate certification", [](json& b) { b["certifications"][2] = "iso27001"; }, "certifications[2]",
       "duplicate certification 'iso27001'"},
      {"certifications not a list", [](json& b) { b["certifications"] = "iso27001"; }, "certifications",
       "must be a list"},
      {"negative failure rate", [](json& b) { b["due_diligence"]["monthly_failure_rate_bp"] = -1; },
       "due_diligence.monthly_failure_rate_bp", "must be at least 0 (got -1)"},
      {"failure rate above 100%", [](json& b) { b["due_diligence"]["monthly_failure_rate_bp"] = 10001; },
       "due_diligence.monthly_failure_rate_bp", "at most 10000"},
      {"absurd restore time", [](json& b) { b["due_diligence"]["restore_hours"] = 100000; },
       "due_diligence.restore_hours", "at most 8760"},
      {"fractional days", [](json& b) { b["due_diligence"]["gpu_supply_days"] = 1.5; },
       "due_diligence.gpu_supply_days", "must be a whole number"},
      {"exit path as text", [](json& b) { b["due_diligence"]["exit_path_tested"] = "yes"; },
       "due_diligence.exit_path_tested", "must be true or false"},
      {"unknown nested field", [](json& b) { b["due_diligence"]["mtbf"] = 1; }, "due_diligence.mtbf",
       "unknown field"},
      {"unknown field", [](json& b) { b["website"] = "https://x"; }, "website", "unknown field"},
      {"bad email", [](json& b) { b["contact_email"] = "noc at example.cn"; }, "contact_email", "e-mail address"},
      {"missing email", [](json& b) { b.erase("contact_email"); }, "contact_email", "is required"},
  };
  expect_each_case_fails(valid_supplier(), cases, [](const json& b) { return parse_supplier(b); });
}

TEST(Supplier, ReportsAllErrorsAtOnce) {
  json body = valid_supplier();
  body["name"] = "";
  body["sites"][0]["tier"] = 9;
  body["certifications"] = {"soc7"};
  body["extra"] = true;
  auto errs = errors_of(body);
  EXPECT_EQ(errs.size(), 4u) << json(errs).dump();
  EXPECT_TRUE(errs.count("name") && errs.count("sites[0].tier") && errs.count("certifications[0]") &&
              errs.count("extra"));
  EXPECT_EQ(parse_supplier(body).error().message.find("(and 3 more)") != std::string::npos, true);
}

TEST(Supplier, ReasonsAreMessageCodesThatRenderInEveryLanguage) {
  json body = valid_supplier();
  body["certifications"][2] = "iso27001";
  FieldError e = testing_util::only_field_error(parse_supplier(body));
  EXPECT_EQ(e.coded.code, "supplier.certifications.duplicate");
  EXPECT_EQ(render(e.coded, "zh"), "认证“iso27001”重复");

  body = valid_supplier();
  body["certifications"][1] = "iso9999";
  e = testing_util::only_field_error(parse_supplier(body));
  EXPECT_EQ(e.coded.code, "field.unknown_value");
  EXPECT_EQ(e.coded.text_of("value"), "iso9999");

  body = valid_supplier();
  body["certifications"][1] = 7;
  e = testing_util::only_field_error(parse_supplier(body));
  EXPECT_EQ(e.coded.code, "supplier.certifications.not_string");
  EXPECT_EQ(e.reason.rfind("must be a string (expected one of: iso27001, ", 0), 0u) << e.reason;

  body = valid_supplier();
  body["country"] = "cn";
  e = testing_util::only_field_error(parse_supplier(body));
  EXPECT_EQ(testing_util::nested_code(e.coded, "help"), "pattern.country");
  EXPECT_EQ(render(e.coded, "zh"), "“cn”无效：ISO 3166-1 alpha-2 国家代码，如 CN 或 US");
}

TEST(Supplier, RejectsANonObjectBody) {
  auto errs = errors_of(json::array());
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs.begin()->second, "must be a JSON object");
}

TEST(Supplier, ExampleFileParses) {
  auto doc = load_example("supplier.yaml");
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  auto s = parse_supplier(*doc);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_FALSE(s->sites.empty());
  EXPECT_FALSE(s->certifications.empty());
  EXPECT_EQ(parse_supplier(to_json(*s)).value(), *s);
}

}  // namespace
}  // namespace gpurent
