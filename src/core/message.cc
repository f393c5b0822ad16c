#include "core/message.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

namespace gpurent {

namespace detail {
// Generated from src/messages/*.json by cmake/embed_messages.cmake: {language, JSON text}.
struct EmbeddedCatalogue {
  const char* lang;
  const char* json;
};
extern const EmbeddedCatalogue kMessageCatalogues[];
extern const size_t kMessageCatalogueCount;
}  // namespace detail

namespace {

using Catalogue = std::map<std::string, std::string, std::less<>>;

struct Catalogues {
  std::vector<std::string> langs;
  std::map<std::string, Catalogue, std::less<>> by_lang;
};

const Catalogues& catalogues() {
  static const Catalogues c = [] {
    Catalogues out;
    for (size_t i = 0; i < detail::kMessageCatalogueCount; ++i) {
      const auto& e = detail::kMessageCatalogues[i];
      // The build embeds only files tests/messages_test.sh has parsed; a broken one fails here
      // at the first render rather than rendering codes.
      auto j = nlohmann::json::parse(e.json);
      Catalogue cat;
      for (const auto& [k, v] : j.items()) cat.emplace(k, v.get<std::string>());
      out.langs.emplace_back(e.lang);
      out.by_lang.emplace(e.lang, std::move(cat));
    }
    std::stable_sort(out.langs.begin(), out.langs.end(),
                     [](const std::string& a, const std::string& b) { return a == "en" && b != "en"; });
    return out;
  }();
  return c;
}

const std::string* lookup(std::string_view lang, std::string_view code) {
  const auto& c = catalogues();
  auto it = c.by_lang.find(lang);
  if (it == c.by_lang.end()) return nullptr;
  auto m = it->second.find(code);
  return m == it->second.end() ? nullptr : &m->second;
}

constexpr std::string_view kJoin = "join";

void render_into(const Message& m, std::string_view lang, std::string& out) {
  if (m.code == kJoin) {
    const std::string* sep = lookup(lang, "join.separator");
    if (!sep) sep = lookup("en", "join.separator");
    for (size_t i = 0; i < m.args.size(); ++i) {
      if (i > 0 && sep) out += *sep;
      if (m.args[i].nested.empty()) out += m.args[i].text;
      else render_into(m.args[i].nested.front(), lang, out);
    }
    return;
  }
  const std::string* tpl = lookup(lang, m.code);
  if (!tpl) tpl = lookup("en", m.code);
  if (!tpl) {
    out += m.code;
    for (const auto& a : m.args) {
      out += ' ' + a.name + '=';
      if (a.nested.empty()) out += a.text;
      else render_into(a.nested.front(), lang, out);
    }
    return;
  }
  const std::string& t = *tpl;
  for (size_t i = 0; i < t.size();) {
    if (t[i] == '{') {
      const size_t close = t.find('}', i);
      if (close != std::string::npos) {
        const std::string_view name(t.data() + i + 1, close - i - 1);
        auto a = std::find_if(m.args.begin(), m.args.end(), [&](const MessageArg& x) { return x.name == name; });
        if (a != m.args.end()) {
          if (a->nested.empty()) out += a->text;
          else render_into(a->nested.front(), lang, out);
          i = close + 1;
          continue;
        }
      }
    }
    out += t[i++];
  }
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string match_language(std::string_view tag) {
  std::string t = lower(tag);
  while (!t.empty() && t.back() == ' ') t.pop_back();
  while (!t.empty() && t.front() == ' ') t.erase(t.begin());
  const auto& c = catalogues();
  if (c.by_lang.count(t)) return t;
  const auto dash = t.find_first_of("-_");
  if (dash != std::string::npos && c.by_lang.count(t.substr(0, dash))) return t.substr(0, dash);
  return "";
}

// Arguments are kept sorted by name (a name given twice keeps its last value), so a Message
// equals itself after a trip through JSON.
static Message& put(Message& m, MessageArg a) {
  auto it = std::lower_bound(m.args.begin(), m.args.end(), a.name,
                             [](const MessageArg& x, const std::string& n) { return x.name < n; });
  if (it != m.args.end() && it->name == a.name) *it = std::move(a);
  else m.args.insert(it, std::move(a));
  return m;
}

Message& Message::arg(std::string name, std::string text) & {
  return put(*this, MessageArg{std::move(name), std::move(text), {}});
}

Message& Message::arg(std::string name, Message nested) & {
  MessageArg a{std::move(name), "", {}};
  a.nested.push_back(std::move(nested));
  return put(*this, std::move(a));
}

std::string Message::text_of(std::string_view name) const {
  for (const auto& a : args)
    if (a.name == name && a.nested.empty()) return a.text;
  return "";
}

bool operator==(const Message& a, const Message& b) {
  if (a.code != b.code || a.args.size() != b.args.size()) return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (a.args[i].name != b.args[i].name || a.args[i].text != b.args[i].text || a.args[i].nested != b.args[i].nested)
      return false;
  return true;
}

std::string render(const Message& m, std::string_view lang) {
  std::string out;
  if (!m.empty()) render_into(m, lang, out);
  return out;
}

std::vector<std::string> message_languages() { return catalogues().langs; }

bool has_message(std::string_view lang, std::string_view code) { return lookup(lang, code) != nullptr; }

std::string pick_language(std::string_view query, std::string_view accept_language) {
  if (!query.empty())
    if (auto l = match_language(query); !l.empty()) return l;
  // Accept-Language: "zh-CN,zh;q=0.9,en;q=0.8": the highest q that names a catalogue; ties keep
  // the header's order.
  std::string best;
  double best_q = -1;
  size_t pos = 0;
  int items = 0;
  while (pos <= accept_language.size() && items++ < 32) {
    const size_t comma = std::min(accept_language.find(',', pos), accept_language.size());
    std::string_view item = accept_language.substr(pos, comma - pos);
    pos = comma + 1;
    double q = 1;
    if (const auto semi = item.find(';'); semi != std::string_view::npos) {
      std::string_view p = item.substr(semi + 1);
      item = item.substr(0, semi);
      while (!p.empty() && p.front() == ' ') p.remove_prefix(1);
      if (p.size() > 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
        try {
          q = std::stod(std::string(p.substr(2, 5)));
        } catch (...) {
          q = 0;
        }
      }
    }
    if (q <= 0 || q <= best_q) continue;
    if (auto l = match_language(item); !l.empty()) best = l, best_q = q;
  }
  return best.empty() ? "en" : best;
}

Message join_messages(std::vector<Message> parts) {
  Message m{std::string(kJoin)};
  m.args.reserve(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string name = std::to_string(i);
    name.insert(0, name.size() < 6 ? 6 - name.size() : 0, '0');
    MessageArg a{"p" + name, "", {}};
    a.nested.push_back(std::move(parts[i]));
    m.args.push_back(std::move(a));  // names ascend: the sorted order put() keeps
  }
  return m;
}

nlohmann::json message_to_json(const Message& m) {
  nlohmann::json args = nlohmann::json::object();
  for (const auto& a : m.args) args[a.name] = a.nested.empty() ? nlohmann::json(a.text) : message_to_json(a.nested.front());
  return {{"code", m.code}, {"args", std::move(args)}};
}

namespace {
Result<Message> from_json_at(const nlohmann::json& j, int depth) {
  if (depth > 8) return Error::invalid("message", "nests more than 8 levels");
  if (!j.is_object() || !j.contains("code") || !j["code"].is_string())
    return Error::invalid("message.code", "must be a string");
  Message m(j["code"].get<std::string>());
  if (auto a = j.find("args"); a != j.end()) {
    if (!a->is_object()) return Error::invalid("message.args", "must be an object");
    for (const auto& [k, v] : a->items()) {
      if (v.is_string()) {
        m.arg(k, v.get<std::string>());
      } else {
        auto n = from_json_at(v, depth + 1);
        if (!n) return n.error();
        m.arg(k, std::move(n.value()));
      }
    }
  }
  return m;
}
}  // namespace

Result<Message> message_from_json(const nlohmann::json& j) { return from_json_at(j, 0); }

void put_message(nlohmann::json& obj, const std::string& key, const Message& m) {
  obj[key] = render_en(m);
  obj[key + "_message"] = message_to_json(m);
}

nlohmann::json text_json(const Message& m) {
  nlohmann::json j = nlohmann::json::object();
  put_message(j, "text", m);
  return j;
}

}  // namespace gpurent
