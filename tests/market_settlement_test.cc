// Settlement end to end through the real server (docs/market.md#settlement): a trade becomes a
// reservation of the seller's nodes and a commitment at the trade price in the buyer's contract; a
// job of the buyer runs inside the reservation and its invoice bills the trade price; a supplier's
// default is a compensation line; a seller short of nodes at settlement defaults at once.
#include <gtest/gtest.h>

#include <string>

#include "core/clock.h"
#include "core/money.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

constexpr TimeMs kHour = 3'600'000;

json order(TimeMs start, TimeMs hours, const char* side, int gpus, const char* price) {
  return json{{"side", side}, {"gpu_model", "h100-sxm5-80gb"}, {"region", "cn-east"}, {"currency", "CNY"},
              {"starts_at", format_rfc3339(start)}, {"ends_at", format_rfc3339(start + hours * kHour)},
              {"gpus", gpus}, {"price_per_gpu_hour", price}};
}

// Micro-units of an exact decimal amount ("-12.345678").
int64_t micros(const json& amount) { return Money::parse(amount.get<std::string>(), Currency::kCNY).value().micros(); }

// The lines of the one invoice section of contract `name` in acme's invoice over [from, to).
json section(const ServerProcess& s, const std::string& name, TimeMs from, TimeMs to) {
  json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&from=" + format_rfc3339(from) + "&to=" + format_rfc3339(to)).body;
  for (const auto& sec : inv["sections"])
    if (sec["contract"] == name) return sec;
  ADD_FAILURE() << "no section of contract " << name << ": " << inv.dump();
  return json::object();
}

// Supplier dc with these 8-GPU nodes and the offer that sells them (CNY, cn-east); tenants acme and
// beta (CNY) with a project each.
void world(const ServerProcess& s, std::initializer_list<const char*> nodes) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  for (const char* n : nodes) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", n)), n);
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  acme_and_beta(s);
}

json line_of(const json& sec, const std::string& rule) {
  for (const auto& l : sec["lines"])
    if (l["rule"] == rule) return l;
  return json();
}

