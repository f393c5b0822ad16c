// quotas get/set (a project's quota, this month's spending against its budget, warnings when a
// limit is set below present use) and tokens create/list/revoke (API tokens).
#include <memory>

#include "cli/commands.h"
#include "cli/list.h"
#include "cli/output.h"
#include "cli/views.h"

namespace gpurent {

namespace {

// "312.45 USD" (the quota's currency after an amount; the amount alone when the answer has none).
std::string money_text(const json& amount, const json& q) {
  const std::string cur = cell_text(at_path(q, "currency"));
  return cell_text(amount) + (cur.empty() ? "" : " " + cur);
}

// The quota, then this month's spending against its budget and the budget hold in force.
void print_quota(std::ostream& out, const json& q) {
  KvList list;
  const json& models = at_path(q, "gpus_per_model");
  if (models.is_object() && models.empty())
    list.emplace_back("gpus_per_model", "none (no GPU may be used)");
  else
    list.emplace_back("gpus_per_model", models);
  auto limit = [&](const char* key) {
    const json& v = at_path(q, key);
    list.emplace_back(key, v.is_null() ? json("unlimited") : v);
  };
  limit("max_gpus_per_job");
  limit("max_concurrent_jobs");
  const json& budget = at_path(q, "monthly_budget");
  list.emplace_back("monthly_budget", budget.is_null() ? json("none") : json(money_text(budget, q)));
  list.emplace_back("budget_action", at_path(q, "budget_action"));
  const json& burn = at_path(q, "budget");
  if (burn.is_object()) {
    list.emplace_back(
        "spent", money_text(at_path(burn, "spent"), q) + " (" + cell_text(at_path(burn, "month")) + ", month to date)");
    list.emplace_back("remaining", money_text(at_path(burn, "remaining"), q));
    const json& over = at_path(burn, "projected_over");
    list.emplace_back("projected_month_end", money_text(at_path(burn, "projected_month_end"), q) +
                                                 (over.is_boolean() && over.get<bool>() ? " (over budget)" : ""));
  }
  const json& hold = at_path(q, "budget_hold");
  if (hold.is_object())
    list.emplace_back("budget_hold", at_path(hold, "text"));
  else if (burn.is_object())
    list.emplace_back("budget_hold", "none");
  for (auto it = q.begin(); q.is_object() && it != q.end(); ++it) {
    bool known = false;
    for (const char* k : {"gpus_per_model", "max_gpus_per_job", "max_concurrent_jobs", "monthly_budget",
                          "budget_action", "currency", "budget", "budget_hold", "warnings"})
      known = known || it.key() == k;
    if (!known) list.emplace_back(it.key(), it.value());
  }
  print_kv(out, list);
}

void add_quotas(CLI::App& app, CliContext& ctx) {
  auto* quotas = app.add_subcommand("quotas", "a project's GPU, job and budget limits");
  quotas->require_subcommand(1);

  auto project = std::make_shared<std::string>();
  auto* get = quotas->add_subcommand("get", "show a project's quota");
  get->add_option("project", *project, "project id or name")->required();
  get->callback([&ctx, project] {
    ctx.action = [&ctx, project] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->get("/projects" + seg(*project) + "/quota");
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) { print_quota(out, *r); });
    };
  });

  struct SetOpts {
    std::string project, file;
  };
  auto so = std::make_shared<SetOpts>();
  auto* set = quotas->add_subcommand("set", "replace a project's quota with the one in a file");
  set->add_option("project", so->project, "project id or name")->required();
  set->add_option("-f,--file", so->file, "YAML or JSON quota ('-' reads stdin); a {quota: ...} wrapper is accepted")
      ->required();
  set->callback([&ctx, so] {
    ctx.action = [&ctx, so] {
      auto doc = ctx.read_document(so->file);
      if (!doc) return ctx.fail(doc.error());
      json body = *doc;
      // Accept the quota as `projects get -o yaml` nests it.
      if (body.size() == 1 && body.contains("quota") && body["quota"].is_object()) body = json(body["quota"]);
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->put("/projects" + seg(so->project) + "/quota", body);
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) {
        out << "updated the quota of project " << printable(so->project) << ":\n";
        print_quota(out, *r);
        // What a limit below present use means for the project's work.
        if (r->is_object())
          for (const auto& w : r->value("warnings", json::array()))
            ctx.err() << "warning: " << printable(cell_text(at_path(w, "text"))) << '\n';
      });
    };
  });
}

