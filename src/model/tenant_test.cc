#include "model/tenant.h"

#include <gtest/gtest.h>

#include "model/model_test_util.h"

namespace gpurent {
namespace {

using testing_util::fails_only_on;
using testing_util::load_example;
using testing_util::test_catalog;

json valid_tenant() {
  return json::parse(R"({"name":"acme","display_name":"ACME Research","currency":"CNY",
                         "contact_email":"ops@acme.example.com","labels":{"tier":"gold","acme.io/cost-center":"r-and-d"}})");
}


TEST(Tenant, ParsesAndRoundTrips) {
  auto t = parse_tenant(valid_tenant());
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->name, "acme");
  EXPECT_EQ(t->display_name, "ACME Research");
  EXPECT_EQ(t->currency, Currency::kCNY);
  EXPECT_EQ(t->contact_email, "ops@acme.example.com");
  EXPECT_EQ(t->labels.at("acme.io/cost-center"), "r-and-d");
  json doc = to_json(*t);
  EXPECT_EQ(doc["currency"], "CNY");
  auto again = parse_tenant(doc);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, *t);
  EXPECT_EQ(to_json(*again), doc);
  EXPECT_EQ(index_of(*t).name, "acme");
  EXPECT_EQ(index_of(*t).tenant_id, "");
}

TEST(Tenant, CostFirewallThresholdsInTheTenantsCurrency) {
  json body = valid_tenant();  // CNY
  body["cost_firewall"] = {{"card_daily_cost", "800"}, {"egress_daily_cost", "3500.5"}, {"storage_io_share_pct", 35}};
  auto t = parse_tenant(body);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_TRUE(t->cost_firewall.card_daily_cost && t->cost_firewall.egress_daily_cost);
  EXPECT_EQ(*t->cost_firewall.card_daily_cost, Money(800'000'000, Currency::kCNY));
  EXPECT_EQ(*t->cost_firewall.egress_daily_cost, Money(3'500'500'000, Currency::kCNY));
  EXPECT_EQ(t->cost_firewall.storage_io_share_pct, 35);
  json doc = to_json(*t);
  EXPECT_EQ(doc["cost_firewall"],
            json::parse(R"({"card_daily_cost":"800.00","egress_daily_cost":"3500.50","storage_io_share_pct":35})"));
  EXPECT_EQ(*parse_tenant(doc), *t);
  EXPECT_EQ(to_json(*parse_tenant(doc)), doc);

  // Each key is optional; the bounds are inclusive; an empty object is the defaults and is omitted.
  body["cost_firewall"] = {{"card_daily_cost", "0"}, {"storage_io_share_pct", 100}};
  t = parse_tenant(body);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->cost_firewall.card_daily_cost, Money::zero(Currency::kCNY));
  EXPECT_FALSE(t->cost_firewall.egress_daily_cost);
  EXPECT_EQ(to_json(*t)["cost_firewall"], json::parse(R"({"card_daily_cost":"0.00","storage_io_share_pct":100})"));
  body["cost_firewall"] = json::object();
  t = parse_tenant(body);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->cost_firewall.empty());
  EXPECT_FALSE(to_json(*t).contains("cost_firewall"));

  // Money follows the tenant's currency, whichever order the keys come in.
  body = valid_tenant();
  body.erase("currency");
  body["cost_firewall"] = {{"card_daily_cost", "100"}};
  EXPECT_EQ(parse_tenant(body)->cost_firewall.card_daily_cost, Money(100'000'000, Currency::kUSD));
}

TEST(Tenant, DefaultsAndServerKeys) {
  auto t = parse_tenant(json::parse(R"({"name":"solo","contact_email":"me@solo.dev","id":"ten_0123456789abcdef",
                                        "version":3,"created_at":"2026-01-01T00:00:00Z","updated_at":"x"})"));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->display_name, "solo");
  EXPECT_EQ(t->currency, Currency::kUSD);
  EXPECT_TRUE(t->labels.empty());
  json doc = to_json(*t);
  EXPECT_FALSE(doc.contains("labels"));
  EXPECT_FALSE(doc.contains("id"));
  EXPECT_EQ(*parse_tenant(doc), *t);
}

TEST(Tenant, ReportsEveryErrorAtOnce) {
  auto r = parse_tenant(json::parse(R"({"name":"Bad","currency":"EUR","contact_email":"nope","typo":1})"));
  ASSERT_FALSE(r.ok());
  std::set<std::string> fields;
  for (const auto& e : r.error().fields) fields.insert(e.field);
  EXPECT_EQ(fields, (std::set<std::string>{"name", "currency", "contact_email", "typo"}));
}