TEST(MarketSettlement, AFillIsAReservationAndACommitmentAJobRunsInsideAndADefaultIsCompensated) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  for (const char* n : {"gpn1", "gpn2"}) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", n)), n);
  acme_and_beta(s);
  const std::string dc = make_user_token(s, "dc-ops", "supplier", "", "dc");
  const std::string acme = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  const std::string beta = make_user_token(s, "beta-admin", "tenant_admin", "beta");
  const TimeMs this_hour = SystemClock().now() / kHour * kHour;

  // Without an offer that sells its nodes in the book's currency the supplier cannot sell: a trade
  // could not be billed.
  Resp no_offer = s.req("POST", "/api/v1/market-orders", dc, order(this_hour, 2, "sell", 8, "12.00"));
  EXPECT_EQ(no_offer.status, 422) << no_offer.describe();
  EXPECT_NE(no_offer.reason_for("currency").find("no offer"), std::string::npos) << no_offer.describe();
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");  // on-demand CNY 17.50

  // A trade for this hour and the next: 8 GPUs at 12.00, i.e. one whole node.
  expect_2xx(s.req("POST", "/api/v1/market-orders", dc, order(this_hour, 2, "sell", 8, "12.00")), "sell");
  Resp buy = s.req("POST", "/api/v1/market-orders", acme, order(this_hour, 2, "buy", 8, "12.50"));
  ASSERT_EQ(buy.status, 201) << buy.describe();
  ASSERT_EQ(buy.body["trades"].size(), 1u) << buy.describe();
  const std::string trade_id = buy.body["trades"][0];
  json trade = s.req("GET", "/api/v1/market-trades/" + trade_id, acme).body;
  EXPECT_EQ(trade["state"], "settled") << trade.dump();
  const json st = trade["settlement"];
  EXPECT_EQ(st["state"], "settled");
  EXPECT_EQ(st["delivered_gpus"], 8);
  EXPECT_EQ(st["offer"], "h100");
  EXPECT_EQ(st["contract"], "market-dc-cny") << "a new contract: acme had none with dc";
  ASSERT_EQ(st["nodes"].size(), 1u) << st.dump();
  EXPECT_TRUE(st["defaults"].empty());

  // The reservation: the node, the window, the tenant; the tenant's users read it.
  const json rsv = s.req("GET", "/api/v1/reservations/" + st["reservation_id"].get<std::string>(), acme).body;
  EXPECT_EQ(rsv["starts_at"], format_rfc3339(this_hour)) << rsv.dump();
  EXPECT_EQ(rsv["ends_at"], format_rfc3339(this_hour + 2 * kHour));
  EXPECT_EQ(rsv["node_ids"], st["node_ids"]);
  // The commitment: the window at the trade price (the resting sell's 12.00), naming the trade.
  const json contract = s.req("GET", "/api/v1/contracts/" + st["contract_id"].get<std::string>(), acme).body;
  ASSERT_EQ(contract["commitments"].size(), 1u) << contract.dump();
  const json& cm = contract["commitments"][0];
  EXPECT_EQ(cm["price_per_gpu_hour"], "12.00");
  EXPECT_EQ(cm["gpus"], 8);
  EXPECT_EQ(cm["trade"], trade_id);
  EXPECT_EQ(cm["ends_at"], format_rfc3339(this_hour + 2 * kHour));
  EXPECT_FALSE(cm.contains("term_months"));
  // The reserved node is sold for the window: the supplier can sell only the other node now.
  Resp too_much = s.req("POST", "/api/v1/market-orders", dc, order(this_hour, 2, "sell", 9, "13"));
  EXPECT_NE(too_much.reason_for("gpus").find("can deliver 8 more"), std::string::npos) << too_much.describe();

  // A job of acme runs inside the reservation, under the market contract.
  json job = job_doc("vision", "inside");
  job["gpus_per_worker"] = 8;
  job["expected_duration_seconds"] = 2;
  const std::string jid = expect_2xx(s.req("POST", "/api/v1/jobs", acme, job), "job").body.at("id");
  wait_for(s, "/api/v1/jobs/" + jid, [](const json& j) { return j["status"]["state"] == "succeeded"; });
  json run;
  const json runs = s.admin("GET", "/api/v1/allocations?state=closed").body.at("items");
  for (const auto& a : runs)
    if (a["job_id"] == jid) run = a;
  ASSERT_FALSE(run.is_null()) << runs.dump();
  EXPECT_EQ(run["placement"][0]["node_id"], st["node_ids"][0]) << run.dump();
  EXPECT_EQ(run["contract_id"], st["contract_id"]) << run.dump();

  // Its invoice: the commitment at the trade price, whether used or not, up to now; the job's GPU
  // time covered by it (nothing more to pay); the invoice equals its lines.
  json sec = section(s, "market-dc-cny", this_hour, this_hour + 2 * kHour);
  const json commit = line_of(sec, "market_commitment");
  ASSERT_FALSE(commit.is_null()) << sec.dump();
  EXPECT_EQ(commit["unit_price"], "12.00");
  EXPECT_EQ(commit["kind"], "commitment");
  const json covered = line_of(sec, "reserved_covered");
  ASSERT_FALSE(covered.is_null()) << sec.dump();
  EXPECT_EQ(covered["job"], "inside");
  EXPECT_EQ(covered["amount"], "0.00");
  EXPECT_TRUE(line_of(sec, "on_demand").is_null()) << sec.dump();
  int64_t sum = 0;
  for (const auto& l : sec["lines"]) sum += micros(l["amount"]);
  EXPECT_EQ(sum, micros(sec["totals"]["total"])) << sec.dump();

  // The default: only the seller (or an operator) may record it; a tenant may not.
  const std::string default_path = "/api/v1/market-trades/" + trade_id + "/default";
  EXPECT_EQ(s.req("POST", default_path, acme, json{{"reason", "x"}}).status, 403);
  Resp no_reason = s.req("POST", default_path, dc, json::object());
  EXPECT_NE(no_reason.reason_for("reason"), "") << no_reason.describe();
  Resp too_many = s.req("POST", default_path, dc, json{{"gpus", 9}, {"reason", "gpn1 failed"}});
  EXPECT_NE(too_many.reason_for("gpus"), "") << too_many.describe();
  Resp outside = s.req("POST", default_path, dc, json{{"from", format_rfc3339(this_hour + 3 * kHour)}, {"reason", "late"}});
  EXPECT_NE(outside.reason_for("from"), "") << outside.describe();
  // From the window's start the seller delivers 4 of the 8 GPUs only.
  Resp half = s.req("POST", default_path, dc,
                    json{{"gpus", 4}, {"from", format_rfc3339(this_hour)}, {"reason", "gpn1 lost 4 GPUs"}});
  ASSERT_EQ(half.status, 200) << half.describe();
  EXPECT_EQ(half.body["state"], "defaulted");
  EXPECT_EQ(half.body["settlement"]["defaults"].size(), 1u);
  // At most the 4 still delivered can default on top.
  EXPECT_NE(s.req("POST", default_path, dc, json{{"gpus", 5}, {"reason", "more"}}).reason_for("gpus").find("only 4"),
            std::string::npos);

  // The compensation line: the undelivered 4 GPUs from the window's start to the period's end, at
  // the trade price, refunded plus the offer template's 200% outage compensation (300% in all).
  sec = section(s, "market-dc-cny", this_hour, this_hour + 2 * kHour);
  const json credit = line_of(sec, "sla_market_default");
  ASSERT_FALSE(credit.is_null()) << sec.dump();
  EXPECT_EQ(credit["kind"], "credit");
  EXPECT_NE(credit["description"].get<std::string>().find(trade_id), std::string::npos) << credit.dump();
  const int64_t commit_micros = micros(commit["amount_exact"]);
  const int64_t credit_micros = micros(credit["amount_exact"]);
  // Both run to the period's end (now, when the invoice is made): the credit is 3 × half the
  // commitment's fee, within each line's rounding.
  EXPECT_LT(credit_micros, 0);
  const json commit2 = line_of(sec, "market_commitment");
  const int64_t fee_half = micros(commit2["amount_exact"]) / 2;
  EXPECT_NEAR(static_cast<double>(-credit_micros), 3.0 * static_cast<double>(fee_half), 2.0) << sec.dump();
  EXPECT_GE(micros(commit2["amount_exact"]), commit_micros);
  sum = 0;
  for (const auto& l : sec["lines"]) sum += micros(l["amount"]);
  EXPECT_EQ(sum, micros(sec["totals"]["total"])) << sec.dump();

  // The rest defaults too: nothing is delivered from now, so the reservation ends now and the
  // node can be sold again for the rest of the window.
  Resp rest = s.req("POST", default_path, dc, json{{"reason", "gpn1 failed"}});
  ASSERT_EQ(rest.status, 200) << rest.describe();
  const json rsv2 = s.req("GET", "/api/v1/reservations/" + st["reservation_id"].get<std::string>(), acme).body;
  EXPECT_LT(parse_rfc3339(rsv2["ends_at"].get<std::string>(), "ends_at").value(), this_hour + 2 * kHour) << rsv2.dump();
  const json contract2 = s.req("GET", "/api/v1/contracts/" + st["contract_id"].get<std::string>(), acme).body;
  EXPECT_EQ(contract2["commitments"][0]["defaults"].size(), 2u) << contract2.dump();
  EXPECT_EQ(s.req("POST", default_path, dc, json{{"reason", "again"}}).status, 422);

  // A seller short of nodes at settlement defaults at once: tomorrow it offers both nodes, then one
  // of them leaves service before beta buys; the trade reserves the node left and the other 8 GPUs
  // are a default over the whole window.
  const TimeMs tomorrow = (this_hour / (24 * kHour) + 1) * 24 * kHour;
  expect_2xx(s.req("POST", "/api/v1/market-orders", dc, order(tomorrow, 4, "sell", 16, "11")), "sell 16");
  const std::string other = st["nodes"][0] == "gpn1" ? "gpn2" : "gpn1";
  json node = node_doc("dc", other);
  node["state"] = "drained";
  Resp drained = s.admin("PUT", "/api/v1/nodes/" + other, node);
  ASSERT_EQ(drained.status, 200) << drained.describe();
  Resp short_buy = s.req("POST", "/api/v1/market-orders", beta, order(tomorrow, 4, "buy", 16, "11"));
  ASSERT_EQ(short_buy.status, 201) << short_buy.describe();
  const json t2 = s.req("GET", "/api/v1/market-trades/" + short_buy.body["trades"][0].get<std::string>(), beta).body;
  EXPECT_EQ(t2["state"], "defaulted") << t2.dump();
  EXPECT_EQ(t2["settlement"]["delivered_gpus"], 8);
  ASSERT_EQ(t2["settlement"]["defaults"].size(), 1u);
  EXPECT_EQ(t2["settlement"]["defaults"][0]["gpus"], 8);
  EXPECT_EQ(t2["settlement"]["defaults"][0]["from"], format_rfc3339(tomorrow));

  // Kill -9: the settlement is in the store with the trade.
  s.kill9();
  s.start();
  EXPECT_EQ(s.req("GET", "/api/v1/market-trades/" + trade_id, acme).body["settlement"]["defaults"].size(), 2u);
  EXPECT_EQ(s.admin("GET", "/api/v1/reservations?tenant=beta").body["items"].size(), 1u);
}

