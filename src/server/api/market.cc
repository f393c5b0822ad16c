// The GPU-hour market's API (docs/market.md): /api/v1/market-orders and /api/v1/market-trades, and
// the books' public data (quote, depth, prints) under /api/v1/market/.
//
// A book is (GPU model, region, delivery window, currency): a window is whole UTC hours, and an
// order's quantity is GPUs for the whole window (a rectangle: GPUs × hours). Suppliers sell (only
// what their available nodes of that model in that region, not reserved then, can deliver beside
// what they offer for overlapping windows); tenants' admins buy, and resell whole nodes they hold
// in node books (market_settlement.h). The store is the truth: each order
// is matched inside the single writer's transaction, its lane locked (market_books.h), against its
// book's stored open orders (a copy kept in memory while the lane's stamp proves it current;
// market/order_book.h, price-time priority, the resting order's price), so an acknowledged order or
// trade survives a kill -9, the book after a restart is the book before, and several servers on
// one database match a book one after another.
// Each trade is settled in the same transaction (market_settlement.h): a reservation of the
// seller's nodes and a commitment at the trade price in the buyer's contract. Not built (said so in
// docs/market.md): resale of part of a node.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "core/ids.h"
#include "market/order_book.h"
#include "market/price_index.h"
#include "model/enums_supply.h"
#include "server/api/market_books.h"
#include "server/api/market_settlement.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/issued_invoices.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

constexpr int64_t kHourMs = 3'600'000;
constexpr int64_t kMaxWindowHours = 366 * 24;
constexpr int64_t kMaxOrderGpus = 100'000;
// The most one order's price × GPU-hours may come to: 1,000,000,000 in its currency (match_new).
constexpr int64_t kMaxTradeAmountMicros = 1'000'000'000'000'000;
// Nodes a node book's order may ask for: a trade is settled into one reservation, which holds at
// most kMaxReservedNodes nodes.
int64_t max_order_nodes(int64_t node_gpus) {
  return std::min<int64_t>(kMaxOrderGpus / std::max<int64_t>(node_gpus, 1), static_cast<int64_t>(kMaxReservedNodes));
}
constexpr size_t kDepthLevels = 20;
constexpr size_t kMaxPrints = 200;
constexpr int64_t kMaxPriceMicros = int64_t{1'000'000} * 1'000'000;  // 1,000,000 per GPU-hour
// Open orders one tenant or supplier may have: every order is matched against its whole book (held
// in memory, read from the store after a restart or another server's write), so nobody may grow
// one without bound to slow everyone else's orders.
constexpr int64_t kMaxOpenOrdersPerOwner = 1000;

constexpr EnumEntry<MarketSide> kSideNames[] = {{MarketSide::kBuy, "buy"}, {MarketSide::kSell, "sell"}};
constexpr EnumEntry<TimeInForce> kTifNames[] = {
    {TimeInForce::kGtc, "gtc"}, {TimeInForce::kIoc, "ioc"}, {TimeInForce::kFok, "fok"}};

// What names a book, as the stored orders and the query parameters carry it.
struct BookKey {
  std::string gpu_model, region;
  TimeMs starts_at = 0, ends_at = 0;
  Currency currency = Currency::kUSD;
  int64_t node_gpus = 0;  // 0: a book of GPUs; k: a book of whole nodes of k GPUs (quantities in nodes)
  bool operator==(const BookKey&) const = default;
  int64_t hours() const { return (ends_at - starts_at) / kHourMs; }
  int64_t unit() const { return node_gpus > 0 ? node_gpus : 1; }  // GPUs per engine unit
};

BookKey key_of(const json& order) {
  return {order.at("gpu_model").get<std::string>(), order.at("region").get<std::string>(),
          parse_rfc3339(order.at("starts_at").get<std::string>(), "starts_at").value(),
          parse_rfc3339(order.at("ends_at").get<std::string>(), "ends_at").value(),
          parse_currency(order.at("currency").get<std::string>()).value(), order.value("node_gpus", int64_t{0})};
}

// Reads the book's fields (an order's body, or a market-data query), checking the window: whole
// hours, ends after it starts, at most a year long, not over.
void read_book(Fields& f, const GpuCatalog& catalog, TimeMs now, BookKey& k) {
  if (const GpuModel* m = read_gpu_model_ref(f, catalog, "gpu_model")) k.gpu_model = m->id;
  k.region = f.str("region", kRegionRule);
  k.starts_at = f.time("starts_at");
  k.ends_at = f.time("ends_at");
  const std::string cur = f.str("currency", {.max_len = 3});
  if (auto c = parse_currency(cur)) k.currency = *c;
  else if (!cur.empty()) f.error("currency", Message("api.market.currency"));
  k.node_gpus = f.opt_integer("node_gpus", 1, 64).value_or(0);
  if (k.starts_at % kHourMs != 0) f.error("starts_at", Message("api.market.whole_hour"));
  if (k.ends_at % kHourMs != 0) f.error("ends_at", Message("api.market.whole_hour"));
  if (k.ends_at <= k.starts_at) f.error("ends_at", Message("api.market.window_order"));
  else if (k.ends_at - k.starts_at > kMaxWindowHours * kHourMs)
    f.error("ends_at", Message("api.market.window_too_long").arg("hours", std::to_string(kMaxWindowHours)));
  else if (k.ends_at <= now) f.error("ends_at", Message("api.market.window_over"));
}

// The account behind an order: its tenant (a buy, or a tenant's resale) or its supplier.
uint64_t owner_of(const json& order) {
  const std::string tenant = order.value("tenant_id", "");
  return std::hash<std::string>{}(tenant.empty() ? "s:" + order.value("supplier_id", "") : "t:" + tenant);
}

// The book's open orders, oldest first (their sequence numbers give time priority). Reader: a
// StoreReader (market data) or the writer's StoreTx (matching).
template <class Reader>
Result<std::vector<Record>> open_orders(Reader& store, const BookKey& k) {
  auto all = list_all(store, "market-orders", {{"gpu_model", k.gpu_model}, {"region", k.region}, {"state", "open"}});
  if (!all) return all.error();
  std::vector<Record> out;
  for (Record& r : *all)
    if (key_of(r.body) == k) out.push_back(std::move(r));
  sort_by_seq(out);
  return out;
}

// The book's name in MarketBooks.
std::string book_name(const BookKey& k) {
  return k.gpu_model + "|" + k.region + "|" + std::to_string(k.starts_at) + "|" + std::to_string(k.ends_at) + "|" +
         currency_code(k.currency) + "|" + std::to_string(k.node_gpus);
}

// The book's open orders inside a market write (its lane locked): MarketBooks' copy when the lane's
// stamp proves it current, else the store's.
Result<OrderList> book_orders(BookTx& bt, const BookKey& k) {
  if (auto s = bt.lock(k.gpu_model, k.region); !s) return s.error();
  return bt.open_orders(
      book_name(k), [k](const json& order) { return key_of(order) == k; },
      [k](StoreTx& tx) { return open_orders(tx, k); });
}

// The book's open orders for market data: the copy at the lane's stamp a reader sees, else the store's.
Result<OrderList> read_book_orders(App& app, const BookKey& k) {
  if (app.market_books) {
    auto stamp = market_lane_stamp(app.store, k.gpu_model, k.region);
    if (!stamp) return stamp.error();
    if (auto held = app.market_books->get(market_lane_id(k.gpu_model, k.region), *stamp, book_name(k))) return std::move(*held);
  }
  auto stored = open_orders(app.store, k);
  if (!stored) return stored.error();
  OrderList out;
  for (Record& r : *stored) out.push_back(std::make_shared<const Record>(std::move(r)));
  return out;
}

