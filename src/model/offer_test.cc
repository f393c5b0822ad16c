#include "model/offer.h"

#include <gtest/gtest.h>

#include "catalog/scenario_files_test_util.h"
#include "model/model_test_util.h"

#include <fstream>
#include <functional>
#include <sstream>

#include "catalog/gpu_catalog.h"
#include "core/yaml_json.h"

namespace gpurent {
namespace {

using testing_util::fails_only_on;
using testing_util::load_example;
using testing_util::test_catalog;
using testing_util::BadCase;
using testing_util::expect_each_case_fails;

json valid_offer() {
  return json::parse(R"({
    "name": "h100-sh-standard",
    "supplier": "sup_0123456789abcdef",
    "region": "cn-east",
    "gpu_model": "SXM-TEST",
    "node_selector": {"site": "sh-pudong-1", "node_names": ["sh1-h100-001", "sh1-h100-002"]},
    "currency": "USD",
    "prices": {"on_demand": "2.50", "reserved_1m": "2.20", "reserved_12m": "1.90", "reserved_36m": "1.60",
               "spot": "1.10"},
    "served_models": [
      {"model": "qwen2.5-72b-instruct", "per_million_input_tokens": "0.40", "per_million_output_tokens": "1.20"},
      {"model": "meta-llama/Llama-3.1-8B-Instruct", "per_qps_month": "45"},
      {"model": "bge-reranker-v2-m3", "per_million_requests": "0.80"}
    ],
    "min_increment_seconds": 60,
    "fees": {
      "billing_starts": "ready",
      "idle": {"utilization_below_pct": 5, "window_minutes": 10, "action": "discount", "discount_pct": 50},
      "storage_io": {"per_gb": "0.01", "free_gb": 1000},
      "egress": {"per_gb": "0.05"}
    },
    "contract_template": {
      "model_lock": true, "min_fp16_tflops": "900.5", "min_nccl_busbw_gbps": 350,
      "outage_compensation_pct": 200, "exit_notice_days": 30, "exit_refund_prepaid": true,
      "data_sovereignty": "CN", "audit_rights": true,
      "penalty": {"fee_pct_per_step": 5, "step_pct_below_promise": 10}
    }
  })");
}

std::map<std::string, std::string> errors_of(const json& body) {
  auto r = parse_offer(body, test_catalog());
  std::map<std::string, std::string> out;
  if (r.ok()) return out;
  EXPECT_EQ(r.error().code, Code::kInvalid);
  for (const auto& e : r.error().fields) out[e.field] = e.reason;
  return out;
}

TEST(Offer, ValidExampleParses) {
  auto r = parse_offer(valid_offer(), test_catalog());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Offer& o = *r;
  EXPECT_EQ(o.gpu_model, "sxm-test-80gb");  // alias resolved
  EXPECT_EQ(o.currency, Currency::kUSD);
  EXPECT_EQ(o.prices.on_demand, Money(2'500'000, Currency::kUSD));
  EXPECT_EQ(o.prices.spot, Money(1'100'000, Currency::kUSD));
  ASSERT_EQ(o.served_models.size(), 3u);
  EXPECT_EQ(o.served_models[1].per_qps_month, Money(45'000'000, Currency::kUSD));
  EXPECT_FALSE(o.served_models[1].per_million_input_tokens.has_value());
  EXPECT_EQ(o.served_models[2].per_million_requests, Money(800'000, Currency::kUSD));
  EXPECT_FALSE(o.served_models[2].per_qps_month.has_value());
  EXPECT_EQ(o.fees.billing_starts, BillingStart::kReady);
  ASSERT_TRUE(o.fees.idle.has_value());
  EXPECT_EQ(o.fees.idle->action, IdleAction::kDiscount);
  EXPECT_EQ(o.fees.idle->discount_pct, 50);
  EXPECT_EQ(o.fees.egress->free_gb, 0);
  EXPECT_EQ(o.contract_template.min_fp16_tflops_x10, 9005);
  EXPECT_EQ(o.contract_template.data_sovereignty, "CN");
  EXPECT_EQ(o.node_selector.node_names.size(), 2u);
}

TEST(Offer, RoundTrips) {
  Offer o = parse_offer(valid_offer(), test_catalog()).value();
  json doc = to_json(o);
  EXPECT_EQ(doc["prices"]["on_demand"], "2.50");
  EXPECT_EQ(doc["contract_template"]["min_fp16_tflops"], "900.5");
  auto again = parse_offer(doc, test_catalog());
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again, o);
  EXPECT_EQ(to_json(*again), doc);
}

// The exit notice a contract without clauses takes from its first offer: read from the offer as
// stored (every clause of the template written), not only from a template holding that key alone.
TEST(Offer, StoredExitNoticeDaysReadsAFullTemplate) {
  Offer o = parse_offer(valid_offer(), test_catalog()).value();
  o.contract_template.exit_notice_days = 60;
  const json doc = to_json(o);
  ASSERT_TRUE(doc["contract_template"].contains("min_fp16_tflops"));
  auto days = stored_offer_exit_notice_days(doc);
  ASSERT_TRUE(days.ok()) << days.error().message;
  EXPECT_EQ(*days, 60);
  EXPECT_EQ(stored_offer_exit_notice_days(json{{"name", "x"}}).value(), 30);
  json bad = doc;
  bad["contract_template"]["exit_notice_days"] = 400;
  EXPECT_FALSE(stored_offer_exit_notice_days(bad).ok());
}

TEST(Offer, MinimalBodyGetsDocumentedDefaults) {
  json body = {{"name", "basic"},        {"supplier", "huadong-compute"}, {"region", "cn-east"},
               {"gpu_model", "sxm-test-80gb"}, {"currency", "CNY"},      {"prices", {{"on_demand", "18"}}},
               {"fees", {{"billing_starts", "running"}}}};
  auto r = parse_offer(body, test_catalog());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const Offer& o = *r;
  EXPECT_EQ(o.prices.on_demand, Money(18'000'000, Currency::kCNY));
  EXPECT_EQ(o.min_increment_seconds, 1);
  EXPECT_FALSE(o.fees.idle || o.fees.storage_io || o.fees.egress);
  const ContractTemplate& t = o.contract_template;
  EXPECT_TRUE(t.model_lock);
  EXPECT_EQ(t.outage_compensation_pct, 200);
  EXPECT_EQ(t.exit_notice_days, 30);
  EXPECT_TRUE(t.exit_refund_prepaid);
  EXPECT_FALSE(t.audit_rights);
  EXPECT_EQ(t.penalty.fee_pct_per_step, 5);
  EXPECT_EQ(t.penalty.step_pct_below_promise, 10);
  EXPECT_EQ(parse_offer(to_json(o), test_catalog()).value(), o);
}

TEST(Offer, IndexAndServerKeys) {
  json body = valid_offer();
  body["supplier_id"] = "sup_ffffffffffffffff";  // ignored: the server resolves `supplier`
  body["id"] = "off_0123456789abcdef";
  Offer o = parse_offer(body, test_catalog()).value();
  EXPECT_TRUE(o.supplier_id.empty());
  o.supplier_id = "sup_0123456789abcdef";
  EXPECT_EQ(to_json(o)["supplier_id"], "sup_0123456789abcdef");
  IndexCols ix = index_of(o);
  EXPECT_EQ(ix.name, "h100-sh-standard");
  EXPECT_EQ(ix.supplier_id, "sup_0123456789abcdef");
  EXPECT_EQ(ix.region, "cn-east");
  EXPECT_EQ(ix.gpu_model, "sxm-test-80gb");
  EXPECT_EQ(ix.state, "");
}

TEST(Offer, RejectsEachBadFieldWithItsPath) {
  const std::vector<BadCase> cases = {
      {"unknown gpu model", [](json& b) { b["gpu_model"] = "h999"; }, "gpu_model", "unknown GPU model 'h999'"},
      {"bad region", [](json& b) { b["region"] = "CN_EAST"; }, "region", "a region such as"},
      {"unknown currency", [](json& b) { b["currency"] = "EUR"; }, "currency",
       "unknown value 'EUR' (expected one of: USD, CNY)"},
      {"missing prices", [](json& b) { b.erase("prices"); }, "prices", "is required"},
      {"missing on-demand price", [](json& b) { b["prices"].erase("on_demand"); }, "prices.on_demand",
       "is required"},
      {"price as float", [](json& b) { b["prices"]["on_demand"] = 2.5; }, "prices.on_demand", "floating-point"},
      {"free on-demand", [](json& b) { b["prices"]["on_demand"] = "0"; }, "prices.on_demand",
       "must be greater than 0"},
      {"absurd price", [](json& b) { b["prices"]["on_demand"] = "25000"; }, "prices.on_demand",
       "must be at most 10000 USD (got 25000.00)"},
      {"too many decimals", [](json& b) { b["prices"]["reserved_1m"] = "2.1234567"; }, "prices.reserved_1m",
       "more than 6 decimals"},
      {"negative spot", [](json& b) { b["prices"]["spot"] = "-1.00"; }, "prices.spot", "must not be negative"},
      {"reserved above on-demand", [](json& b) { b["prices"]["reserved_12m"] = "2.60"; }, "prices.reserved_12m",
       "must not exceed on_demand (2.50 USD)"},
      {"spot above on-demand", [](json& b) { b["prices"]["spot"] = "3"; }, "prices.spot",
       "must not exceed on_demand"},
      {"served model without price", [](json& b) { b["served_models"][1].erase("per_qps_month"); },
       "served_models[1]", "must state at least one price"},
      {"duplicate served model", [](json& b) { b["served_models"][1]["model"] = "qwen2.5-72b-instruct"; },
       "served_models[1].model", "duplicate served model"},
      {"increment zero", [](json& b) { b["min_increment_seconds"] = 0; }, "min_increment_seconds",
       "must be at least 1 (got 0)"},
      {"increment absurd", [](json& b) { b["min_increment_seconds"] = 7200; }, "min_increment_seconds",
       "must be at most 3600 (got 7200)"},
      {"missing fees", [](json& b) { b.erase("fees"); }, "fees", "is required"},
      {"fees without billing start", [](json& b) { b["fees"].erase("billing_starts"); }, "fees.billing_starts",
       "is required (one of: api_call, running, ready)"},
      {"unknown billing start", [](json& b) { b["fees"]["billing_starts"] = "boot"; }, "fees.billing_starts",
       "unknown value 'boot'"},
      {"discount without pct", [](json& b) { b["fees"]["idle"].erase("discount_pct"); }, "fees.idle.discount_pct",
       "is required when action is discount"},
      {"pct without discount", [](json& b) { b["fees"]["idle"]["action"] = "stop"; }, "fees.idle.discount_pct",
       "is only allowed when action is discount (action is stop)"},
      {"utilization above 100", [](json& b) { b["fees"]["idle"]["utilization_below_pct"] = 101; },
       "fees.idle.utilization_below_pct", "at most 100"},
      {"egress without price", [](json& b) { b["fees"]["egress"].erase("per_gb"); }, "fees.egress.per_gb",
       "is required"},
      {"negative free allowance", [](json& b) { b["fees"]["storage_io"]["free_gb"] = -5; },
       "fees.storage_io.free_gb", "at least 0"},
      {"floor above datasheet", [](json& b) { b["contract_template"]["min_fp16_tflops"] = "1200"; },
       "contract_template.min_fp16_tflops", "must not exceed the datasheet figure of sxm-test-80gb (989"},
      {"floor with two decimals", [](json& b) { b["contract_template"]["min_fp16_tflops"] = "900.55"; },
       "contract_template.min_fp16_tflops", "at most one decimal"},
      {"penalty above 100%", [](json& b) { b["contract_template"]["penalty"]["fee_pct_per_step"] = 101; },
       "contract_template.penalty.fee_pct_per_step", "at most 100"},
      {"bad sovereignty", [](json& b) { b["contract_template"]["data_sovereignty"] = "China"; },
       "contract_template.data_sovereignty", "ISO country code"},
      {"unknown contract clause", [](json& b) { b["contract_template"]["sla"] = "99.9"; }, "contract_template.sla",
       "unknown field"},
      {"duplicate selected node", [](json& b) { b["node_selector"]["node_names"][1] = "sh1-h100-001"; },
       "node_selector.node_names", "more than once"},
      {"unknown field", [](json& b) { b["discount"] = "10%"; }, "discount", "unknown field"},
  };
  expect_each_case_fails(valid_offer(), cases, [](const json& b) { return parse_offer(b, test_catalog()); });
}

TEST(Offer, ReasonsAreMessageCodesThatRenderInEveryLanguage) {
  json body = valid_offer();
  body["prices"]["reserved_12m"] = "2.60";
  FieldError e = testing_util::only_field_error(parse_offer(body, test_catalog()));
  EXPECT_EQ(e.coded.code, "offer.price.above_on_demand");
  EXPECT_EQ(e.coded.text_of("on_demand"), "2.50");
  EXPECT_EQ(testing_util::nested_code(e.coded, "why"), "offer.price.commitment_below_on_demand");
  EXPECT_EQ(e.reason, "must not exceed on_demand (2.50 USD): a commitment is priced at or below on-demand");
  EXPECT_EQ(render(e.coded, "zh"), "不能超过 on_demand（2.50 USD）：承诺用量的价格不高于按需价格");

  // A TFLOPS floor that does not parse carries parse_tflops_x10's coded reason.
  body = valid_offer();
  body["contract_template"]["min_fp16_tflops"] = "900.55";
  e = testing_util::only_field_error(parse_offer(body, test_catalog()));
  EXPECT_EQ(e.coded.code, "gpu_model.tflops.invalid");
  EXPECT_EQ(testing_util::nested_code(e.coded, "help"), "pattern.tflops");
  EXPECT_EQ(render(e.coded, "zh"), "“900.55”无效：必须是整数或最多一位小数的十进制字符串，如 312 或 \"18.7\"");

  body = valid_offer();
  body["contract_template"]["data_sovereignty"] = "China";
  e = testing_util::only_field_error(parse_offer(body, test_catalog()));
  EXPECT_EQ(testing_util::nested_code(e.coded, "help"), "pattern.sovereignty");
}

TEST(Offer, ReportsAllErrorsAtOnce) {
  json body = valid_offer();
  body["currency"] = "usd";
  body["prices"]["spot"] = 1.5;
  body["fees"]["idle"]["action"] = "pause";
  body["contract_template"]["exit_notice_days"] = 1000;
  auto errs = errors_of(body);
  EXPECT_EQ(errs.size(), 4u) << json(errs).dump();
  EXPECT_TRUE(errs.count("currency") && errs.count("prices.spot") && errs.count("fees.idle.action") &&
              errs.count("contract_template.exit_notice_days"));
}

TEST(Offer, ExampleFileParsesAgainstTheShippedCatalog) {
  auto catalog = testutil::catalog_file(GPURENT_SOURCE_DIR "/data/gpu_catalog.yaml");
  ASSERT_TRUE(catalog.ok()) << catalog.error().message;
  auto doc = load_example("offer.yaml");
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  auto o = parse_offer(*doc, *catalog);
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o->gpu_model, "h100-sxm5-80gb");
  EXPECT_EQ(parse_offer(to_json(*o), *catalog).value(), *o);
}

}  // namespace
}  // namespace gpurent
