// The GPU-hour market through the real server (docs/market.md): a supplier sells what its nodes
// can deliver, tenants' admins buy; orders match in price-time priority at the resting price,
// GTC/IOC/FOK; the books' quote, depth and prints are public and carry no identities; orders and
// trades are their owners' to read; idempotency keys; cancel; a kill -9 loses no acknowledged
// order and the book after the restart is the book before.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "billing/rating_input.h"
#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

struct Market {
  ServerProcess& s;
  std::string book_query;  // ?gpu_model=…&region=…&starts_at=…&ends_at=…&currency=CNY
  json book;               // the same as order fields
  std::string dc, acme, beta, acme_member;

  json order(const std::string& side, int gpus, const std::string& price, const std::string& tif = "gtc") const {
    json o = book;
    o["side"] = side;
    o["gpus"] = gpus;
    o["price_per_gpu_hour"] = price;
    o["time_in_force"] = tif;
    return o;
  }
  Resp place(const std::string& token, const json& o) const { return s.req("POST", "/api/v1/market-orders", token, o); }
  json get(const std::string& what, const std::string& token) const {
    return s.req("GET", "/api/v1/market/" + what + book_query, token).body;
  }
};

// Tomorrow 00:00–08:00 UTC: a window of 8 whole hours.
std::pair<std::string, std::string> tomorrow_morning() {
  const TimeMs day = 24 * 3'600'000LL;
  const TimeMs start = (SystemClock().now() / day + 1) * day;
  return {format_rfc3339(start), format_rfc3339(start + 8 * 3'600'000LL)};
}

// Supplier dc with these 8-GPU nodes (cn-east) and the offer that sells them, tenants acme and
// beta, and tomorrow morning's CNY book of H100s; acme_member is not made.
Market dc_world(ServerProcess& s, std::initializer_list<const char*> nodes) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  for (const char* n : nodes) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", n)), n);
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  acme_and_beta(s);
  const auto [starts, ends] = tomorrow_morning();
  return Market{s, "?gpu_model=h100-sxm5-80gb&region=cn-east&starts_at=" + starts + "&ends_at=" + ends + "&currency=CNY",
                json{{"gpu_model", "h100-sxm5-80gb"}, {"region", "cn-east"}, {"starts_at", starts}, {"ends_at", ends}, {"currency", "CNY"}},
                make_user_token(s, "dc-ops", "supplier", "", "dc"), make_user_token(s, "acme-admin", "tenant_admin", "acme"),
                make_user_token(s, "beta-admin", "tenant_admin", "beta"), ""};
}

