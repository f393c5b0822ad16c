// Terminal output of the CLI: aligned tables whose column widths count display cells (East Asian
// wide and fullwidth characters take two, combining marks none, so Chinese names line up), a
// readable "key: value" view of JSON documents, and a YAML writer whose output reads back to the
// same JSON through core/yaml_json.h (strings that look like numbers, booleans, null or dates are
// quoted, so "3.20" stays a string). Pure functions and value types; thread-compatible.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpurent {

using json = nlohmann::json;

// Terminal cells taken by one code point: 0 (controls, combining marks, zero-width), 2 (East Asian
// wide/fullwidth: CJK ideographs, kana, hangul, fullwidth forms, emoji) or 1.
int codepoint_width(char32_t cp);
// Sum of codepoint_width over a UTF-8 string; each invalid byte counts as one cell.
size_t display_width(std::string_view utf8);
// Makes server-supplied text safe for one terminal line: tabs and line breaks become spaces, other
// control characters (escape sequences included) '?', invalid UTF-8 bytes U+FFFD.
std::string printable(std::string_view s);
// Pads `s` with spaces on the right (or left) to `width` display cells.
std::string pad_right(std::string_view s, size_t width);
std::string pad_left(std::string_view s, size_t width);

enum class Align { kLeft, kRight };

// Column-aligned text table with an upper-case header row, columns three spaces apart, no
// trailing blanks. Empty cells print as "-".
class Table {
 public:
  struct Col {
    std::string header;
    Align align = Align::kLeft;
  };
  explicit Table(std::vector<Col> cols);

  // `cells` has one entry per column (missing ones are empty, extra ones dropped).
  void add_row(std::vector<std::string> cells);
  size_t size() const { return rows_.size(); }
  // Each line is prefixed by `indent` spaces.
  void print(std::ostream& out, size_t indent = 0) const;

 private:
  std::vector<Col> cols_;
  std::vector<std::vector<std::string>> rows_;
};

// A scalar as a table cell or detail value: strings as they are, numbers and booleans in JSON
// spelling, null and missing as "", arrays of scalars comma-joined.
std::string cell_text(const json& v);
// The value at a '/'-separated path ("quota/gpus"), or null when any step is missing.
const json& at_path(const json& doc, std::string_view path);

// Readable view of a document: "key: value" lines with values aligned per level, nested objects
// indented by two spaces, arrays of scalars on one line, arrays of objects as "- " items.
void print_kv(std::ostream& out, const json& doc, size_t indent = 0);
// The same for keys in a chosen order (values may be synthesized text).
using KvList = std::vector<std::pair<std::string, json>>;
void print_kv(std::ostream& out, const KvList& list, size_t indent = 0);

// YAML block style. Object keys keep the document's order.
std::string to_yaml(const json& v);

}  // namespace gpurent
