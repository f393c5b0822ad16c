#include "cli/cli.h"

#include <algorithm>

#include "cli/commands.h"
#include "cli/version.h"

namespace gpurent {

// simulate alloc (simulate_command.cc).
void add_simulate_command(CLI::App& app, CliContext& ctx);
// rate -f scenario.yaml (rate_command.cc).
void add_rate_command(CLI::App& app, CliContext& ctx);
// invoices show (invoice_commands.cc).
void add_invoice_commands(CLI::App& app, CliContext& ctx);
void add_advise_commands(CLI::App& app, CliContext& ctx);
// secrets set/list/delete (secret_commands.cc).
void add_secret_commands(CLI::App& app, CliContext& ctx);
// artifacts upload/list/show/delete (artifact_commands.cc).
void add_artifact_commands(CLI::App& app, CliContext& ctx);
// images list/show/delete/build/import (image_commands.cc).
void add_image_commands(CLI::App& app, CliContext& ctx);
// agent: the node agent (agent_command.cc).
void add_agent_command(CLI::App& app, CliContext& ctx);

namespace {

void add_global_flags(CLI::App& app, CliContext& ctx) {
  GlobalFlags& g = ctx.flags;
  auto* grp = "Connection and output";
  app.add_option(
         "-s,--server", g.conn.server,
         "API server address, http://HOST:PORT (env GPURENT_SERVER; default " + std::string(kDefaultServer) + ")")
      ->group(grp);
  auto* token = app.add_option("--token", g.conn.token, "bearer token (env GPURENT_TOKEN)")->group(grp);
  app.add_option("--token-file", g.conn.token_file, "read the bearer token from this file")
      ->group(grp)
      ->excludes(token);
  app.add_option("--config", g.conn.config_path,
                 "config file with server: and token: (default $XDG_CONFIG_HOME/gpurent/config.yaml)")
      ->group(grp);
  app.add_option("-o,--output", g.output,
                 "output format: table (default), json or yaml; with json, errors are problem documents on stderr")
      ->check(CLI::IsMember({"table", "json", "yaml"}))
      ->group(grp);
  app.add_option("--timeout", g.timeout_s, "seconds to wait for the server (default 60)")
      ->check(CLI::Range(1, 3600))
      ->group(grp);
}

// Whether the arguments ask for -o json (read before parsing, so that parse errors honour it).
bool wants_json(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--output=json" || a == "-ojson") return true;
    if ((a == "-o" || a == "--output") && i + 1 < args.size() && args[i + 1] == "json") return true;
  }
  return false;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The option named by an argument ("--state", "-o", "--state=x"), looked up in `app` and the
// commands above it (global flags fall through); null when none.
const CLI::Option* option_of(const CLI::App* app, const std::string& arg) {
  std::string name = arg.substr(0, arg.find('='));
  for (; app; app = app->get_parent()) {
    for (const CLI::Option* o : app->get_options())
      if (o->check_name(name)) return o;
  }
  return nullptr;
}

struct UnknownCommand {
  std::string path;     // "gpurent jobs"
  std::string word;     // "logs"
  std::string message;  // the whole sentence
};

// Walks the arguments as CLI11 will: a word where a command group expects a subcommand and that
// names none is an unknown command (CLI11 itself would say "A subcommand is required").
std::optional<UnknownCommand> find_unknown_command(CLI::App& root, const std::vector<std::string>& args) {
  CLI::App* cur = &root;
  std::string path = "gpurent";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") return std::nullopt;
    if (a.size() > 1 && a[0] == '-') {
      const CLI::Option* o = option_of(cur, a);
      if (o && o->get_type_size() != 0 && a.find('=') == std::string::npos && !(a.size() > 2 && a[1] != '-'))
        ++i;  // its value
      continue;
    }
    std::vector<CLI::App*> subs = cur->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty()) return std::nullopt;  // a leaf: the rest are its positionals
    CLI::App* next = nullptr;
    for (CLI::App* s : subs)
      if (s->check_name(a)) next = s;
    if (next) {
      cur = next;
      path += " " + next->get_name();
      continue;
    }
    std::vector<std::string> close, all;
    for (CLI::App* s : subs) {
      all.push_back(s->get_name());
      std::vector<std::string> names = s->get_aliases();
      names.push_back(s->get_name());
      for (const auto& n : names) {
        bool near = edit_distance(a, n) <= (n.size() <= 3 ? 1u : 2u) ||
                    (a.size() >= 3 && n.compare(0, a.size(), a) == 0);
        if (near && std::find(close.begin(), close.end(), s->get_name()) == close.end()) close.push_back(s->get_name());
      }
    }
    std::string msg = "unknown command '" + a + "' for '" + path + "'";
    auto join = [](const std::vector<std::string>& v) {
      std::string out;
      for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
      return out;
    };
    if (!close.empty())
      msg += "; did you mean " + join(close) + "?";
    else
      msg += "; the commands are: " + join(all);
    return UnknownCommand{path, a, msg};
  }
  return std::nullopt;
}

