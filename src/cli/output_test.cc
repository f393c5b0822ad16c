#include "cli/output.h"

#include <gtest/gtest.h>

#include <sstream>

#include "core/yaml_json.h"

namespace gpurent {
namespace {

TEST(DisplayWidth, CountsTerminalCells) {
  EXPECT_EQ(display_width(""), 0u);
  EXPECT_EQ(display_width("h100-pool"), 9u);
  EXPECT_EQ(display_width("上海"), 4u);              // CJK ideographs: 2 each
  EXPECT_EQ(display_width("阿里云 A100"), 11u);      // mixed
  EXPECT_EQ(display_width("ｈｉ"), 4u);              // fullwidth Latin
  EXPECT_EQ(display_width("ｶﾀｶﾅ"), 4u);              // halfwidth katakana: 1 each
  EXPECT_EQ(display_width("カタカナ"), 8u);          // katakana: 2 each
  EXPECT_EQ(display_width("한국"), 4u);              // hangul syllables
  EXPECT_EQ(display_width("e\xCC\x81"), 1u);         // e + combining acute
  EXPECT_EQ(display_width("\xF0\x9F\x9A\x80"), 2u);  // U+1F680 rocket
  EXPECT_EQ(display_width("Zürich"), 6u);
  EXPECT_EQ(display_width("\xFF\xFE"), 2u);  // invalid bytes: one cell each
  EXPECT_EQ(display_width("\xE4\xB8"), 2u);  // truncated sequence
  EXPECT_EQ(display_width("\xC0\xAF"), 2u);  // overlong encoding is invalid
  EXPECT_EQ(display_width("a\u200Bb"), 2u);  // zero-width space
}

TEST(DisplayWidth, CodepointClasses) {
  EXPECT_EQ(codepoint_width(U'a'), 1);
  EXPECT_EQ(codepoint_width(U'\t'), 0);
  EXPECT_EQ(codepoint_width(0x3000), 2);  // ideographic space
  EXPECT_EQ(codepoint_width(0x303F), 1);  // half fill space
  EXPECT_EQ(codepoint_width(0x4E00), 2);
  EXPECT_EQ(codepoint_width(0x9FFF), 2);
  EXPECT_EQ(codepoint_width(0xA4D0), 1);   // Lisu: narrow, just past Yi
  EXPECT_EQ(codepoint_width(0x20000), 2);  // CJK extension B
  EXPECT_EQ(codepoint_width(0x0301), 0);
  EXPECT_EQ(codepoint_width(0xFE0F), 0);  // variation selector
}

TEST(Printable, NeutralisesControlCharacters) {
  EXPECT_EQ(printable("a\nb\tc"), "a b c");
  EXPECT_EQ(printable("\x1b[31mred"), "?[31mred");
  EXPECT_EQ(printable("ok 上海"), "ok 上海");
  EXPECT_EQ(printable("\xFF"), "\xEF\xBF\xBD");
}

TEST(Table, AlignsColumnsByDisplayWidth) {
  Table t({{"NAME"}, {"CITY"}, {"GPUS", Align::kRight}});
  t.add_row({"sh-a", "上海", "8"});
  t.add_row({"ashburn-1", "Ashburn", "128"});
  t.add_row({"bj", "", "16"});
  std::ostringstream out;
  t.print(out);
  EXPECT_EQ(out.str(),
            "NAME        CITY      GPUS\n"
            "sh-a        上海         8\n"
            "ashburn-1   Ashburn    128\n"
            "bj          -           16\n");
}

TEST(Table, WideCharactersInTheWidestCellAndIndent) {
  Table t({{"DISPLAY_NAME"}, {"STATE"}});
  t.add_row({"阿里云华东一区", "available"});
  t.add_row({"acme", "drained"});
  std::ostringstream out;
  t.print(out, 2);
  // 阿里云华东一区 is 7 ideographs = 14 cells; the header is 12.
  EXPECT_EQ(out.str(),
            "  DISPLAY_NAME     STATE\n"
            "  阿里云华东一区   available\n"
            "  acme             drained\n");
}

TEST(Table, NoTrailingBlanksAndSanitizedCells) {
  Table t({{"A"}, {"B"}});
  t.add_row({"x\ny", ""});
  std::ostringstream out;
  t.print(out);
  EXPECT_EQ(out.str(), "A     B\nx y   -\n");
}

TEST(CellText, Scalars) {
  EXPECT_EQ(cell_text(json("3.20")), "3.20");
  EXPECT_EQ(cell_text(json(8)), "8");
  EXPECT_EQ(cell_text(json(true)), "true");
  EXPECT_EQ(cell_text(json(nullptr)), "");
  EXPECT_EQ(cell_text(json::array({"soc2", "iso27001"})), "soc2, iso27001");
  EXPECT_EQ(cell_text(json::object()), "");
}

TEST(AtPath, WalksObjects) {
  json d = {{"prices", {{"on_demand", "3.20"}}}, {"list", {1, 2}}};
  EXPECT_EQ(at_path(d, "prices/on_demand"), "3.20");
  EXPECT_TRUE(at_path(d, "prices/spot").is_null());
  EXPECT_TRUE(at_path(d, "list/0").is_null());
  EXPECT_EQ(at_path(d, ""), d);
}

TEST(PrintKv, AlignsValuesAndIndentsNesting) {
  json doc = json::parse(R"({
    "name": "vision", "display_name": "视觉组",
    "quota": {"gpus_per_model": {"h100-sxm5-80gb": 64}, "max_concurrent_jobs": 4},
    "labels": {}, "tags": ["a", "b"],
    "sites": [{"name": "sh-1", "city": "上海"}, {"name": "bj-2", "city": "北京"}]
  })");
  std::ostringstream out;
  print_kv(out, doc);
  EXPECT_EQ(out.str(),
            "display_name: 视觉组\n"
            "labels:       -\n"
            "name:         vision\n"
            "quota:\n"
            "  gpus_per_model:\n"
            "    h100-sxm5-80gb: 64\n"
            "  max_concurrent_jobs: 4\n"
            "sites:\n"
            "  - city: 上海\n"
            "    name: sh-1\n"
            "  - city: 北京\n"
            "    name: bj-2\n"
            "tags:         a, b\n");
}

TEST(Yaml, BlockStyleOutput) {
  json doc = json::parse(R"({
    "name": "h100-offer", "prices": {"on_demand": "3.20", "spot": "1.10"},
    "min_increment_seconds": 60, "model_lock": true, "note": null,
    "served_models": [{"model": "qwen2.5-72b", "per_million_input_tokens": "0.40"}],
    "node_names": ["a", "b"], "empty_list": [], "empty_obj": {}, "matrix": [[1, 2], []]
  })");
  EXPECT_EQ(to_yaml(doc),
            "empty_list: []\n"
            "empty_obj: {}\n"
            "matrix:\n"
            "  - - 1\n"
            "    - 2\n"
            "  - []\n"
            "min_increment_seconds: 60\n"
            "model_lock: true\n"
            "name: h100-offer\n"
            "node_names:\n"
            "  - a\n"
            "  - b\n"
            "note: null\n"
            "prices:\n"
            "  on_demand: \"3.20\"\n"
            "  spot: \"1.10\"\n"
            "served_models:\n"
            "  - model: qwen2.5-72b\n"
            "    per_million_input_tokens: \"0.40\"\n");
}

