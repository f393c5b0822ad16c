// A user-visible sentence as a code with arguments, rendered in the reader's language from the
// catalogues in src/messages/<lang>.json (one file per language, embedded into the binary at
// build time; the dashboard imports the same files). Engines and services build Messages;
// only the edges (API responses, logs, webhooks) render them. A third language is one more
// catalogue file: nothing here names a language but the fallback, "en".
// Value types; rendering reads only the immutable embedded catalogues (thread-safe).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace gpurent {

struct Message;

// An argument: a value the same in every language (an id, a name, a number, a timestamp), or a
// message rendered in the reader's language (exactly one element in `nested`).
struct MessageArg {
  std::string name;
  std::string text;
  std::vector<Message> nested;
};

struct Message {
  std::string code;  // a key of src/messages/en.json; "" is no message
  std::vector<MessageArg> args;

  Message() = default;
  explicit Message(std::string c) : code(std::move(c)) {}
  // Builders: Message("sched.quota.unknown_project").arg("project", id).
  Message& arg(std::string name, std::string text) &;
  Message& arg(std::string name, Message nested) &;
  Message&& arg(std::string name, std::string text) && { return std::move(arg(std::move(name), std::move(text))); }
  Message&& arg(std::string name, Message nested) && { return std::move(arg(std::move(name), std::move(nested))); }

  bool empty() const { return code.empty(); }
  void clear() { code.clear(), args.clear(); }
  // The argument's text, "" when absent or nested.
  std::string text_of(std::string_view name) const;
};

bool operator==(const Message& a, const Message& b);

// Text that is the same in every language (what an operator or an external system wrote, such as
// a node's drain reason or Slurm's own words): code "text", rendered as it is.
inline Message verbatim(std::string text) { return Message("text").arg("text", std::move(text)); }

// The text of `m` in `lang` (a catalogue's file name: "en", "zh"). An unknown language renders
// in English; a code no catalogue has renders as the code with its arguments (tests keep every
// code the sources use in every catalogue, tests/messages_test.sh).
std::string render(const Message& m, std::string_view lang);
inline std::string render_en(const Message& m) { return render(m, "en"); }

// The catalogues' languages ("en" first), and whether `code` is in `lang`'s catalogue.
std::vector<std::string> message_languages();
bool has_message(std::string_view lang, std::string_view code);

// The catalogue language a language tag names ("zh-CN" -> "zh", "EN" -> "en"); "" when none.
std::string match_language(std::string_view tag);

// The catalogue language a reader asked for: `query` (?lang=) when it names one ("zh", "zh-CN"),
// else the best match of an Accept-Language header by q-value; "en" when nothing matches.
std::string pick_language(std::string_view query, std::string_view accept_language);

// Sentences one after another: code "join", arguments "p000000", "p000001", … rendered in order
// with the catalogue's "join.separator" between them (a space in English, nothing in Chinese).
Message join_messages(std::vector<Message> parts);

// JSON form {"code": "...", "args": {"name": "text" | {"code": ..., "args": ...}}}.
nlohmann::json message_to_json(const Message& m);
Result<Message> message_from_json(const nlohmann::json& j);

// obj[key] = m's English text and obj[key + "_message"] = m as JSON: the server renders `key` in
// the reader's language (server/http localize_messages); a client reading only `key` reads text.
void put_message(nlohmann::json& obj, const std::string& key, const Message& m);
// {"text": English, "text_message": m}: put_message into a new object.
nlohmann::json text_json(const Message& m);

}  // namespace gpurent
