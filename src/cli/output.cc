#include "cli/output.h"

#include <algorithm>
#include <regex>
#include <sstream>
#include <utility>

namespace gpurent {

namespace {

struct Range {
  char32_t lo, hi;
};

// Zero-width code points: combining marks, joiners, variation selectors, hangul medial/final jamo.
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036F},   {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x05BF, 0x05BF}, {0x05C1, 0x05C2}, {0x05C4, 0x05C5},
    {0x05C7, 0x05C7},   {0x0610, 0x061A}, {0x064B, 0x065F}, {0x0670, 0x0670}, {0x06D6, 0x06DC}, {0x06DF, 0x06E4},
    {0x06E7, 0x06E8},   {0x06EA, 0x06ED}, {0x0E31, 0x0E31}, {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E}, {0x1160, 0x11FF},
    {0x1AB0, 0x1AFF},   {0x1DC0, 0x1DFF}, {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x2064}, {0x20D0, 0x20FF},
    {0x302A, 0x302D},   {0x3099, 0x309A}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F}, {0xFEFF, 0xFEFF}, {0x1F3FB, 0x1F3FF},
    {0xE0000, 0xE0FFF},
};

// East Asian Wide (W) and Fullwidth (F) code points (Unicode 15 EastAsianWidth.txt, emoji included).
constexpr Range kWide[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},   {0x23F0, 0x23F0},
    {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x267F, 0x267F},
    {0x2693, 0x2693},   {0x26A1, 0x26A1},   {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},
    {0x26CE, 0x26CE},   {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},   {0x2728, 0x2728},
    {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},
    {0x27B0, 0x27B0},   {0x27BF, 0x27BF},   {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},
    {0x2E80, 0x303E},   {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
    {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},
    {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4}, {0x17000, 0x18CFF}, {0x1B000, 0x1B2FF},
    {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF}, {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F202},
    {0x1F210, 0x1F23B}, {0x1F240, 0x1F248}, {0x1F250, 0x1F251}, {0x1F260, 0x1F265}, {0x1F300, 0x1F320},
    {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C}, {0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA}, {0x1F3CF, 0x1F3D3},
    {0x1F3E0, 0x1F3F0}, {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E}, {0x1F440, 0x1F440}, {0x1F442, 0x1F4FC},
    {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E}, {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A}, {0x1F595, 0x1F596},
    {0x1F5A4, 0x1F5A4}, {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5}, {0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2},
    {0x1F6D5, 0x1F6D7}, {0x1F6DC, 0x1F6DF}, {0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC}, {0x1F7E0, 0x1F7EB},
    {0x1F7F0, 0x1F7F0}, {0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945}, {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FAFF},
    {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

template <size_t N>
bool in_table(const Range (&table)[N], char32_t cp) {
  auto it =
      std::upper_bound(std::begin(table), std::end(table), cp, [](char32_t c, const Range& r) { return c < r.lo; });
  return it != std::begin(table) && cp <= std::prev(it)->hi;
}

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 when the byte starts no valid
// sequence (overlong forms, surrogates and values above U+10FFFF are invalid).
size_t decode_utf8(std::string_view s, size_t i, char32_t* cp) {
  auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) {
    *cp = b;
    return 1;
  }
  size_t len;
  char32_t v;
  if ((b & 0xE0) == 0xC0)
    len = 2, v = b & 0x1F;
  else if ((b & 0xF0) == 0xE0)
    len = 3, v = b & 0x0F;
  else if ((b & 0xF8) == 0xF0)
    len = 4, v = b & 0x07;
  else
    return 0;
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    v = (v << 6) | (c & 0x3F);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMin[len] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

}  // namespace

int codepoint_width(char32_t cp) {
  if (cp == 0) return 0;
  if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return 0;
  if (cp < 0x300) return 1;  // fast path: ASCII and Latin
  if (in_table(kZeroWidth, cp)) return 0;
  if (in_table(kWide, cp)) return 2;
  return 1;
}

size_t display_width(std::string_view s) {
  size_t w = 0;
  for (size_t i = 0; i < s.size();) {
    char32_t cp;
    size_t n = decode_utf8(s, i, &cp);
    if (n == 0) {
      w += 1, i += 1;
      continue;
    }
    w += static_cast<size_t>(codepoint_width(cp));
    i += n;
  }
  return w;
}

std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char32_t cp;
    size_t n = decode_utf8(s, i, &cp);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      i += 1;
      continue;
    }
    if (cp == '\n' || cp == '\t' || cp == '\r' || cp == 0x2028 || cp == 0x2029) {
      out += ' ';
    } else if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) {
      out += '?';
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string pad_right(std::string_view s, size_t width) {
  std::string out(s);
  size_t w = display_width(s);
  if (w < width) out.append(width - w, ' ');
  return out;
}

std::string pad_left(std::string_view s, size_t width) {
  size_t w = display_width(s);
  std::string out(w < width ? width - w : 0, ' ');
  out.append(s);
  return out;
}

// ---- Table ----

Table::Table(std::vector<Col> cols) : cols_(std::move(cols)) {}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(cols_.size());
  for (auto& c : cells) c = c.empty() ? "-" : printable(c);
  rows_.push_back(std::move(cells));
}