// A reserved node out of service during its window is capacity not delivered: the scheduler records
// the default from then, ends it when the node is back, once (a restart does not record it twice),
// and the invoice refunds those GPU-hours with 200% compensation.
// dc sells and acme buys `gpus` GPUs at 12.00 for this hour and the next: the trade's path.
std::string trade_two_hours(const ServerProcess& s, const std::string& dc, const std::string& acme, TimeMs this_hour,
                            int gpus) {
  expect_2xx(s.req("POST", "/api/v1/market-orders", dc, order(this_hour, 2, "sell", gpus, "12.00")), "sell");
  const Resp buy = expect_2xx(s.req("POST", "/api/v1/market-orders", acme, order(this_hour, 2, "buy", gpus, "12.00")), "buy");
  return "/api/v1/market-trades/" + buy.body["trades"][0].get<std::string>();
}

// Node `name` of dc out of service (unavailable: a PSU failure).
void take_down(const ServerProcess& s, const char* name) {
  json down = node_doc("dc", name);
  down["state"] = "unavailable";
  down["state_reason"] = "PSU failure";
  expect_2xx(s.admin("PUT", std::string("/api/v1/nodes/") + name, down), "node down");
}

// The world with node gpn1 alone, and a two-hour trade of its 8 GPUs from this hour: the trade's path.
std::string one_node_trade(const ServerProcess& s, TimeMs this_hour) {
  world(s, {"gpn1"});
  const std::string dc = make_user_token(s, "dc-ops", "supplier", "", "dc");
  const std::string acme = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  return trade_two_hours(s, dc, acme, this_hour, 8);
}

TEST(MarketSettlement, ANodeOutOfServiceDuringTheWindowIsADefaultUntilItIsBack) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  const TimeMs this_hour = SystemClock().now() / kHour * kHour;
  const std::string trade_path = one_node_trade(s, this_hour);
  const std::string node_id = s.admin("GET", trade_path).body["settlement"]["node_ids"][0];

  take_down(s, "gpn1");
  json t = wait_for(s, trade_path, [](const json& j) { return j["settlement"]["defaults"].size() == 1; });
  const json d = t["settlement"]["defaults"][0];
  EXPECT_EQ(t["state"], "defaulted");
  EXPECT_EQ(d["gpus"], 8);
  EXPECT_EQ(d["node"], node_id);
  EXPECT_EQ(d["to"], format_rfc3339(this_hour + 2 * kHour));
  EXPECT_NE(d["reason"].get<std::string>().find("gpn1 out of service (unavailable, PSU failure)"), std::string::npos) << d.dump();
  s.kill9();  // the scheduler reads the node's state again after a restart: no second default
  s.start();
  expect_2xx(s.admin("GET", "/healthz"), "up");
  json up = node_doc("dc", "gpn1");
  expect_2xx(s.admin("PUT", "/api/v1/nodes/gpn1", up), "gpn1 back");
  t = wait_for(s, trade_path, [&](const json& j) {
    return j["settlement"]["defaults"].size() == 1 && j["settlement"]["defaults"][0]["to"] != format_rfc3339(this_hour + 2 * kHour);
  });
  const json closed = t["settlement"]["defaults"][0];
  const TimeMs from = parse_rfc3339(closed["from"].get<std::string>(), "from").value();
  const TimeMs to = parse_rfc3339(closed["to"].get<std::string>(), "to").value();
  ASSERT_LT(from, to);
  const json contract = s.admin("GET", "/api/v1/contracts/" + t["settlement"]["contract_id"].get<std::string>()).body;
  EXPECT_EQ(contract["commitments"][0]["defaults"][0]["to"], closed["to"]) << contract.dump();

  // The credit: 8 GPUs × (to − from) at 12.00, refunded plus 200%.
  const json sec = section(s, "market-dc-cny", this_hour, this_hour + 2 * kHour);
  const json credit = line_of(sec, "sla_market_default");
  ASSERT_FALSE(credit.is_null()) << sec.dump();
  const __int128 fee_num = static_cast<__int128>(12'000'000) * 8 * (to - from);  // ÷ 3,600,000 ms
  const int64_t base = static_cast<int64_t>((fee_num + 1'800'000) / 3'600'000);
  EXPECT_NEAR(static_cast<double>(micros(credit["quantity"])), static_cast<double>(base), 1.0) << credit.dump();
  EXPECT_NEAR(static_cast<double>(-micros(credit["amount_exact"])), 3.0 * static_cast<double>(fee_num) / 3'600'000.0, 1.0)
      << credit.dump();
}