TEST(MarketApi, OrdersMatchAtTheRestingPriceAndTheBookIsPublicWithoutIdentities) {
  ServerProcess s;
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  for (const char* n : {"gpn1", "gpn2"}) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", n)), n);
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  acme_and_beta(s);
  const auto [starts, ends] = tomorrow_morning();
  Market m{s,
           "?gpu_model=h100-sxm5-80gb&region=cn-east&starts_at=" + starts + "&ends_at=" + ends + "&currency=CNY",
           json{{"gpu_model", "H100-SXM"}, {"region", "cn-east"}, {"starts_at", starts}, {"ends_at", ends}, {"currency", "CNY"}},
           make_user_token(s, "dc-ops", "supplier", "", "dc"),
           make_user_token(s, "acme-admin", "tenant_admin", "acme"),
           make_user_token(s, "beta-admin", "tenant_admin", "beta"),
           make_user_token(s, "acme-dev", "tenant_member", "acme")};

  // The supplier sells its two nodes' 16 GPUs in two lots; a 17th GPU it cannot deliver.
  Resp sell20 = m.place(m.dc, m.order("sell", 8, "20.00"));
  ASSERT_EQ(sell20.status, 201) << sell20.describe();
  EXPECT_EQ(sell20.body["state"], "open");
  EXPECT_EQ(sell20.body["gpu_model"], "h100-sxm5-80gb") << "the catalog id, whatever alias was given";
  EXPECT_EQ(sell20.body["window_hours"], 8);
  ASSERT_EQ(m.place(m.dc, m.order("sell", 8, "18.00")).status, 201);
  Resp more = m.place(m.dc, m.order("sell", 1, "30"));
  EXPECT_EQ(more.status, 422) << more.describe();
  EXPECT_NE(more.reason_for("gpus").find("can deliver 0 more"), std::string::npos) << more.describe();
  json q = m.get("quote", m.acme_member);
  EXPECT_TRUE(q["bid"].is_null()) << q.dump();
  EXPECT_EQ(q["ask"], (json{{"price_per_gpu_hour", "18.00"}, {"gpus", 8}, {"orders", 1}}));

  // acme bids 19 for 10: it takes the 8 at 18 (the resting price) and rests 2 at 19.
  Resp buy = m.place(m.acme, m.order("buy", 10, "19"));
  ASSERT_EQ(buy.status, 201) << buy.describe();
  EXPECT_EQ(buy.body["state"], "open");
  EXPECT_EQ(buy.body["filled_gpus"], 8);
  EXPECT_EQ(buy.body["remaining_gpus"], 2);
  ASSERT_EQ(buy.body["trades"].size(), 1u);
  const json trade = s.req("GET", "/api/v1/market-trades/" + buy.body["trades"][0].get<std::string>(), m.acme_member).body;
  EXPECT_EQ(trade["price_per_gpu_hour"], "18.00");
  EXPECT_EQ(trade["gpu_hours"], 64);
  EXPECT_EQ(trade["amount"], "1152.00");  // 18 × 8 GPUs × 8 h, exact
  EXPECT_EQ(trade["buy_order"], buy.body["id"]);
  EXPECT_EQ(trade["taker_side"], "buy");

  // beta: fill-or-kill 10 at 25 finds only 8 (the 20s): nothing trades; immediate-or-cancel takes the 8.
  Resp fok = m.place(m.beta, m.order("buy", 10, "25", "fok"));
  ASSERT_EQ(fok.status, 201) << fok.describe();
  EXPECT_EQ(fok.body["state"], "cancelled");
  EXPECT_EQ(fok.body["filled_gpus"], 0);
  EXPECT_TRUE(fok.body["trades"].empty());
  Resp ioc = m.place(m.beta, m.order("buy", 10, "25", "ioc"));
  EXPECT_EQ(ioc.body["state"], "cancelled");
  EXPECT_EQ(ioc.body["filled_gpus"], 8);
  EXPECT_EQ(s.req("GET", "/api/v1/market-orders/" + sell20.body["id"].get<std::string>(), m.dc).body["state"], "filled");

  // The book now: acme's 2 at 19, no ask. Depth and prints carry no identities.
  json depth = m.get("depth", m.beta);
  EXPECT_EQ(depth["bids"], (json{{{"price_per_gpu_hour", "19.00"}, {"gpus", 2}, {"orders", 1}}}));
  EXPECT_TRUE(depth["asks"].empty());
  json prints = m.get("prints", m.beta);
  ASSERT_EQ(prints["prints"].size(), 2u) << prints.dump();
  EXPECT_EQ(prints["prints"][0]["price_per_gpu_hour"], "20.00");
  EXPECT_EQ(prints.dump().find("ten_"), std::string::npos) << prints.dump();
  EXPECT_EQ(prints.dump().find("sup_"), std::string::npos) << prints.dump();

  // The daily index: today's trades weighted by GPU-hours: 64 at 18.00 and 64 at 20.00.
  const json index = s.req("GET", "/api/v1/market/index?gpu_model=H100-SXM&region=cn-east&currency=CNY", m.beta).body;
  ASSERT_EQ(index["days"].size(), 1u) << index.dump();
  EXPECT_EQ(index["days"][0]["vwap_per_gpu_hour"], "19.00");
  EXPECT_EQ(index["days"][0]["gpu_hours"], 128);
  EXPECT_EQ(index["days"][0]["trades"], 2);
  EXPECT_EQ(index["days"][0]["low_per_gpu_hour"], "18.00");
  EXPECT_EQ(index["days"][0]["day"], format_rfc3339(SystemClock().now()).substr(0, 10));
  EXPECT_TRUE(s.req("GET", "/api/v1/market/index?gpu_model=H100-SXM&region=cn-east&currency=USD", m.beta).body["days"].empty());
  // Bounds inside a day would name part of a day as the whole: refused, naming the bound.
  Resp half = s.req("GET", "/api/v1/market/index?gpu_model=H100-SXM&region=cn-east&currency=CNY&from=2026-12-06T12:00:00Z&to=2026-12-08T00:00:00Z", m.beta);
  EXPECT_EQ(half.status, 422) << half.describe();
  EXPECT_EQ(half.error_fields(), std::vector<std::string>{"from"}) << half.describe();
  // The hedging calculator reads that index: one price a day of the market's own trades.
  const TimeMs today = SystemClock().now() / (24 * 3'600'000LL) * (24 * 3'600'000LL);
  json hedge = {{"currency", "CNY"}, {"demand_gpu_hours", {40}},
                {"market", {{"gpu_model", "H100-SXM"}, {"region", "cn-east"}, {"from", format_rfc3339(today)},
                            {"to", format_rfc3339(today + 24 * 3'600'000LL)}}}};
  Resp hedged = s.req("POST", "/api/v1/advise/hedge", m.beta, hedge);
  ASSERT_EQ(hedged.status, 200) << hedged.describe();
  EXPECT_EQ(hedged.body["market"]["index"][0]["vwap_per_gpu_hour"], "19.00") << hedged.body.dump();
  EXPECT_EQ(hedged.body["periods"], 1);
  hedge["market"]["from"] = format_rfc3339(today - 24 * 3'600'000LL);
  hedge["demand_gpu_hours"] = {40, 40};
  Resp no_day = s.req("POST", "/api/v1/advise/hedge", m.beta, hedge);
  EXPECT_NE(no_day.reason_for("market.from").find(format_rfc3339(today - 24 * 3'600'000LL).substr(0, 10)), std::string::npos)
      << no_day.describe();
  hedge["prices"] = {"1.00", "2.00"};
  EXPECT_NE(s.req("POST", "/api/v1/advise/hedge", m.beta, hedge).reason_for("market"), "");
  hedge.erase("prices");
  hedge["currency"] = 5;  // not a string: a 422 naming it (was a 500 from the JSON library)
  Resp odd = s.req("POST", "/api/v1/advise/hedge", m.beta, hedge);
  EXPECT_EQ(odd.status, 422) << odd.describe();
  EXPECT_NE(odd.reason_for("currency"), "") << odd.describe();

  // Orders and trades are their owners': acme sees its order and trade only; the supplier both trades.
  EXPECT_EQ(s.req("GET", "/api/v1/market-orders/" + fok.body["id"].get<std::string>(), m.acme_member).status, 404);
  EXPECT_EQ(s.req("GET", "/api/v1/market-trades", m.acme_member).body["items"].size(), 1u);
  EXPECT_EQ(s.req("GET", "/api/v1/market-trades", m.dc).body["items"].size(), 2u);
  EXPECT_EQ(s.req("GET", "/api/v1/market-orders?state=open", m.acme_member).body["items"].size(), 1u);
  // Who may order: a member may not; a supplier buying or a tenant selling is refused.
  EXPECT_EQ(m.place(m.acme_member, m.order("buy", 1, "1")).status, 403);
  EXPECT_EQ(m.place(m.dc, m.order("buy", 1, "1")).status, 403);
  Resp resale = m.place(m.acme, m.order("sell", 1, "30"));  // resale is of whole nodes, in a node book
  EXPECT_EQ(resale.status, 422) << resale.describe();
  EXPECT_NE(resale.reason_for("node_gpus"), "") << resale.describe();

  // Bad input names the field.
  json bad = m.order("buy", 1, "1");
  bad["starts_at"] = starts.substr(0, 11) + "00:30:00Z";
  EXPECT_NE(m.place(m.acme, bad).reason_for("starts_at"), "");
  bad = m.order("buy", 0, "-1");
  Resp two = m.place(m.acme, bad);
  EXPECT_NE(two.reason_for("gpus"), "") << two.describe();
  EXPECT_NE(two.reason_for("price_per_gpu_hour"), "") << two.describe();
  bad = m.order("buy", 1, "1");
  bad["ends_at"] = "2020-01-01T08:00:00Z";
  bad["starts_at"] = "2020-01-01T00:00:00Z";
  EXPECT_NE(m.place(m.acme, bad).reason_for("ends_at").find("over"), std::string::npos);
  EXPECT_EQ(s.req("GET", "/api/v1/market/quote?gpu_model=h100-sxm5-80gb", m.acme).status, 422);
  EXPECT_NE(m.place(m.acme, m.order("buy", 1, "1000000.01")).reason_for("price_per_gpu_hour").find("at most"), std::string::npos);
  // Each limit allowed, together past what one trade can amount to: 2,000 GPUs for 366 days at
  // 1,000,000 an hour is about 1.8 × 10^13, past int64 micro-units.
  json huge = m.order("buy", 2000, "1000000");
  huge["ends_at"] = format_rfc3339(*parse_rfc3339(m.book["starts_at"].get<std::string>(), "starts_at") + 366 * 24 * 3'600'000LL);
  Resp too_much = m.place(m.acme, huge);
  EXPECT_EQ(too_much.status, 422) << too_much.describe();
  EXPECT_NE(too_much.reason_for("price_per_gpu_hour").find("17568000 GPU-hours"), std::string::npos) << too_much.describe();
  // The bound is 1,000,000,000 (a default credits three times the amount, on an invoice with other
  // lines): 125 GPUs × 8 h at 1,000,000 reach it, one more GPU passes it.
  Resp at_bound = m.place(m.acme, m.order("buy", 125, "1000000"));
  EXPECT_EQ(at_bound.status, 201) << at_bound.describe();
  Resp past = m.place(m.acme, m.order("buy", 126, "1000000"));
  EXPECT_EQ(past.status, 422) << past.describe();
  EXPECT_NE(past.reason_for("price_per_gpu_hour").find("more than 1000000000.00"), std::string::npos)
      << past.describe();
  ASSERT_EQ(s.req("POST", "/api/v1/market-orders/" + at_bound.body.value("id", "") + "/cancel", m.acme).status, 200);

  // Idempotency: the same request with the same key is the same order (200); other fields, a 422.
  json keyed = m.order("buy", 1, "10");
  keyed["idempotency_key"] = "acme-2027-001";
  Resp first = m.place(m.acme, keyed);
  ASSERT_EQ(first.status, 201) << first.describe();
  Resp again = m.place(m.acme, keyed);
  EXPECT_EQ(again.status, 200) << again.describe();
  EXPECT_EQ(again.body["id"], first.body["id"]);
  keyed["price_per_gpu_hour"] = "11";
  Resp other = m.place(m.acme, keyed);
  EXPECT_EQ(other.status, 422) << other.describe();
  EXPECT_NE(other.reason_for("idempotency_key").find(first.body["id"].get<std::string>()), std::string::npos);

  // The same key is another owner's own: the supplier's order under acme's key is a new order; an
  // operator's for beta under it too.
  json supplier_keyed = m.order("sell", 1, "50");
  supplier_keyed["idempotency_key"] = "acme-2027-001";
  Resp supplier_key = m.place(m.dc, supplier_keyed);
  EXPECT_NE(supplier_key.reason_for("gpus"), "") << "nothing left to sell, but not a reused key: " << supplier_key.describe();
  json for_beta = m.order("buy", 1, "9");
  for_beta["idempotency_key"] = "acme-2027-001";
  for_beta["tenant"] = "beta";
  Resp op_first = s.admin("POST", "/api/v1/market-orders", for_beta);
  EXPECT_EQ(op_first.status, 201) << op_first.describe();
  EXPECT_EQ(s.admin("POST", "/api/v1/market-orders", for_beta).body["id"], op_first.body["id"]);
  // The owner however the operator names it: beta by its id is the same order (it was a 409 on
  // the taken name); acme's own key with other fields is acme's order reused (a 422, not a 409).
  for_beta["tenant"] = s.admin("GET", "/api/v1/tenants/beta").body["id"];
  Resp by_id = s.admin("POST", "/api/v1/market-orders", for_beta);
  EXPECT_EQ(by_id.status, 200) << by_id.describe();
  EXPECT_EQ(by_id.body["id"], op_first.body["id"]);
  json for_acme = keyed;
  for_acme["tenant"] = "acme";
  Resp reused = s.admin("POST", "/api/v1/market-orders", for_acme);
  EXPECT_EQ(reused.status, 422) << reused.describe();
  EXPECT_NE(reused.reason_for("idempotency_key"), "") << reused.describe();
  for_beta["tenant"] = 5;
  EXPECT_EQ(s.admin("POST", "/api/v1/market-orders", for_beta).status, 422);

  // A kill -9: every acknowledged order is still there and the book is the same.
  const json before = m.get("depth", m.beta);
  s.kill9();
  s.start();
  EXPECT_EQ(m.get("depth", m.beta), before);

  // Cancel: the rest leaves the book; twice is a conflict; not the owner's, not found.
  const std::string rest = buy.body["id"];
  EXPECT_EQ(s.req("POST", "/api/v1/market-orders/" + rest + "/cancel", m.beta).status, 404);
  Resp cancelled = s.req("POST", "/api/v1/market-orders/" + rest + "/cancel", m.acme);
  EXPECT_EQ(cancelled.body["state"], "cancelled") << cancelled.describe();
  EXPECT_EQ(cancelled.body["filled_gpus"], 8);
  EXPECT_EQ(s.req("POST", "/api/v1/market-orders/" + rest + "/cancel", m.acme).status, 409);
  EXPECT_EQ(m.get("quote", m.beta)["bid"]["price_per_gpu_hour"], "10.00");
  // A tenant that placed orders is kept (its orders and trades are never deleted): one with nothing
  // else, whose order an operator placed, cannot be deleted and the refusal says why.
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("gamma", "CNY")), "tenant");
  json for_gamma = m.order("buy", 1, "1");
  for_gamma["tenant"] = "gamma";
  expect_2xx(s.admin("POST", "/api/v1/market-orders", for_gamma), "gamma's order");
  Resp keep = s.admin("DELETE", "/api/v1/tenants/gamma");
  EXPECT_EQ(keep.status, 409) << keep.describe();
  EXPECT_NE(keep.describe().find("market-orders"), std::string::npos) << keep.describe();
  // The 16 GPUs sold stay sold: the supplier cannot sell more for this window.
  EXPECT_EQ(m.place(m.dc, m.order("sell", 1, "30")).status, 422);
}

