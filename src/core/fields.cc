#include "core/fields.h"

#include "core/message.h"

#include <mutex>
#include <regex>
#include <unordered_map>

namespace gpurent {

Message FieldReason::message() const {
  Message m(code);
  for (const auto& [k, v] : args) m.arg(k, v);
  return m;
}

void FieldErrors::add(std::string field, Message reason) {
  std::string text = render_en(reason);
  list_.push_back({std::move(field), std::move(text), std::move(reason)});
}

Error FieldErrors::to_error() const {
  Error e{Code::kInvalid, "", list_, {}};
  if (list_.empty()) {
    e.message = "invalid request";
    return e;
  }
  const FieldError& first = list_[0];
  e.message = (first.field.empty() ? "" : first.field + ": ") + first.reason;
  if (list_.size() > 1) e.message += " (and " + std::to_string(list_.size() - 1) + " more)";
  if (first.coded.empty()) return e;
  e.detail = field_detail(first.field, first.coded);
  if (list_.size() > 1)
    e.detail = Message("error.and_more").arg("first", std::move(e.detail)).arg("n", std::to_string(list_.size() - 1));
  return e;
}

Fields::Fields(const json& obj, std::string path, FieldErrors& errs)
    : obj_(obj.is_object() ? &obj : nullptr), path_(std::move(path)), errs_(errs) {
  if (!obj_) errs_.add(path_.empty() ? "" : path_, FieldReason{"field.object"});
}

bool Fields::has(const char* key) const { return obj_ && obj_->contains(key) && !(*obj_)[key].is_null(); }

std::string Fields::path_of(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

void Fields::ignore(std::initializer_list<const char*> keys) {
  for (const char* k : keys) seen_.insert(k);
}

const json* Fields::take(const char* key) {
  seen_.insert(key);
  if (!obj_) return nullptr;
  auto it = obj_->find(key);
  if (it == obj_->end() || it->is_null()) return nullptr;
  return &*it;
}

static bool matches(const char* pattern, const std::string& s) {
  // Compiled patterns are cached; regex construction is expensive. Guarded: Fields may be used on
  // HTTP threads concurrently.
  static std::mutex mu;
  static std::unordered_map<const char*, std::regex> cache;
  const std::regex* re;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(pattern);
    if (it == cache.end()) it = cache.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
    re = &it->second;
  }
  return std::regex_match(s, *re);
}

// Structural UTF-8 check (no overlongs, no surrogates, at most U+10FFFF).
static bool valid_utf8(const std::string& s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || i + len > n) return false;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) {
      unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 0x2) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

// A failed check, as a coded reason.
struct StrProblem {
  Message coded;
  void report(FieldErrors& errs, std::string field) const { errs.add(std::move(field), coded); }
};

static std::optional<std::string> check_str(const json& v, const StrRule& rule, StrProblem* why) {
  if (!v.is_string()) {
    why->coded = Message("field.string");
    return std::nullopt;
  }
  const auto& s = v.get_ref<const std::string&>();
  if (!valid_utf8(s)) {
    why->coded = Message("field.utf8");
    return std::nullopt;
  }
  if (s.size() < rule.min_len) {
    why->coded = rule.min_len == 1 ? Message("field.not_empty")
                                   : Message("field.min_chars").arg("min", std::to_string(rule.min_len));
    return std::nullopt;
  }
  if (s.size() > rule.max_len) {
    why->coded = Message("field.max_chars").arg("max", std::to_string(rule.max_len));
    return std::nullopt;
  }
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) {
      why->coded = Message("field.control_chars");
      return std::nullopt;
    }
  }
  if (rule.pattern && !matches(rule.pattern, s)) {
    why->coded = Message("field.pattern")
                     .arg("value", s)
                     .arg("help", rule.pattern_help ? Message(rule.pattern_help) : verbatim(rule.pattern));
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> Fields::opt_str(const char* key, StrRule rule) {
  const json* v = take(key);
  if (!v) return std::nullopt;
  StrProblem why;
  auto s = check_str(*v, rule, &why);
  if (!s) why.report(errs_, path_of(key));
  return s;
}

std::string Fields::str(const char* key, StrRule rule) {
  if (!has(key)) {
    take(key);
    error(key, FieldReason{"field.required"});
    return {};
  }
  return opt_str(key, rule).value_or("");
}

std::optional<int64_t> Fields::opt_integer(const char* key, int64_t min, int64_t max) {
  const json* v = take(key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) {
    error(key, FieldReason{v->is_number() ? "field.whole_number" : "field.integer"});
    return std::nullopt;
  }
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    error(key, FieldReason{"field.at_most", {{"max", std::to_string(max)}}});
    return std::nullopt;
  }
  int64_t x = v->get<int64_t>();
  if (x < min) {
    error(key, FieldReason{"field.at_least_got", {{"min", std::to_string(min)}, {"got", std::to_string(x)}}});
    return std::nullopt;
  }
  if (x > max) {
    error(key, FieldReason{"field.at_most_got", {{"max", std::to_string(max)}, {"got", std::to_string(x)}}});
    return std::nullopt;
  }
  return x;
}