// The book of these resting orders, restored as they are (a stored book has nothing left to
// trade: every change ran through the engine): order i has engine id i + 1.
OrderBook book_of(const OrderList& resting, const std::set<uint64_t>& left_out = {}) {
  OrderBook book;
  for (size_t i = 0; i < resting.size(); ++i) {
    if (left_out.count(i + 1)) continue;
    const json& b = resting[i]->body;
    book.restore({i + 1, owner_of(b), enum_parse(kSideNames, b.at("side").get<std::string>()).value(),
                  b.at("price_micros").get<int64_t>(), b.at("remaining_gpus").get<int64_t>() / std::max<int64_t>(b.value("node_gpus", int64_t{1}), 1), TimeInForce::kGtc,
                  b.value("all_or_none", false)});
  }
  return book;
}

MarketBook market_book(const BookKey& k) { return {k.gpu_model, k.region, k.starts_at, k.ends_at, k.currency, k.node_gpus}; }

// The order as written by its owner (what an idempotent retry must repeat).
json order_request(const json& body) {
  json req = json::object();
  for (const char* k : {"side", "gpu_model", "region", "starts_at", "ends_at", "currency", "node_gpus", "gpus", "nodes",
                        "price_per_gpu_hour", "time_in_force", "all_or_none", "tenant", "supplier"})
    if (body.contains(k) && !body[k].is_null()) req[k] = body[k];  // null is absent, as Fields reads it
  return req;
}

struct Matched {
  json order;                  // the new order's body, final (null for a cancel)
  std::vector<Record> makers;  // resting orders that traded or were cancelled
  std::vector<Record> trades;  // new trades
};

// The engine's fills as trades, and the resting orders they changed (into m.makers). Engine ids:
// resting[i] is i + 1; `incoming` (id resting.size() + 1) is the new order's body, or null. A
// fill may be between two resting orders (an all-or-none order that could now fill whole).
Status record_fills(const std::vector<MarketFill>& fills, const OrderList& resting, const json* incoming,
                    const BookKey& k, TimeMs now, Matched& m) {
  const uint64_t in_id = resting.size() + 1;
  auto maker_rec = [&](uint64_t id) -> Record& {  // the changed copy of resting order `id`
    const Record& r = *resting[id - 1];
    auto it = std::find_if(m.makers.begin(), m.makers.end(), [&](const Record& x) { return x.id == r.id; });
    return it == m.makers.end() ? m.makers.emplace_back(r) : *it;
  };
  auto body_of = [&](uint64_t id) -> const json& { return id == in_id ? *incoming : resting[id - 1]->body; };
  for (const MarketFill& fill : fills) {
    const int64_t gpus = fill.qty * k.unit();
    const json& mb = body_of(fill.maker);
    const bool maker_buys = mb.at("side") == "buy";
    const uint64_t buy = maker_buys ? fill.maker : fill.taker, sell = maker_buys ? fill.taker : fill.maker;
    Record t;
    t.kind = "market-trades";
    t.id = new_id("mtr");
    t.name = t.id;
    t.gpu_model = k.gpu_model;
    t.region = k.region;
    t.tenant_id = body_of(buy).at("tenant_id").get<std::string>();
    const json& sb = body_of(sell);
    t.supplier_id = sb.contains("resale_supplier_id") ? sb["resale_supplier_id"].get<std::string>() : sb.at("supplier_id").get<std::string>();
    t.state = "unsettled";
    const Money trade_price(fill.price, k.currency);
    auto amount = trade_price.mul_ratio(gpus * k.hours(), 1);
    if (!amount) return amount.error();
    auto order_id = [&](uint64_t id) { return id == in_id ? std::string("(this)") : resting[id - 1]->id; };
    t.body = {{"gpu_model", k.gpu_model}, {"region", k.region}, {"starts_at", format_rfc3339(k.starts_at)},
              {"ends_at", format_rfc3339(k.ends_at)}, {"currency", currency_code(k.currency)},
              {"price_per_gpu_hour", trade_price.amount_string()}, {"gpus", gpus}, {"gpu_hours", gpus * k.hours()},
              {"amount", amount->amount_string()}, {"buy_order", order_id(buy)}, {"sell_order", order_id(sell)},
              {"taker_side", body_of(fill.taker).at("side")}, {"at", format_rfc3339(now)},
              {"tenant_id", t.tenant_id}, {"supplier_id", t.supplier_id}};
    if (k.node_gpus > 0) t.body["node_gpus"] = k.node_gpus, t.body["nodes"] = fill.qty;
    if (sb.contains("resale_supplier_id")) t.body["reseller_tenant_id"] = sb.at("tenant_id");
    t.created_at = t.updated_at = now;
    // Each resting order: less remaining; filled when none is left. One met twice is updated twice.
    for (uint64_t id : {fill.maker, fill.taker}) {
      if (id == in_id) continue;
      Record& r = maker_rec(id);
      r.body["remaining_gpus"] = r.body["remaining_gpus"].get<int64_t>() - gpus;
      r.body["filled_gpus"] = r.body["filled_gpus"].get<int64_t>() + gpus;
      r.body["trades"].push_back(t.id);
      if (r.body["remaining_gpus"].get<int64_t>() == 0) r.body["state"] = r.state = "filled";
    }
    m.trades.push_back(std::move(t));
  }
  return ok_status();
}