// All-or-none orders trade whole or not at all: a resting one is passed by until the other side can
// fill all of it — by a later order resting beside it, or by an order cancelled out of its way.
// A trade takes whole nodes, so a part-node fill can leave the seller's other open sells offering
// more than its free nodes hold. No trade is then made that settlement could not deliver: a
// resting sell that could not be delivered leaves the book, cancelled with its reason, and an
// incoming sell trades only what its seller can deliver. Every trade is settled, none defaulted.
TEST(MarketApi, APartNodeTradeNeverLeavesAnotherTradeWithoutANode) {
  ServerProcess s;
  Market m = dc_world(s, {"gpn1"});
  // Two lots of half a node each: together the node's 8 GPUs, so both are accepted.
  Resp at18 = m.place(m.dc, m.order("sell", 4, "18.00"));
  Resp at20 = m.place(m.dc, m.order("sell", 4, "20.00"));
  ASSERT_EQ(at18.status, 201) << at18.describe();
  ASSERT_EQ(at20.status, 201) << at20.describe();
  // A fill-or-kill for 8 cannot be delivered whole (the first lot takes the node): nothing trades,
  // and the lot at 20, which nothing took the node from, stays in the book.
  Resp fok = m.place(m.beta, m.order("buy", 8, "20.00", "fok"));
  ASSERT_EQ(fok.status, 201) << fok.describe();
  EXPECT_EQ(fok.body["state"], "cancelled") << fok.describe();
  EXPECT_EQ(fok.body["filled_gpus"], 0);
  EXPECT_EQ(s.req("GET", "/api/v1/market-orders/" + at20.body["id"].get<std::string>(), m.dc).body["state"], "open");
  // acme buys 8: the lot at 18 takes the whole node, so the lot at 20 cannot be delivered.
  Resp buy = m.place(m.acme, m.order("buy", 8, "20.00"));
  ASSERT_EQ(buy.status, 201) << buy.describe();
  EXPECT_EQ(buy.body["filled_gpus"], 4) << buy.describe();
  EXPECT_EQ(buy.body["remaining_gpus"], 4);
  EXPECT_EQ(buy.body["state"], "open");
  const json gone = s.req("GET", "/api/v1/market-orders/" + at20.body["id"].get<std::string>(), m.dc).body;
  EXPECT_EQ(gone["state"], "cancelled") << gone.dump();
  EXPECT_EQ(gone["remaining_gpus"], 0);
  EXPECT_NE(gone.value("reason", "").find("can no longer deliver"), std::string::npos) << gone.dump();
  EXPECT_TRUE(m.get("quote", m.acme)["ask"].is_null()) << "nothing undeliverable is left on offer";

  // A second node; acme's rest bids 20 for 4, beta bids 19 for 4. dc sells 8: the first fill takes
  // gpn2 whole, so the second has no node: the sell trades 4 and the rest is cancelled.
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "gpn2")), "gpn2");
  ASSERT_EQ(m.place(m.beta, m.order("buy", 4, "19.00")).status, 201);
  Resp sell = m.place(m.dc, m.order("sell", 8, "19.00"));
  ASSERT_EQ(sell.status, 201) << sell.describe();
  EXPECT_EQ(sell.body["filled_gpus"], 4) << sell.describe();
  EXPECT_EQ(sell.body["state"], "cancelled") << sell.describe();
  EXPECT_NE(sell.body.value("reason", "").find("cannot deliver the rest"), std::string::npos) << sell.describe();
  const json bids = m.get("depth", m.beta)["bids"];
  ASSERT_EQ(bids.size(), 1u) << bids.dump();
  EXPECT_EQ(bids[0]["price_per_gpu_hour"], "19.00") << "beta's bid rests untouched: " << bids.dump();

  const Resp trades = s.admin("GET", "/api/v1/market-trades?limit=100");
  ASSERT_EQ(trades.body["items"].size(), 2u) << trades.describe();
  for (const json& t : trades.body["items"]) {
    EXPECT_EQ(t["state"], "settled") << t.dump();
    EXPECT_EQ(t["settlement"]["delivered_gpus"], t["gpus"]) << t.dump();
  }
}