TEST(Yaml, ScalarsAndEmptyDocuments) {
  EXPECT_EQ(to_yaml(json(5)), "5\n");
  EXPECT_EQ(to_yaml(json("x")), "x\n");
  EXPECT_EQ(to_yaml(json::object()), "{}\n");
  EXPECT_EQ(to_yaml(json::array()), "[]\n");
}

TEST(Yaml, QuotesStringsThatWouldChangeType) {
  for (const char* s : {"3.20",  "100",   "-5",   "+1", ".5", "1e3",        "0x1F",
                        "true",  "False", "yes",  "no", "on", "off",        "y",
                        "N",     "null",  "Null", "~",  "",   "2026-11-29", "2026-11-29T15:41:30.000Z",
                        "10:30", ".inf",  ".NaN"}) {
    std::string y = to_yaml(json{{"k", s}});
    EXPECT_EQ(y, "k: " + json(s).dump() + "\n") << s;
  }
}

TEST(Yaml, RoundTripsThroughTheProjectReader) {
  json doc = {
      {"plain", "h100-sxm5-80gb"},
      {"money", "3.20"},
      {"int_string", "100"},
      {"bool_string", "true"},
      {"null_string", "null"},
      {"empty", ""},
      {"colon", "a: b"},
      {"hash", "x #y"},
      {"dash", "- item"},
      {"brackets", "[1]"},
      {"quote", "it's \"quoted\""},
      {"leading_space", " x"},
      {"trailing_colon", "key:"},
      {"multi_line", "line 1\nline 2\ttabbed"},
      {"escape", "\x1b[0m"},
      {"chinese", "上海 一号机房"},
      {"star", "*"},
      {"at", "@user"},
      {"percent", "%d"},
      {"backslash", "C:\\path"},
      {"int", 42},
      {"negative", -7},
      {"bool", false},
      {"null", nullptr},
      {"nested", {{"list", {1, "two", {{"three", 3}}}}, {"empty", json::object()}}},
      {"needs quoting: key", "v"},
      {"数字", "1"},
  };
  std::string y = to_yaml(doc);
  auto back = yaml_to_json(y);
  ASSERT_TRUE(back) << back.error().message << "\n" << y;
  EXPECT_EQ(*back, doc) << y;
}

TEST(Pad, UsesDisplayWidth) {
  EXPECT_EQ(pad_right("上海", 6), "上海  ");
  EXPECT_EQ(pad_left("8", 3), "  8");
  EXPECT_EQ(pad_right("toolong", 3), "toolong");
}

}  // namespace
}  // namespace gpurent
