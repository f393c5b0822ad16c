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

#include "core/message_type.h"
#include "core/result.h"

namespace gpurent {


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
