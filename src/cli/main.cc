// The `gpurent` command: server (`gpurent serve`) and client subcommands in one binary.
#include "cli/cli.h"

int main(int argc, char** argv) { return gpurent::cli_main(argc, argv); }
