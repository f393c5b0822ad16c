// cli_main: the process wiring of run_cli. Kept apart from cli.cc so that only the `gpurent`
// binary, not the CLI's unit tests, needs the server library for run_server.
#include <iostream>

#include "cli/cli.h"

namespace gpurent {

int cli_main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  SystemClock clock;
  std::ios::sync_with_stdio(false);
  CliIo io{std::cin, std::cout, std::cerr, process_env(), clock, run_server};
  int rc = run_cli(args, io);
  std::cout.flush();
  return rc;
}

}  // namespace gpurent