// Validates a new order and matches it against its book (inside the writer's transaction).
Result<Matched> match_new(App& app, const json& body, const Principal& p, BookTx& bt) {
  StoreTx& tx = bt.tx();
  if (!body.is_object()) return Error::invalid("", Message("field.object"));
  const TimeMs now = app.clock.now();
  FieldErrors errs;
  Fields f(body, "", errs);
  BookKey k;
  const MarketSide side = f.enumeration("side", kSideNames);
  read_book(f, app.catalog, now, k);
  // A window that starts in a month closed for invoicing (or whose close is due) would settle
  // commitment hours no invoice bills.
  auto billable = billable_from(tx, now, app.opts.firewall_interval_s > 0, app.opts.month_close_delay_h * kMsPerHour);
  if (!billable) return billable.error();
  if (f.has("starts_at") && k.starts_at < *billable)
    f.error("starts_at", Message("api.market.window_in_closed_month")
                             .arg("month", format_rfc3339(k.starts_at).substr(0, 7))
                             .arg("from", format_rfc3339(*billable)));
  // A GPU book's orders are in GPUs; a node book's (node_gpus) in whole nodes of that size.
  int64_t gpus = 0;
  if (k.node_gpus > 0) {
    if (f.has("gpus")) f.error("gpus", Message("api.market.nodes_not_gpus"));
    gpus = f.integer("nodes", 1, max_order_nodes(k.node_gpus)) * k.node_gpus;
  } else {
    if (f.has("nodes")) f.error("nodes", Message("api.market.nodes_need_size"));
    gpus = f.integer("gpus", 1, kMaxOrderGpus);
  }
  const Money price = f.money("price_per_gpu_hour", k.currency);
  const TimeInForce tif = f.enumeration("time_in_force", kTifNames, std::optional<TimeInForce>(TimeInForce::kGtc));
  const bool aon = f.boolean("all_or_none", false);
  const std::string tenant_ref = f.opt_str("tenant", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp}).value_or("");
  const std::string supplier_ref = f.opt_str("supplier", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp}).value_or("");
  f.opt_str("idempotency_key", {.max_len = 64, .pattern = "[A-Za-z0-9._:-]+", .pattern_help = "pattern.idempotency_key"});
  if (f.has("price_per_gpu_hour") && price.micros() <= 0) f.error("price_per_gpu_hour", Message("api.market.price_positive"));
  if (price.micros() > kMaxPriceMicros)
    f.error("price_per_gpu_hour", Message("api.market.price_too_high").arg("max", Money(kMaxPriceMicros, k.currency).amount_string()));
  // Every trade of the order is at most its price (or its maker's, lower) times its GPU-hours.
  // Bounded far below the money type's range: a default credits the buyer the amount and the
  // outage compensation on top (300 % by default), on an invoice that sums it with other lines;
  // at int64's edge either would overflow and leave the month unrated.
  else if (price.micros() > 0 && gpus > 0 && k.ends_at > k.starts_at &&
           static_cast<__int128>(price.micros()) * gpus * k.hours() > kMaxTradeAmountMicros)
    f.error("price_per_gpu_hour", Message("api.market.amount_too_high")
                                      .arg("gpu_hours", std::to_string(gpus * k.hours()))
                                      .arg("max", Money(kMaxTradeAmountMicros, k.currency).amount_string()));
  f.finish();
  if (!errs.empty()) return errs.to_error();
  // From here on the lane is this transaction's: what the seller can deliver, the book and the
  // settlement are read and written as if no other server were writing (market_books.h).
  if (auto s = bt.lock(k.gpu_model, k.region); !s) return s.error();

  json order = order_request(body);
  order["request"] = order_request(body);  // as written: an idempotent retry must repeat it
  order["gpu_model"] = k.gpu_model;
  order["starts_at"] = format_rfc3339(k.starts_at);
  order["ends_at"] = format_rfc3339(k.ends_at);
  order["currency"] = currency_code(k.currency);
  order["price_per_gpu_hour"] = price.amount_string();
  order["price_micros"] = price.micros();
  order["time_in_force"] = enum_name(kTifNames, tif);
  order["window_hours"] = k.hours();
  order["all_or_none"] = aon;
  order["gpus"] = gpus;
  if (k.node_gpus > 0) order["node_gpus"] = k.node_gpus, order["nodes"] = gpus / k.node_gpus;
  if (side == MarketSide::kBuy) {
    if (!p.is_operator() && p.tenant_id.empty())
      return forbidden(Message("api.market.may_not_buy").arg("role", role_name(p.role)));
    if (!supplier_ref.empty()) return Error::invalid("supplier", Message("api.market.buy_names_tenant"));
    auto tenant = owning_tenant(tx, p, tenant_ref);
    if (!tenant) return tenant.error();
    order["tenant_id"] = tenant->id;
  } else if (!tenant_ref.empty() || (!p.is_operator() && p.supplier_id.empty())) {
    // A tenant resells whole nodes it holds, in the node book of their size (docs/market.md#resale).
    if (!p.is_operator() && p.role != Role::kTenantAdmin)
      return forbidden(Message("api.market.may_not_buy").arg("role", role_name(p.role)));
    if (k.node_gpus == 0) return Error::invalid("node_gpus", Message("api.market.resale_in_node_books"));
    auto tenant = owning_tenant(tx, p, tenant_ref);
    if (!tenant) return tenant.error();
    std::string supplier_id;
    if (!supplier_ref.empty()) {
      auto sup = resolve_ref(tx, "suppliers", supplier_ref, {}, "supplier");
      if (!sup) return sup.error();
      supplier_id = sup->id;
    }
    auto held = resalable_nodes(tx, tenant->id, supplier_id, market_book(k), now);
    if (!held) return held.error();
    if (gpus / k.node_gpus > held->nodes)
      return Error::invalid("nodes", Message("api.market.cannot_resell")
                                         .arg("nodes", std::to_string(gpus / k.node_gpus))
                                         .arg("can", std::to_string(held->nodes)));
    order["tenant_id"] = tenant->id;
    order["resale_supplier_id"] = held->supplier_id;
  } else {
    std::string supplier_id = p.supplier_id;
    if (p.is_operator()) {
      if (supplier_ref.empty()) return Error::invalid("supplier", Message("field.required"));
      auto sup = resolve_ref(tx, "suppliers", supplier_ref, {}, "supplier");
      if (!sup) return sup.error();
      supplier_id = sup->id;
    } else if (!supplier_ref.empty()) {
      auto sup = resolve_ref(tx, "suppliers", supplier_ref, {}, "supplier");
      if (!sup) return sup.error();
      if (sup->id != p.supplier_id) return Error::invalid("supplier", Message("api.market.own_supplier"));
    }
    auto can = deliverable_gpus(tx, supplier_id, market_book(k));
    if (!can) return can.error();
    if (gpus > *can)
      return Error::invalid("gpus", Message("api.market.cannot_deliver")
                                        .arg("gpus", std::to_string(gpus))
                                        .arg("can", std::to_string(*can))
                                        .arg("gpu_model", k.gpu_model)
                                        .arg("region", k.region));
    order["supplier_id"] = supplier_id;
  }
  {
    const bool by_tenant = order.contains("tenant_id");
    // Counted one writer at a time per owner: orders in other lanes hold other lane locks.
    const std::string owner = order[by_tenant ? "tenant_id" : "supplier_id"].get<std::string>();
    if (auto l = take_write_lock(tx, "market-orders-" + owner, "the open market orders of " + owner); !l) return l.error();
    auto open = tx.count("market-orders", {{by_tenant ? "tenant_id" : "supplier_id", order[by_tenant ? "tenant_id" : "supplier_id"]}, {"state", "open"}});
    if (!open) return open.error();
    if (*open >= kMaxOpenOrdersPerOwner)
      return Error::invalid("gpus", Message("api.market.too_many_open")
                                        .arg("max", std::to_string(kMaxOpenOrdersPerOwner))
                                        .arg("open", std::to_string(*open)));
  }
  auto seq = bt.next_seq();
  if (!seq) return seq.error();
  order["seq"] = *seq;

  auto resting = book_orders(bt, k);
  if (!resting) return resting.error();
  const uint64_t taker = resting->size() + 1;
  order["side"] = enum_name(kSideNames, side);
  // A seller delivers each fill in whole nodes (market_settlement.h): a resting sell whose seller
  // can no longer deliver what it would trade leaves the book (cancelled, saying why), an incoming
  // sell trades only what its seller can deliver, and the book is matched again without them, so
  // no trade defaults at settlement for want of a node the market had counted on.
  std::set<uint64_t> undeliverable;  // resting orders left out (their ids in the book)
  int64_t may_trade = gpus;          // what the incoming order may trade
  AddResult r;
  Matched out;
  for (;;) {
    out = Matched{};
    r = AddResult{};
    if (may_trade > 0) {
      OrderBook book = book_of(*resting, undeliverable);
      std::vector<MarketFill> fills;
      r = book.add({taker, owner_of(order), side, price.micros(), may_trade / k.unit(), tif, aon}, fills);
      if (auto st = record_fills(fills, *resting, &order, k, now, out); !st) return st.error();
    }
    std::string exhausted;  // a seller with no node left after the trades before the short one
    auto short_at = first_undeliverable(tx, out.trades, market_book(k), now, &exhausted);
    if (!short_at) return short_at.error();
    if (!*short_at) break;
    const std::string sell = out.trades[**short_at].body.at("sell_order").get<std::string>();
    if (sell == "(this)") {
      int64_t before = 0;  // what this sell traded before the trade its seller could not deliver
      for (size_t i = 0; i < **short_at; ++i)
        if (out.trades[i].body["sell_order"] == "(this)") before += out.trades[i].body["gpus"].get<int64_t>();
      may_trade = tif == TimeInForce::kFok || aon ? 0 : before;
    } else {
      for (size_t i = 0; i < resting->size(); ++i)
        if ((*resting)[i]->id == sell) undeliverable.insert(i + 1);
      // The trades before the short one stay as they are when it leaves (they come first in price
      // and time), so a seller with no node left after them can deliver none of its other resting
      // sells in this match either: they all leave it now, not one match each (a thousand small
      // sells of a seller with a few nodes made a thousand matches, each reading every reservation).
      if (!exhausted.empty()) {
        std::set<std::string> traded;
        for (size_t i = 0; i < **short_at; ++i) traded.insert(out.trades[i].body.at("sell_order").get<std::string>());
        for (size_t i = 0; i < resting->size(); ++i) {
          const Record& o = *(*resting)[i];
          if (o.body.value("side", "") == "sell" && !o.body.contains("resale_supplier_id") &&
              o.body.value("supplier_id", "") == exhausted && !traded.count(o.id))
            undeliverable.insert(i + 1);
        }
      }
    }
  }
  // (seller, reseller, GPUs) -> whether that much is still undeliverable after the final trades:
  // asked once for many left-out orders alike.
  std::map<std::tuple<std::string, std::string, int64_t>, bool> still_short;
  for (uint64_t id : undeliverable) {
    // Left out of this match; cancelled only when, after the trades the match did make, its
    // seller still could not deliver what is left of it (the trades that took its node may be
    // gone from the final match: a fill-or-kill that did not fill, say). Else it rests as it was.
    const Record& rest = *(*resting)[id - 1];
    Record probe;
    probe.kind = "market-trades";
    const bool resale = rest.body.contains("resale_supplier_id");
    probe.supplier_id = rest.body.value(resale ? "resale_supplier_id" : "supplier_id", "");
    probe.body = {{"gpus", rest.body.at("remaining_gpus")}};
    if (resale) probe.body["reseller_tenant_id"] = rest.body.at("tenant_id");
    const auto key = std::make_tuple(probe.supplier_id, resale ? rest.body.value("tenant_id", "") : std::string(),
                                     rest.body.at("remaining_gpus").get<int64_t>());
    auto known = still_short.find(key);
    if (known == still_short.end()) {
      std::vector<Record> after = out.trades;
      after.push_back(std::move(probe));
      auto still = first_undeliverable(tx, after, market_book(k), now);
      if (!still) return still.error();
      known = still_short.emplace(key, still->has_value()).first;
    }
    if (!known->second) continue;
    Record m = rest;
    m.body["state"] = m.state = "cancelled";
    m.body["remaining_gpus"] = 0;
    m.body["reason"] =
        resale
            ? "its reseller no longer holds the nodes it offered (a default on them is open, or they were resold), or "
              "their supplier has no offer for the book any more"
            : "its seller can no longer deliver it: the free nodes went to earlier trades, or it would take more "
              "than 4096 of them (a trade takes whole nodes, at most 4096)";
    out.makers.push_back(std::move(m));
  }
  json trade_ids = json::array();
  for (const Record& t : out.trades)
    if (t.body["buy_order"] == "(this)" || t.body["sell_order"] == "(this)") trade_ids.push_back(t.id);
  for (uint64_t id : r.stp_cancelled) {  // cannot happen between a tenant and a supplier; kept exact
    Record m = *(*resting)[id - 1];
    m.body["state"] = m.state = "cancelled";
    m.body["reason"] = "self-trade prevention";
    out.makers.push_back(std::move(m));
  }
  order["filled_gpus"] = r.filled * k.unit();
  order["remaining_gpus"] = r.rested * k.unit();
  order["trades"] = trade_ids;
  order["state"] = r.rested > 0 ? "open" : r.filled * k.unit() == gpus ? "filled" : "cancelled";
  if (order["state"] == "cancelled")
    order["reason"] =
        may_trade < gpus
            ? "its seller cannot deliver " + std::string(may_trade == 0 ? "it" : "the rest") +
                  ": its free nodes went to the trades before, or it would take more than 4096 of them (a trade "
                  "takes whole nodes, at most 4096)"
        : tif == TimeInForce::kFok ? "fill-or-kill: the book could not fill all of it at once"
        : aon                      ? "all-or-none, immediate-or-cancel: the book could not fill all of it at once"
                                   : "immediate-or-cancel: the rest did not fill at once";
  order["side"] = enum_name(kSideNames, side);
  out.order = std::move(order);
  return out;
}

