// Validating reader for JSON objects at the API/file boundary. Every getter records a FieldError
// naming the full path ("spec.gpus[3].numa_node") and the reason instead of throwing, so one
// request reports all its problems at once. Unknown keys are errors (typos must not pass silently).
// Usage:
//   FieldErrors errs;
//   Fields f(body, "", errs);
//   auto name = f.str("name", {.min_len = 1, .max_len = 63, .pattern = kSlug});
//   f.finish();  // unknown keys
//   if (!errs.empty()) return errs.to_error();
// Not thread-safe; short-lived.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/money.h"
#include "core/result.h"

namespace gpurent {

using json = nlohmann::json;

// A reason as a message code with its (language-neutral) arguments: "field.required",
// {{"max", "63"}}. Its English text comes from the catalogue (src/messages/en.json).
struct FieldReason {
  std::string code;
  std::vector<std::pair<std::string, std::string>> args = {};
  Message message() const;
};

class FieldErrors {
 public:
  // A reason as text only (English in every language).
  void add(std::string field, std::string reason) { list_.push_back({std::move(field), std::move(reason), {}}); }
  // A reason as a message code (its English text from the catalogue); a nested argument words
  // itself too: Message("field.pattern").arg("help", Message("pattern.slug")).
  void add(std::string field, Message reason);
  void add(std::string field, const FieldReason& reason) { add(std::move(field), reason.message()); }
  bool empty() const { return list_.empty(); }
  const std::vector<FieldError>& list() const { return list_; }
  // A kInvalid Error whose message names the first field (and counts the rest).
  Error to_error() const;

 private:
  std::vector<FieldError> list_;
};

// Enum <-> wire name tables.
template <class E>
struct EnumEntry {
  E value;
  const char* name;
};

template <class E, size_t N>
const char* enum_name(const EnumEntry<E> (&table)[N], E v) {
  for (const auto& e : table)
    if (e.value == v) return e.name;
  return "?";
}

template <class E, size_t N>
std::optional<E> enum_parse(const EnumEntry<E> (&table)[N], std::string_view s) {
  for (const auto& e : table)
    if (s == e.name) return e.value;
  return std::nullopt;
}

template <class E, size_t N>
std::string enum_choices(const EnumEntry<E> (&table)[N]) {
  std::string out;
  for (const auto& e : table) {
    if (!out.empty()) out += ", ";
    out += e.name;
  }
  return out;
}

struct StrRule {
  size_t min_len = 1;
  size_t max_len = 256;
  const char* pattern = nullptr;       // ECMAScript regex the whole string must match
  const char* pattern_help = nullptr;  // message code describing the pattern ("pattern.slug"); none shows the regex
};

// Lowercase DNS-label-like names: "vision", "h100-pool-a".
inline constexpr const char* kSlug = "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?";
inline constexpr const char* kSlugHelp = "pattern.slug";

class Fields {
 public:
  Fields(const json& obj, std::string path, FieldErrors& errs);

  bool valid_object() const { return obj_ != nullptr; }
  bool has(const char* key) const;
  std::string path_of(const std::string& key) const;
  void error(const std::string& key, const std::string& reason) { errs_.add(path_of(key), reason); }
  void error(const std::string& key, const FieldReason& reason) { errs_.add(path_of(key), reason); }
  void error(const std::string& key, Message reason) { errs_.add(path_of(key), std::move(reason)); }
  // Keys that are accepted and ignored (server-set fields echoed back on update).
  void ignore(std::initializer_list<const char*> keys);

  std::string str(const char* key, StrRule rule = {});
  std::optional<std::string> opt_str(const char* key, StrRule rule = {});
  int64_t integer(const char* key, int64_t min, int64_t max);
  std::optional<int64_t> opt_integer(const char* key, int64_t min, int64_t max);
  bool boolean(const char* key, bool def);
  // Money: a decimal string ("3.20") or a whole JSON integer; JSON floats are refused.
  Money money(const char* key, Currency c, bool allow_negative = false);
  std::optional<Money> opt_money(const char* key, Currency c, bool allow_negative = false);
  TimeMs time(const char* key);
  std::optional<TimeMs> opt_time(const char* key);
  // At most `max_items` items (more: one error on the list, naming the limit).
  std::vector<std::string> str_list(const char* key, StrRule rule = {}, bool required = false, size_t max_items = 1024);

  template <class E, size_t N>
  E enumeration(const char* key, const EnumEntry<E> (&table)[N], std::optional<E> def = std::nullopt) {
    const json* v = take(key);
    if (!v) {
      if (def) return *def;
      error(key, FieldReason{"field.required_one_of", {{"choices", enum_choices(table)}}});
      return table[0].value;
    }
    if (!v->is_string()) {
      error(key, FieldReason{"field.string_one_of", {{"choices", enum_choices(table)}}});
      return table[0].value;
    }
    auto e = enum_parse(table, v->get_ref<const std::string&>());
    if (!e) {
      error(key, FieldReason{"field.unknown_value", {{"value", v->get<std::string>()}, {"choices", enum_choices(table)}}});
      return table[0].value;
    }
    return *e;
  }

  // Nested object; callback receives a Fields for it. Missing + required -> error.
  void object(const char* key, bool required, const std::function<void(Fields&)>& fn);
  // Array of objects; callback gets a Fields per element ("key[i]"), max_items bounds it.
  void objects(const char* key, bool required, size_t max_items, const std::function<void(Fields&, size_t)>& fn);
  // Raw access to an arbitrary JSON value (marked consumed).
  const json* raw(const char* key) { return take(key); }

  // Reports keys that were never read or ignored; once (object() and objects() finish what they
  // hand out, so a callback that finishes its own Fields too reports nothing twice).
  void finish();

 private:
  const json* take(const char* key);

  const json* obj_;
  std::string path_;
  FieldErrors& errs_;
  std::set<std::string> seen_;
  bool finished_ = false;
};

}  // namespace gpurent