// --help-all: every command with every flag, from the same descriptions --help prints.
void print_help_all(std::ostream& out, const CLI::App& app, const std::string& path) {
  std::vector<const CLI::App*> subs = app.get_subcommands([](const CLI::App*) { return true; });
  if (app.get_parent() == nullptr) {
    out << app.help("", CLI::AppFormatMode::Normal);
  } else if (subs.empty()) {
    out << "\n" << path << "  " << app.get_description() << "\n";
    for (const CLI::Option* o : app.get_options()) {
      if (o->get_name() == "--help" || o->get_name().rfind("-h,", 0) == 0 || o->get_name() == "-h,--help") continue;
      std::string name = o->get_name(false, true);
      if (o->get_type_size() != 0) name += " " + (o->get_option_text().empty() ? o->get_type_name() : o->get_option_text());
      out << "    " << name;
      if (name.size() < 34) out << std::string(34 - name.size(), ' ');
      else out << "\n" << std::string(38, ' ');
      out << o->get_description() << "\n";
    }
  }
  for (const CLI::App* s : subs) print_help_all(out, *s, path + " " + s->get_name());
}

}  // namespace

int run_cli(const std::vector<std::string>& args, const CliIo& io) {
  CliContext ctx(io);
  CLI::App app("gpurent: rent and operate GPU compute (docs/cli.md)", "gpurent");
  app.fallthrough();  // global flags work after the subcommand too: `gpurent nodes list -o json`
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "print help for every command and every flag");
  add_global_flags(app, ctx);

  CLI::App* jobs = add_resource_commands(app, ctx);
  add_job_verbs(*jobs, ctx);
  add_operator_commands(app, ctx);
  add_market_commands(app, ctx);
  add_account_commands(app, ctx);
  add_secret_commands(app, ctx);
  add_artifact_commands(app, ctx);
  add_image_commands(app, ctx);
  add_agent_command(app, ctx);
  add_serve_command(app, ctx);
  add_store_commands(app, ctx);
  add_simulate_command(app, ctx);
  add_rate_command(app, ctx);
  add_invoice_commands(app, ctx);
  add_advise_commands(app, ctx);
  app.add_subcommand("version", "print the version of this gpurent binary")->callback([&ctx] {
    ctx.action = [&ctx] {
      return ctx.emit({{"version", kGpurentVersion}},
                      [](std::ostream& out) { out << "gpurent " << kGpurentVersion << '\n'; });
    };
  });

  const bool json_errors = wants_json(args);
  auto usage_error = [&](const std::string& message, const std::string& path) {
    if (json_errors) {
      io.err << local_problem(message, {}, kExitUsage).dump(2) << '\n';
    } else {
      io.err << "error: " << message << "\n";
      io.err << "run `" << path << " --help` for usage\n";
    }
    return kExitUsage;
  };
  if (auto unknown = find_unknown_command(app, args)) return usage_error(unknown->message, unknown->path);

  std::vector<const char*> argv{"gpurent"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::CallForAllHelp&) {
    print_help_all(io.out, app, "gpurent");
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    // Point at the help of the deepest command that was recognised.
    std::string path = "gpurent";
    for (const CLI::App* cur = &app; !cur->get_subcommands().empty();) {
      cur = cur->get_subcommands().front();
      path += " " + cur->get_name();
    }
    return usage_error(e.what(), path);
  }
  if (!ctx.action) {  // a command group given without a verb is caught by require_subcommand
    io.err << app.help();
    return kExitUsage;
  }
  // An answer the command did not expect (a field of another type) is a failure it reports, not
  // an abort half-way through its output.
  try {
    return ctx.action();
  } catch (const std::exception& e) {
    io.out.flush();
    io.err << "error: unexpected answer or state: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace gpurent