int64_t Fields::integer(const char* key, int64_t min, int64_t max) {
  if (!has(key)) {
    take(key);
    error(key, FieldReason{"field.required"});
    return min;
  }
  return opt_integer(key, min, max).value_or(min);
}

bool Fields::boolean(const char* key, bool def) {
  const json* v = take(key);
  if (!v) return def;
  if (!v->is_boolean()) {
    error(key, FieldReason{"field.boolean"});
    return def;
  }
  return v->get<bool>();
}

std::optional<Money> Fields::opt_money(const char* key, Currency c, bool allow_negative) {
  const json* v = take(key);
  if (!v) return std::nullopt;
  Result<Money> m = Error::make(Code::kInvalid, "");
  if (v->is_string()) {
    m = Money::parse(v->get_ref<const std::string&>(), c);
    if (!m) {
      error(key, m.error().fields.empty() ? m.error().message : m.error().fields[0].reason);
      return std::nullopt;
    }
  } else if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {  // get<int64_t> would wrap
      error(key, FieldReason{"field.too_large"});
      return std::nullopt;
    }
    int64_t units = v->get<int64_t>();
    if (units > 9'000'000'000'000LL || units < -9'000'000'000'000LL) {
      error(key, FieldReason{"field.too_large"});
      return std::nullopt;
    }
    m = Money(units * Money::kMicrosPerUnit, c);
  } else {
    error(key, FieldReason{v->is_number() ? "field.money_float" : "field.money_string"});
    return std::nullopt;
  }
  if (!allow_negative && m->micros() < 0) {
    error(key, FieldReason{"field.not_negative"});
    return std::nullopt;
  }
  return *m;
}

Money Fields::money(const char* key, Currency c, bool allow_negative) {
  if (!has(key)) {
    take(key);
    error(key, FieldReason{"field.required"});
    return Money::zero(c);
  }
  return opt_money(key, c, allow_negative).value_or(Money::zero(c));
}

std::optional<TimeMs> Fields::opt_time(const char* key) {
  const json* v = take(key);
  if (!v) return std::nullopt;
  if (!v->is_string()) {
    error(key, FieldReason{"field.time_string"});
    return std::nullopt;
  }
  auto t = parse_rfc3339(v->get_ref<const std::string&>(), path_of(key));
  if (!t) {
    errs_.add(path_of(key), t.error().fields[0].reason);
    return std::nullopt;
  }
  return *t;
}

TimeMs Fields::time(const char* key) {
  if (!has(key)) {
    take(key);
    error(key, FieldReason{"field.required"});
    return 0;
  }
  return opt_time(key).value_or(0);
}

std::vector<std::string> Fields::str_list(const char* key, StrRule rule, bool required, size_t max_items) {
  std::vector<std::string> out;
  const json* v = take(key);
  if (!v) {
    if (required) error(key, FieldReason{"field.required"});
    return out;
  }
  if (!v->is_array()) {
    error(key, FieldReason{"field.string_list"});
    return out;
  }
  if (v->size() > max_items) {
    error(key, FieldReason{"field.max_items", {{"max", std::to_string(max_items)}}});
    return out;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    StrProblem why;
    auto s = check_str((*v)[i], rule, &why);
    if (!s)
      why.report(errs_, path_of(key) + "[" + std::to_string(i) + "]");
    else
      out.push_back(*s);
  }
  return out;
}

void Fields::object(const char* key, bool required, const std::function<void(Fields&)>& fn) {
  const json* v = take(key);
  if (!v) {
    if (required) error(key, FieldReason{"field.required"});
    return;
  }
  Fields sub(*v, path_of(key), errs_);
  if (!sub.valid_object()) return;
  fn(sub);
  sub.finish();
}

void Fields::objects(const char* key, bool required, size_t max_items,
                     const std::function<void(Fields&, size_t)>& fn) {
  const json* v = take(key);
  if (!v) {
    if (required) error(key, FieldReason{"field.required"});
    return;
  }
  if (!v->is_array()) {
    error(key, FieldReason{"field.list"});
    return;
  }
  if (v->size() > max_items) {
    error(key, FieldReason{"field.max_items_got", {{"max", std::to_string(max_items)}, {"got", std::to_string(v->size())}}});
    return;
  }
  for (size_t i = 0; i < v->size(); ++i) {
    Fields sub((*v)[i], path_of(key) + "[" + std::to_string(i) + "]", errs_);
    if (!sub.valid_object()) continue;
    fn(sub, i);
    sub.finish();
  }
}

void Fields::finish() {
  if (!obj_ || finished_) return;
  finished_ = true;
  for (auto it = obj_->begin(); it != obj_->end(); ++it)
    if (!seen_.count(it.key())) errs_.add(path_of(it.key()), FieldReason{"field.unknown"});
}

}  // namespace gpurent