Result<Built> build_order(App& app, const json& body, const Principal& p, BookTx& bt, Matched& keep) {
  auto m = match_new(app, body, p, bt);
  if (!m) return m.error();
  keep = std::move(*m);
  IndexCols idx;
  const auto key = body.find("idempotency_key");  // null is absent, as Fields reads it
  const std::string idem = key != body.end() && key->is_string() ? key->get<std::string>() : "";
  idx.name = idem;
  idx.state = keep.order["state"];
  idx.gpu_model = keep.order["gpu_model"];
  idx.region = keep.order["region"];
  idx.tenant_id = keep.order.value("tenant_id", "");
  idx.supplier_id = keep.order.value("supplier_id", "");
  if (!idem.empty()) keep.order["idempotency_key"] = idem;
  return Built{keep.order, idx};
}

Status set_spot_prices(App& app, const BookKey& k, const std::vector<Record>& trades, const Principal& who, StoreTx& tx);

// Writes what a change of the book made: its trades (settled first, market_settlement.h) and the
// resting orders they changed, then the spot prices they set. `this_id` replaces "(this)".
Status write_matched(App& app, Matched& m, const BookKey& k, const std::string& this_id, const Principal& who,
                     StoreTx& t, TimeMs now) {
  for (Record& trade : m.trades)
    for (const char* side : {"buy_order", "sell_order"})
      if (trade.body[side] == "(this)") trade.body[side] = this_id;
  if (auto s = settle_trades(app, m.trades, market_book(k), who, t); !s) return s;
  for (Record& trade : m.trades) {
    if (auto s = t.insert(trade); !s) return s;
    if (auto s = t.append_audit({trade.created_at, who.user_id, "create", "market-trades", trade.id, trade.name}); !s) return s;
  }
  for (Record& maker : m.makers) {
    auto cur = t.get("market-orders", maker.id);
    if (!cur) return cur.error();
    if (auto s = store_change(t, *cur, maker, who, "fill", this_id, now); !s) return s;
  }
  return set_spot_prices(app, k, m.trades, who, t);
}