// A commitment holds at most 1,000 defaults: a node that keeps going down past that reopens its
// latest default instead of adding one the contract could no longer decode (which would have
// failed the scheduler's every pass, and the tenant's invoices).
TEST(MarketSettlement, ANodeDownAThousandTimesReopensItsLatestDefault) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  const TimeMs this_hour = SystemClock().now() / kHour * kHour;
  const std::string trade_path = one_node_trade(s, this_hour);
  const json settled = s.admin("GET", trade_path).body;
  const std::string node_id = settled["settlement"]["node_ids"][0];
  const std::string contract = "/api/v1/contracts/" + settled["settlement"]["contract_id"].get<std::string>();
  take_down(s, "gpn1");
  wait_for(s, trade_path, [](const json& j) { return j["settlement"]["defaults"].size() == 1; });
  expect_2xx(s.admin("PUT", "/api/v1/nodes/gpn1", node_doc("dc", "gpn1")), "gpn1 back");
  json c = wait_for(s, contract, [&](const json& j) {
    return j["commitments"][0]["defaults"].size() == 1 &&
           j["commitments"][0]["defaults"][0]["to"] != format_rfc3339(this_hour + 2 * kHour);
  });
  // 999 earlier outages of a millisecond each, written into the stored contract: 1,000 in all.
  json all = json::array();
  for (int i = 0; i < 999; ++i)
    all.push_back({{"gpus", 1}, {"from", format_rfc3339(this_hour + i)}, {"to", format_rfc3339(this_hour + i + 1)},
                   {"reason", "flap"}, {"node", node_id}});
  all.push_back(c["commitments"][0]["defaults"][0]);
  edit_database(s, "UPDATE objects SET body = json_set(body, '$.commitments[0].defaults', json('" + all.dump() +
                       "')) WHERE kind = 'contracts' AND id = '" + c["id"].get<std::string>() + "'");
  ASSERT_EQ(s.admin("GET", contract).body["commitments"][0]["defaults"].size(), 1000u);
  const std::string last_from = all.back()["from"];
  take_down(s, "gpn1");
  c = wait_for(s, contract, [&](const json& j) {
    return j.contains("commitments") && j["commitments"][0]["defaults"].back()["to"] == format_rfc3339(this_hour + 2 * kHour);
  });
  EXPECT_EQ(c["commitments"][0]["defaults"].size(), 1000u) << "reopened, not added";
  EXPECT_EQ(c["commitments"][0]["defaults"].back()["from"], last_from);
  const json t = s.admin("GET", trade_path).body;
  EXPECT_EQ(t["settlement"]["defaults"].back()["to"], format_rfc3339(this_hour + 2 * kHour)) << t.dump();
  EXPECT_EQ(s.admin("GET", "/readyz").body["checks"].value("records", ""), "ok") << s.admin("GET", "/readyz").body.dump();
}

// A contract holds at most 1,000 commitments: when the buyer's market contract with the seller is
// full, the next trade's commitment opens a new one (the trade failed whole before, and every
// later one between them too).
TEST(MarketSettlement, AFullContractIsPassedOverForANewOne) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  const TimeMs this_hour = SystemClock().now() / kHour * kHour;
  const std::string first = one_node_trade(s, this_hour);
  const json settled = s.admin("GET", first).body;
  ASSERT_EQ(settled["settlement"]["contract"], "market-dc-cny") << settled.dump();
  const std::string contract = "/api/v1/contracts/" + settled["settlement"]["contract_id"].get<std::string>();
  const json c = s.admin("GET", contract).body;
  json all = c["commitments"];
  for (int i = 0; all.size() < 1000; ++i)
    all.push_back({{"name", "filler-" + std::to_string(i)}, {"offer", all[0]["offer"]}, {"gpus", 1}, {"term_months", 1},
                   {"starts_at", format_rfc3339(this_hour)}});
  edit_database(s, "UPDATE objects SET body = json_set(body, '$.commitments', json('" + all.dump() +
                       "')) WHERE kind = 'contracts' AND id = '" + c["id"].get<std::string>() + "'");
  ASSERT_EQ(s.admin("GET", contract).body["commitments"].size(), 1000u);
  const std::string dc = make_user_token(s, "dc-ops-2", "supplier", "", "dc");
  const std::string acme = make_user_token(s, "acme-admin-2", "tenant_admin", "acme");
  const std::string next = trade_two_hours(s, dc, acme, this_hour + 2 * kHour, 8);
  const json t = s.admin("GET", next).body;
  EXPECT_EQ(t["state"], "settled") << t.dump();
  EXPECT_EQ(t["settlement"]["contract"], "market-dc-cny-2") << t.dump();
  EXPECT_EQ(s.admin("GET", contract).body["commitments"].size(), 1000u);
}