void Table::print(std::ostream& out, size_t indent) const {
  std::vector<size_t> width(cols_.size());
  for (size_t c = 0; c < cols_.size(); ++c) {
    width[c] = display_width(cols_[c].header);
    for (const auto& row : rows_) width[c] = std::max(width[c], display_width(row[c]));
  }
  auto line = [&](auto&& cell_of) {
    std::string s(indent, ' ');
    for (size_t c = 0; c < cols_.size(); ++c) {
      const std::string& cell = cell_of(c);
      bool last = c + 1 == cols_.size();
      if (cols_[c].align == Align::kRight)
        s += pad_left(cell, width[c]);
      else
        s += last ? cell : pad_right(cell, width[c]);
      if (!last) s += "   ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << '\n';
  };
  line([&](size_t c) -> const std::string& { return cols_[c].header; });
  for (const auto& row : rows_) line([&](size_t c) -> const std::string& { return row[c]; });
}

// ---- scalars and paths ----

std::string cell_text(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
    case json::value_t::discarded:
      return "";
    case json::value_t::string:
      return v.get<std::string>();
    case json::value_t::array: {
      std::string out;
      for (const auto& e : v) {
        if (!out.empty()) out += ", ";
        out += e.is_structured() ? e.dump() : cell_text(e);
      }
      return out;
    }
    case json::value_t::object:
      return v.empty() ? "" : v.dump(-1, ' ', false, json::error_handler_t::replace);
    default:
      return v.dump();
  }
}

const json& at_path(const json& doc, std::string_view path) {
  static const json kNull;
  const json* cur = &doc;
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string key(path.substr(0, slash));
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
    if (!cur->is_object()) return kNull;
    auto it = cur->find(key);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

// ---- key: value view ----

static bool inline_value(const json& v) {
  if (!v.is_structured() || v.empty()) return true;
  if (v.is_array()) return std::none_of(v.begin(), v.end(), [](const json& e) { return e.is_structured(); });
  return false;
}

void print_kv(std::ostream& out, const json& doc, size_t indent) {
  const std::string pad(indent, ' ');
  if (!doc.is_object()) {
    if (doc.is_array()) {
      for (const auto& item : doc) {
        if (item.is_object() && !item.empty()) {
          std::ostringstream sub;
          print_kv(sub, item, indent + 2);
          std::string s = sub.str();
          s.replace(indent, 2, "- ");
          out << s;
        } else {
          out << pad << "- " << printable(cell_text(item)) << '\n';
        }
      }
    } else {
      out << pad << printable(cell_text(doc)) << '\n';
    }
    return;
  }
  KvList list;
  for (auto it = doc.begin(); it != doc.end(); ++it) list.emplace_back(it.key(), it.value());
  print_kv(out, list, indent);
}

void print_kv(std::ostream& out, const KvList& list, size_t indent) {
  const std::string pad(indent, ' ');
  size_t key_w = 0;
  for (const auto& [k, v] : list)
    if (inline_value(v)) key_w = std::max(key_w, display_width(printable(k)) + 1);
  for (const auto& [k, v] : list) {
    std::string key = printable(k) + ":";
    if (inline_value(v)) {
      std::string text = printable(cell_text(v));
      out << pad << pad_right(key, key_w) << ' ' << (text.empty() ? "-" : text) << '\n';
    } else {
      out << pad << key << '\n';
      print_kv(out, v, indent + 2);
    }
  }
}

// ---- YAML ----

static bool yaml_plain_ok(const std::string& s) {
  if (s.empty()) return false;
  // Anything a YAML 1.1 or 1.2 reader could take for a number, date, time, boolean or null.
  static const std::regex kTyped(
      "[-+]?[.0-9].*|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)|"
      "y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF|"
      "null|Null|NULL|~|<<|=");
  if (std::regex_match(s, kTyped)) return false;
  static const std::string kIndicators = "-?:,[]{}#&*!|>'\"%@`";
  if (kIndicators.find(s.front()) != std::string::npos) return false;
  if (s.front() == ' ' || s.back() == ' ' || s.back() == ':') return false;
  if (s.find(": ") != std::string::npos || s.find(" #") != std::string::npos) return false;
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7F) return false;
  // Unicode line and paragraph separators, BOM, next-line: quote to keep one line.
  for (const char* bad : {"\xE2\x80\xA8", "\xE2\x80\xA9", "\xEF\xBB\xBF", "\xC2\x85"})
    if (s.find(bad) != std::string::npos) return false;
  return true;
}

static std::string yaml_scalar(const json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (yaml_plain_ok(s)) return s;
    // A JSON string literal is a valid YAML double-quoted scalar.
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  if (v.is_null()) return "null";
  return v.dump();
}

static void yaml_node(const json& v, size_t indent, bool first_inline, std::string& out) {
  const std::string pad(indent, ' ');
  bool first = true;
  auto prefix = [&]() {
    if (!(first && first_inline)) out += pad;
    first = false;
  };
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      prefix();
      out += yaml_scalar(json(it.key())) + ":";
      const json& c = it.value();
      if (c.is_structured() && !c.empty()) {
        out += '\n';
        yaml_node(c, indent + 2, false, out);
      } else {
        out += ' ';
        out += c.is_object() ? "{}" : c.is_array() ? "[]" : yaml_scalar(c);
        out += '\n';
      }
    }
  } else if (v.is_array()) {
    for (const auto& c : v) {
      prefix();
      out += "- ";
      if (c.is_structured() && !c.empty()) {
        yaml_node(c, indent + 2, true, out);
      } else {
        out += c.is_object() ? "{}" : c.is_array() ? "[]" : yaml_scalar(c);
        out += '\n';
      }
    }
  }
}

std::string to_yaml(const json& v) {
  if (!v.is_structured()) return yaml_scalar(v) + "\n";
  if (v.empty()) return v.is_object() ? "{}\n" : "[]\n";
  std::string out;
  yaml_node(v, 0, false, out);
  return out;
}

}  // namespace gpurent