TEST(MarketApi, AllOrNoneOrdersTradeWholeEvenAfterResting) {
  ServerProcess s;
  Market m = dc_world(s, {"gpn1", "gpn2", "gpn3", "gpn4"});
  auto aon = [&](const std::string& side, int gpus, const std::string& price) {
    json o = m.order(side, gpus, price);
    o["all_or_none"] = true;
    return o;
  };
  // The supplier sells 8 all-or-none at 15: acme's 4 and beta's 4 pass it by one after the other;
  // with both resting it fills whole, at its own price (it was first), 4 to each.
  const std::string sell = expect_2xx(m.place(m.dc, aon("sell", 8, "15")), "aon sell").body["id"];
  Resp a = m.place(m.acme, m.order("buy", 4, "16"));
  EXPECT_EQ(a.body["state"], "open") << a.describe();
  EXPECT_TRUE(a.body["trades"].empty());
  Resp b = m.place(m.beta, m.order("buy", 4, "16"));
  EXPECT_EQ(b.body["state"], "filled") << b.describe();
  const json sold = s.req("GET", "/api/v1/market-orders/" + sell, m.dc).body;
  EXPECT_EQ(sold["state"], "filled") << sold.dump();
  ASSERT_EQ(sold["trades"].size(), 2u);
  const json t1 = s.req("GET", "/api/v1/market-trades/" + sold["trades"][0].get<std::string>(), m.dc).body;
  EXPECT_EQ(t1["price_per_gpu_hour"], "15.00");
  EXPECT_EQ(t1["buy_order"], a.body["id"]) << "acme's bid was first in time";
  EXPECT_EQ(t1["state"], "settled") << t1.dump();
  EXPECT_EQ(s.req("GET", "/api/v1/market-orders/" + a.body["id"].get<std::string>(), m.acme).body["state"], "filled");
  // Not whole at once: IOC + all-or-none is cancelled, nothing traded.
  Resp ioc = m.place(m.beta, [&] { json o = aon("buy", 20, "30"); o["time_in_force"] = "ioc"; return o; }());
  EXPECT_EQ(ioc.body["state"], "cancelled") << ioc.describe();
  EXPECT_NE(ioc.body["reason"].get<std::string>().find("all-or-none"), std::string::npos);

  // A cancel that makes room: the supplier's 3 at 14 stand before its all-or-none 6 at 15 in acme's
  // all-or-none bid for 8: 3 taken, 6 > 5 passed by, 0 more: it rests. Cancelling the 3 lets the bid
  // take the 6 and the 2 at 15 behind them: two trades, made by the cancel.
  expect_2xx(m.place(m.dc, m.order("sell", 2, "15.50")), "sell 2");
  const std::string three = expect_2xx(m.place(m.dc, m.order("sell", 3, "14")), "sell 3").body["id"];
  expect_2xx(m.place(m.dc, aon("sell", 6, "15")), "aon sell 6");
  Resp bid = m.place(m.acme, aon("buy", 8, "20"));
  ASSERT_EQ(bid.status, 201) << bid.describe();
  EXPECT_EQ(bid.body["state"], "open") << bid.describe();
  EXPECT_TRUE(bid.body["trades"].empty());
  ASSERT_EQ(s.req("POST", "/api/v1/market-orders/" + three + "/cancel", m.dc).status, 200);
  const json filled = s.req("GET", "/api/v1/market-orders/" + bid.body["id"].get<std::string>(), m.acme).body;
  EXPECT_EQ(filled["state"], "filled") << filled.dump();
  EXPECT_EQ(filled["trades"].size(), 2u);
  EXPECT_TRUE(m.get("depth", m.beta)["asks"].empty()) << m.get("depth", m.beta).dump();
}

// The supplier's 2 at 15.50, 3 at 14 and all-or-none 6 at 15, and acme's all-or-none bid for 8 at
// 20, resting: it takes the 3, passes the 6 by, takes the 2 and stops at 5. Cancelling the 3 would
// let it fill (the 6 and the 2). The ids of the 3 and of the bid.
std::pair<std::string, std::string> aon_bid_behind_three(const Market& m) {
  json aon = m.order("sell", 6, "15");
  aon["all_or_none"] = true;
  expect_2xx(m.place(m.dc, m.order("sell", 2, "15.50")), "sell 2");
  const std::string three = expect_2xx(m.place(m.dc, m.order("sell", 3, "14")), "sell 3").body["id"];
  expect_2xx(m.place(m.dc, aon), "aon sell 6");
  json bid_doc = m.order("buy", 8, "20");
  bid_doc["all_or_none"] = true;
  Resp bid = m.place(m.acme, bid_doc);
  EXPECT_EQ(bid.status, 201) << bid.describe();
  EXPECT_EQ(bid.body["state"], "open") << bid.describe();
  return {three, bid.body.value("id", "")};
}

// Cancelling `three` (the order the all-or-none `bid` waits behind) takes it out and makes no
// trade: the bid still rests unfilled and the market has no trade.
void cancel_makes_no_trade(const Market& m, const std::string& three, const std::string& bid) {
  Resp cancel = m.s.req("POST", "/api/v1/market-orders/" + three + "/cancel", m.dc);
  ASSERT_EQ(cancel.status, 200) << cancel.describe();
  EXPECT_EQ(cancel.body["state"], "cancelled");
  const json still = m.s.req("GET", "/api/v1/market-orders/" + bid, m.acme).body;
  EXPECT_EQ(still["state"], "open") << still.dump();
  EXPECT_EQ(still["filled_gpus"], 0) << still.dump();
  EXPECT_TRUE(still["trades"].empty()) << still.dump();
  EXPECT_EQ(m.s.admin("GET", "/api/v1/market-trades").body["items"].size(), 0u);
}

// Once a window is over nothing trades in it: cancelling the order an all-or-none bid was waiting
// behind takes it out and makes no trade (a cancel before the end would, as above), and a replace
// is refused. The server's clock is moved past the window by restarting it on the same database,
// its cost firewall off (its pass would expire both orders: OrdersWhoseWindowIsOverExpire).
TEST(MarketApi, NothingTradesInAWindowThatIsOver) {
  ServerProcess s;
  Market m = dc_world(s, {"gpn1", "gpn2"});
  const auto [three, bid] = aon_bid_behind_three(m);

  const TimeMs over = *parse_rfc3339(m.book["ends_at"].get<std::string>(), "ends_at") + 3'600'000;
  s.set_extra_args({"--demo-clock", format_rfc3339(over), "--firewall-interval-s", "0"});
  s.restart();
  Resp replace = s.req("POST", "/api/v1/market-orders/" + three + "/replace", m.dc, json{{"gpus", 2}});
  EXPECT_EQ(replace.status, 422) << replace.describe();
  EXPECT_EQ(replace.error_fields(), std::vector<std::string>{"ends_at"}) << replace.describe();
  cancel_makes_no_trade(m, three, bid);
}