// A seller's default of everything still delivered while one of the trade's nodes is out of
// service keeps the reservation: that node delivers again once it is back (its default ends), and
// the buyer must still hold it then, not be billed for GPUs without a reserved node.
TEST(MarketSettlement, ADefaultDuringAnOutageKeepsTheNodesThatComeBack) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s, {"gpn1", "gpn2"});
  const std::string dc = make_user_token(s, "dc-ops", "supplier", "", "dc");
  const std::string acme = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  const TimeMs this_hour = SystemClock().now() / kHour * kHour;
  const std::string trade_path = trade_two_hours(s, dc, acme, this_hour, 16);
  const json settled = s.admin("GET", trade_path).body;
  ASSERT_EQ(settled["settlement"]["node_ids"].size(), 2u) << settled.dump();
  const std::string reservation = "/api/v1/reservations/" + settled["settlement"]["reservation_id"].get<std::string>();
  const std::string ends = s.admin("GET", reservation).body["ends_at"];

  take_down(s, "gpn1");
  wait_for(s, trade_path, [](const json& j) { return j["settlement"]["defaults"].size() == 1; });
  // The seller defaults all it still delivers: gpn2's 8 GPUs.
  Resp d = s.req("POST", trade_path + "/default", dc, json{{"reason", "gpn2 is needed elsewhere"}});
  ASSERT_EQ(d.status, 200) << d.describe();
  EXPECT_EQ(d.body["settlement"]["defaults"][1]["gpus"], 8) << d.describe();
  const Resp kept = s.admin("GET", reservation);
  ASSERT_EQ(kept.status, 200) << "gpn1 comes back: the reservation must still hold it: " << kept.describe();
  EXPECT_EQ(kept.body["ends_at"], ends) << kept.describe();
}

// An operator's reservation may not take nodes a supplier's open sell order needs (it would be a
// default at settlement): 409 naming the order; nodes the sells do not need, windows they do not
// cover and the same reservation once the order is cancelled go through; a PUT is checked too.
TEST(MarketSettlement, AnOperatorReservationLeavesOpenSellsDeliverable) {
  ServerProcess s({"--firewall-interval-s", "0"});
  world(s, {"gpn1", "gpn2"});
  const std::string dc = make_user_token(s, "dc-ops", "supplier", "", "dc");
  const TimeMs h = SystemClock().now() / kHour * kHour + 24 * kHour;  // tomorrow, this hour
  const std::string sell =
      expect_2xx(s.req("POST", "/api/v1/market-orders", dc, order(h, 4, "sell", 12, "12.00")), "sell").body.at("id");
  auto rsv = [&](const char* name, std::vector<std::string> nodes, TimeMs from, TimeMs hours) {
    return json{{"name", name},
                {"tenant", "acme"},
                {"nodes", nodes},
                {"starts_at", format_rfc3339(from)},
                {"ends_at", format_rfc3339(from + hours * kHour)}};
  };
  // 16 GPUs, 12 offered: either node alone leaves 8, short of 12.
  Resp taken = s.admin("POST", "/api/v1/reservations", rsv("r1", {"gpn1"}, h + kHour, 1));
  EXPECT_EQ(taken.status, 409) << taken.describe();
  EXPECT_NE(taken.body.value("detail", "").find("open sell order " + sell + " (12 GPUs"), std::string::npos)
      << taken.describe();
  // A window the sell does not cover is free to reserve; so is the node once the sell needs less.
  const std::string later =
      expect_2xx(s.admin("POST", "/api/v1/reservations", rsv("r1", {"gpn1"}, h + 4 * kHour, 2)), "later").body.at("id");
  expect_2xx(s.req("POST", "/api/v1/market-orders/" + sell + "/replace", dc,
                   json{{"price_per_gpu_hour", "12.00"}, {"gpus", 8}}),
             "sell 8");
  // A PUT moving that reservation into the window is checked as a new one would be: gpn1 is free
  // for it now (gpn2 still delivers the 8), gpn2 as well then is not.
  expect_2xx(s.admin("PUT", "/api/v1/reservations/" + later, rsv("r1", {"gpn1"}, h, 4)), "r1 moved in");
  Resp both = s.admin("POST", "/api/v1/reservations", rsv("r2", {"gpn2"}, h + 3 * kHour, 1));
  EXPECT_EQ(both.status, 409) << both.describe();
  Resp moved = s.admin("PUT", "/api/v1/reservations/" + later, rsv("r1", {"gpn1", "gpn2"}, h, 4));
  EXPECT_EQ(moved.status, 409) << moved.describe();
  // In 简体中文 too.
  Resp zh = s.admin("POST", "/api/v1/reservations?lang=zh", rsv("r2", {"gpn2"}, h + 3 * kHour, 1));
  EXPECT_NE(zh.body.value("detail", "").find("未成交卖单"), std::string::npos) << zh.describe();
  // Cancelled, the sell needs nothing: the reservation goes through, and the supplier can now
  // offer only what is left.
  const std::string cur = s.admin("GET", "/api/v1/market-orders/" + sell).body.value("replaced_by", sell);
  expect_2xx(s.req("POST", "/api/v1/market-orders/" + cur + "/cancel", dc, json::object()), "cancel");
  expect_2xx(s.admin("POST", "/api/v1/reservations", rsv("r2", {"gpn2"}, h + 3 * kHour, 1)), "r2");
  Resp none_left = s.req("POST", "/api/v1/market-orders", dc, order(h, 4, "sell", 1, "12.00"));
  EXPECT_EQ(none_left.status, 422) << none_left.describe();
}

// An order for `n` whole nodes of 8 GPUs, this hour and the next.
json node_order(TimeMs this_hour, const char* side, int n, const char* price) {
  json o = order(this_hour, 2, side, 1, price);
  o.erase("gpus");
  o["node_gpus"] = 8;
  o["nodes"] = n;
  return o;
}

// The world with these nodes, dc's, acme's and beta's tokens, and acme's trade for two of dc's
// whole nodes at 10.00 this hour and the next.
struct TwoNodes {
  std::string dc, acme, beta, trade;
  TimeMs this_hour = 0;
};
TwoNodes acme_buys_two_nodes(const ServerProcess& s, std::initializer_list<const char*> node_names) {
  world(s, node_names);
  TwoNodes h{make_user_token(s, "dc-ops", "supplier", "", "dc"), make_user_token(s, "acme-admin", "tenant_admin", "acme"),
             make_user_token(s, "beta-admin", "tenant_admin", "beta"), "", SystemClock().now() / kHour * kHour};
  expect_2xx(s.req("POST", "/api/v1/market-orders", h.dc, node_order(h.this_hour, "sell", 2, "10.00")), "sell 2 nodes");
  h.trade = expect_2xx(s.req("POST", "/api/v1/market-orders", h.acme, node_order(h.this_hour, "buy", 2, "10.00")), "acme buys")
                .body["trades"][0];
  return h;
}

