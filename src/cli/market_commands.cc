// `gpurent market …`: the GPU-hour market (docs/market.md) from the command line.
//   market buy|sell  --gpu-model M --region R --from T --to T --currency C (--gpus N | --node-gpus K --nodes N) --price P
//                    [--tif gtc|ioc|fok] [--all-or-none] [--idempotency-key K] [--tenant T | --supplier S]
//   market quote|depth|prints --gpu-model M --region R --from T --to T --currency C
//   market cancel ORDER
//   market replace ORDER [--price P] [--gpus N | --nodes N]
//   market default TRADE --reason R [--gpus N] [--from T]
//   market index --gpu-model M --region R --currency C [--from T] [--to T]
// Orders and trades are listed with `market-orders list` and `market-trades list`.
#include <memory>

#include "cli/commands.h"
#include "cli/output.h"

namespace gpurent {
namespace {

// The server's field names as the flags the market verbs take, so an error names what was typed.
ApiError market_flags(ApiError e) {
  return name_flags(std::move(e), {{"starts_at", "--from"},
                                   {"ends_at", "--to"},
                                   {"from", "--from"},
                                   {"to", "--to"},
                                   {"price_per_gpu_hour", "--price"},
                                   {"time_in_force", "--tif"},
                                   {"gpu_model", "--gpu-model"},
                                   {"region", "--region"},
                                   {"currency", "--currency"},
                                   {"gpus", "--gpus"},
                                   {"nodes", "--nodes"},
                                   {"node_gpus", "--node-gpus"},
                                   {"all_or_none", "--all-or-none"},
                                   {"idempotency_key", "--idempotency-key"},
                                   {"tenant", "--tenant"},
                                   {"supplier", "--supplier"},
                                   {"reason", "--reason"}});
}

struct BookOpts {
  std::string gpu_model, region, from, to, currency;
  int64_t node_gpus = 0;  // a book of whole nodes of this size
};

void add_book_options(CLI::App* cmd, BookOpts& b) {
  cmd->add_option("--gpu-model", b.gpu_model, "GPU catalog id or alias")->required();
  cmd->add_option("--region", b.region, "region, e.g. us-east-1")->required();
  cmd->add_option("--from", b.from, "window start, a whole UTC hour (RFC 3339)")->required();
  cmd->add_option("--to", b.to, "window end, a whole UTC hour (RFC 3339)")->required();
  cmd->add_option("--currency", b.currency, "USD or CNY")->required()->check(CLI::IsMember({"USD", "CNY"}));
  cmd->add_option("--node-gpus", b.node_gpus, "a book of whole nodes of this many GPUs (orders in --nodes)")
      ->check(CLI::Range(1, 64));
}

std::string level_text(const json& l) {
  return l.is_object() ? l.value("price_per_gpu_hour", "?") + " × " + std::to_string(l.value("gpus", int64_t{0})) + " GPUs (" +
                             std::to_string(l.value("orders", int64_t{0})) + " orders)"
                       : std::string("—");
}

void add_order_verb(CLI::App& market, CliContext& ctx, const char* side) {
  struct Opts {
    BookOpts book;
    int64_t gpus = 0, nodes = 0;
    std::string price, tif = "gtc", key, tenant, supplier;
    bool aon = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = market.add_subcommand(side, std::string(side) == "buy" ? "bid for GPUs over a delivery window (tenants' admins)"
                                                                     : "offer GPUs over a delivery window (suppliers)");
  add_book_options(cmd, o->book);
  auto* gpus = cmd->add_option("--gpus", o->gpus, "GPUs for the whole window");
  auto* nodes = cmd->add_option("--nodes", o->nodes, "whole nodes for the whole window (a node book: --node-gpus)");
  gpus->excludes(nodes);
  cmd->add_option("--price", o->price, "limit price per GPU-hour, e.g. 2.10")->required();
  cmd->add_option("--tif", o->tif, "gtc (rest), ioc (cancel the rest) or fok (all at once or nothing)")
      ->check(CLI::IsMember({"gtc", "ioc", "fok"}))
      ->capture_default_str();
  cmd->add_flag("--all-or-none", o->aon, "trade all of it in one go or none of it (it may rest until then)");
  cmd->add_option("--idempotency-key", o->key, "a retry with the same key places nothing twice");
  cmd->add_option("--tenant", o->tenant, "operators buying for a tenant");
  cmd->add_option("--supplier", o->supplier, "operators selling for a supplier");
  cmd->callback([&ctx, o, side = std::string(side)] {
    ctx.action = [&ctx, o, side]() -> int {
      if (o->gpus <= 0 && o->nodes <= 0)
        return ctx.fail(Error::invalid("--gpus", "give --gpus, or --nodes with --node-gpus"), kExitUsage);
      json body = {{"side", side},           {"gpu_model", o->book.gpu_model}, {"region", o->book.region},
                   {"starts_at", o->book.from}, {"ends_at", o->book.to},         {"currency", o->book.currency},
                   {"price_per_gpu_hour", o->price}, {"time_in_force", o->tif}};
      if (o->nodes > 0) body["nodes"] = o->nodes;
      else body["gpus"] = o->gpus;
      if (o->book.node_gpus > 0) body["node_gpus"] = o->book.node_gpus;
      if (o->aon) body["all_or_none"] = true;
      if (!o->key.empty()) body["idempotency_key"] = o->key;
      if (!o->tenant.empty()) body["tenant"] = o->tenant;
      if (!o->supplier.empty()) body["supplier"] = o->supplier;
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->post("/market-orders", body);
      if (!r) return ctx.fail(market_flags(r.error()));
      return ctx.emit(*r, [&](std::ostream& out) {
        out << "order " << printable(r->value("id", "")) << ": " << printable(r->value("state", "")) << ", filled "
            << r->value("filled_gpus", int64_t{0}) << " of " << r->value("gpus", int64_t{0}) << " GPUs";
        if (r->value("remaining_gpus", int64_t{0}) > 0) out << ", " << r->value("remaining_gpus", int64_t{0}) << " resting";
        if (!r->value("reason", "").empty()) out << " (" << printable(r->value("reason", "")) << ")";
        out << "\n";
      });
    };
  });
}

void add_book_verb(CLI::App& market, CliContext& ctx, const char* what, const char* help) {
  auto b = std::make_shared<BookOpts>();
  auto* cmd = market.add_subcommand(what, help);
  add_book_options(cmd, *b);
  cmd->callback([&ctx, b, what = std::string(what)] {
    ctx.action = [&ctx, b, what]() -> int {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      Query q{{"gpu_model", b->gpu_model}, {"region", b->region}, {"starts_at", b->from}, {"ends_at", b->to},
              {"currency", b->currency}};
      if (b->node_gpus > 0) q.push_back({"node_gpus", std::to_string(b->node_gpus)});
      auto r = c->get("/market/" + what, q);
      if (!r) return ctx.fail(market_flags(r.error()));
      return ctx.emit(*r, [&](std::ostream& out) {
        out << printable(r->value("gpu_model", "")) << " " << printable(r->value("region", "")) << " "
            << printable(r->value("starts_at", "")) << " – " << printable(r->value("ends_at", "")) << " ("
            << printable(r->value("currency", "")) << " per GPU-hour)\n";
        if (what == "quote") {
          out << "bid: " << level_text(r->value("bid", json())) << "\nask: " << level_text(r->value("ask", json())) << "\n";
        } else if (what == "depth") {
          for (const char* side : {"asks", "bids"}) {
            out << side << ":\n";
            for (const json& l : r->value(side, json::array())) out << "  " << level_text(l) << "\n";
          }
        } else {
          for (const json& p : r->value("prints", json::array()))
            out << printable(p.value("at", "")) << "  " << printable(p.value("price_per_gpu_hour", "")) << " × "
                << p.value("gpus", int64_t{0}) << " GPUs (" << printable(p.value("taker_side", "")) << " took)\n";
        }
      });
    };
  });
}

void add_cancel_verb(CLI::App& market, CliContext& ctx) {
  auto order = std::make_shared<std::string>();
  auto* cmd = market.add_subcommand("cancel", "take what is left of an open order out of its book");
  cmd->add_option("order", *order, "order id")->required();
  cmd->callback([&ctx, order] {
    ctx.action = [&ctx, order]() -> int {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->post("/market-orders" + seg(*order) + "/cancel", json::object());
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) {
        out << "order " << printable(r->value("id", *order)) << ": " << printable(r->value("state", "")) << " (filled "
            << r->value("filled_gpus", int64_t{0}) << " of " << r->value("gpus", int64_t{0}) << " GPUs)\n";
      });
    };
  });
}

// `market replace ORDER [--price P] [--gpus N | --nodes N]`: a new limit and what is left of it.
void add_replace_verb(CLI::App& market, CliContext& ctx) {
  struct Opts {
    std::string order, price;
    int64_t gpus = 0, nodes = 0;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = market.add_subcommand("replace", "change an open order's price and what is left of it");
  cmd->add_option("order", o->order, "order id")->required();
  cmd->add_option("--price", o->price, "new limit price per GPU-hour");
  auto* gpus = cmd->add_option("--gpus", o->gpus, "GPUs left (a book of GPUs)");
  auto* nodes = cmd->add_option("--nodes", o->nodes, "nodes left (a node book)")->excludes(gpus);
  cmd->callback([&ctx, o, gpus, nodes] {
    ctx.action = [&ctx, o, gpus, nodes]() -> int {
      json body = json::object();
      if (!o->price.empty()) body["price_per_gpu_hour"] = o->price;
      // Given is sent, whatever it is: the server names a bad count (0 is not "unchanged").
      if (gpus->count() > 0) body["gpus"] = o->gpus;
      if (nodes->count() > 0) body["nodes"] = o->nodes;
      if (body.empty()) return ctx.fail(Error::invalid("--price", "give --price, --gpus or --nodes"), kExitUsage);
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->post("/market-orders" + seg(o->order) + "/replace", body);
      if (!r) return ctx.fail(market_flags(r.error()));
      return ctx.emit(*r, [&](std::ostream& out) {
        out << "order " << printable(r->value("id", "")) << ": " << printable(r->value("state", "")) << " at "
            << printable(r->value("price_per_gpu_hour", "")) << ", " << r->value("remaining_gpus", int64_t{0}) << " GPUs left";
        if (r->contains("replaces")) out << " (replaces " << printable(r->value("replaces", "")) << ")";
        out << "\n";
      });
    };
  });
}

// `market default TRADE --reason R [--gpus N] [--from T]`: the seller (or an operator) records
// capacity of a settled trade it does not deliver (docs/market.md#defaults).
void add_default_verb(CLI::App& market, CliContext& ctx) {
  struct Opts {
    std::string trade, reason, from;
    int64_t gpus = 0;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = market.add_subcommand("default", "record GPUs of a settled trade the seller does not deliver");
  cmd->add_option("trade", o->trade, "trade id")->required();
  cmd->add_option("--reason", o->reason, "why (shown on the buyer's invoice)")->required();
  auto* gpus = cmd->add_option("--gpus", o->gpus, "GPUs not delivered; default: all still delivered");
  cmd->add_option("--from", o->from, "from when (RFC 3339, within the window); default: now");
  cmd->callback([&ctx, o, gpus] {
    ctx.action = [&ctx, o, gpus]() -> int {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      json body = {{"reason", o->reason}};
      // Given is sent, whatever it is: `--gpus 0` is the server's to refuse, never "all of them".
      if (gpus->count() > 0) body["gpus"] = o->gpus;
      if (!o->from.empty()) body["from"] = o->from;
      auto r = c->post("/market-trades" + seg(o->trade) + "/default", body);
      if (!r) return ctx.fail(market_flags(r.error()));
      return ctx.emit(*r, [&](std::ostream& out) {
        const json& st = r->value("settlement", json::object());
        out << "trade " << printable(r->value("id", o->trade)) << ": " << printable(r->value("state", "")) << ", "
            << st.value("defaults", json::array()).size() << " default(s) on commitment "
            << printable(st.value("commitment", "")) << " of contract " << printable(st.value("contract", "")) << "\n";
      });
    };
  });
}

// `market index --gpu-model M --region R --currency C [--from T] [--to T]`: the daily price index.
void add_index_verb(CLI::App& market, CliContext& ctx) {
  struct Opts {
    std::string gpu_model, region, currency, from, to;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = market.add_subcommand("index", "the daily volume-weighted price index of a model in a region");
  cmd->add_option("--gpu-model", o->gpu_model, "GPU catalog id or alias")->required();
  cmd->add_option("--region", o->region, "region, e.g. us-east-1")->required();
  cmd->add_option("--currency", o->currency, "USD or CNY")->required()->check(CLI::IsMember({"USD", "CNY"}));
  cmd->add_option("--from", o->from, "start (RFC 3339, 00:00 UTC of a day); default: 30 days before --to");
  cmd->add_option("--to", o->to, "end, exclusive (RFC 3339, 00:00 UTC of a day); default: tomorrow 00:00 UTC");
  cmd->callback([&ctx, o] {
    ctx.action = [&ctx, o]() -> int {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      Query q{{"gpu_model", o->gpu_model}, {"region", o->region}, {"currency", o->currency}};
      if (!o->from.empty()) q.push_back({"from", o->from});
      if (!o->to.empty()) q.push_back({"to", o->to});
      auto r = c->get("/market/index", q);
      if (!r) return ctx.fail(market_flags(r.error()));
      return ctx.emit(*r, [&](std::ostream& out) {
        out << "DAY         VWAP/GPU-H  GPU-HOURS  TRADES  LOW  HIGH (" << printable(r->value("currency", "")) << ")\n";
        for (const json& d : r->value("days", json::array()))
          out << printable(d.value("day", "")) << "  " << printable(d.value("vwap_per_gpu_hour", "")) << "  "
              << d.value("gpu_hours", int64_t{0}) << "  " << d.value("trades", int64_t{0}) << "  "
              << printable(d.value("low_per_gpu_hour", "")) << "  " << printable(d.value("high_per_gpu_hour", "")) << "\n";
      });
    };
  });
}

}  // namespace

void add_market_commands(CLI::App& app, CliContext& ctx) {
  CLI::App* market = app.add_subcommand("market", "the GPU-hour market: buy, sell, cancel, replace, default, quote, depth, prints, index");
  market->require_subcommand(1);
  add_order_verb(*market, ctx, "buy");
  add_order_verb(*market, ctx, "sell");
  add_cancel_verb(*market, ctx);
  add_replace_verb(*market, ctx);
  add_default_verb(*market, ctx);
  add_book_verb(*market, ctx, "quote", "a book's best bid and ask");
  add_book_verb(*market, ctx, "depth", "a book's price levels, best first");
  add_book_verb(*market, ctx, "prints", "a book's trades, newest first, without parties");
  add_index_verb(*market, ctx);
}

}  // namespace gpurent
