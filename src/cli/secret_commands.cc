// secrets set/list/delete: a project's secrets (docs/resources/secrets.md), which its jobs receive
// in their containers. `set` reads the value from standard input or --from-file, never from an
// argument, so it stays out of the shell's history and of `ps`; the value is sent as it was read
// (a trailing newline included) and nothing the CLI prints holds it. `list` and `delete` are
// cli/object_verbs.h's.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/object_verbs.h"
#include "cli/output.h"
#include "cli/views.h"
#include "core/json_limits.h"

namespace gpurent {

namespace {

// The largest value the server keeps (model/secret.h kMaxSecretBytes); checked here too so a
// large file is refused before it is sent.
constexpr size_t kMaxValueBytes = 64 * 1024;

// At most `limit` bytes of `in` (so a huge file or an endless pipe is not read whole).
std::string read_at_most(std::istream& in, size_t limit) {
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

// The value from `path` (empty: standard input); a local error when it cannot be read, is empty,
// too large, holds a NUL or is not UTF-8 (the API carries it as a JSON string).
Result<std::string> read_value(CliContext& ctx, const std::string& path) {
  std::string text;
  const std::string from = path.empty() ? "standard input" : path;
  if (path.empty()) {
    // Only a terminal is told where the value goes; a pipe or a file is read silently.
    if (&ctx.in() == &std::cin && isatty(STDIN_FILENO))
      ctx.err() << "reading the secret's value from standard input (end it with Ctrl-D)\n";
    text = read_at_most(ctx.in(), kMaxValueBytes + 1);
  } else {
    std::ifstream f(path, std::ios::binary);
    if (!f) return Error::make(Code::kInvalid, "cannot read " + path + ": " + std::strerror(errno));
    text = read_at_most(f, kMaxValueBytes + 1);
    if (f.bad()) return Error::make(Code::kInvalid, "cannot read " + path + ": " + std::strerror(errno));
  }
  if (text.empty())
    return Error::make(Code::kInvalid, from + " is empty: pipe the value in, or give --from-file PATH");
  if (text.size() > kMaxValueBytes)
    return Error::make(Code::kInvalid, from + " holds more than " + std::to_string(kMaxValueBytes) +
                                           " bytes, the most a secret may hold");
  if (text.find('\0') != std::string::npos)
    return Error::make(Code::kInvalid, from + " contains a NUL byte: a secret is text (base64-encode binary values)");
  if (const size_t bad = first_invalid_utf8(text); bad != std::string::npos)
    return Error::make(Code::kInvalid, from + " is not UTF-8 text (byte " + std::to_string(bad) +
                                           "): base64-encode binary values");
  return text;
}

std::string secrets_path(const std::string& project) { return "/projects" + seg(project) + "/secrets"; }
std::string secret_path(const std::string& project, const std::string& name) {
  return secrets_path(project) + seg(name);
}

// `list`'s answer: the secrets by name (a note on standard error when there are none).
void print_secrets(CliContext& ctx, std::ostream& out, const json& doc) {
  const json& items = at_path(doc, "items");
  if (!items.is_array() || items.empty()) {
    ctx.err() << "no secrets found\n";
    return;
  }
  std::vector<json> sorted(items.begin(), items.end());
  std::sort(sorted.begin(), sorted.end(), [](const json& a, const json& b) {
    return cell_text(at_path(a, "name")) < cell_text(at_path(b, "name"));
  });
  // UPDATED: how long ago the value was last set.
  Table t({{"NAME"}, {"BYTES", Align::kRight}, {"UPDATED"}, {"ID"}});
  for (const auto& i : sorted)
    t.add_row({cell_text(at_path(i, "name")), cell_text(at_path(i, "size_bytes")),
               format_age(at_path(i, "updated_at"), ctx.now()), cell_text(at_path(i, "id"))});
  t.print(out);
}

}  // namespace

void add_secret_commands(CLI::App& app, CliContext& ctx) {
  auto* secrets = app.add_subcommand("secrets", "a project's secrets, given to its jobs' containers (values never shown)");
  secrets->require_subcommand(1);

  struct SetOpts {
    std::string project, name, from_file;
  };
  auto so = std::make_shared<SetOpts>();
  auto* set = secrets->add_subcommand("set", "create or replace a secret; the value is read from standard input");
  set->add_option("project", so->project, "project id or name")->required();
  set->add_option("name", so->name, "secret name (lowercase letters, digits and '-', 1-63)")->required();
  set->add_option("--from-file", so->from_file, "read the value from this file instead of standard input");
  set->callback([&ctx, so] {
    ctx.action = [&ctx, so]() -> int {
      auto value = read_value(ctx, so->from_file);
      if (!value) return ctx.fail(value.error());
      int rc = kExitOk;
      ApiClient* c = ctx.client(&rc);
      if (!c) return rc;
      auto r = c->put(secret_path(so->project, so->name), json{{"value", *value}});
      if (!r) return ctx.fail(r.error());
      return ctx.emit(*r, [&](std::ostream& out) {
        const json& created = at_path(*r, "created_at");
        const bool is_new = created.is_string() && created == at_path(*r, "updated_at");
        out << (is_new ? "created" : "replaced") << " secret " << printable(cell_text(at_path(*r, "name")))
            << " of project " << printable(so->project) << " (" << cell_text(at_path(*r, "size_bytes"))
            << " bytes)\n";
      });
    };
  });

  const ObjectVerbs verbs{.kind = "secrets",
                          .collection = secrets_path,
                          .path = [](const ObjectRef& s) { return secret_path(s.project, s.name); }};
  add_list_verb(*secrets, ctx, verbs, "list a project's secrets: names and sizes, never values",
                [&ctx](std::ostream& out, const json& doc, const std::string&) { print_secrets(ctx, out, doc); });
  add_delete_verb(*secrets, ctx, verbs, "delete a secret (jobs that name it and have not started will fail)",
                  "secret name", [](const ObjectRef& s, const std::string&) {
                    return "deleted secret " + s.name + " of project " + s.project;
                  });
}

}  // namespace gpurent