// A resting resale whose supplier no longer has an offer for the book (the resale is billed under
// it) is undeliverable like a seller's own order: a buy that crosses it cancels it, saying why,
// and goes on without it (it was a 422 on currency for every such buy, and for a cancel that
// would let an all-or-none order fill against it).
TEST(MarketSettlement, AResaleWhoseSupplierNoLongerOffersTheBookLeavesIt) {
  ServerProcess s({"--firewall-interval-s", "0"});
  const TwoNodes h = acme_buys_two_nodes(s, {"gpn1", "gpn2"});
  Resp resell = s.req("POST", "/api/v1/market-orders", h.acme, node_order(h.this_hour, "sell", 1, "12.00"));
  ASSERT_EQ(resell.status, 201) << resell.describe();
  json offer = offer_doc("dc", "h100");
  offer["node_selector"] = {{"node_names", {"gpn9"}}};  // sells none of dc's nodes
  expect_2xx(s.admin("PUT", "/api/v1/offers/h100", offer), "offer narrowed");
  Resp buy = s.req("POST", "/api/v1/market-orders", h.beta, node_order(h.this_hour, "buy", 1, "12.50"));
  ASSERT_EQ(buy.status, 201) << buy.describe();
  EXPECT_TRUE(buy.body["trades"].empty()) << buy.describe();
  EXPECT_EQ(buy.body["state"], "open") << buy.describe();
  const json gone = s.req("GET", "/api/v1/market-orders/" + resell.body["id"].get<std::string>(), h.acme).body;
  EXPECT_EQ(gone["state"], "cancelled") << gone.dump();
  EXPECT_NE(gone.value("reason", "").find("no offer for the book"), std::string::npos) << gone.dump();
}

// A commitment holds at most 1,000 resales (a contract with more does not decode): a purchase
// already resold in that many pieces resells no more — its nodes are not offered, rather than
// making the buyer's trade fail when it settles and the resting resale block the book.
TEST(MarketSettlement, APurchaseResoldAThousandTimesResellsNoMore) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  const TwoNodes h = acme_buys_two_nodes(s, {"gpn1", "gpn2"});
  const json first = s.admin("GET", "/api/v1/market-trades/" + h.trade).body;
  const std::string contract = first["settlement"]["contract_id"];
  const json k = s.admin("GET", "/api/v1/contracts/" + contract).body;
  size_t at = 0;
  while (at < k["commitments"].size() && k["commitments"][at].value("trade", "") != h.trade) ++at;
  ASSERT_LT(at, k["commitments"].size()) << k.dump();
  auto set_resales = [&](int count) {
    json resales = json::array();
    for (int i = 0; i < count; ++i)
      resales.push_back({{"gpus", 1},
                         {"from", format_rfc3339(h.this_hour)},
                         {"to", format_rfc3339(h.this_hour + kHour)},
                         {"price_per_gpu_hour", "12.00"},
                         {"trade", "trd_" + std::to_string(1000000000000000 + i)}});
    edit_database(s, "UPDATE objects SET body = json_set(body, '$.commitments[" + std::to_string(at) +
                         "].resales', json('" + resales.dump() + "')) WHERE id = '" + contract + "'");
  };
  // One resale left, two nodes held: a resale of both to two bids in one match sells one node —
  // the second trade is not made (it used to settle delivering nothing, a default blamed on the
  // supplier).
  set_resales(999);
  expect_2xx(s.req("POST", "/api/v1/market-orders", h.beta, node_order(h.this_hour, "buy", 1, "12.50")), "bid 1");
  expect_2xx(s.req("POST", "/api/v1/market-orders", h.beta, node_order(h.this_hour, "buy", 1, "12.40")), "bid 2");
  Resp both = s.req("POST", "/api/v1/market-orders", h.acme, node_order(h.this_hour, "sell", 2, "12.00"));
  ASSERT_EQ(both.status, 201) << both.describe();
  EXPECT_EQ(both.body["trades"].size(), 1u) << both.describe();
  for (const json& id : both.body["trades"])
    EXPECT_EQ(s.admin("GET", "/api/v1/market-trades/" + id.get<std::string>()).body["state"], "settled");
  // Full: its last node is not offered at all.
  set_resales(1000);
  ASSERT_EQ(s.admin("GET", "/api/v1/contracts/" + contract).status, 200) << "1,000 resales still decode";
  Resp resell = s.req("POST", "/api/v1/market-orders", h.acme, node_order(h.this_hour, "sell", 1, "12.00"));
  EXPECT_EQ(resell.status, 422) << resell.describe();
  EXPECT_NE(resell.reason_for("nodes"), "") << resell.describe();
}

