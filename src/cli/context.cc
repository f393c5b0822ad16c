#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/output.h"
#include "cli/upload.h"
#include "core/message.h"
#include "core/yaml_json.h"

namespace gpurent {

OutputFormat CliContext::format() const {
  if (flags.output == "json") return OutputFormat::kJson;
  if (flags.output == "yaml") return OutputFormat::kYaml;
  return OutputFormat::kTable;
}

ApiClient* CliContext::client(int* exit_code) {
  if (client_) return client_.get();
  auto conn = resolve_connection(flags.conn, io_.env);
  if (!conn) {
    *exit_code = fail(conn.error(), kExitFailed);
    return nullptr;
  }
  auto url = parse_server_url(conn->server);
  if (!url) {
    Error e = url.error();
    e.message = e.fields.empty() ? e.message : e.fields[0].reason;
    e.fields.clear();
    if (conn->server_source != "--server") e.message += " (from " + conn->server_source + ")";
    *exit_code = fail(e, conn->server_source == "--server" ? kExitUsage : kExitFailed);
    return nullptr;
  }
  conn_ = std::move(conn).value();
  client_ = std::make_unique<ApiClient>(
      std::move(url).value(), conn_->token,
      ClientOptions{.connect_timeout_s = std::min(flags.timeout_s, 10),
                    .timeout_s = flags.timeout_s,
                    .language = locale_language(std::getenv("LC_ALL"), std::getenv("LC_MESSAGES"), std::getenv("LANG"))});
  return client_.get();
}

int CliContext::fail(ApiError e) {
  if (e.hint.empty() && conn_) {
    if (e.unreachable()) {
      e.hint =
          (conn_->server_source == "default" ? std::string("no server address is configured, so the default was used")
                                             : "the address came from " + conn_->server_source) +
          "; start a server with `gpurent serve`, or point at one with --server or GPURENT_SERVER";
    } else if (e.status == 401) {
      e.hint = conn_->token.empty()
                   ? "no token was sent: use --token or --token-file, set GPURENT_TOKEN, or put token: in " +
                         (conn_->config_path.empty() ? std::string("the config file") : conn_->config_path)
                   : "the token from " + conn_->token_source + " was refused (unknown, expired or revoked)";
    }
  }
  if (format() == OutputFormat::kJson) {
    json doc = problem_json(e);
    doc["exit_code"] = e.exit_code();
    io_.err << doc.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
    return e.exit_code();
  }
  io_.err << render_api_error(e);
  return e.exit_code();
}

json local_problem(const std::string& detail, const std::vector<FieldError>& fields, int exit_code) {
  json doc = {{"title", exit_code == kExitUsage ? "Invalid usage" : "Error"}, {"detail", detail}};
  if (!fields.empty()) {
    doc["errors"] = json::array();
    for (const auto& f : fields) doc["errors"].push_back({{"field", f.field}, {"reason", f.reason}});
  }
  doc["exit_code"] = exit_code;
  return doc;
}

int CliContext::fail(const Error& english, int exit_code) {
  // In the reader's language (LC_ALL, LC_MESSAGES, LANG) where the error was built from message
  // codes; text given as text only stays as it is.
  Error e = english;
  if (const std::string lang = cli_language(*this); lang != "en") {
    // Only a message still as the catalogue words it: one a caller added to ("config file …: ")
    // keeps its English, with its context.
    if (!e.detail.code.empty() && english.message == render_en(english.detail)) e.message = render(e.detail, lang);
    for (FieldError& f : e.fields)
      if (!f.coded.code.empty()) f.reason = render(f.coded, lang);
    if (e.detail.code.empty() && e.fields.size() == 1 && !e.fields[0].coded.code.empty() &&
        english.message == english.fields[0].field + ": " + english.fields[0].reason)
      e.message = render(field_detail(e.fields[0].field, Message(e.fields[0].coded)), lang);
  }
  if (format() == OutputFormat::kJson) {
    io_.err << local_problem(e.message, e.fields, exit_code).dump(2, ' ', false, json::error_handler_t::replace)
            << '\n';
    return exit_code;
  }
  io_.err << "error: " << printable(e.message) << '\n';
  // Error::invalid repeats its only field in the message; list fields only when they add detail.
  bool repeats = e.fields.size() == 1 && english.message == english.fields[0].field + ": " + english.fields[0].reason;
  if (!repeats)
    for (const auto& f : e.fields)
      io_.err << "  " << (f.field.empty() ? "" : printable(f.field) + ": ") << printable(f.reason) << '\n';
  return exit_code;
}

int CliContext::emit(const json& doc, const std::function<void(std::ostream&)>& human) {
  switch (format()) {
    case OutputFormat::kJson:
      io_.out << doc.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
      break;
    case OutputFormat::kYaml:
      io_.out << to_yaml(doc);
      break;
    case OutputFormat::kTable:
      human(io_.out);
      break;
  }
  return kExitOk;
}

Result<json> CliContext::read_document(const std::string& path) {
  const std::string name = path == "-" ? "standard input" : path;
  // A document is at most 64 MiB (a device, or a huge file given by mistake, is refused, not read
  // into memory); a folder is said to be one.
  constexpr std::streamsize kMax = std::streamsize{64} << 20;
  auto read_from = [&](std::istream& in) -> Result<std::string> {
    std::string text;
    char buf[65536];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      text.append(buf, static_cast<size_t>(in.gcount()));
      if (static_cast<std::streamsize>(text.size()) > kMax)
        return Error::make(Code::kInvalid, name + ": larger than 64 MiB, more than any document gpurent reads");
    }
    if (in.bad()) return Error::make(Code::kInvalid, "cannot read " + name);
    return text;
  };
  Result<std::string> read = std::string();
  if (path == "-") {
    read = read_from(io_.in);
  } else {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return Error::make(Code::kInvalid, path + " is a folder, not a file");
    std::ifstream f(path, std::ios::binary);
    if (!f) return Error::make(Code::kInvalid, "cannot read " + path + ": " + std::strerror(errno));
    read = read_from(f);
  }
  if (!read) return read.error();
  const std::string& text = *read;
  auto doc = parse_json_or_yaml(text);
  if (!doc) {
    Error e = doc.error();
    e.message = name + ": " + (e.fields.empty() ? e.message : e.fields[0].reason);
    e.fields.clear();
    return e;
  }
  if (!doc->is_object())
    return Error::make(Code::kInvalid, name + ": expected a mapping of fields (a YAML mapping or JSON object)" +
                                           (doc->is_null() ? std::string(", got an empty document") : ""));
  return std::move(doc).value();
}

}  // namespace gpurent
