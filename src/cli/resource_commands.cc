// Generic verbs for every resource kind: list, get, create, update, delete; and `offers history`.
#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "cli/commands.h"
#include "cli/list.h"
#include "cli/output.h"
#include "cli/views.h"

namespace gpurent {

namespace {

struct ListOpts {
  std::map<std::string, std::string> filters;  // query parameter -> value
  int limit = 0;                               // 0: every page
  std::string after;
  bool watch = false;  // jobs: list again every `interval` seconds
  int interval = 2;
  int count = 0;       // with watch: stop after this many listings (0: until interrupted)
};

// "a node", "an offer".
std::string a_or_an(const std::string& noun) {
  bool vowel = !noun.empty() && std::string_view("aeiou").find(noun[0]) != std::string_view::npos;
  return (vowel ? "an " : "a ") + noun;
}

std::string flag_of(const std::string& param) {
  std::string f = "--" + param;
  for (char& c : f)
    if (c == '_') c = '-';
  return f;
}

int list_once(CliContext& ctx, const ResourceView& view, const ListOpts& o);

void add_list(CLI::App& noun, CliContext& ctx, const ResourceView& view) {
  auto opts = std::make_shared<ListOpts>();
  auto* cmd = noun.add_subcommand("list", "list " + view.kind + " (every page unless --limit)");
  cmd->alias("ls");
  for (const auto& f : view.filters) {
    auto* o = cmd->add_option(flag_of(f.param), opts->filters[f.param], f.help);
    if (!f.values.empty()) o->check(CLI::IsMember(f.values));
  }
  cmd->add_option("--limit", opts->limit, "fetch one page of at most N items (1-1000)")->check(CLI::Range(1, 1000));
  cmd->add_option("--after", opts->after, "continue after this cursor (printed when --limit leaves more)");
  if (view.kind == "jobs") {
    cmd->add_flag("--watch", opts->watch, "list again every --interval seconds until interrupted (or --count times)");
    cmd->add_option("--interval", opts->interval, "seconds between listings with --watch (1-3600, default 2)")
        ->check(CLI::Range(1, 3600))
        ->needs("--watch");
    cmd->add_option("--count", opts->count, "with --watch: stop after this many listings")
        ->check(CLI::Range(1, 1000000))
        ->needs("--watch");
  }
  cmd->callback([&ctx, &view, opts] {
    ctx.action = [&ctx, &view, opts] {
      if (!opts->watch) return list_once(ctx, view, *opts);
      for (int i = 0;; ++i) {
        if (i > 0) std::this_thread::sleep_for(std::chrono::seconds(opts->interval));
        if (ctx.format() == OutputFormat::kTable)
          ctx.out() << (i > 0 ? "\n" : "") << "every " << opts->interval << "s  " << format_rfc3339(ctx.now()) << "\n";
        if (int rc = list_once(ctx, view, *opts); rc != kExitOk) return rc;
        ctx.out().flush();
        if (opts->count > 0 && i + 1 >= opts->count) return kExitOk;
      }
    };
  });
}

// One listing of `list` (the table of jobs newest first).
int list_once(CliContext& ctx, const ResourceView& view, const ListOpts& opts) {
  Query q;
  for (const auto& [k, v] : opts.filters)
    if (!v.empty()) q.emplace_back(k, v);
  return run_list(
      ctx, "/" + view.kind, q, opts.limit, opts.after,
      [&](std::ostream& out, const std::vector<json>& items) {
        if (view.kind != "jobs") return print_list(out, view, items, ctx.now());
        // Jobs read newest first (RFC 3339 UTC instants sort as text); ties keep the API's order.
        std::vector<json> newest = items;
        std::stable_sort(newest.begin(), newest.end(), [](const json& a, const json& b) {
          return a.value("created_at", std::string()) > b.value("created_at", std::string());
        });
        print_list(out, view, newest, ctx.now());
      },
      view.kind);
}

// `nodes get`: the runs open on the node (the allocation ledger, read with the caller's token: an
// operator or the node's supplier sees them all, a tenant only its own).
void print_node_runs(CliContext& ctx, ApiClient& c, std::ostream& out, const json& node) {
  const std::string node_id = cell_text(at_path(node, "id"));
  auto runs = fetch_list(c, "/allocations", {{"state", "open"}, {"supplier", cell_text(at_path(node, "supplier_id"))}}, 0,
                         "");
  if (!runs) {
    ctx.err() << "warning: the runs on this node could not be read: " << printable(runs.error().detail) << '\n';
    return;
  }
  Table t({{"JOB"}, {"GPUS"}, {"BILLING"}, {"SINCE"}});
  for (const json& a : runs->items)
    for (const json& p : a.value("placement", json::array()))
      if (p.value("node_id", "") == node_id) {
        std::vector<int64_t> gpus;
        for (const auto& g : p.value("gpus", json::array()))
          if (g.is_number_integer()) gpus.push_back(g.get<int64_t>());
        std::sort(gpus.begin(), gpus.end());
        t.add_row({cell_text(a["job"]), index_ranges(gpus), cell_text(a["billing_mode"]), cell_text(a["running_at"])});
      }
  out << "\nRunning here:\n";
  if (t.size() == 0)
    out << "  nothing\n";
  else
    t.print(out, 2);
}

void add_get(CLI::App& noun, CliContext& ctx, const ResourceView& view) {
  auto id = std::make_shared<std::string>();
  auto* cmd = noun.add_subcommand("get", "show one " + view.singular);
  cmd->add_option("id", *id, "id or name")->required();
  cmd->callback([&ctx, &view, id] {
    ctx.action = [&ctx, &view, id] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->get("/" + view.kind + seg(*id));
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) {
        print_detail(out, view, *r, ctx.now());
        if (view.kind == "nodes") print_node_runs(ctx, *c, out, *r);
      });
    };
  });
}