// Resale: a tenant resells a whole node it holds in the node book; the buyer gets that node's
// reservation and a commitment at the resale price; the reseller keeps paying its own commitment,
// is credited the proceeds, and no longer has the node (nor its defaults).
TEST(MarketSettlement, ATenantResellsAWholeNodeItHolds) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  const TwoNodes h = acme_buys_two_nodes(s, {"gpn1", "gpn2", "gpn3"});
  const std::string &dc = h.dc, &acme = h.acme, &beta = h.beta, &t1 = h.trade;
  const TimeMs this_hour = h.this_hour;
  auto nodes = [&](const char* side, int n, const char* price) { return node_order(this_hour, side, n, price); };
  const json first = s.admin("GET", "/api/v1/market-trades/" + t1).body;
  ASSERT_EQ(first["settlement"]["node_ids"].size(), 2u) << first.dump();

  // Not in a GPU book; not more than it holds.
  json gpu_book = order(this_hour, 2, "sell", 8, "12");
  EXPECT_NE(s.req("POST", "/api/v1/market-orders", acme, gpu_book).reason_for("node_gpus"), "");
  EXPECT_NE(s.req("POST", "/api/v1/market-orders", acme, nodes("sell", 3, "12")).reason_for("nodes").find("holds 2 more"),
            std::string::npos);
  // acme resells one node at 12.00; beta takes it.
  Resp resell = s.req("POST", "/api/v1/market-orders", acme, nodes("sell", 1, "12.00"));
  ASSERT_EQ(resell.status, 201) << resell.describe();
  EXPECT_NE(s.req("POST", "/api/v1/market-orders", acme, nodes("sell", 2, "12")).reason_for("nodes").find("holds 1 more"),
            std::string::npos) << "the open resale counts";
  EXPECT_EQ(s.req("GET", "/api/v1/market-orders/" + resell.body["id"].get<std::string>(), dc).status, 404)
      << "a tenant's resale order is not the supplier's";
  Resp bought = s.req("POST", "/api/v1/market-orders", beta, nodes("buy", 1, "12.50"));
  ASSERT_EQ(bought.status, 201) << bought.describe();
  ASSERT_EQ(bought.body["trades"].size(), 1u) << bought.describe();
  const json t2 = s.admin("GET", "/api/v1/market-trades/" + bought.body["trades"][0].get<std::string>()).body;
  EXPECT_EQ(t2["price_per_gpu_hour"], "12.00");
  EXPECT_EQ(t2["reseller_tenant_id"], resell.body["tenant_id"]);
  EXPECT_EQ(t2["supplier_id"], first["supplier_id"]) << "the capacity is still the supplier's";
  ASSERT_EQ(t2["settlement"]["node_ids"].size(), 1u) << t2.dump();
  const std::string moved = t2["settlement"]["node_ids"][0];
  // The node moved from acme's reservation to beta's.
  const json acme_rsv = s.admin("GET", "/api/v1/reservations/" + first["settlement"]["reservation_id"].get<std::string>()).body;
  ASSERT_EQ(acme_rsv["node_ids"].size(), 1u) << acme_rsv.dump();
  EXPECT_NE(acme_rsv["node_ids"][0], moved);
  EXPECT_EQ(s.admin("GET", "/api/v1/reservations/" + t2["settlement"]["reservation_id"].get<std::string>()).body["node_ids"][0], moved);
  EXPECT_EQ(s.admin("GET", "/api/v1/market-trades/" + t1).body["settlement"]["resold_node_ids"][0], moved);

  // Money: acme still pays its 16 GPUs at 10.00 and is credited 8 GPUs at 12.00 (never capped);
  // beta pays 8 GPUs at 12.00 — each over the same window up to now.
  const json a = section(s, "market-dc-cny", this_hour, this_hour + 2 * kHour);
  const json commit = line_of(a, "market_commitment"), proceeds = line_of(a, "market_resale");
  ASSERT_FALSE(proceeds.is_null()) << a.dump();
  EXPECT_EQ(commit["unit_price"], "10.00");
  EXPECT_NEAR(static_cast<double>(-micros(proceeds["amount_exact"])), 0.6 * static_cast<double>(micros(commit["amount_exact"])), 2.0)
      << a.dump();
  json inv = s.admin("GET", "/api/v1/invoices?tenant=beta&from=" + format_rfc3339(this_hour) + "&to=" + format_rfc3339(this_hour + 2 * kHour)).body;
  ASSERT_EQ(inv["sections"].size(), 1u) << inv.dump();
  EXPECT_EQ(line_of(inv["sections"][0], "market_commitment")["unit_price"], "12.00") << inv.dump();

  // The moved node out of service is beta's default now, not acme's.
  json down = node_doc("dc", s.admin("GET", "/api/v1/nodes/" + moved).body["name"]);
  down["state"] = "unavailable";
  expect_2xx(s.admin("PUT", "/api/v1/nodes/" + moved, down), "node down");
  const json t2_down = wait_for(s, "/api/v1/market-trades/" + t2["id"].get<std::string>(),
                                [](const json& j) { return j["settlement"]["defaults"].size() == 1; });
  EXPECT_TRUE(s.admin("GET", "/api/v1/market-trades/" + t1).body["settlement"]["defaults"].empty());
  // It passes back along the resale (docs/market.md#resold-nodes): beta's compensation is figured
  // at the 10.00 the supplier sold the node at, not the 12.00 beta paid acme; acme's proceeds for
  // the time are not acme's, and its own 10.00 for it is refunded.
  EXPECT_EQ(t2_down["settlement"]["defaults"][0]["compensation_price_per_gpu_hour"], "10.00") << t2_down.dump();
  EXPECT_EQ(t2_down["settlement"]["defaults"][0]["compensation_pct"], 200)
      << "acme's contract's, the node's first buyer";
  const std::string acme_contract = "/api/v1/contracts/" + first["settlement"]["contract_id"].get<std::string>();
  const json resold = s.admin("GET", acme_contract).body["commitments"][0]["resales"][0];
  ASSERT_EQ(resold["undelivered"].size(), 1u) << resold.dump();
  EXPECT_EQ(resold["undelivered"][0]["node"], moved);
  EXPECT_EQ(resold["undelivered"][0]["gpus"], 8);
  const json a_down = section(s, "market-dc-cny", this_hour, this_hour + 2 * kHour);
  const json refund = line_of(a_down, "market_resale_undelivered");
  ASSERT_FALSE(refund.is_null()) << a_down.dump();
  EXPECT_EQ(refund["unit_price"], "-1") << "the fee at acme's own price, refunded";
  EXPECT_EQ(line_of(a_down, "market_resale")["description_message"]["code"], "invoice_line.market_resale_less")
      << "the proceeds less those of the time the node was out: " << a_down.dump();
  // A count of GPUs cannot be recorded as a resale's default: it is its node's.
  EXPECT_EQ(s.req("POST", "/api/v1/market-trades/" + t2["id"].get<std::string>() + "/default", dc,
                  json{{"reason", "not delivered"}})
                .status,
            409);

  // Whole nodes bought in the book of GPUs are resold in the node book too: beta's 8 GPUs (gpn3
  // whole) make one; its node from acme, out of service (a default open on that trade), is not
  // resold: its buyer would pay for a node that is not there.
  json gpu_sell = order(this_hour, 2, "sell", 8, "11.00");
  expect_2xx(s.req("POST", "/api/v1/market-orders", dc, gpu_sell), "sell 8 GPUs");
  json gpu_buy = order(this_hour, 2, "buy", 8, "11.00");
  expect_2xx(s.req("POST", "/api/v1/market-orders", beta, gpu_buy), "beta buys 8 GPUs");
  EXPECT_NE(s.req("POST", "/api/v1/market-orders", beta, nodes("sell", 3, "12")).reason_for("nodes").find("holds 1 more"),
            std::string::npos);
  // Back in service (its default ended): it may be resold again.
  json up = node_doc("dc", s.admin("GET", "/api/v1/nodes/" + moved).body["name"]);
  expect_2xx(s.admin("PUT", "/api/v1/nodes/" + moved, up), "node back");
  wait_for(s, "/api/v1/market-trades/" + t2["id"].get<std::string>(), [&](const json& j) {
    return j["settlement"]["defaults"].size() == 1 && j["settlement"]["defaults"][0]["to"] != format_rfc3339(this_hour + 2 * kHour);
  });
  EXPECT_NE(s.admin("GET", acme_contract).body["commitments"][0]["resales"][0]["undelivered"][0]["to"],
            format_rfc3339(this_hour + 2 * kHour))
      << "the reseller's undelivered time ends with the default";
  EXPECT_NE(s.req("POST", "/api/v1/market-orders", beta, nodes("sell", 3, "12")).reason_for("nodes").find("holds 2 more"),
            std::string::npos);
}

}  // namespace
// A reseller holding nodes of two sizes (24 GPUs bought whole as a 16-GPU and an 8-GPU node)
// resells its 8-GPU node: its reservation keeps the 16-GPU one (it was left with none, and the
// supplier could sell that node again).
TEST(MarketSettlement, AResaleKeepsTheResellersNodesOfOtherSizes) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s, {"gpn1"});
  json big = node_doc("dc", "big");
  const json eight = big["gpus"];
  for (json g : eight) {
    g["index"] = g["index"].get<int>() + 8;
    std::string u = g["uuid"];
    u[4] = u[4] == 'e' ? 'f' : 'e';
    g["uuid"] = u;
    big["gpus"].push_back(g);
  }
  const std::string big_id = expect_2xx(s.admin("POST", "/api/v1/nodes", big), "16-GPU node").body["id"];
  const std::string dc = make_user_token(s, "dc-ops", "supplier", "", "dc");
  const std::string acme = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  const std::string beta = make_user_token(s, "beta-admin", "tenant_admin", "beta");
  const TimeMs this_hour = SystemClock().now() / kHour * kHour;
  expect_2xx(s.req("POST", "/api/v1/market-orders", dc, order(this_hour, 2, "sell", 24, "10.00")), "dc sells 24");
  const Resp bought =
      expect_2xx(s.req("POST", "/api/v1/market-orders", acme, order(this_hour, 2, "buy", 24, "10.00")), "acme buys 24");
  const json first = s.admin("GET", "/api/v1/market-trades/" + bought.body["trades"][0].get<std::string>()).body;
  ASSERT_EQ(first["settlement"]["node_ids"].size(), 2u) << first.dump();
  expect_2xx(s.req("POST", "/api/v1/market-orders", acme, node_order(this_hour, "sell", 1, "12.00")),
             "acme resells its 8-GPU node");
  const Resp resale =
      expect_2xx(s.req("POST", "/api/v1/market-orders", beta, node_order(this_hour, "buy", 1, "12.50")), "beta buys");
  ASSERT_EQ(resale.body["trades"].size(), 1u) << resale.describe();
  const Resp kept = s.admin("GET", "/api/v1/reservations/" + first["settlement"]["reservation_id"].get<std::string>());
  ASSERT_EQ(kept.status, 200) << kept.describe();
  EXPECT_EQ(kept.body["node_ids"], json::array({big_id})) << kept.describe();
}

