#include "cli/config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/fields.h"
#include "core/yaml_json.h"

namespace gpurent {

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

static std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

Result<ConfigFile> parse_config(const std::string& text, const std::string& path) {
  ConfigFile cfg;
  cfg.path = path;
  auto doc = parse_json_or_yaml(text);
  if (!doc) return Error::make(Code::kInvalid, "config file " + path + ": " + doc.error().message);
  if (doc->is_null()) return cfg;  // empty file

  FieldErrors errs;
  Fields f(*doc, "", errs);
  cfg.server = f.opt_str("server", {.min_len = 1, .max_len = 2048});
  cfg.token = f.opt_str("token", {.min_len = 1, .max_len = 4096});
  cfg.token_file = f.opt_str("token_file", {.min_len = 1, .max_len = 4096});
  f.finish();
  if (cfg.token && cfg.token_file) errs.add("token_file", "give either token or token_file, not both");
  if (!errs.empty()) {
    Error e = errs.to_error();
    e.message = "config file " + path + ": " + e.message;
    return e;
  }
  if (cfg.token_file && !std::filesystem::path(*cfg.token_file).is_absolute()) {
    auto dir = std::filesystem::path(path).parent_path();
    cfg.token_file = (dir / *cfg.token_file).string();
  }
  return cfg;
}

static Result<std::string> read_whole_file(const std::string& path, bool* missing) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error::make(Code::kInvalid, "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    if (missing) *missing = (err == ENOENT);
    return Error::make(Code::kInvalid, std::strerror(err));
  }
  // A config or token file is small: at most 1 MiB is read (a device or a huge file given by
  // mistake is refused, not read into memory).
  constexpr std::streamsize kMax = 1 << 20;
  std::string text(static_cast<size_t>(kMax) + 1, '\0');
  in.read(text.data(), kMax + 1);
  if (in.bad()) return Error::make(Code::kInvalid, "read error");
  text.resize(static_cast<size_t>(in.gcount()));
  if (static_cast<std::streamsize>(text.size()) > kMax) return Error::make(Code::kInvalid, "larger than 1 MiB");
  return text;
}

// A token holds no control characters: one would end up inside the Authorization header.
static Status check_token_text(const std::string& token, const std::string& source) {
  for (unsigned char c : token)
    if (c < 0x20 || c == 0x7f) return Error::make(Code::kInvalid, source + ": the token holds a control character");
  return ok_status();
}

Result<ConfigFile> load_config(const std::string& path, bool required) {
  bool missing = false;
  auto text = read_whole_file(path, &missing);
  if (!text) {
    if (missing && !required) return ConfigFile{};
    return Error::make(Code::kInvalid, "config file " + path + ": " + text.error().message);
  }
  return parse_config(*text, path);
}

std::string default_config_path(const EnvLookup& env) {
  if (auto xdg = env("XDG_CONFIG_HOME")) return *xdg + "/gpurent/config.yaml";
  if (auto home = env("HOME")) return *home + "/.config/gpurent/config.yaml";
  return "";
}

Result<std::string> read_token_file(const std::string& path) {
  auto text = read_whole_file(path, nullptr);
  if (!text) return Error::make(Code::kInvalid, "token file " + path + ": " + text.error().message);
  std::string first = text->substr(0, text->find('\n'));
  std::string token = trim(first);
  if (token.empty()) return Error::make(Code::kInvalid, "token file " + path + " is empty");
  if (token.find_first_of(" \t") != std::string::npos)
    return Error::make(Code::kInvalid, "token file " + path + ": the first line must hold only the token");
  return token;
}

Result<Connection> resolve_connection(const ConnectionFlags& flags, const EnvLookup& env) {
  Connection c;
  c.config_path = flags.config_path.empty() ? default_config_path(env) : flags.config_path;
  ConfigFile cfg;
  if (!c.config_path.empty()) {
    auto loaded = load_config(c.config_path, /*required=*/!flags.config_path.empty());
    if (!loaded) return loaded.error();
    cfg = std::move(loaded).value();
  }
  const std::string from_config = "config " + c.config_path;

  if (!flags.server.empty()) {
    c.server = flags.server, c.server_source = "--server";
  } else if (auto s = env("GPURENT_SERVER")) {
    c.server = *s, c.server_source = "GPURENT_SERVER";
  } else if (cfg.server) {
    c.server = *cfg.server, c.server_source = from_config;
  } else {
    c.server = kDefaultServer, c.server_source = "default";
  }

  if (!flags.token.empty()) {
    c.token = flags.token, c.token_source = "--token";
  } else if (!flags.token_file.empty()) {
    auto t = read_token_file(flags.token_file);
    if (!t) return t.error();
    c.token = *t, c.token_source = "--token-file " + flags.token_file;
  } else if (auto t = env("GPURENT_TOKEN")) {
    c.token = trim(*t), c.token_source = "GPURENT_TOKEN";
  } else if (cfg.token) {
    c.token = trim(*cfg.token), c.token_source = from_config;
  } else if (cfg.token_file) {
    auto t = read_token_file(*cfg.token_file);
    if (!t) return Error::make(Code::kInvalid, from_config + ": " + t.error().message);
    c.token = *t, c.token_source = from_config + " (token_file " + *cfg.token_file + ")";
  }
  if (auto st = check_token_text(c.token, c.token_source); !st) return st.error();
  return c;
}

}  // namespace gpurent
