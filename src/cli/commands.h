// Internal to the CLI: the state every subcommand shares (global flags, the lazily connected API
// client, output and error printing) and the functions that register each command group on the
// CLI11 application. One CliContext per run; not thread-safe.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/config.h"
#include "core/result.h"

namespace gpurent {

enum class OutputFormat { kTable, kJson, kYaml };

struct GlobalFlags {
  ConnectionFlags conn;
  std::string output = "table";
  int timeout_s = 60;
};

// Exit codes (docs/cli.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnreachable = 3;

class CliContext {
 public:
  explicit CliContext(const CliIo& io) : io_(io) {}

  GlobalFlags flags;
  // Set by the subcommand CLI11 selected; run after parsing succeeds.
  std::function<int()> action;

  std::istream& in() const { return io_.in; }
  std::ostream& out() const { return io_.out; }
  std::ostream& err() const { return io_.err; }
  TimeMs now() const { return io_.clock.now(); }
  const EnvLookup& env() const { return io_.env; }
  int serve(const ServerOptions& opts) const { return io_.serve(opts); }
  OutputFormat format() const;

  // The API client for the resolved connection. On failure prints the error and returns null
  // with *exit_code set (2 for a malformed --server, 1 for other configuration errors).
  ApiClient* client(int* exit_code);

  // Prints a failed call (with a hint about the address or token where it helps); returns its exit code.
  int fail(ApiError e);
  // Prints a local error ("error: <message>" and its field errors); returns `exit_code`.
  int fail(const Error& e, int exit_code = kExitFailed);

  // -o json / -o yaml print `doc`; the table format calls `human`. Returns kExitOk.
  int emit(const json& doc, const std::function<void(std::ostream&)>& human);

  // Reads a JSON or YAML document from `path` ("-" = standard input); it must be an object.
  Result<json> read_document(const std::string& path);

 private:
  const CliIo& io_;
  std::optional<Connection> conn_;
  std::unique_ptr<ApiClient> client_;
};

// Generic list/get/create/update/delete for every resource kind (jobs and gpu-models included);
// returns the `jobs` subcommand so job_commands can add its verbs.
CLI::App* add_resource_commands(CLI::App& app, CliContext& ctx);
// jobs submit / cancel / events.
void add_job_verbs(CLI::App& jobs, CliContext& ctx);
// nodes drain/undrain, alerts lift, reports reconciliation (operator_commands.cc); after
// add_resource_commands, whose nouns it extends.
void add_operator_commands(CLI::App& app, CliContext& ctx);
// market buy/sell/cancel/quote/depth/prints (market_commands.cc).
void add_market_commands(CLI::App& app, CliContext& ctx);
// quotas get/set, tokens create/list/revoke.
void add_account_commands(CLI::App& app, CliContext& ctx);
// serve: runs the API server (server/server.h).
void add_serve_command(CLI::App& app, CliContext& ctx);
// backup, restore, migrate: a store's backups and its move to PostgreSQL (store/backup.h).
void add_store_commands(CLI::App& app, CliContext& ctx);

// A local failure (bad usage, an unreadable file) as the problem document `-o json` prints on
// standard error: title, detail, errors[] when there are field errors, exit_code.
json local_problem(const std::string& detail, const std::vector<FieldError>& fields, int exit_code);

// Path segment for a user-given id or name.
inline std::string seg(const std::string& s) { return "/" + url_encode(s); }

}  // namespace gpurent