// Prints "<verb> <singular> <name> (<id>)" in table format, the object otherwise; the server's
// warnings about the write go to standard error.
int report_written(CliContext& ctx, const ResourceView& view, const json& obj, const std::string& verb) {
  return ctx.emit(obj, [&](std::ostream& out) {
    std::string name = obj.is_object() ? cell_text(at_path(obj, "name")) : "";
    std::string id = obj.is_object() ? cell_text(at_path(obj, "id")) : "";
    out << verb << ' ' << view.singular << ' ' << printable(name.empty() ? id : name);
    if (!name.empty() && !id.empty()) out << " (" << printable(id) << ")";
    if (verb == "updated" && obj.contains("version")) out << ", version " << cell_text(obj["version"]);
    if (std::string state = cell_text(at_path(obj, "status/state")); !state.empty()) out << ", state " << state;
    out << '\n';
    if (obj.is_object())
      for (const auto& w : obj.value("warnings", json::array())) ctx.err() << "warning: " << printable(cell_text(w["text"])) << '\n';
  });
}

void add_create(CLI::App& noun, CliContext& ctx, const ResourceView& view, const std::string& verb,
                const std::string& past, const std::string& help) {
  auto file = std::make_shared<std::string>();
  auto* cmd = noun.add_subcommand(verb, help);
  cmd->add_option("-f,--file", *file, "YAML or JSON file describing the " + view.singular + " ('-' reads stdin)")
      ->required();
  cmd->callback([&ctx, &view, file, past] {
    ctx.action = [&ctx, &view, file, past] {
      auto doc = ctx.read_document(*file);
      if (!doc) return ctx.fail(doc.error());
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->post("/" + view.kind, *doc);
      if (!r) return ctx.fail(r.error());
      return report_written(ctx, view, *r, past);
    };
  });
}

