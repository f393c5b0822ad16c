#include "server/demo/seed.h"

#include <algorithm>
#include <tuple>

#include "core/ids.h"
#include "demo/demo_world.h"
#include "io/files.h"
#include "model/image.h"
#include "model/user.h"
#include "billing/rating_input.h"
#include "server/services/bootstrap.h"
#include "server/services/issued_invoices.h"
#include "server/api/app.h"
#include "server/api/resources.h"

namespace gpurent {

Result<Principal> demo_creator(App& app, const Principal& op, const std::string& tenant_name) {
  if (tenant_name.empty()) return op;
  auto t = app.store.list(ListQuery{"tenants", {{"name", tenant_name}}, "", 1});
  if (!t || t->items.empty()) return Error::make(Code::kInternal, "demo: tenant '" + tenant_name + "' missing");
  auto users = app.store.list(ListQuery{"users", {{"tenant_id", t->items[0].id}}, "", 1000});
  if (!users) return users.error();
  for (const auto& u : users->items)
    if (auto role = stored_user_role(u.body); role && *role == Role::kTenantAdmin)
      return Principal{u.id, "", Role::kTenantAdmin, u.tenant_id, ""};
  return Error::make(Code::kInternal, "demo: tenant '" + tenant_name + "' has no tenant_admin user");
}

Result<json> seed_demo_if_empty(App& app, const std::string& admin_user_id, const std::string& data_dir,
                                TimeMs present) {
  std::string tokens_file = app.opts.file_prefix() + ".demo-tokens.json";
  auto existing = app.store.count("suppliers", {});
  if (!existing) return existing.error();
  if (*existing > 0) return json{{"seeded", false}, {"reason", "database already has suppliers"}, {"tokens_file", tokens_file}};

  auto prices = read_demo_price_files(data_dir.empty() ? default_data_dir() : data_dir);
  if (!prices) return prices.error();
  auto world = build_demo_world(*prices, app.catalog);
  if (!world) return world.error();
  Principal op{admin_user_id, "", Role::kOperatorAdmin, "", ""};
  json counts = json::object();
  for (const auto& obj : world->objects) {
    auto it = app.kinds.find(obj.kind);
    if (it == app.kinds.end()) return Error::make(Code::kInternal, "demo: unknown kind " + obj.kind);
    auto who = demo_creator(app, op, obj.as_tenant);
    if (!who) return who.error();
    auto r = create_object(app, it->second, obj.body, *who);
    if (!r) {
      Error e = r.error();
      e.message = "demo " + obj.kind + " '" + obj.body.value("name", "?") + "': " + e.message;
      return e;
    }
    counts[obj.kind] = counts.value(obj.kind, 0) + 1;
    if (obj.kind == "instances") counts["jobs"] = counts.value("jobs", 0) + 1;  // its first start is a job
  }

  // A spot market price on every offer that sells spot: its sheet's, from now (the market moves it
  // later through POST /api/v1/spot-prices).
  if (auto spot = app.kinds.find("spot-prices"); spot != app.kinds.end()) {
    auto offers = list_all(app.store, "offers");
    if (!offers) return offers.error();
    for (const Record& o : *offers) {
      const json* sheet = o.body.contains("prices") ? &o.body["prices"] : nullptr;
      if (!sheet || !sheet->is_object() || !sheet->contains("spot")) continue;
      auto r = create_object(app, spot->second, json{{"offer", o.id}, {"price", (*sheet)["spot"]}}, op);
      if (!r) return Error::make(Code::kInternal, "demo spot price of offer " + o.name + ": " + r.error().message);
      counts["spot-prices"] = counts.value("spot-prices", 0) + 1;
    }
  }

  // Books in the GPU-hour market (docs/market.md): Lambda sells two lots of its Ashburn H100s for
  // a UTC day, Aurora buys 8 GPUs across the spread (a trade at Lambda's 2.10, settled) and bids
  // 1.90 — for the day after the seeding, which the demo's replayed days then deliver and bill
  // (its orders left open expire once it is over), and for the day after the demo's present, a
  // book still open when the server listens.
  if (app.kinds.count("market-orders")) {
    const TimeMs day = 24 * 3'600'000LL;
    std::vector<TimeMs> days = {(app.clock.now() / day + 1) * day};
    if (const TimeMs live = (std::max(present, app.clock.now()) / day + 1) * day; live != days.front())
      days.push_back(live);
    const std::vector<std::tuple<const char*, const char*, int, const char*>> orders = {
        {"sell", "lambda", 16, "2.10"}, {"sell", "lambda", 16, "2.40"}, {"buy", "aurora-ai", 8, "2.20"},
        {"buy", "aurora-ai", 8, "1.90"}};
    for (const TimeMs start : days)
      for (const auto& [side, who, gpus, price] : orders) {
        json o = {{"gpu_model", "h100-sxm5-80gb"},
                  {"region", "us-east-1"},
                  {"currency", "USD"},
                  {"starts_at", format_rfc3339(start)},
                  {"ends_at", format_rfc3339(start + day)}};
        o["side"] = side;
        o[std::string(side) == "sell" ? "supplier" : "tenant"] = who;
        o["gpus"] = gpus;
        o["price_per_gpu_hour"] = price;
        auto r = place_market_order(app, o, op);
        if (!r)
          return Error::make(Code::kInternal, std::string("demo market order of ") + who + ": " + r.error().message);
        counts["market-orders"] = counts.value("market-orders", 0) + 1;
      }
    counts["market-trades"] = static_cast<int64_t>(days.size());
    // Each trade settled into a reservation of a Lambda node and a commitment in the contract
    // the first one made (docs/market.md#settlement).
    for (const char* kind : {"reservations", "contracts"}) {
      auto all = list_all(app.store, kind);
      if (!all) return all.error();
      counts[kind] = all->size();
    }
  }

  // The prepaid tenant's top-up (充值), so its balance has money in it.
  if (auto tops = app.kinds.find("top-ups"); tops != app.kinds.end()) {
    auto r = create_object(app, tops->second,
                           json{{"tenant", "qingyun-tech"}, {"amount", "1200000.00"}, {"reference", "demo-recharge-0001"},
                                {"note", "预充值 / prepaid top-up"}},
                           op);
    if (!r) return Error::make(Code::kInternal, "demo top-up: " + r.error().message);
    counts["top-ups"] = 1;
  }

  // Public base images, built from Debian packages by a server with --image-builds (scripts/demo
  // passes it); queued until then. Packages sorted, as parse_image keeps a recipe.
  const std::vector<std::tuple<std::string, std::string, std::vector<std::string>>> images = {
      {"python", "Python 3 on Debian 12, no CUDA / Debian 12 上的 Python 3（不含 CUDA）", {"procps", "python3", "python3-numpy"}},
      {"notebook", "Jupyter Notebook on Debian 12, no CUDA / Debian 12 上的 Jupyter Notebook（不含 CUDA）",
       {"jupyter-notebook", "procps", "python3"}}};
  for (const auto& [name, description, packages] : images) {
    Image img;
    img.name = name;
    img.description = description;
    img.recipe = ImageRecipe{"bookworm", "minbase", packages};
    img.state = ImageState::kQueued;
    img.created_by = admin_user_id;
    Status st = app.loop.run([&](StoreTx& tx) -> Status {
      Record r;
      r.kind = "images";
      r.id = new_id("img");
      const IndexCols idx = index_of(img);
      r.name = idx.name;
      r.state = idx.state;
      r.created_at = r.updated_at = app.clock.now();
      r.version = 1;
      r.body = to_json(img);
      if (auto s = tx.insert(r); !s) return s;
      return tx.append_audit({r.created_at, admin_user_id, "create", "images", r.id, r.name + " recipe (demo)"});
    });
    if (!st) return st.error();
    counts["images"] = counts.value("images", 0) + 1;
  }

  // One token per demo user, so each role can be tried at once.
  json tokens = json::array();
  auto users = app.store.list(ListQuery{"users", {}, "", 1000});
  if (!users) return users.error();
  for (const auto& u : users->items) {
    if (u.id == admin_user_id) continue;
    std::string secret = new_token_secret();
    auto role = stored_user_role(u.body);
    if (!role) return role.error();
    TokenRow row{new_id("tok"), u.id, u.tenant_id, u.supplier_id, role_name(*role), "demo",
                 token_hash(secret), app.clock.now(), 0, false};
    Status st = app.loop.run([&](StoreTx& tx) -> Status {
      if (auto s = tx.insert_token(row); !s) return s;
      return tx.append_audit({row.created_at, admin_user_id, "create", "tokens", row.id, "demo"});
    });
    if (!st) return st.error();
    tokens.push_back({{"user", u.name}, {"role", row.role}, {"token", secret}});
  }
  if (auto s = write_secret_file(tokens_file, tokens.dump(2)); !s) return s.error();
  return json{{"seeded", true}, {"counts", counts}, {"tokens_file", tokens_file}, {"price_source", world->price_source}};
}

Result<json> seed_demo_invoices(App& app, const std::string& admin_user_id) {
  const TimeMs now = app.clock.now();
  auto closed = close_month(app, add_months(month_start(now), -1), now, admin_user_id);
  if (!closed) return closed.error();
  json out = {{"month", closed->month}, {"issued", closed->issued.size()}, {"credit_notes", 0}};
  if (closed->issued.empty()) return out;
  auto notes = app.kinds.find("credit-notes");
  if (notes == app.kinds.end()) return out;
  Principal op{admin_user_id, "", Role::kOperatorAdmin, "", ""};
  // 100.00 in the invoice's currency, or its whole total when smaller (none for a zero invoice).
  auto inv = app.store.get("issued-invoices", closed->issued.front());
  if (!inv) return inv.error();
  auto cur = parse_currency(inv->body.value("currency", ""));
  if (!cur) return cur.error();
  auto total = Money::parse(inv->body["totals"].value("total", "0"), *cur);
  if (!total) return total.error();
  const int64_t credit = std::min<int64_t>(100'000'000, total->micros() / 10'000 * 10'000);
  if (credit <= 0) return out;
  json body = {{"invoice", closed->issued.front()},
               {"amount", Money(credit, *cur).amount_string()},
               {"reason", "Goodwill credit for a maintenance window / 维护窗口善意补偿"}};
  auto r = create_object(app, notes->second, body, op);
  if (!r) return Error::make(Code::kInternal, "demo credit note: " + r.error().message);
  out["credit_notes"] = 1;
  return out;
}

}  // namespace gpurent
