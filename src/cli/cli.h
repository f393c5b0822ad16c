// The `gpurent` command line: `gpurent serve` runs the API server; every other subcommand is a
// client of its REST API (noun verb, like kubectl and gh: `gpurent nodes list --region cn-east`).
// Exit codes: 0 success, 1 the request failed (the server's error is printed), 2 usage error,
// 3 the server could not be reached. Commands reference: docs/cli.md.
// One call per process; not thread-safe.
#pragma once

#include <functional>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "cli/config.h"
#include "core/clock.h"
#include "server/server.h"

namespace gpurent {

// Where a run reads and writes; injected so tests can drive the CLI in-process.
struct CliIo {
  std::istream& in;
  std::ostream& out;
  std::ostream& err;
  EnvLookup env;
  const Clock& clock;  // for ages ("5m") and token expiry checks
  // `gpurent serve` hands its options here: run_server in the binary, a recorder in tests (so the
  // client library does not link the server).
  std::function<int(const ServerOptions&)> serve;
};

// Runs one command; `args` excludes the program name. Returns the exit code.
int run_cli(const std::vector<std::string>& args, const CliIo& io);

// main(): std streams, the process environment, the system clock, run_server (cli_main.cc).
int cli_main(int argc, char** argv);

}  // namespace gpurent
