// Connection settings of the `gpurent` client: which server to talk to and which bearer token to
// send. Each setting is taken from the first source that has it:
//   server: --server/-s, then GPURENT_SERVER, then `server:` in the config file, then the default;
//   token:  --token, then --token-file, then GPURENT_TOKEN, then `token:` / `token_file:` in the
//           config file, then none.
// The config file is --config, else $XDG_CONFIG_HOME/gpurent/config.yaml, else
// ~/.config/gpurent/config.yaml; a missing default file is no error, a missing --config file is.
// The environment is injected (EnvLookup) so precedence is testable. Pure functions over values;
// thread-compatible.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "core/result.h"

namespace gpurent {

inline constexpr const char* kDefaultServer = "http://127.0.0.1:8080";

// Returns the value of an environment variable, nullopt when unset. Empty values count as unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
// Reads the process environment.
EnvLookup process_env();

// What the command line said; empty strings mean "not given".
struct ConnectionFlags {
  std::string server;
  std::string token;
  std::string token_file;
  std::string config_path;
};

// The config file's contents. A relative token_file is resolved against the file's folder.
struct ConfigFile {
  std::string path;  // where it was read from; empty when there was none
  std::optional<std::string> server;
  std::optional<std::string> token;
  std::optional<std::string> token_file;
};

// Parses a config file's text (YAML or JSON; keys: server, token, token_file; unknown keys are
// errors). `path` names the file in error messages and anchors a relative token_file.
Result<ConfigFile> parse_config(const std::string& text, const std::string& path);
// Reads and parses `path`. A missing file yields an empty ConfigFile unless `required`.
Result<ConfigFile> load_config(const std::string& path, bool required);
// $XDG_CONFIG_HOME/gpurent/config.yaml or $HOME/.config/gpurent/config.yaml; empty if neither is set.
std::string default_config_path(const EnvLookup& env);

// Reads a token file: the first line, surrounding whitespace removed. Errors name the path.
Result<std::string> read_token_file(const std::string& path);

struct Connection {
  std::string server;         // as configured, e.g. "http://127.0.0.1:8080"
  std::string server_source;  // where it came from: "--server", "GPURENT_SERVER", "config <path>", "default"
  std::string token;          // empty: send no Authorization header
  std::string token_source;   // "--token", "--token-file <path>", "GPURENT_TOKEN", "config <path>", "" when none
  std::string config_path;    // the config file consulted (may not exist)
};

// Applies the precedence above. Errors: unreadable/malformed config or token file.
Result<Connection> resolve_connection(const ConnectionFlags& flags, const EnvLookup& env);

}  // namespace gpurent
