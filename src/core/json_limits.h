// Bounded JSON parsing for anything a client, a file or a peer hands us. nlohmann::json parses
// iteratively but copies and compares values recursively, so a 200 KB body nested 100,000 deep
// overflows the stack of whichever thread copies it. parse_json_bounded refuses such text before
// the library sees it: nesting deeper than `max_depth` is a 400, not a crash.
// Stateless; safe from any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gpurent {

struct JsonLimits {
  int max_depth = 64;  // arrays and objects inside one another; this API nests at most about 8
};

// The deepest nesting of arrays and objects in `text`, counted outside strings, stopping early
// once it passes `stop_at` (so a hostile text costs one pass, never more). Malformed text is not
// an error here: the parser reports it with its byte offset.
int json_nesting_depth(std::string_view text, int stop_at);

// The byte offset of the first byte of `text` that is not part of well-formed UTF-8 (overlong
// forms, surrogates and code points past U+10FFFF included), or npos when it is all well formed.
// JSON text is checked by its parser; YAML and other text that becomes JSON strings must be
// checked here, since serialising a string that is not UTF-8 throws.
size_t first_invalid_utf8(std::string_view text);

// `text` with each byte that is not part of well-formed UTF-8 replaced by U+FFFD: what another
// program wrote (a node's error output cut at a byte count, a tool's stderr in some other
// encoding) made safe to store and log as a JSON string.
std::string valid_utf8(std::string_view text);

// At most `max` bytes of the UTF-8 text `s`, cut before a character rather than inside one, so a
// long value quoted in an error stays well-formed text.
std::string utf8_prefix(const std::string& s, size_t max);

// Parses `text` as JSON after checking its nesting. kBadRequest with the byte offset and the
// reason on malformed JSON, too deep a nesting, or a number out of range (1e999).
Result<nlohmann::json> parse_json_bounded(std::string_view text, const JsonLimits& limits = {});

}  // namespace gpurent
