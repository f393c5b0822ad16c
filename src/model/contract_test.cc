// Contracts' own rules (model/contract.h): a market commitment's defaults and resales together
// never withhold more GPUs at one time than it holds.
#include "model/contract.h"

#include <gtest/gtest.h>

namespace gpurent {
namespace {

// A contract with one market commitment: 8 GPUs for ten hours at 2.10.
nlohmann::json market_contract() {
  return nlohmann::json::parse(R"({
    "name": "market-dc-cny", "tenant": "acme", "supplier": "dc", "offers": ["h100"], "currency": "CNY",
    "starts_at": "2026-11-01T00:00:00Z",
    "commitments": [{"name": "trade-1", "offer": "h100", "gpus": 8, "starts_at": "2026-11-02T00:00:00Z",
                     "ends_at": "2026-11-02T10:00:00Z", "price_per_gpu_hour": "2.10", "trade": "mtr-1"}]})");
}

TEST(Contract, AGpuNotDeliveredIsNotResoldToo) {
  auto body = market_contract();
  auto& m = body["commitments"][0];
  m["defaults"] = {{{"gpus", 8}, {"from", "2026-11-02T00:00:00Z"}, {"to", "2026-11-02T10:00:00Z"}}};
  m["resales"] = {{{"gpus", 8},
                   {"from", "2026-11-02T05:00:00Z"},
                   {"to", "2026-11-02T10:00:00Z"},
                   {"price_per_gpu_hour", "2.50"},
                   {"trade", "mtr_2"}}};
  auto c = parse_contract(body);
  ASSERT_FALSE(c.ok());
  ASSERT_EQ(c.error().fields.size(), 1u) << c.error().message;
  EXPECT_EQ(c.error().fields[0].field, "commitments[0].resales");
  EXPECT_NE(c.error().fields[0].reason.find("cannot be resold too"), std::string::npos) << c.error().fields[0].reason;
  // Apart in time, or within the commitment's GPUs together, both stand.
  m["defaults"][0]["to"] = "2026-11-02T05:00:00Z";
  EXPECT_TRUE(parse_contract(body).ok());
  m["defaults"][0]["to"] = "2026-11-02T10:00:00Z";
  m["defaults"][0]["gpus"] = 4;
  m["resales"][0]["gpus"] = 4;
  EXPECT_TRUE(parse_contract(body).ok()) << parse_contract(body).error().message;
}

}  // namespace
}  // namespace gpurent