TEST(Tenant, RejectsEachBadField) {
  struct Case {
    const char* patch;  // JSON merge patch on the valid body (null removes a key)
    const char* field;
    const char* reason;
  };
  const Case cases[] = {
      {R"({"name":null})", "name", "is required"},
      {R"({"name":"Acme"})", "name", "lowercase letters"},
      {R"({"name":"-acme"})", "name", "starting and ending alphanumeric"},
      {R"({"name":7})", "name", "must be a string"},
      {R"({"currency":"EUR"})", "currency", "unknown value 'EUR' (expected one of: USD, CNY)"},
      {R"({"currency":"usd"})", "currency", "unknown value 'usd'"},
      {R"({"contact_email":null})", "contact_email", "is required"},
      {R"({"contact_email":"ops.acme.example"})", "contact_email", "email address"},
      {R"({"contact_email":"ops@localhost"})", "contact_email", "email address"},
      {R"({"contact_email":"ops@@acme.example"})", "contact_email", "email address"},
      {R"({"contact_email":"ops@acme.example "})", "contact_email", "email address"},
      {R"({"display_name":""})", "display_name", "must not be empty"},
      {R"({"labels":"gold"})", "labels", "must be a JSON object"},
      {R"({"labels":{"Bad Key":"x"}})", "labels.Bad Key", "not a valid label key"},
      {R"({"labels":{"tier":"has space"}})", "labels.tier", "letters, digits"},
      {R"({"labels":{"tier":3}})", "labels.tier", "must be a string"},
      {R"({"owner":"bob"})", "owner", "unknown field"},
      {R"({"cost_firewall":"800"})", "cost_firewall", "must be a JSON object"},
      {R"({"cost_firewall":{"foo":1}})", "cost_firewall.foo", "unknown field"},
      {R"({"cost_firewall":{"card_daily_cost":"-1.00"}})", "cost_firewall.card_daily_cost", "must not be negative"},
      {R"({"cost_firewall":{"card_daily_cost":800.5}})", "cost_firewall.card_daily_cost", "floating-point"},
      {R"({"cost_firewall":{"card_daily_cost":"8e2"}})", "cost_firewall.card_daily_cost", "is not a decimal amount"},
      {R"({"cost_firewall":{"egress_daily_cost":"-0.01"}})", "cost_firewall.egress_daily_cost", "must not be negative"},
      {R"({"cost_firewall":{"egress_daily_cost":"1.0000001"}})", "cost_firewall.egress_daily_cost", "more than 6 decimals"},
      {R"({"cost_firewall":{"storage_io_share_pct":101}})", "cost_firewall.storage_io_share_pct", "at most 100"},
      {R"({"cost_firewall":{"storage_io_share_pct":-1}})", "cost_firewall.storage_io_share_pct", "at least 0"},
      {R"({"cost_firewall":{"storage_io_share_pct":"20"}})", "cost_firewall.storage_io_share_pct", "must be an integer"},
  };
  for (const auto& c : cases) {
    json body = valid_tenant();
    body.merge_patch(json::parse(c.patch));
    EXPECT_TRUE(fails_only_on(parse_tenant(body), c.field, c.reason)) << c.patch;
  }
}

TEST(Tenant, BoundsLengthsAndCounts) {
  json body = valid_tenant();
  body["display_name"] = std::string(129, 'x');
  EXPECT_TRUE(fails_only_on(parse_tenant(body), "display_name", "at most 128"));

  body = valid_tenant();
  body["labels"] = {{"team", nullptr}};  // a merge patch cannot say this: null deletes
  EXPECT_TRUE(fails_only_on(parse_tenant(body), "labels.team", "must be a string"));

  body = valid_tenant();
  body["labels"] = {{"team", std::string(64, 'a')}};
  EXPECT_TRUE(fails_only_on(parse_tenant(body), "labels.team", "at most 63"));

  body = valid_tenant();
  body["labels"] = json::object();
  for (int i = 0; i < 65; ++i) body["labels"]["k" + std::to_string(i)] = "v";
  EXPECT_TRUE(fails_only_on(parse_tenant(body), "labels", "at most 64 entries"));

  body["labels"].erase("k0");  // 64 entries: fine
  EXPECT_TRUE(parse_tenant(body).ok());

  const std::string huge(200000, 'a');  // must be refused before any regex sees it
  body["labels"] = {{huge, "v"}};
  EXPECT_TRUE(fails_only_on(parse_tenant(body), "labels." + huge, "not a valid label key"));

  body = valid_tenant();
  body["contact_email"] = std::string(250, 'a') + "@x.io";
  EXPECT_TRUE(fails_only_on(parse_tenant(body), "contact_email", "at most 254"));

  EXPECT_TRUE(fails_only_on(parse_tenant(json::array()), "", "must be a JSON object"));
}

