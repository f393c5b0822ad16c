#include "core/json_limits.h"

#include <string>

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

Result<nlohmann::json> parse_json_bounded(std::string_view text, const JsonLimits& limits) {
  if (json_nesting_depth(text, limits.max_depth) > limits.max_depth)
    return Error::make(Code::kBadRequest, "malformed JSON: arrays and objects nest deeper than " +
                                              std::to_string(limits.max_depth) + " levels");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::string what = e.what();
    size_t colon = what.find(": ");
    return Error::make(Code::kBadRequest, "malformed JSON at byte " + std::to_string(e.byte) + ": " +
                                              (colon == std::string::npos ? what : what.substr(colon + 2)));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number out of range such as 1e999
    return Error::make(Code::kBadRequest, std::string("malformed JSON: ") + e.what());
  }
}

}  // namespace gpurent
