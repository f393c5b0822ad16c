#include "core/json_limits.h"

#include <gtest/gtest.h>

#include <string>

#include "core/message.h"
#include "core/yaml_json.h"

namespace gpurent {
namespace {

std::string nested(int depth, char open, char close) {
  return std::string(static_cast<size_t>(depth), open) + std::string(static_cast<size_t>(depth), close);
}

TEST(JsonLimits, CountsNestingOutsideStringsOnly) {
  EXPECT_EQ(json_nesting_depth(R"({"a": [1, {"b": []}]})", 100), 4);
  EXPECT_EQ(json_nesting_depth(R"({"a": "[[[[{{{{"})", 100), 1);
  EXPECT_EQ(json_nesting_depth(R"({"a": "\"[[[", "b": [[]]})", 100), 3);  // escaped quote stays in the string
  EXPECT_EQ(json_nesting_depth("42", 100), 0);
  EXPECT_EQ(json_nesting_depth("]]]][", 100), 1);  // stray closers never go below zero
}

TEST(JsonLimits, StopsCountingPastTheLimit) { EXPECT_EQ(json_nesting_depth(nested(100000, '[', ']'), 64), 65); }

TEST(JsonLimits, SixtyFourLevelsParseAndSixtyFiveAreRefusedWithTheReason) {
  auto ok = parse_json_bounded("{\"labels\": " + nested(63, '[', ']') + "}");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  auto deep = parse_json_bounded("{\"labels\": " + nested(64, '[', ']') + "}");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().code, Code::kBadRequest);
  EXPECT_NE(deep.error().message.find("deeper than 64"), std::string::npos) << deep.error().message;
  EXPECT_EQ(deep.error().message, "malformed JSON: arrays and objects nest deeper than 64 levels");
  EXPECT_EQ(deep.error().detail.code, "json.too_deep");
  EXPECT_EQ(render(deep.error().detail, "zh"), "JSON 格式错误：数组和对象的嵌套超过 64 层");
}

TEST(JsonLimits, HostileNestingIsRefusedNotParsed) {
  // The request that crashed the server (issue 15): 100,000 levels in 200 KB.
  auto r = parse_json_bounded("{\"labels\": " + nested(100000, '[', ']') + "}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::kBadRequest);
}

TEST(JsonLimits, MalformedTextNamesTheByteAndOutOfRangeNumbersAreBadRequests) {
  auto bad = parse_json_bounded("{\"a\": tru}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("at byte"), std::string::npos) << bad.error().message;
  EXPECT_EQ(bad.error().detail.code, "json.malformed_at");
  EXPECT_EQ(render(bad.error().detail, "zh").rfind("JSON 格式错误（第 ", 0), 0u) << render(bad.error().detail, "zh");
  // The text the parser last read is the request's own (a secret's value up to a raw line break):
  // never echoed.
  auto pem = parse_json_bounded("{\"value\": \"-----BEGIN KEY sk_live_123\nrest\"}");
  ASSERT_FALSE(pem.ok());
  EXPECT_EQ(pem.error().message.find("sk_live_123"), std::string::npos) << pem.error().message;
  EXPECT_NE(pem.error().message.find("control character"), std::string::npos) << pem.error().message;
  auto big = parse_json_bounded("{\"a\": 1e999}");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, Code::kBadRequest);
  EXPECT_EQ(big.error().message.rfind("malformed JSON", 0), 0u) << big.error().message;
}

// A key given twice in one object is refused, naming it (the parser would keep one silently); the
// same key in two objects, or nested, is fine. YAML mappings likewise, with the line.
TEST(JsonLimits, AKeyGivenTwiceInOneObjectIsRefused) {
  auto twice = parse_json_bounded(R"({"gpus": 1, "name": "a", "gpus": 8})");
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, Code::kBadRequest);
  ASSERT_EQ(twice.error().fields.size(), 1u);
  EXPECT_EQ(twice.error().fields[0].coded.code, "json.duplicate_key");
  EXPECT_NE(twice.error().message.find("\"gpus\""), std::string::npos) << twice.error().message;
  EXPECT_EQ(twice.error().fields[0].field, "gpus");
  // Nested: the error names the path, array elements by their index, in the field style of every
  // other error, so the client knows which of many objects to fix.
  auto nested = parse_json_bounded(R"({"a": {"x": 1, "y": {"x": 2, "x": 3}}})");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.error().fields.at(0).field, "a.y.x");
  EXPECT_EQ(nested.error().message.rfind("a.y.x: the key \"x\" is given twice", 0), 0u) << nested.error().message;
  auto in_array =
      parse_json_bounded(R"({"workers": [{"env": {}}, [1, [2]], {"env": {"HOME": "/a", "X": 1, "HOME": "/b"}}]})");
  ASSERT_FALSE(in_array.ok());
  EXPECT_EQ(in_array.error().fields.at(0).field, "workers[2].env.HOME");
  auto top_array = parse_json_bounded(R"([{"a": 1}, {"b": 1, "b": 2}])");
  ASSERT_FALSE(top_array.ok());
  EXPECT_EQ(top_array.error().fields.at(0).field, "[1].b");
  // A long key of three-byte characters is quoted cut before a character, not inside one.
  std::string han;
  for (int i = 0; i < 100; ++i) han += "算";
  auto long_key = parse_json_bounded("{\"" + han + "\": 1, \"" + han + "\": 2}");
  ASSERT_FALSE(long_key.ok());
  EXPECT_EQ(first_invalid_utf8(long_key.error().message), std::string_view::npos);
  EXPECT_EQ(long_key.error().fields.at(0).field, han.substr(0, 126));
  EXPECT_TRUE(parse_json_bounded(R"({"a": {"x": 1}, "b": {"x": 2}, "x": [{"x": 1}, {"x": 2}]})").ok());
  auto yaml = yaml_to_json("name: job\ngpus: 1\nworkers: 2\ngpus: 8\n");
  ASSERT_FALSE(yaml.ok());
  EXPECT_NE(yaml.error().message.find("\"gpus\""), std::string::npos) << yaml.error().message;
  EXPECT_NE(yaml.error().message.find("line 4"), std::string::npos) << yaml.error().message;
  EXPECT_TRUE(yaml_to_json("a: {x: 1}\nb: {x: 2}\n").ok());
}

TEST(JsonLimits, FindsTheFirstByteThatIsNotUtf8) {
  EXPECT_EQ(first_invalid_utf8("plain ascii"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("华东智算中心 × 3.20 €"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("\xF0\x9F\x9A\x80"), std::string_view::npos);  // U+1F680
  EXPECT_EQ(first_invalid_utf8("ab\xDE"), 2u);                                // cut short
  EXPECT_EQ(first_invalid_utf8("a\xFF" "b"), 1u);
  EXPECT_EQ(first_invalid_utf8("\xC0\xAF"), 0u);          // overlong '/'
  EXPECT_EQ(first_invalid_utf8("x\xED\xA0\x80"), 1u);     // a surrogate
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(first_invalid_utf8("\xE4\xB8x"), 0u);         // bad continuation
}

TEST(JsonLimits, ValidUtf8ReplacesEachBadByte) {
  EXPECT_EQ(valid_utf8("华东 ok"), "华东 ok");
  // A character cut at a byte count (tail -c), a stray byte, an overlong form: each bad byte is
  // one U+FFFD, the good text around them kept; the result serialises.
  const std::string cut = std::string("\xB8\xAD") + "文 err \xFF!" + "\xC0\xAF";
  const std::string fixed = valid_utf8(cut);
  EXPECT_EQ(fixed, "\xEF\xBF\xBD\xEF\xBF\xBD文 err \xEF\xBF\xBD!\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(first_invalid_utf8(fixed), std::string_view::npos);
  EXPECT_NO_THROW((void)nlohmann::json(fixed).dump());
  EXPECT_EQ(valid_utf8(""), "");
}

}  // namespace
}  // namespace gpurent
