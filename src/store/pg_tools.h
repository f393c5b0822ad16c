// PostgreSQL's client programs (pg_dump, pg_restore, psql) as child processes, for the PostgreSQL side
// of backups (pg_backup.cc). A program runs from an argv array through posix_spawn, never through
// a shell; the connection goes to it as a key=value string without the password, which travels
// in the child's PGPASSWORD instead (so it shows neither in the process list nor in a message).
// Internal to src/store. Functions are thread-safe (each run has its own pipes and child).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace gpurent {

// Where a PostgreSQL client program is: $GPURENT_PG_BINDIR/<name> when that variable is set,
// else the first <name> on $PATH, else the newest /usr/lib/postgresql/<N>/bin/<name>.
// kUnavailable naming what to install when there is none.
Result<std::string> find_pg_tool(const std::string& name);

// How to hand `url` (a postgresql:// URL or a key=value string) to a client program: the
// connection options as a key=value string without the password, and the password apart
// (empty when the URL has none: the program then uses PGPASSWORD or ~/.pgpass as usual).
struct PgToolConnection {
  std::string conninfo;
  std::string password;
};
Result<PgToolConnection> pg_tool_connection(const std::string& url);

struct ToolRun {
  int exit_code = 0;  // the program's exit status; 128 + N when killed by signal N
  std::string out;    // standard output, when captured
  std::string err;    // standard error (its last 64 KiB)
};

// Runs argv[0] (a path) with argv, its environment this process's plus `env` ("NAME=value",
// replacing a variable of the same name), standard input /dev/null. Standard output is captured
// when `capture_out`, else discarded. Waits for it to end. An error only when it could not be
// started or waited for; a program that fails is a ToolRun with its exit code and stderr.
Result<ToolRun> run_tool(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
                         bool capture_out = false);

// Runs `producer | consumer` (the producer's standard output is the consumer's standard input),
// both with this process's environment plus `env`; their standard errors are captured, the
// consumer's standard output too. Waits for both.
Result<std::pair<ToolRun, ToolRun>> run_pipeline(const std::vector<std::string>& producer,
                                                 const std::vector<std::string>& consumer,
                                                 const std::vector<std::string>& env = {});

// "pg_dump failed (exit status 1): <its stderr, trimmed>" as a kInternal Error.
Error tool_failure(const std::string& name, const ToolRun& run);

}  // namespace gpurent