// An open order whose delivery window is over expires on the cost firewall's first pass after the
// window ends: it leaves the book as `expired` with what was left of it, nothing traded, and no
// longer counts as open; it cannot be cancelled. An order in a window not over stays open. The
// clock is moved past the window by restarting the server on the same database.
TEST(MarketApi, OrdersWhoseWindowIsOverExpire) {
  ServerProcess s;
  Market m = dc_world(s, {"gpn1", "gpn2"});
  const json sell = expect_2xx(m.place(m.dc, m.order("sell", 8, "20.00")), "a sell").body;
  const json bid = expect_2xx(m.place(m.acme, m.order("buy", 4, "10.00")), "a bid below it").body;
  const TimeMs ends = *parse_rfc3339(m.book["ends_at"].get<std::string>(), "ends_at");
  json later = m.order("buy", 2, "9.00");
  later["starts_at"] = format_rfc3339(ends + 24 * 3'600'000LL);
  later["ends_at"] = format_rfc3339(ends + 25 * 3'600'000LL);
  const json kept = expect_2xx(m.place(m.acme, later), "a bid in a later window").body;
  for (const json& o : {sell, bid, kept}) ASSERT_EQ(o["state"], "open") << o.dump();
  // A lane whose stored orders do not all decode any more (edited by hand): two copies of the sell
  // in cn-west, one with a window that no longer reads. That lane's book cannot be read, so it
  // stays as it is (and the record is reported); the other books expire all the same, even though
  // this one comes first (its ids sort first).
  edit_database(s,
                "INSERT INTO objects (kind, id, name, tenant_id, supplier_id, project_id, state, region, gpu_model, "
                "created_at, updated_at, version, body) SELECT kind, 'mko_000000000000000' || x, name, tenant_id, "
                "supplier_id, project_id, state, 'cn-west', gpu_model, created_at, updated_at, version, "
                "json_set(body, '$.region', 'cn-west') FROM objects, (SELECT 1 AS x UNION ALL SELECT 2) "
                "WHERE kind = 'market-orders' AND id = '" +
                    sell["id"].get<std::string>() + "'",
                2);
  edit_database(s, "UPDATE objects SET body = json_set(body, '$.starts_at', 'soon') WHERE id = 'mko_0000000000000002'");

  s.set_extra_args({"--demo-clock", format_rfc3339(ends + 60'000), "--firewall-interval-s", "1"});
  s.restart();
  const std::string path = "/api/v1/market-orders/";
  const json gone = wait_for(s, path + sell["id"].get<std::string>(), [](const json& j) { return j["state"] == "expired"; }, 30);
  ASSERT_EQ(gone["state"], "expired") << gone.dump() << s.log();
  EXPECT_EQ(gone["reason"], "its delivery window is over");
  EXPECT_EQ(gone["remaining_gpus"], 8) << gone.dump();
  EXPECT_EQ(gone["filled_gpus"], 0) << gone.dump();
  const json low = s.req("GET", path + bid["id"].get<std::string>(), m.acme).body;
  EXPECT_EQ(low["state"], "expired") << low.dump();
  EXPECT_EQ(low["remaining_gpus"], 4) << low.dump();
  EXPECT_EQ(s.req("GET", path + kept["id"].get<std::string>(), m.acme).body["state"], "open");
  const json listed = s.req("GET", "/api/v1/market-orders?state=expired", m.acme).body;
  ASSERT_EQ(listed["items"].size(), 1u) << listed.dump();
  EXPECT_EQ(listed["items"][0]["id"], bid["id"]);
  EXPECT_EQ(s.req("GET", "/api/v1/market-orders?state=open", m.acme).body["items"].size(), 1u);
  Resp cancel = s.req("POST", path + sell["id"].get<std::string>() + "/cancel", m.dc, json::object());
  EXPECT_EQ(cancel.status, 409) << cancel.describe();
  EXPECT_EQ(s.admin("GET", "/api/v1/market-trades").body["items"].size(), 0u);
  const json depth = m.get("depth", m.acme);
  EXPECT_TRUE(depth["bids"].empty() && depth["asks"].empty()) << depth.dump();
  EXPECT_EQ(s.admin("GET", path + "mko_0000000000000001").body["state"], "open") << "its lane could not be read";
  const json ready = s.admin("GET", "/readyz").body;
  EXPECT_NE(ready.dump().find("mko_0000000000000002"), std::string::npos) << ready.dump();
}

// Once the month a window starts in is closed for invoicing, a change to an order that would let
// a resting all-or-none order fill makes no trade (its commitment hours would reach no invoice):
// a replace in place and a cancel both go through without fills. The clock is pinned: the orders
// are placed in January for a window from January 25 to February 10, then January is closed on
// February 5.
TEST(MarketApi, NothingTradesInAWindowStartingInAClosedMonth) {
  ServerProcess s({"--firewall-interval-s", "0", "--demo-clock", "2030-01-20T00:00:00Z"});
  Market m = dc_world(s, {"gpn1", "gpn2"});
  m.book["starts_at"] = "2030-01-25T00:00:00Z";
  m.book["ends_at"] = "2030-02-10T00:00:00Z";
  m.book_query =
      "?gpu_model=h100-sxm5-80gb&region=cn-east&starts_at=2030-01-25T00:00:00Z&ends_at=2030-02-10T00:00:00Z"
      "&currency=CNY";
  const auto [three, bid] = aon_bid_behind_three(m);

  s.set_extra_args({"--firewall-interval-s", "0", "--demo-clock", "2030-02-05T00:00:00Z"});
  s.restart();
  expect_2xx(s.admin("POST", "/api/v1/invoices/close", json{{"month", "2030-01"}}), "close January");
  Resp replace = s.req("POST", "/api/v1/market-orders/" + three + "/replace", m.dc, json{{"gpus", 2}});
  ASSERT_EQ(replace.status, 200) << replace.describe();
  EXPECT_EQ(replace.body["remaining_gpus"], 2) << replace.describe();
  EXPECT_EQ(replace.body["filled_gpus"], 0) << "2 at 14 and 6 at 15 would fill the bid's 8: " << replace.describe();
  cancel_makes_no_trade(m, three, bid);
}

// A window that starts in a month closed for invoicing is refused on starts_at: the commitment hours
// settled there would reach no invoice. This month's windows trade.
TEST(MarketApi, AWindowStartingInAClosedMonthIsRefused) {
  ServerProcess s({"--firewall-interval-s", "0"});
  Market m = dc_world(s, {"gpn1"});
  const TimeMs now = SystemClock().now();
  const TimeMs this_month = month_start(now), last_day = this_month - 24 * 3'600'000LL;
  const std::string last_month = format_rfc3339(last_day).substr(0, 7);
  json o = m.order("sell", 8, "20.00", "ioc");
  o["starts_at"] = format_rfc3339(last_day);
  o["ends_at"] = m.book["ends_at"];
  expect_2xx(s.admin("POST", "/api/v1/invoices/close", json{{"month", last_month}}), "close");
  Resp refused = m.place(m.dc, o);
  EXPECT_EQ(refused.status, 422) << refused.describe();
  EXPECT_EQ(refused.error_fields(), std::vector<std::string>{"starts_at"}) << refused.describe();
  EXPECT_NE(refused.reason_for("starts_at").find("closed for invoicing"), std::string::npos) << refused.describe();
  o["starts_at"] = format_rfc3339(this_month);
  Resp taken = m.place(m.dc, o);
  EXPECT_EQ(taken.status / 100, 2) << taken.describe();
}

// null is an absent field, as everywhere in the API: an order with "node_gpus": null or
// "idempotency_key": null rests in the GPU book (it was a 500 from the order's stored copy).
TEST(MarketApi, NullFieldsAreAbsent) {
  ServerProcess s;
  Market m = dc_world(s, {"gpn1"});
  json o = m.order("buy", 2, "10.00");
  o["node_gpus"] = nullptr;
  o["idempotency_key"] = nullptr;
  Resp r = m.place(m.acme, o);
  ASSERT_EQ(r.status, 201) << r.describe();
  EXPECT_EQ(r.body["state"], "open") << r.describe();
  EXPECT_FALSE(r.body.contains("idempotency_key")) << r.describe();
  EXPECT_EQ(m.get("depth", m.acme)["bids"].size(), 1u);
}

// A cancel that would unlock fills the seller cannot deliver (it no longer has an offer for the
// book) makes none of them and still takes the order out: an owner can always cancel (it was a
// 422 before, from the settlement of fills nobody asked for).
TEST(MarketApi, ACancelNeverFailsOnFillsItWouldUnlock) {
  ServerProcess s;
  Market m = dc_world(s, {"gpn1", "gpn2"});
  const auto [three, bid] = aon_bid_behind_three(m);
  ASSERT_EQ(s.admin("DELETE", "/api/v1/offers/h100").status, 204);
  Resp cancel = s.req("POST", "/api/v1/market-orders/" + three + "/cancel", m.dc);
  ASSERT_EQ(cancel.status, 200) << cancel.describe();
  EXPECT_EQ(cancel.body["state"], "cancelled");
  const json still = s.req("GET", "/api/v1/market-orders/" + bid, m.acme).body;
  EXPECT_EQ(still["state"], "open") << still.dump();
  EXPECT_TRUE(still["trades"].empty()) << still.dump();
  EXPECT_EQ(s.admin("GET", "/api/v1/market-trades").body["items"].size(), 0u);
}

// A book of whole nodes (node_gpus): quantities in nodes, trades of whole nodes of that size, each
// held by its reservation; the node book and the GPU book share what the supplier can deliver.
TEST(MarketApi, NodeBooksTradeWholeNodesOfTheirSize) {
  ServerProcess s;
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  for (const char* n : {"gpn1", "gpn2", "gpn3"}) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", n)), n);
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  acme_and_beta(s);
  const auto [starts, ends] = tomorrow_morning();
  const json book = {{"gpu_model", "h100-sxm5-80gb"}, {"region", "cn-east"}, {"starts_at", starts}, {"ends_at", ends}, {"currency", "CNY"}};
  const std::string dc = make_user_token(s, "dc-ops", "supplier", "", "dc");
  const std::string acme = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  auto nodes = [&](const char* side, int n, const char* price) {
    json o = book;
    o["side"] = side;
    o["node_gpus"] = 8;
    o["nodes"] = n;
    o["price_per_gpu_hour"] = price;
    return o;
  };
  // Two of its three 8-GPU nodes in the node book; the GPU book can then sell the third only.
  Resp sell = s.req("POST", "/api/v1/market-orders", dc, nodes("sell", 2, "16.00"));
  ASSERT_EQ(sell.status, 201) << sell.describe();
  EXPECT_EQ(sell.body["gpus"], 16);
  EXPECT_EQ(sell.body["nodes"], 2);
  json gpu_sell = book;
  gpu_sell["side"] = "sell";
  gpu_sell["gpus"] = 9;
  gpu_sell["price_per_gpu_hour"] = "17";
  EXPECT_NE(s.req("POST", "/api/v1/market-orders", dc, gpu_sell).reason_for("gpus").find("can deliver 8 more"), std::string::npos);
  // A node size the supplier has none of, and quantities in the wrong unit, are refused.
  json four = nodes("sell", 1, "16");
  four["node_gpus"] = 4;
  EXPECT_NE(s.req("POST", "/api/v1/market-orders", dc, four).reason_for("gpus").find("can deliver 0 more"), std::string::npos);
  json both = nodes("buy", 1, "16");
  both["gpus"] = 8;
  EXPECT_NE(s.req("POST", "/api/v1/market-orders", acme, both).reason_for("gpus"), "");
  json bare = book;
  bare["side"] = "buy";
  bare["nodes"] = 1;
  bare["price_per_gpu_hour"] = "16";
  EXPECT_NE(s.req("POST", "/api/v1/market-orders", acme, bare).reason_for("nodes"), "");
  // A trade settles into one reservation, which holds at most 4096 nodes: a node book's order too.
  json huge = nodes("buy", 4097, "16");
  huge["node_gpus"] = 1;
  Resp too_many = s.req("POST", "/api/v1/market-orders", acme, huge);
  EXPECT_EQ(too_many.status, 422) << too_many.describe();
  EXPECT_NE(too_many.reason_for("nodes").find("4096"), std::string::npos) << too_many.describe();
  // acme buys one node: a trade of one node (8 GPUs) held by a reservation of one 8-GPU node.
  Resp buy = s.req("POST", "/api/v1/market-orders", acme, nodes("buy", 1, "16.50"));
  ASSERT_EQ(buy.status, 201) << buy.describe();
  EXPECT_EQ(buy.body["state"], "filled");
  const json trade = s.req("GET", "/api/v1/market-trades/" + buy.body["trades"][0].get<std::string>(), acme).body;
  EXPECT_EQ(trade["nodes"], 1);
  EXPECT_EQ(trade["gpus"], 8);
  EXPECT_EQ(trade["gpu_hours"], 64);
  EXPECT_EQ(trade["settlement"]["nodes"].size(), 1u) << trade.dump();
  // The node book's public data speak in nodes too; the GPU book is another book.
  const std::string q = "?gpu_model=h100-sxm5-80gb&region=cn-east&starts_at=" + starts + "&ends_at=" + ends + "&currency=CNY";
  const json depth = s.req("GET", "/api/v1/market/depth" + q + "&node_gpus=8", acme).body;
  EXPECT_EQ(depth["asks"], (json{{{"price_per_gpu_hour", "16.00"}, {"gpus", 8}, {"orders", 1}, {"nodes", 1}}})) << depth.dump();
  EXPECT_TRUE(s.req("GET", "/api/v1/market/depth" + q, acme).body["asks"].empty());
  EXPECT_EQ(s.req("GET", "/api/v1/market/prints" + q + "&node_gpus=8", acme).body["prints"][0]["nodes"], 1);
  for (const char* junk : {"8abc", "%2B8", "8.9", "%208"})  // not 8: a 422 naming the field
    EXPECT_EQ(s.req("GET", "/api/v1/market/depth" + q + "&node_gpus=" + junk, acme).error_fields(),
              std::vector<std::string>{"node_gpus"})
        << junk;
}

// Replace: less at the same price keeps the order's place; a new price (or more) is cancel-replace —
// the old order `replaced`, a new one matched at once; a sell cannot grow past what can be delivered.
TEST(MarketApi, ReplaceKeepsThePlaceOnlyForLessAtTheSamePrice) {
  ServerProcess s;
  Market m = dc_world(s, {"gpn1", "gpn2", "gpn3"});
  const std::string a = expect_2xx(m.place(m.dc, m.order("sell", 8, "20")), "a").body["id"];
  const std::string b = expect_2xx(m.place(m.dc, m.order("sell", 8, "20")), "b").body["id"];
  auto replace = [&](const std::string& token, const std::string& id, const json& body) {
    return s.req("POST", "/api/v1/market-orders/" + id + "/replace", token, body);
  };
  // Less at the same price: the same order, still first.
  Resp less = replace(m.dc, a, json{{"gpus", 4}});
  ASSERT_EQ(less.status, 200) << less.describe();
  EXPECT_EQ(less.body["id"], a);
  EXPECT_EQ(less.body["remaining_gpus"], 4);
  Resp take = m.place(m.acme, m.order("buy", 4, "20", "ioc"));
  const json t = s.req("GET", "/api/v1/market-trades/" + take.body["trades"][0].get<std::string>(), m.acme).body;
  EXPECT_EQ(t["sell_order"], a) << "it kept its place";
  // A new price: cancel-replace, matched at once as a new order.
  Resp moved = replace(m.dc, b, json{{"price_per_gpu_hour", "19"}});
  ASSERT_EQ(moved.status, 200) << moved.describe();
  EXPECT_NE(moved.body["id"], b);
  EXPECT_EQ(moved.body["replaces"], b);
  EXPECT_EQ(moved.body["price_per_gpu_hour"], "19.00");
  const json old = s.req("GET", "/api/v1/market-orders/" + b, m.dc).body;
  EXPECT_EQ(old["state"], "replaced");
  EXPECT_EQ(old["replaced_by"], moved.body["id"]);
  EXPECT_EQ(m.get("quote", m.beta)["ask"]["price_per_gpu_hour"], "19.00");
  // Bad input names the field; not open: 409; not the owner's: 404; no more than it can deliver (one
  // node is free, the other two are sold or offered).
  EXPECT_NE(replace(m.dc, moved.body["id"], json{{"gpus", 0}}).reason_for("gpus"), "");
  EXPECT_NE(replace(m.dc, moved.body["id"], json{{"price_per_gpu_hour", "-1"}}).reason_for("price_per_gpu_hour"), "");
  EXPECT_EQ(replace(m.dc, b, json{{"gpus", 1}}).status, 409);
  EXPECT_EQ(replace(m.acme, moved.body["id"], json{{"gpus", 1}}).status, 404);
  Resp grow = replace(m.dc, moved.body["id"], json{{"gpus", 17}});
  EXPECT_NE(grow.reason_for("gpus").find("can deliver"), std::string::npos) << grow.describe();
  EXPECT_EQ(s.req("GET", "/api/v1/market-orders/" + moved.body["id"].get<std::string>(), m.dc).body["state"], "open")
      << "a refused replace changes nothing";
}

// A spot book (its window starts within the hour) moves the seller's offers' spot price to its last
// trade; a forward book does not; a trade above the offer's on-demand price leaves it alone.
TEST(MarketApi, SpotFillsSetTheOffersSpotPrice) {
  ServerProcess s;
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  // Two nodes: each trade below holds a whole node for its window (its reservation).
  for (const char* n : {"gpn1", "gpn2"}) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", n)), n);
  const std::string offer = expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer").body["id"];
  acme_and_beta(s);
  const std::string dc = make_user_token(s, "dc-ops", "supplier", "", "dc");
  const std::string acme = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  const TimeMs hour = 3'600'000;
  const TimeMs this_hour = SystemClock().now() / hour * hour;
  auto order = [&](TimeMs start, const char* side, const char* price) {
    return json{{"side", side}, {"gpu_model", "h100-sxm5-80gb"}, {"region", "cn-east"}, {"currency", "CNY"},
                {"starts_at", format_rfc3339(start)}, {"ends_at", format_rfc3339(start + 2 * hour)}, {"gpus", 1},
                {"price_per_gpu_hour", price}};
  };
  auto spot_prices = [&] { return s.admin("GET", "/api/v1/spot-prices?offer=" + offer).body["items"]; };
  ASSERT_TRUE(spot_prices().empty());
  // Forward (the day after tomorrow): no spot price.
  expect_2xx(s.req("POST", "/api/v1/market-orders", dc, order(this_hour + 48 * hour, "sell", "9.00")), "sell");
  expect_2xx(s.req("POST", "/api/v1/market-orders", acme, order(this_hour + 48 * hour, "buy", "9.00")), "buy");
  EXPECT_TRUE(spot_prices().empty());
  // Spot (from this hour): the trade's price is the offer's spot price from now.
  expect_2xx(s.req("POST", "/api/v1/market-orders", dc, order(this_hour, "sell", "7.25")), "sell");
  expect_2xx(s.req("POST", "/api/v1/market-orders", acme, order(this_hour, "buy", "8")), "buy");
  json prices = spot_prices();
  ASSERT_EQ(prices.size(), 1u) << prices.dump();
  EXPECT_EQ(prices[0]["price"], "7.25");
  // Above the offer's on-demand price (17.50): the trade stands, the spot price does not move.
  expect_2xx(s.req("POST", "/api/v1/market-orders", dc, order(this_hour, "sell", "20")), "sell");
  Resp buy = s.req("POST", "/api/v1/market-orders", acme, order(this_hour, "buy", "20"));
  EXPECT_EQ(buy.body["state"], "filled") << buy.describe();
  EXPECT_EQ(spot_prices().size(), 1u);
}

// The books held in memory (market_books.h) are the stored books after every change: a random run
// of orders (GTC, IOC, FOK, all-or-none), cancels and replaces, with depth (served from the copy)
// compared with the stored open orders after each step, a kill -9 in the middle (the restarted
// server reads the store), and at the end every order's fills are its trades.
TEST(MarketApi, TheBookInMemoryIsTheStoredBookAfterEveryChange) {
  ServerProcess s;
  std::vector<std::string> node_names;
  for (int i = 1; i <= 12; ++i) node_names.push_back("gpn" + std::to_string(i));
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  for (const std::string& n : node_names) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", n)), n);
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  acme_and_beta(s);
  const auto [starts, ends] = tomorrow_morning();
  const json book = {{"gpu_model", "h100-sxm5-80gb"}, {"region", "cn-east"}, {"starts_at", starts}, {"ends_at", ends}, {"currency", "CNY"}};
  const std::string query = "?gpu_model=h100-sxm5-80gb&region=cn-east&starts_at=" + starts + "&ends_at=" + ends + "&currency=CNY";
  const std::vector<std::string> tokens = {make_user_token(s, "dc-ops", "supplier", "", "dc"),
                                           make_user_token(s, "acme-admin", "tenant_admin", "acme"),
                                           make_user_token(s, "beta-admin", "tenant_admin", "beta")};

  auto open_orders = [&] {
    return expect_2xx(s.admin("GET", "/api/v1/market-orders?state=open&limit=1000"), "open orders").body["items"];
  };
  // Depth as the stored open orders make it: levels by price, best first, 20 at most.
  auto stored_depth = [&](const json& open, const char* side) {
    std::map<int64_t, std::pair<int64_t, int64_t>> levels;  // price -> (GPUs, orders)
    for (const json& o : open)
      if (o["side"] == side) {
        auto& l = levels[micros(o["price_per_gpu_hour"])];
        l.first += o["remaining_gpus"].get<int64_t>();
        l.second += 1;
      }
    std::vector<std::pair<int64_t, std::pair<int64_t, int64_t>>> v(levels.begin(), levels.end());
    if (std::string(side) == "buy") std::reverse(v.begin(), v.end());
    json out = json::array();
    for (size_t i = 0; i < v.size() && i < 20; ++i)
      out.push_back({v[i].first, v[i].second.first, v[i].second.second});
    return out;
  };
  auto served_depth = [&](const json& levels) {
    json out = json::array();
    for (const json& l : levels) out.push_back({micros(l["price_per_gpu_hour"]), l["gpus"], l["orders"]});
    return out;
  };
  auto check = [&](const std::string& step) {
    const json open = open_orders();
    const json depth = s.req("GET", "/api/v1/market/depth" + query, tokens[1]).body;
    ASSERT_EQ(served_depth(depth["bids"]), stored_depth(open, "buy")) << step;
    ASSERT_EQ(served_depth(depth["asks"]), stored_depth(open, "sell")) << step;
  };

  std::mt19937 rng(20261205);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int placed = 0, cancelled = 0, replaced = 0;
  for (int step = 0; step < 160; ++step) {
    if (step == 80) s.kill9(), s.start(), check("after the restart");
    const int what = pick(0, 9);
    const json open = open_orders();
    if (what >= 8 && !open.empty()) {  // the operator cancels or replaces someone's open order
      const json& o = open[static_cast<size_t>(pick(0, static_cast<int>(open.size()) - 1))];
      const std::string path = "/api/v1/market-orders/" + o["id"].get<std::string>();
      if (what == 8) {
        Resp r = s.admin("POST", path + "/cancel", json::object());
        ASSERT_EQ(r.status, 200) << r.describe();
        ++cancelled;
      } else {
        json change = {{"price_per_gpu_hour", std::to_string(pick(17, 22)) + ".50"}};
        if (pick(0, 1)) change = {{"gpus", std::max<int64_t>(1, o["remaining_gpus"].get<int64_t>() - 1)}};
        Resp r = s.admin("POST", path + "/replace", change);
        // A sell at a new price is a new sell order: refused whole (the old one stays) when a
        // part-node trade's reservation keeps the seller from offering its rest again.
        if (o["side"] == "sell" && r.status == 422 && r.reason_for("gpus").find("can deliver") != std::string::npos) {
          ASSERT_EQ(s.admin("GET", path).body["state"], "open");
        } else {
          ASSERT_EQ(r.status, 200) << r.describe();
          ++replaced;
        }
      }
    } else {
      const bool sell = pick(0, 2) == 0;
      json o = book;
      o["side"] = sell ? "sell" : "buy";
      o["gpus"] = pick(1, 4);
      o["price_per_gpu_hour"] = std::to_string(pick(17, 21)) + "." + std::to_string(pick(0, 3) * 25).substr(0, 2);
      const char* tifs[] = {"gtc", "gtc", "gtc", "ioc", "fok"};
      o["time_in_force"] = tifs[pick(0, 4)];
      o["all_or_none"] = pick(0, 4) == 0;
      Resp r = s.req("POST", "/api/v1/market-orders", tokens[sell ? 0 : static_cast<size_t>(pick(1, 2))], o);
      if (sell && r.status == 422) continue;  // the supplier can deliver no more
      ASSERT_EQ(r.status, 201) << r.describe();
      ++placed;
    }
    check("step " + std::to_string(step));
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(placed, 80);
  EXPECT_GT(cancelled + replaced, 10);

  // Every order's fills are its trades; the book left is not crossed unless by all-or-none orders.
  std::map<std::string, int64_t> from_trades;
  for (const std::string& id : list_ids(s, "/api/v1/market-trades", s.admin_token())) {
    const json t = s.admin("GET", "/api/v1/market-trades/" + id).body;
    from_trades[t["buy_order"].get<std::string>()] += t["gpus"].get<int64_t>();
    from_trades[t["sell_order"].get<std::string>()] += t["gpus"].get<int64_t>();
  }
  EXPECT_FALSE(from_trades.empty());
  for (const std::string& id : list_ids(s, "/api/v1/market-orders", s.admin_token())) {
    const json o = s.admin("GET", "/api/v1/market-orders/" + id).body;
    EXPECT_EQ(o["filled_gpus"].get<int64_t>(), from_trades.count(id) ? from_trades[id] : 0) << o.dump();
    if (o["state"] == "open") {
      EXPECT_EQ(o["filled_gpus"].get<int64_t>() + o["remaining_gpus"].get<int64_t>(), o["gpus"].get<int64_t>()) << o.dump();
    }
  }
  int64_t bid = 0, ask = INT64_MAX;
  for (const json& o : open_orders())
    if (!o.value("all_or_none", false))
      (o["side"] == "buy" ? bid : ask) = o["side"] == "buy" ? std::max(bid, micros(o["price_per_gpu_hour"]))
                                                           : std::min(ask, micros(o["price_per_gpu_hour"]));
  EXPECT_LT(bid, ask);
}

}  // namespace
}  // namespace gpurent::testing

namespace gpurent::testing {
namespace {

// At most 1,000 open orders per owner (one placed, 999 copied in the database): one more is a 422
// saying how many are open, and that an order whose window is over counts until it expires.
TEST(MarketApi, AnOwnerHoldsAtMostAThousandOpenOrders) {
  ServerProcess s;
  Market m = dc_world(s, {"gpn1"});
  const json bid = expect_2xx(m.place(m.acme, m.order("buy", 1, "1.00")), "a resting bid").body;
  ASSERT_EQ(bid["state"], "open") << bid.dump();
  edit_database(s,
                "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 999) "
                "INSERT INTO objects (kind, id, name, tenant_id, supplier_id, project_id, state, region, gpu_model, "
                "created_at, updated_at, version, body) SELECT kind, id || '-' || x, name, tenant_id, supplier_id, "
                "project_id, state, region, gpu_model, created_at, updated_at, version, body FROM objects, n "
                "WHERE kind = 'market-orders' AND id = '" +
                    bid["id"].get<std::string>() + "'",
                999);
  Resp over = m.place(m.acme, m.order("buy", 1, "1.00"));
  EXPECT_EQ(over.status, 422) << over.describe();
  EXPECT_NE(over.reason_for("gpus").find("at most 1000 open orders at a time, and this tenant or supplier has 1000"),
            std::string::npos)
      << over.describe();
  EXPECT_EQ(m.place(m.beta, m.order("buy", 1, "1.00")).status, 201) << "another owner's orders are its own";
}

}  // namespace
}  // namespace gpurent::testing

namespace gpurent::testing {
namespace {

// A seller whose nodes the trades before have all taken delivers none of its other resting sells:
// they leave the book together, also one this buy never reached (E, behind dc2's cheaper sell),
// which used to rest on as an ask nobody could buy.
TEST(MarketApi, ASellerWithNoNodeLeftLeavesTheBookWithAllItsUntradedSells) {
  ServerProcess s;
  Market m = dc_world(s, {"gpn1", "gpn2"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc2")), "second supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc2", "m1")), "its node");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc2", "h100")), "its offer");
  const std::string dc2 = make_user_token(s, "dc2-ops", "supplier", "", "dc2");
  std::vector<std::string> dc_sells;
  for (const char* price : {"10.00", "10.00", "10.00", "12.00"})
    dc_sells.push_back(expect_2xx(m.place(m.dc, m.order("sell", 1, price)), "a one-GPU sell").body["id"]);
  const std::string d = expect_2xx(m.place(dc2, m.order("sell", 1, "11.00")), "dc2's sell").body["id"];
  const json buy = expect_2xx(m.place(m.acme, m.order("buy", 3, "20.00")), "the buy").body;
  EXPECT_EQ(buy["filled_gpus"], 3) << buy.dump();
  EXPECT_EQ(buy["state"], "filled") << buy.dump();
  auto order = [&](const std::string& id) { return s.admin("GET", "/api/v1/market-orders/" + id).body; };
  EXPECT_EQ(order(dc_sells[0])["state"], "filled");
  EXPECT_EQ(order(dc_sells[1])["state"], "filled");
  EXPECT_EQ(order(d)["state"], "filled") << "dc2's node delivers the third GPU";
  for (size_t i : {2u, 3u}) {
    const json o = order(dc_sells[i]);
    EXPECT_EQ(o["state"], "cancelled") << o.dump();
    EXPECT_NE(o.value("reason", "").find("its seller can no longer deliver it"), std::string::npos) << o.dump();
  }
  EXPECT_TRUE(m.get("depth", m.acme)["asks"].empty()) << m.get("depth", m.acme).dump();
}

}  // namespace
}  // namespace gpurent::testing
