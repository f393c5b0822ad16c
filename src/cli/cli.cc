#include "cli/cli.h"

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

static void add_global_flags(CLI::App& app, CliContext& ctx) {
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
  app.add_option("-o,--output", g.output, "output format: table (default), json or yaml")
      ->check(CLI::IsMember({"table", "json", "yaml"}))
      ->group(grp);
  app.add_option("--timeout", g.timeout_s, "seconds to wait for the server (default 60)")
      ->check(CLI::Range(1, 3600))
      ->group(grp);
}

int run_cli(const std::vector<std::string>& args, const CliIo& io) {
  CliContext ctx(io);
  CLI::App app("gpurent: rent and operate GPU compute (docs/cli.md)", "gpurent");
  app.fallthrough();  // global flags work after the subcommand too: `gpurent nodes list -o json`
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "print help for every command");
  add_global_flags(app, ctx);

  CLI::App* jobs = add_resource_commands(app, ctx);
  add_job_verbs(*jobs, ctx);
  add_account_commands(app, ctx);
  add_serve_command(app, ctx);
  add_simulate_command(app, ctx);
  add_rate_command(app, ctx);
  add_invoice_commands(app, ctx);
  add_advise_commands(app, ctx);
  app.add_subcommand("version", "print the version of this gpurent binary")->callback([&ctx] {
    ctx.action = [&ctx] {
      ctx.out() << "gpurent " << kGpurentVersion << '\n';
      return kExitOk;
    };
  });

  std::vector<const char*> argv{"gpurent"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e, io.out, io.err);
  } catch (const CLI::ParseError& e) {
    // Point at the help of the deepest command that was recognised.
    std::string path = "gpurent";
    for (const CLI::App* cur = &app; !cur->get_subcommands().empty();) {
      cur = cur->get_subcommands().front();
      path += " " + cur->get_name();
    }
    io.err << "error: " << e.what() << "\n";
    io.err << "run `" << path << " --help` for usage\n";
    return kExitUsage;
  }
  if (!ctx.action) {  // a command group given without a verb is caught by require_subcommand
    io.err << app.help();
    return kExitUsage;
  }
  return ctx.action();
}

}  // namespace gpurent