TEST(Tenant, ReasonsAreMessageCodesThatRenderInEveryLanguage) {
  json body = valid_tenant();
  body["labels"] = json::object();
  for (int i = 0; i < 65; ++i) body["labels"]["k" + std::to_string(i)] = "v";
  auto r = parse_tenant(body);
  FieldError e = testing_util::only_field_error(r);
  EXPECT_EQ(e.coded.code, "label.too_many");
  EXPECT_EQ(e.reason, "must have at most 64 entries (got 65)");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(render(r.error().detail, "zh"), "labels：最多 64 项（实际为 65 项）");

  body = valid_tenant();
  body["labels"] = {{"tier", "has space"}};
  e = testing_util::only_field_error(parse_tenant(body));
  EXPECT_EQ(testing_util::nested_code(e.coded, "help"), "pattern.label_value");
  EXPECT_EQ(e.reason, "'has space' is not valid: up to 63 of letters, digits, '_', '.', '-', starting and ending alphanumeric");

  body = valid_tenant();
  body["labels"] = {{"tier", 3}};
  EXPECT_EQ(testing_util::only_field_error(parse_tenant(body)).coded.code, "field.string");
}

TEST(Tenant, AcceptsLabelEdgeCases) {
  json body = valid_tenant();
  body["labels"] = {{"empty", ""}, {"a.b_c-d", "X.y_z-1"}, {"example.com/team", "vision"}};
  auto t = parse_tenant(body);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->labels.at("empty"), "");
  EXPECT_EQ(*parse_tenant(to_json(*t)), *t);
}

}  // namespace
}  // namespace gpurent

namespace gpurent {
namespace {

TEST(Tenant, ProcurementSplitRoundTripsAndIsChecked) {
  json body = valid_tenant();
  body["procurement_split"] = json::parse(R"([{"supplier":"huadong","share_permille":600},
                                              {"supplier":"sup_0123456789abcdef","share_permille":400}])");
  auto t = parse_tenant(body);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->procurement_split.size(), 2u);
  EXPECT_EQ(t->procurement_split[1].supplier, "sup_0123456789abcdef");
  EXPECT_EQ(t->procurement_split[0].share_permille, 600);
  EXPECT_EQ(to_json(*t)["procurement_split"], body["procurement_split"]);
  EXPECT_FALSE(to_json(*parse_tenant(valid_tenant())).contains("procurement_split")) << "omitted when empty";

  auto fields_of = [](const json& split) {
    json b = valid_tenant();
    b["procurement_split"] = split;
    auto r = parse_tenant(b);
    std::set<std::string> f;
    if (!r.ok())
      for (const auto& e : r.error().fields) f.insert(e.field);
    return f;
  };
  using S = std::set<std::string>;
  EXPECT_EQ(fields_of(json::parse(R"([{"supplier":"a","share_permille":600},{"supplier":"b","share_permille":401}])")),
            S{"procurement_split"});  // 1001 in all
  EXPECT_EQ(fields_of(json::parse(R"([{"supplier":"a","share_permille":600},{"supplier":"b","share_permille":400}])")), S{});
  EXPECT_EQ(fields_of(json::parse(R"([{"supplier":"a","share_permille":500},{"supplier":"a","share_permille":100}])")),
            S{"procurement_split[1].supplier"});
  EXPECT_EQ(fields_of(json::parse(R"([{"supplier":"a","share_permille":0}])")), S{"procurement_split[0].share_permille"});
  EXPECT_EQ(fields_of(json::parse(R"([{"supplier":"Not A Ref","share_permille":5}])")), S{"procurement_split[0].supplier"});
  EXPECT_EQ(fields_of(json::parse(R"([{"supplier":"a","share_permille":5,"colour":1}])")), S{"procurement_split[0].colour"});
  EXPECT_EQ(fields_of(json::parse(R"({"a":5})")), S{"procurement_split"});
  json many = json::array();
  for (int i = 0; i < 65; ++i) many.push_back({{"supplier", "s" + std::to_string(i)}, {"share_permille", 1}});
  EXPECT_EQ(fields_of(many), S{"procurement_split"});
}

}  // namespace
}  // namespace gpurent