// Spot fills set the spot price series (docs/market.md#spot-prices): in a book whose window starts
// within the next hour, each selling supplier's last trade of this order becomes, from now, the
// spot price of each of its offers of that model in that region and currency that sells spot —
// through the spot-prices resource's own checks: an offer whose on-demand price is below the trade
// price, or whose latest spot price is not earlier than now, keeps its price.
Status set_spot_prices(App& app, const BookKey& k, const std::vector<Record>& trades, const Principal& who, StoreTx& tx) {
  if (trades.empty()) return ok_status();
  const TimeMs now = app.clock.now();
  if (k.starts_at > now + kHourMs) return ok_status();  // a forward book
  std::map<std::string, std::string> last;  // supplier id -> its last trade's price
  for (const Record& t : trades)
    if (!t.body.contains("reseller_tenant_id")) last[t.supplier_id] = t.body.at("price_per_gpu_hour").get<std::string>();
  const KindSpec& spot = app.kinds.at("spot-prices");
  for (const auto& [supplier_id, price] : last) {
    auto offers = list_all(tx, "offers", {{"supplier_id", supplier_id}, {"gpu_model", k.gpu_model}, {"region", k.region}});
    if (!offers) return offers.error();
    for (const Record& o : *offers) {
      const json& prices = o.body.value("prices", json::object());
      if (o.body.value("currency", "") != currency_code(k.currency) || !prices.contains("spot")) continue;
      const Principal seller{who.user_id, who.token_id, Role::kSupplier, "", supplier_id};
      auto r = create_in(app, spot, json{{"offer", o.id}, {"price", price}}, seller, tx);
      if (!r && r.error().code != Code::kInvalid) return r.error();  // a price the offer refuses is no error of the order
    }
  }
  return ok_status();
}

// A new order, matched at once; *repeated when its idempotency key names an order the owner placed
// with the same request (that order is answered as it is now; another request is a 422).
// A new order, matched at once, inside the writer's transaction.
Result<Record> create_order_in(App& app, const KindSpec& spec, const json& body, const Principal& p, BookTx& bt) {
  Matched m;
  KindSpec once = spec;
  once.build = [&](const json& b, const Principal& who, StoreTx&, const Record*) { return build_order(app, b, who, bt, m); };
  once.after_create = [&](const Principal& who, const Record& r, StoreTx& t) -> Status {
    return write_matched(app, m, key_of(m.order), r.id, who, t, r.created_at);
  };
  return create_in(app, once, body, p, bt.tx());
}

Result<Record> place_order(App& app, const KindSpec& spec, const json& body, const Principal& p, bool* repeated) {
  *repeated = false;
  const std::string key = body.is_object() && body.value("idempotency_key", json()).is_string()
                              ? body["idempotency_key"].get<std::string>() : "";
  Record out;
  std::unique_ptr<BookTx> bt;
  Status st = app.loop.run([&](StoreTx& raw) -> Status {
    bt = std::make_unique<BookTx>(app.market_books, raw);
    StoreTx& tx = bt->tx();
    if (!key.empty()) {
      auto same = list_all(tx, "market-orders", {{"name", key}});
      if (!same) return same.error();
      for (const Record& r : *same) {
        // The key is its owner's: a tenant's or a supplier's own orders; an operator's, those placed
        // for the same tenant or supplier reference.
        // An operator's request names its owner by name or id: the tenant when it names one (a
        // buy, a resale, whose `supplier` says whose nodes), else the supplier — the same owner
        // however named (one that does not resolve is no owner, and its create says why).
        std::string tenant_id = p.tenant_id, supplier_id = p.supplier_id;
        const char* owner_key = nullptr;  // the request's key naming the owner (an operator's)
        if (p.is_operator()) {
          owner_key = body.contains("tenant") && !body["tenant"].is_null() ? "tenant" : "supplier";
          const bool tenant = std::string(owner_key) == "tenant";
          if (body.contains(owner_key) && body[owner_key].is_string()) {
            auto owner =
                resolve_ref(tx, tenant ? "tenants" : "suppliers", body[owner_key].get<std::string>(), {}, owner_key);
            if (!owner && owner.error().code != Code::kNotFound && owner.error().code != Code::kInvalid)
              return owner.error();
            if (owner) (tenant ? tenant_id : supplier_id) = owner->id;
          }
        }
        const bool mine =
            (!tenant_id.empty() && r.tenant_id == tenant_id) || (!supplier_id.empty() && r.supplier_id == supplier_id);
        if (!mine) continue;
        // The same order: the same fields, the owner compared above however the operator named it.
        json was = r.body.value("request", json::object()), now = order_request(body);
        if (owner_key) was.erase(owner_key), now.erase(owner_key);
        if (was != now) return Error::invalid("idempotency_key", Message("api.market.key_reused").arg("order", r.id));
        out = r;
        *repeated = true;
        return ok_status();
      }
    }
    auto r = create_order_in(app, spec, body, p, *bt);
    if (!r) return r.error();
    out = std::move(*r);
    return ok_status();
  });
  if (!st) return st.error();
  bt->committed();
  if (!*repeated) app.metrics.count_write(spec.kind, "create");
  return out;
}

// POST /api/v1/market-orders: 201 with the new order, or 200 with the one an idempotent retry names.
void post_order(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  bool repeated = false;
  auto out = place_order(app, spec, *body, p, &repeated);
  if (!out) return send_problem(res, out.error(), req.path);
  if (!repeated) res.set_header("Location", "/api/v1/market-orders/" + out->id);
  send_json(res, repeated ? 200 : 201, present(*out));
}

// An order a write names (…/{id}/cancel, …/replace): visible to p and within p's write scope.
Result<Record> writable_order(App& app, const KindSpec& spec, const httplib::Request& req, const Principal& p) {
  auto rec = find_visible(app.store, spec, p, req.matches[1]);
  if (!rec) return rec.error();
  if (!in_scope(write_scope(p, spec.object_kind), p, *rec))
    return forbidden(Message("api.market.cancel_forbidden").arg("role", role_name(p.role)));
  return rec;
}

// The order as stored now, inside the writer's transaction; 409 unless it is open.
Result<Record> open_order(StoreTx& tx, const KindSpec& spec, const std::string& id) {
  auto cur = tx.get(spec.kind, id);
  if (!cur) return cur.error();
  if (cur->state != "open")
    return Error::make(Code::kConflict, Message("api.market.not_open").arg("order", cur->id).arg("state", cur->state));
  return cur;
}

// Open order `cur`'s book restored from the store, and the order's engine id in it.
struct BookAt {
  OrderList resting;
  OrderBook book;
  uint64_t id = 0;
};
Result<BookAt> book_at(BookTx& bt, const Record& cur) {
  auto resting = book_orders(bt, key_of(cur.body));
  if (!resting) return resting.error();
  auto at = std::find_if(resting->begin(), resting->end(), [&](const auto& o) { return o->id == cur.id; });
  if (at == resting->end()) return Error::make(Code::kInternal, "market order " + cur.id + " is open but not in its book");
  BookAt out;
  out.id = static_cast<uint64_t>(at - resting->begin()) + 1;
  out.book = book_of(*resting);
  out.resting = std::move(*resting);
  return out;
}

// Whether a trade the engine made after a cancel or a smaller replace (a resting all-or-none
// order that can now fill whole) could not be delivered or settled: its seller has no offer or
// too few free nodes any more, or its reseller no longer holds the nodes. Such fills are not
// made — the change goes through without them — so an owner can always take its order out.
Result<bool> unlocked_undeliverable(StoreTx& tx, const Matched& m, const BookKey& k, TimeMs now) {
  if (m.trades.empty()) return false;
  auto short_at = first_undeliverable(tx, m.trades, market_book(k), now);
  if (!short_at) return short_at.error();
  return short_at->has_value();
}