// A resting resale is checked again when it would fill: once a default opens on the trade whose
// nodes it resells, the reseller holds nothing to deliver, so it makes no trade (its buyer would
// have been the supplier's default over the whole window) and is cancelled, saying why.
TEST(MarketSettlement, AResaleWhoseNodesDefaultedSinceIsCancelledNotFilled) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  const TwoNodes h = acme_buys_two_nodes(s, {"gpn1", "gpn2"});
  const std::string &acme = h.acme, &beta = h.beta, &t1 = h.trade;
  const TimeMs this_hour = h.this_hour;
  auto nodes = [&](const char* side, int n, const char* price) { return node_order(this_hour, side, n, price); };
  const std::string resale = expect_2xx(s.req("POST", "/api/v1/market-orders", acme, nodes("sell", 1, "12.00")), "resale").body["id"];
  take_down(s, "gpn1");
  wait_for(s, "/api/v1/market-trades/" + t1, [](const json& j) { return j["settlement"]["defaults"].size() == 1; });
  Resp bought = s.req("POST", "/api/v1/market-orders", beta, nodes("buy", 1, "12.50"));
  ASSERT_EQ(bought.status, 201) << bought.describe();
  EXPECT_TRUE(bought.body["trades"].empty()) << bought.describe();
  EXPECT_EQ(bought.body["state"], "open");
  const json r = s.req("GET", "/api/v1/market-orders/" + resale, acme).body;
  EXPECT_EQ(r["state"], "cancelled") << r.dump();
  EXPECT_NE(r.value("reason", "").find("reseller no longer holds"), std::string::npos) << r.dump();
}

}  // namespace gpurent::testing
