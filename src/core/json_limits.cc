#include "core/json_limits.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpurent {

int json_nesting_depth(std::string_view text, int stop_at) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > deepest) {
          deepest = depth;
          if (deepest > stop_at) return deepest;
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return deepest;
}

size_t first_invalid_utf8(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0)
      len = 2, cp = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0)
      len = 3, cp = c & 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0)
      len = 4, cp = c & 0x07, min = 0x10000;
    else
      return i;
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t bad; (bad = first_invalid_utf8(text)) != std::string_view::npos; text.remove_prefix(bad + 1)) {
    out.append(text.substr(0, bad));
    out.append("\xEF\xBF\xBD");
  }
  out.append(text);
  return out;
}

std::string utf8_prefix(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

Result<nlohmann::json> parse_json_bounded(std::string_view text, const JsonLimits& limits) {
  if (json_nesting_depth(text, limits.max_depth) > limits.max_depth)
    return Error::make(Code::kBadRequest, Message("json.too_deep").arg("max", std::to_string(limits.max_depth)));
  try {
    // A key given twice in one object: one of the two would be dropped without a word (the
    // parser keeps the last), and which one the writer meant is not known. The error names where:
    // the path of the key in the field style of every other error ("workers[0].env.HOME").
    struct Frame {
      bool array = false;
      size_t index = 0;  // an array's next element
      std::string key;   // an object's current key
      std::set<std::string> keys;
    };
    std::vector<Frame> frames;  // per open array or object
    std::optional<std::string> twice, where;
    auto element_done = [&] {
      if (!frames.empty() && frames.back().array) ++frames.back().index;
    };
    auto path = [&] {
      std::string out;
      for (const Frame& f : frames) {
        if (f.array) {
          out += "[" + std::to_string(f.index) + "]";
        } else {
          if (!out.empty()) out += '.';
          out += utf8_prefix(f.key, 128);
        }
        if (out.size() > 512) return utf8_prefix(out, 512) + "…";
      }
      return out;
    };
    auto seen = [&](int, nlohmann::json::parse_event_t ev, nlohmann::json& parsed) {
      using E = nlohmann::json::parse_event_t;
      switch (ev) {
        case E::object_start:
        case E::array_start:
          frames.push_back({ev == E::array_start, 0, {}, {}});
          break;
        case E::object_end:
        case E::array_end:
          if (!frames.empty()) frames.pop_back();
          element_done();
          break;
        case E::key:
          if (!frames.empty() && parsed.is_string()) {
            Frame& f = frames.back();
            f.key = parsed.get<std::string>();
            if (!f.keys.insert(f.key).second && !twice) twice = f.key, where = path();
          }
          break;
        case E::value:  // a scalar (objects and arrays end with their *_end event)
          element_done();
          break;
      }
      return true;
    };
    nlohmann::json out = nlohmann::json::parse(text, seen);
    if (twice) {
      Error e = Error::invalid(*where, Message("json.duplicate_key").arg("key", verbatim(utf8_prefix(*twice, 128))));
      e.code = Code::kBadRequest;  // like the rest of malformed JSON
      return e;
    }
    return out;
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    size_t colon = what.find(": ");
    std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
    // The parser's own words (English in every language) after the position, without the text it
    // last read: that is the request's own content (a secret's value cut at a raw line break), and
    // an error never echoes it — the byte offset says where.
    if (size_t quoted = detail.find("; last read: "); quoted != std::string::npos) detail.erase(quoted);
    return Error::make(Code::kBadRequest,
                       Message("json.malformed_at").arg("byte", std::to_string(e.byte)).arg("detail", detail));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number out of range such as 1e999
    return Error::make(Code::kBadRequest, Message("json.malformed").arg("detail", e.what()));
  }
}

}  // namespace gpurent