// "30d", "12h", "90m", "3600s" -> milliseconds.
std::optional<DurationMs> parse_ttl(const std::string& s) {
  if (s.size() < 2 || s.size() > 12) return std::nullopt;
  std::string digits = s.substr(0, s.size() - 1);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  int64_t n = std::stoll(digits);
  int64_t unit = 0;
  switch (s.back()) {
    case 's':
      unit = 1000;
      break;
    case 'm':
      unit = 60 * 1000;
      break;
    case 'h':
      unit = kMsPerHour;
      break;
    case 'd':
      unit = kMsPerDay;
      break;
    default:
      return std::nullopt;
  }
  if (n <= 0 || n > int64_t{100} * 365 * kMsPerDay / unit) return std::nullopt;
  return n * unit;
}

void add_tokens(CLI::App& app, CliContext& ctx) {
  auto* tokens = app.add_subcommand("tokens", "API tokens (the secret is shown once, at creation)");
  tokens->require_subcommand(1);

  struct CreateOpts {
    std::string user, name, expires_at, expires_in;
  };
  auto co = std::make_shared<CreateOpts>();
  auto* create = tokens->add_subcommand("create", "create a token acting as a user");
  create->add_option("--user", co->user, "user id or name the token acts as")->required();
  create->add_option("--name", co->name, "token name, unique per user (e.g. laptop, ci)")->required();
  auto* at = create->add_option("--expires-at", co->expires_at, "expiry, RFC 3339 (2026-12-31T00:00:00Z) or a date");
  create->add_option("--expires-in", co->expires_in, "expiry from now: 30d, 12h, 90m")->excludes(at);
  create->callback([&ctx, co] {
    ctx.action = [&ctx, co]() -> int {
      json body = {{"user", co->user}, {"name", co->name}};
      if (!co->expires_at.empty()) {
        auto t = parse_rfc3339(co->expires_at, "--expires-at");
        if (!t) return ctx.fail(t.error(), kExitUsage);
        body["expires_at"] = format_rfc3339(*t);
      } else if (!co->expires_in.empty()) {
        auto ttl = parse_ttl(co->expires_in);
        if (!ttl)
          return ctx.fail(
              Error::invalid("--expires-in", "must be a positive number followed by s, m, h or d (e.g. 30d)"),
              kExitUsage);
        body["expires_at"] = format_rfc3339(ctx.now() + *ttl);
      }
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->post("/tokens", body);
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) {
        const json& exp = at_path(*r, "expires_at");
        KvList list = {{"token", at_path(*r, "token")}, {"id", at_path(*r, "id")},
                       {"name", at_path(*r, "name")},   {"user", at_path(*r, "user_id")},
                       {"role", at_path(*r, "role")},        {"expires_at", exp.is_null() ? json("never") : exp}};
        print_kv(out, list);
        ctx.err() << "Store the token now: it is shown only once. Use it with --token, --token-file or "
                     "GPURENT_TOKEN.\n";
      });
    };
  });

  auto lo = std::make_shared<std::string>();
  auto* list = tokens->add_subcommand("list", "list tokens (never their secrets)");
  list->alias("ls");
  list->add_option("--user", *lo, "only this user's tokens (id or name)");
  list->callback([&ctx, lo] {
    ctx.action = [&ctx, lo] {
      Query q;
      if (!lo->empty()) q.emplace_back("user", *lo);
      auto table = [&ctx](std::ostream& out, const std::vector<json>& items) {
        Table t({{"ID"}, {"NAME"}, {"USER"}, {"ROLE"}, {"EXPIRES_AT"}, {"REVOKED"}, {"AGE"}});
        for (const auto& i : items) {
          const json& exp = at_path(i, "expires_at");
          const json& user = at_path(i, "user_id");
          t.add_row({cell_text(at_path(i, "id")), cell_text(at_path(i, "name")), cell_text(user),
                     cell_text(at_path(i, "role")), exp.is_null() ? "never" : cell_text(exp),
                     at_path(i, "revoked").is_boolean() ? (i["revoked"].get<bool>() ? "yes" : "no") : "",
                     format_age(at_path(i, "created_at"), ctx.now())});
        }
        t.print(out);
      };
      return run_list(ctx, "/tokens", q, 0, "", table, "tokens");
    };
  });

  auto rid = std::make_shared<std::string>();
  auto* revoke = tokens->add_subcommand("revoke", "revoke a token (it stops working at once)");
  revoke->add_option("id", *rid, "token id (tok_...)")->required();
  revoke->callback([&ctx, rid] {
    ctx.action = [&ctx, rid] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->del("/tokens" + seg(*rid));
      if (!r) return ctx.fail(r.error());
      return ctx.emit(json{{"revoked", *rid}},
                      [&](std::ostream& out) { out << "revoked token " << printable(*rid) << '\n'; });
    };
  });
}

}  // namespace

void add_account_commands(CLI::App& app, CliContext& ctx) {
  add_quotas(app, ctx);
  add_tokens(app, ctx);
}

}  // namespace gpurent