void add_update(CLI::App& noun, CliContext& ctx, const ResourceView& view) {
  struct Opts {
    std::string id, file;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = noun.add_subcommand("update", "replace " + a_or_an(view.singular) + " with the document in a file");
  cmd->add_option("id", o->id, "id or name")->required();
  cmd->add_option("-f,--file", o->file,
                  "YAML or JSON file ('-' reads stdin); a \"version\" in it makes the update fail if the " +
                      view.singular + " changed since")
      ->required();
  cmd->callback([&ctx, &view, o] {
    ctx.action = [&ctx, &view, o] {
      auto doc = ctx.read_document(o->file);
      if (!doc) return ctx.fail(doc.error());
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->put("/" + view.kind + seg(o->id), *doc);
      if (!r) return ctx.fail(r.error());
      return report_written(ctx, view, *r, "updated");
    };
  });
}

void add_delete(CLI::App& noun, CliContext& ctx, const ResourceView& view) {
  auto id = std::make_shared<std::string>();
  auto* cmd = noun.add_subcommand("delete", "delete " + a_or_an(view.singular));
  cmd->alias("rm");
  cmd->add_option("id", *id, "id or name")->required();
  cmd->callback([&ctx, &view, id] {
    ctx.action = [&ctx, &view, id] {
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->del("/" + view.kind + seg(*id));
      if (!r) return ctx.fail(r.error());
      json doc = {{"deleted", *id}, {"kind", view.kind}};
      return ctx.emit(doc,
                      [&](std::ostream& out) { out << "deleted " << view.singular << ' ' << printable(*id) << '\n'; });
    };
  });
}

// `offers history NAME`: every price sheet the offer has had (GET /offers/{ref}/history), oldest
// first, with the time it took effect and the time it was replaced.
void add_offer_history(CLI::App& offers, CliContext& ctx) {
  auto ref = std::make_shared<std::string>();
  auto* history = offers.add_subcommand(
      "history", "show an offer's price sheets over time: usage is rated by the sheet in force when it happened");
  history->add_option("offer", *ref, "offer id or name")->required();
  history->callback([&ctx, ref] {
    ctx.action = [&ctx, ref] {
      auto table = [](std::ostream& out, const std::vector<json>& items) {
        Table t({{"VERSION"}, {"FROM"}, {"UNTIL"}, {"ON-DEMAND"}, {"SPOT"}, {"RESERVED 1M"}, {"CURRENCY"}, {"BILLING STARTS"}});
        for (const auto& v : items) {
          const json until = at_path(v, "until");
          t.add_row({cell_text(at_path(v, "version")), cell_text(at_path(v, "from")),
                     until.is_null() ? "(in force)" : cell_text(until), cell_text(at_path(v, "prices/on_demand")),
                     cell_text(at_path(v, "prices/spot")), cell_text(at_path(v, "prices/reserved_1m")),
                     cell_text(at_path(v, "currency")), cell_text(at_path(v, "fees/billing_starts"))});
        }
        t.print(out);
      };
      return run_list(ctx, "/offers" + seg(*ref) + "/history", {}, 0, "", table, "price sheets");
    };
  });
}

}  // namespace

CLI::App* add_resource_commands(CLI::App& app, CliContext& ctx) {
  CLI::App* jobs = nullptr;
  for (const ResourceView& view : resource_views()) {
    auto* noun = app.add_subcommand(view.kind, view.help);
    noun->require_subcommand(1);
    add_list(*noun, ctx, view);
    add_get(*noun, ctx, view);
    if (view.creatable) {
      if (view.kind == "jobs") {
        add_create(*noun, ctx, view, "submit", "submitted", "submit a job described in a file");
        add_create(*noun, ctx, view, "create", "submitted", "same as submit");
      } else {
        add_create(*noun, ctx, view, "create", "created", "create " + a_or_an(view.singular) + " from a file");
      }
    }
    if (view.updatable) add_update(*noun, ctx, view);
    if (view.deletable) add_delete(*noun, ctx, view);
    if (view.kind == "jobs") jobs = noun;
    if (view.kind == "offers") add_offer_history(*noun, ctx);
  }
  return jobs;
}

}  // namespace gpurent