// Whether book k's window starts in a month closed for invoicing (or whose close is due): nothing
// trades in it any more, whatever a change would unlock — its commitment hours would reach no
// invoice (new orders there are refused on starts_at, match_new).
Result<bool> starts_in_closed_month(App& app, StoreTx& tx, const BookKey& k, TimeMs now) {
  auto billable = billable_from(tx, now, app.opts.firewall_interval_s > 0, app.opts.month_close_delay_h * kMsPerHour);
  if (!billable) return billable.error();
  return k.starts_at < *billable;
}

// Takes open order `cur` out of its book through the engine (an order out of the way may let a
// resting all-or-none order fill whole: those trades are made here) and stores it as `state`.
Result<Record> cancel_in(App& app, const Record& cur, const char* state, const std::string& reason, const Principal& p,
                         BookTx& bt) {
  StoreTx& tx = bt.tx();
  const TimeMs now = app.clock.now();
  Record r = cur;
  r.state = r.body["state"] = state;
  r.body["reason"] = reason;
  const BookKey k = key_of(cur.body);
  auto b = book_at(bt, cur);
  if (!b) return b.error();
  std::vector<MarketFill> fills;
  // Out of the engine's book too, where leaving may let a resting all-or-none order fill — but not
  // in a window that is over (nothing trades for hours that are past) or that starts in a closed
  // month.
  auto closed = starts_in_closed_month(app, tx, k, now);
  if (!closed) return closed.error();
  if (k.ends_at > now && !*closed) b->book.cancel(b->id, fills);
  Matched m;
  if (auto s = record_fills(fills, b->resting, nullptr, k, now, m); !s) return s.error();
  if (auto short_at = unlocked_undeliverable(tx, m, k, now); !short_at) return short_at.error();
  else if (*short_at) m = Matched{};  // the order still leaves; the orders it was in the way of rest
  if (auto s = store_change(tx, cur, r, p, state == std::string("cancelled") ? "cancel" : "replace", r.id, now); !s) return s.error();
  if (auto s = write_matched(app, m, k, cur.id, p, tx, now); !s) return s.error();
  return r;
}

// A write to open order `rec` (cancel, replace) in one transaction of the writer: its lane locked
// before the order is read again (409 unless it is still open), then `change` with it; the
// book's copy learns the outcome once committed.
Status change_open_order(App& app, const KindSpec& spec, const Record& rec,
                         const std::function<Status(const Record& cur, BookTx& bt)>& change) {
  std::unique_ptr<BookTx> bt;
  Status st = app.loop.run([&](StoreTx& raw) -> Status {
    bt = std::make_unique<BookTx>(app.market_books, raw);
    if (auto s = bt->lock(rec.gpu_model, rec.region); !s) return s;
    auto cur = open_order(bt->tx(), spec, rec.id);
    if (!cur) return cur.error();
    return change(*cur, *bt);
  });
  if (st) bt->committed();
  return st;
}

