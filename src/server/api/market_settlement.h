// Settlement of GPU-hour market trades (docs/market.md#settlement), inside the single writer's
// transaction that made them: each trade becomes
//  - a reservation of whole nodes of the seller (those its offer sells, available, not reserved in
//    an overlapping window) for the buyer over the delivery window, which the scheduler honours;
//  - a market commitment (the window, the trade price) in the buyer's contract with the seller that
//    names that offer, or in a new contract `market-<supplier>-<currency>` when there is none, which
//    the billing engine rates whether used or not and which covers the buyer's runs on the offer.
// A resale (a tenant selling nodes it holds) moves those nodes from the reseller's reservations to
// the buyer's, and gives the reseller's commitment a resale: less coverage, the proceeds credited.
// Capacity the seller cannot deliver — nodes short at settlement, or a default recorded later
// (POST /api/v1/market-trades/{id}/default) — is a default on the commitment: refunded with the
// contract's outage compensation on the buyer's invoice.
// Functions of the route files; they run on the control loop's thread inside its transaction.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/money.h"
#include "model/reservation.h"
#include "server/api/resources.h"

namespace gpurent {

struct MarketBook {
  std::string gpu_model, region;
  TimeMs starts_at = 0, ends_at = 0;
  Currency currency = Currency::kUSD;
  int64_t node_gpus = 0;  // a book of whole nodes of this many GPUs (0: a book of GPUs)
};

// The seller's offer a trade in this book is billed under: the first (by id) of its offers of the
// model and region in the currency that sells at least one of its nodes. kInvalid naming
// `currency` when it has none (a sell order is refused before it can trade).
Result<Record> market_offer(StoreTx& tx, const std::string& supplier_id, const MarketBook& k);

// GPUs the supplier can still sell in this book: the GPUs of its available nodes that its offer
// sells and that no reservation holds in an overlapping window, less its open sell orders for
// overlapping windows (every book's). A trade's reservation holds whole nodes, so a part-node trade
// keeps the rest of that node's GPUs from being sold again for the window. In a node book, also at
// most its free nodes of exactly that size less its open sells of such nodes.
Result<int64_t> deliverable_gpus(StoreTx& tx, const std::string& supplier_id, const MarketBook& k);

// A node a trade may take, with its GPU count.
struct FreeNode {
  Record node;
  int64_t gpus = 0;
};
// Whole nodes for `want` GPUs, best fit: while GPUs are wanted, the smallest node that holds all
// of them, else the largest; ties by id. In a node book (`node_gpus` > 0) only nodes of exactly its
// size count. At most `max_nodes` nodes (one reservation holds no more): fewer GPUs than wanted
// when the nodes run out or that many are not enough, which makes the trade undeliverable
// (first_undeliverable) and, at settlement, a default.
std::vector<const FreeNode*> pick_nodes(const std::vector<FreeNode>& free, int64_t want, int64_t node_gpus,
                                        size_t max_nodes = kMaxReservedNodes);

// A reservation as it is about to be written (POST, or PUT of `replacing_id`).
struct ReservationChange {
  std::string replacing_id;
  std::vector<std::string> node_ids;
  TimeMs starts_at = 0, ends_at = 0;
};
struct SellerLane {
  std::string supplier_id, gpu_model, region;
};
// The first open sell order (by id) of these sellers in these lanes, of a window overlapping the
// change's, that the change would leave short: the seller's deliverable GPUs for that order's book
// fall below zero and lower than they are now. Books the seller was already short in without the
// change (a node gone out of service) are not blamed on it unless it takes more.
Result<std::optional<Record>> sell_left_short(StoreTx& tx, const ReservationChange& change,
                                              const std::vector<SellerLane>& sellers);

// The reservations kind's build (reservations.cc); check_open_sells false for settlement's own
// reservations, which take the very nodes the trade's sell offered.
Result<Built> build_reservation(const json& body, StoreTx& tx, const Record* existing, bool check_open_sells);

// What a tenant can resell in a node book (docs/market.md#resale) at `now`: the nodes of that size
// its market reservations for exactly that window hold (of trades with no default open at `now`,
// their reservations not cut short), less its open resale sells there; of one supplier
// (`supplier_id` given, or the only one it holds from: else kInvalid naming `supplier`).
struct ResaleHolding {
  std::string supplier_id;
  int64_t nodes = 0;
};
Result<ResaleHolding> resalable_nodes(StoreTx& tx, const std::string& tenant_id, const std::string& supplier_id,
                                      const MarketBook& k, TimeMs now);

// The first of these new trades (in order, as settle_trades will settle them) whose seller could
// not deliver all of it even with its nodes out of service back: the whole nodes settlement would
// pick for it (its nodes no reservation holds, less those the trades before it take: a part-node
// trade takes the whole node) hold fewer GPUs than it trades, or the seller has no offer for the
// book any more. A shortfall only from nodes out of service is left to settlement, a default of
// the seller's. A resale is checked against the nodes its reseller holds at `now` (a holding with
// a default still open holds none), less those its earlier resales here take, and against its
// supplier's offer for the book (it is billed under it). nullopt when every one can be delivered
// so. With `exhausted`: set to the short trade's seller (not a reseller) when it has no free node
// left at all after the trades before it, or no offer for the book: no other sell of it can be
// delivered after them either.
Result<std::optional<size_t>> first_undeliverable(StoreTx& tx, const std::vector<Record>& trades, const MarketBook& k,
                                                  TimeMs now, std::string* exhausted = nullptr);

// Settles new trades (not yet inserted): each gets its reservation and commitment and, on the
// trade, state "settled" (or "defaulted" when none of it could be delivered) and a `settlement`
// object naming them. `who` placed the order (the audit names them).
Status settle_trades(App& app, std::vector<Record>& trades, const MarketBook& k, const Principal& who, StoreTx& tx);

// POST /api/v1/market-trades/{id}/default.
void register_market_default_route(App& app, Router& srv);

struct IndexDay;
// The market's daily price index (market/price_index.h) of every delivery window of a GPU model in
// a region and currency, per UTC day of [from, to) (market.cc; the advisor's hedge reads it too).
Result<std::vector<IndexDay>> read_market_index(StoreReader& store, const std::string& gpu_model,
                                                const std::string& region, Currency currency, TimeMs from, TimeMs to);

}  // namespace gpurent