// POST /api/v1/market-orders/{id}/cancel: what is left of an open order leaves the book.
void cancel_order(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto rec = writable_order(app, spec, req, p);
  if (!rec) return send_problem(res, rec.error(), req.path);
  Record out;
  Status st = change_open_order(app, spec, *rec, [&](const Record& cur, BookTx& bt) -> Status {
    auto r = cancel_in(app, cur, "cancelled", "cancelled by its owner", p, bt);
    if (!r) return r.error();
    out = std::move(*r);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  send_json(res, 200, present(out));
}

// POST /api/v1/market-orders/{id}/replace {price_per_gpu_hour?, gpus? | nodes?}: an open order's
// new limit and what is left of it. The same price and less of it: the order keeps its place in
// the queue (200 with it). Otherwise (and always for an all-or-none order) it is cancel-replace:
// the order leaves the book as `replaced` (`replaced_by`), and a new order — its request with the
// new price and quantity — is placed and matched at once (200 with the new order, `replaces`). A
// sell may not grow beyond what its seller can deliver or hold (the new order's own checks).
void replace_order(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto rec = writable_order(app, spec, req, p);
  if (!rec) return send_problem(res, rec.error(), req.path);
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  Record out;
  Status st = change_open_order(app, spec, *rec, [&](const Record& cur, BookTx& bt) -> Status {
    StoreTx& tx = bt.tx();
    const TimeMs now = app.clock.now();
    const BookKey k = key_of(cur.body);
    const json& b = cur.body;
    const int64_t old_left = b.at("remaining_gpus").get<int64_t>();
    if (k.ends_at <= now)  // nothing trades in a window that is over: such an order can only be cancelled
      return Error::invalid("ends_at", Message("api.market.window_over"));
    FieldErrors errs;
    Fields f(*body, "", errs);
    if (!f.valid_object()) return errs.to_error();
    Money price(b.at("price_micros").get<int64_t>(), k.currency);
    if (f.has("price_per_gpu_hour")) {
      price = f.money("price_per_gpu_hour", k.currency);
      if (price.micros() <= 0) f.error("price_per_gpu_hour", Message("api.market.price_positive"));
    }
    int64_t left = old_left;
    if (k.node_gpus > 0) {
      if (f.has("gpus")) f.error("gpus", Message("api.market.nodes_not_gpus"));
      if (f.has("nodes")) left = f.integer("nodes", 1, max_order_nodes(k.node_gpus)) * k.node_gpus;
    } else {
      if (f.has("nodes")) f.error("nodes", Message("api.market.nodes_need_size"));
      if (f.has("gpus")) left = f.integer("gpus", 1, kMaxOrderGpus);
    }
    f.finish();
    if (!errs.empty()) return errs.to_error();

    if (price.micros() == b.at("price_micros").get<int64_t>() && left <= old_left && !b.value("all_or_none", false)) {
      // Less at the same price: in place, keeping its place (what is less may let an AON order fill).
      auto bk = book_at(bt, cur);
      if (!bk) return bk.error();
      std::vector<MarketFill> fills;
      if (!bk->book.replace(bk->id, price.micros(), left / k.unit(), fills))
        return Error::make(Code::kInternal, "market order " + cur.id + " could not be replaced");
      auto replaced = std::make_shared<Record>(*bk->resting[bk->id - 1]);  // the order as replaced, before its fills
      bk->resting[bk->id - 1] = replaced;
      json& nb = replaced->body;
      nb["remaining_gpus"] = left;
      nb["gpus"] = nb.at("filled_gpus").get<int64_t>() + left;
      if (k.node_gpus > 0) nb["nodes"] = nb["gpus"].get<int64_t>() / k.node_gpus;
      Matched m;
      if (auto s = record_fills(fills, bk->resting, nullptr, k, now, m); !s) return s;
      auto short_at = unlocked_undeliverable(tx, m, k, now);
      if (!short_at) return short_at.error();
      auto closed = starts_in_closed_month(app, tx, k, now);
      if (!closed) return closed.error();
      if (*short_at || *closed) m = Matched{};  // replaced in place all the same; nothing trades
      auto mine = std::find_if(m.makers.begin(), m.makers.end(), [&](const Record& x) { return x.id == cur.id; });
      Record r = mine == m.makers.end() ? *bk->resting[bk->id - 1] : *mine;
      if (mine != m.makers.end()) m.makers.erase(mine);
      if (auto s = store_change(tx, cur, r, p, "replace", cur.id, now); !s) return s;
      if (auto s = write_matched(app, m, k, cur.id, p, tx, now); !s) return s;
      out = std::move(r);
      return ok_status();
    }
    // Cancel-replace: the old order out, a new one in, in this one transaction.
    auto old = cancel_in(app, cur, "replaced", "replaced by its owner", p, bt);
    if (!old) return old.error();
    json next = b.value("request", json::object());
    next.erase("idempotency_key");
    next["price_per_gpu_hour"] = price.amount_string();
    next.erase("gpus");
    next.erase("nodes");
    if (k.node_gpus > 0) next["nodes"] = left / k.node_gpus;
    else next["gpus"] = left;
    if (p.is_operator()) {  // an operator names whose order it is, as when placing one
      if (!b.value("tenant_id", "").empty()) next["tenant"] = b["tenant_id"];
      else next["supplier"] = b.value("supplier_id", "");
    }
    auto placed = create_order_in(app, spec, next, p, bt);
    if (!placed) return placed.error();
    Record was = *old;
    was.body["replaced_by"] = placed->id;
    auto stored = tx.get(spec.kind, was.id);
    if (!stored) return stored.error();
    if (auto s = store_change(tx, *stored, was, p, "replace", placed->id, now); !s) return s;
    Record r = *placed;
    r.body["replaces"] = cur.id;
    auto stored_new = tx.get(spec.kind, r.id);
    if (!stored_new) return stored_new.error();
    if (auto s = store_change(tx, *stored_new, r, p, "replace", cur.id, now); !s) return s;
    out = std::move(r);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  send_json(res, 200, present(out));
}

// The book a market-data query names (?gpu_model=&region=&starts_at=&ends_at=&currency=).
Result<BookKey> book_query(App& app, const httplib::Request& req) {
  if (auto st = only_params(req, {"gpu_model", "region", "starts_at", "ends_at", "currency", "node_gpus"}); !st)
    return st.error();
  json q = json::object();
  for (const auto& [k, v] : req.params) {
    if (k == "node_gpus") {
      // Whole digits only ("8abc", "+8", " 8" and "8.9" are not 8): anything else stays text,
      // and the field check words the error.
      const bool digits = !v.empty() && v.size() <= 18 && v.find_first_not_of("0123456789") == std::string::npos;
      q[k] = digits ? json(std::stoll(v)) : json(v);
      continue;
    }
    q[k] = v;
  }
  FieldErrors errs;
  Fields f(q, "", errs);
  BookKey k;
  read_book(f, app.catalog, 0, k);  // a book that is over still has its prints
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return k;
}

json book_json(const BookKey& k) {
  json j = {{"gpu_model", k.gpu_model}, {"region", k.region}, {"starts_at", format_rfc3339(k.starts_at)},
            {"ends_at", format_rfc3339(k.ends_at)}, {"currency", currency_code(k.currency)}, {"window_hours", k.hours()}};
  if (k.node_gpus > 0) j["node_gpus"] = k.node_gpus;
  return j;
}

std::string price_text(int64_t micros, Currency c) { return Money(micros, c).amount_string(); }

json levels_json(const std::vector<BookLevel>& levels, const BookKey& k) {
  json out = json::array();
  for (const BookLevel& l : levels) {
    json j = {{"price_per_gpu_hour", price_text(l.price, k.currency)}, {"gpus", l.qty * k.unit()}, {"orders", l.orders}};
    if (k.node_gpus > 0) j["nodes"] = l.qty;
    out.push_back(std::move(j));
  }
  return out;
}

// GET /api/v1/market/quote and …/depth: the book's best prices or its levels, without identities.
void get_depth(App& app, const httplib::Request& req, httplib::Response& res, bool quote_only) {
  auto k = book_query(app, req);
  if (!k) return send_problem(res, k.error(), req.path);
  auto resting = read_book_orders(app, *k);
  if (!resting) return send_problem(res, resting.error(), req.path);
  const OrderBook book = book_of(*resting);
  json out = book_json(*k);
  const size_t levels = quote_only ? 1 : kDepthLevels;
  json bids = levels_json(book.depth(MarketSide::kBuy, levels), *k);
  json asks = levels_json(book.depth(MarketSide::kSell, levels), *k);
  if (quote_only) {
    out["bid"] = bids.empty() ? json(nullptr) : bids[0];
    out["ask"] = asks.empty() ? json(nullptr) : asks[0];
  } else {
    out["bids"] = bids;
    out["asks"] = asks;
  }
  send_json(res, 200, out);
}

void get_quote(App& app, const httplib::Request& req, httplib::Response& res, const Principal&) { get_depth(app, req, res, true); }
void get_book_depth(App& app, const httplib::Request& req, httplib::Response& res, const Principal&) {
  get_depth(app, req, res, false);
}

// GET /api/v1/market/prints: the book's trades, newest first (at most 200): time, price, GPUs and
// which side took, without the parties.
void get_prints(App& app, const httplib::Request& req, httplib::Response& res, const Principal&) {
  auto k = book_query(app, req);
  if (!k) return send_problem(res, k.error(), req.path);
  auto trades = list_all(app.store, "market-trades", {{"gpu_model", k->gpu_model}, {"region", k->region}});
  if (!trades) return send_problem(res, trades.error(), req.path);
  std::vector<const Record*> mine;
  for (const Record& t : *trades)
    if (key_of(t.body) == *k) mine.push_back(&t);
  std::sort(mine.begin(), mine.end(), [](const Record* a, const Record* b) {
    return a->created_at != b->created_at ? a->created_at > b->created_at : a->id > b->id;
  });
  json prints = json::array();
  for (size_t i = 0; i < mine.size() && i < kMaxPrints; ++i) {
    const json& b = mine[i]->body;
    prints.push_back({{"at", b.at("at")}, {"price_per_gpu_hour", b.at("price_per_gpu_hour")}, {"gpus", b.at("gpus")},
                      {"taker_side", b.at("taker_side")}});
    if (b.contains("nodes")) prints.back()["nodes"] = b["nodes"];
  }
  json out = book_json(*k);
  out["prints"] = std::move(prints);
  send_json(res, 200, out);
}

// GET /api/v1/market/index?gpu_model=&region=&currency=[&from=&to=]: the daily price index
// (market/price_index.h) of the trades of every delivery window of that model and region, per UTC
// day of [from, to) (default: the last 30 days; at most 400).
void get_index(App& app, const httplib::Request& req, httplib::Response& res, const Principal&) {
  if (auto st = only_params(req, {"gpu_model", "region", "currency", "from", "to"}); !st)
    return send_problem(res, st.error(), req.path);
  json q = json::object();
  for (const auto& [k, v] : req.params) q[k] = v;
  FieldErrors errs;
  Fields f(q, "", errs);
  std::string model;
  if (const GpuModel* m = read_gpu_model_ref(f, app.catalog, "gpu_model")) model = m->id;
  const std::string region = f.str("region", kRegionRule);
  const std::string cur = f.str("currency", {.max_len = 3});
  auto currency = parse_currency(cur);
  if (!currency && !cur.empty()) f.error("currency", Message("api.market.currency"));
  constexpr TimeMs kDay = 86'400'000;
  const TimeMs today = app.clock.now() / kDay * kDay;
  const TimeMs to = f.opt_time("to").value_or(today + kDay);
  const TimeMs from = f.opt_time("from").value_or(to - 30 * kDay);
  // Per UTC day: a bound inside a day would give part of a day under that day's name.
  if (from % kDay != 0) f.error("from", Message("api.market.index_whole_day"));
  if (to % kDay != 0) f.error("to", Message("api.market.index_whole_day"));
  if (to <= from) f.error("to", Message("api.market.window_order_from"));
  else if (to - from > 400 * kDay) f.error("to", Message("api.market.index_too_long"));
  f.finish();
  if (!errs.empty()) return send_problem(res, errs.to_error(), req.path);
  auto days = read_market_index(app.store, model, region, *currency, from, to);
  if (!days) return send_problem(res, days.error(), req.path);
  json list = json::array();
  for (const IndexDay& d : *days)
    list.push_back({{"day", format_rfc3339(d.day).substr(0, 10)},
                    {"vwap_per_gpu_hour", price_text(d.vwap_micros, *currency)},
                    {"gpu_hours", d.gpu_hours},
                    {"trades", d.trades},
                    {"low_per_gpu_hour", price_text(d.low_micros, *currency)},
                    {"high_per_gpu_hour", price_text(d.high_micros, *currency)}});
  send_json(res, 200,
            {{"gpu_model", model}, {"region", region}, {"currency", currency_code(*currency)}, {"from", format_rfc3339(from)},
             {"to", format_rfc3339(to)},
             {"method", "per UTC day of execution: sum of price x GPU-hours over sum of GPU-hours of that day's trades, every "
                        "delivery window together, rounded half to even to the micro-unit; days without trades are left out"},
             {"days", list}});
}

}  // namespace

Result<std::vector<IndexDay>> read_market_index(StoreReader& store, const std::string& gpu_model,
                                                const std::string& region, Currency currency, TimeMs from, TimeMs to) {
  auto trades = list_all(store, "market-trades", {{"gpu_model", gpu_model}, {"region", region}});
  if (!trades) return trades.error();
  std::vector<IndexTrade> in;
  for (const Record& t : *trades) {
    if (t.body.value("currency", "") != currency_code(currency)) continue;
    auto price = Money::parse(t.body.at("price_per_gpu_hour").get<std::string>(), currency);
    auto at = parse_rfc3339(t.body.at("at").get<std::string>(), "at");
    if (!price || !at) return Error::make(Code::kInternal, "market trade " + t.id + " does not decode");
    in.push_back({*at, price->micros(), t.body.at("gpu_hours").get<int64_t>()});
  }
  return daily_index(in, from, to);
}

Result<int> expire_market_orders(App& app, TimeMs now, int* failed_books) {
  auto open = list_all(app.store, "market-orders", {{"state", "open"}});
  if (!open) return open.error();
  std::vector<BookKey> over;
  for (const Record& r : *open) {
    BookKey k;
    try {
      k = key_of(r.body);
    } catch (const std::exception& e) {  // reported (/readyz, the log) and left as it is
      (void)undecodable_record(r.kind, r.id, r.name, Error::make(Code::kInternal, e.what()), "it cannot expire");
      continue;
    }
    if (k.ends_at <= now && std::find(over.begin(), over.end(), k) == over.end()) over.push_back(k);
  }
  Principal expiry;
  expiry.user_id = "market-expiry";
  int expired = 0;
  for (const BookKey& k : over) {
    // One book a transaction, its lane stamped anew (BookTx): the books in memory learn it. Its
    // open orders are read again inside: each of them is in the window that is over.
    std::unique_ptr<BookTx> bt;
    int here = 0;
    Status st = app.loop.run([&](StoreTx& raw) -> Status {
      bt = std::make_unique<BookTx>(app.market_books, raw);
      here = 0;
      auto resting = book_orders(*bt, k);
      if (!resting) return resting.error();
      for (const auto& o : *resting) {
        Record r = *o;
        r.state = r.body["state"] = "expired";
        r.body["reason"] = "its delivery window is over";
        if (auto s = store_change(bt->tx(), *o, r, expiry, "expire", "window ended " + format_rfc3339(k.ends_at), now);
            !s)
          return s;
        ++here;
      }
      return ok_status();
    });
    if (!st) {  // this book stays as it is (tried again later); the others go on
      if (failed_books) ++*failed_books;
      if (app.loop.running())
        spdlog::error(
            "{}",
            json({{"event", "market_expiry_failed"}, {"book", book_name(k)}, {"error", st.error().message}}).dump());
      continue;
    }
    bt->committed();
    expired += here;
    for (int i = 0; i < here; ++i) app.metrics.count_write("market-orders", "expire");
  }
  if (expired > 0) spdlog::info("{}", json({{"event", "market_orders_expired"}, {"count", expired}}).dump());
  return expired;
}

Result<Record> place_market_order(App& app, const json& body, const Principal& p) {
  bool repeated = false;
  return place_order(app, app.kinds.at("market-orders"), body, p, &repeated);
}

void register_market_routes(App& app, Router& srv) {
  route(app, srv, "GET", "/api/v1/market/quote", "/api/v1/market/quote", get_quote);
  route(app, srv, "GET", "/api/v1/market/depth", "/api/v1/market/depth", get_book_depth);
  route(app, srv, "GET", "/api/v1/market/prints", "/api/v1/market/prints", get_prints);
  route(app, srv, "GET", "/api/v1/market/index", "/api/v1/market/index", get_index);

  KindSpec trades;
  trades.kind = "market-trades";
  trades.id_prefix = "mtr";
  trades.object_kind = ObjectKind::kMarketTrade;
  trades.filters = {{"tenant", "tenant_id"}, {"supplier", "supplier_id"}, {"gpu_model", "gpu_model"}, {"region", "region"},
                    {"state", "state"}};
  trades.filter_values["state"] = {"settled", "defaulted"};
  trades.updated_since = true;
  trades.creatable = trades.updatable = trades.deletable = false;
  trades.build = [](const json&, const Principal&, StoreTx&, const Record*) -> Result<Built> {
    return Error::make(Code::kInternal, "market trades are made by matching");
  };
  register_crud(app, srv, trades);
  register_market_default_route(app, srv);

  KindSpec orders;
  orders.kind = "market-orders";
  orders.id_prefix = "mko";
  orders.object_kind = ObjectKind::kMarketOrder;
  orders.filters = {{"tenant", "tenant_id"}, {"supplier", "supplier_id"}, {"gpu_model", "gpu_model"}, {"region", "region"},
                    {"state", "state"}};
  orders.filter_values["state"] = {"open", "filled", "cancelled", "replaced", "expired"};
  orders.updated_since = true;
  orders.updatable = orders.deletable = false;  // cancel (POST …/cancel); an order is never edited
  orders.build = [](const json&, const Principal&, StoreTx&, const Record*) -> Result<Built> {
    return Error::make(Code::kInternal, "market orders are created by POST /api/v1/market-orders");
  };
  app.kinds[orders.kind] = orders;  // the POST route reads it; register_crud stores it again
  route(app, srv, "POST", "/api/v1/market-orders", "/api/v1/market-orders",
        [&app](const httplib::Request& req, httplib::Response& res, const Principal& p) {
          const KindSpec& spec = app.kinds.at("market-orders");
          if (write_scope(p, spec.object_kind) == Scope::kNone)
            return send_problem(res, forbidden(Message("api.market.may_not_order").arg("role", role_name(p.role))), req.path);
          post_order(app, spec, req, res, p);
        });
  orders.creatable = false;
  orders.create_elsewhere = true;
  register_crud(app, srv, orders);
  item_route(app, srv, "POST", "market-orders", "cancel", cancel_order);
  item_route(app, srv, "POST", "market-orders", "replace", replace_order);
}

}  // namespace gpurent
