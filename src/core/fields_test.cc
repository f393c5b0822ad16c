#include "core/fields.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "core/yaml_json.h"

namespace gpurent {
namespace {

enum class Color { kRed, kBlue };
constexpr EnumEntry<Color> kColors[] = {{Color::kRed, "red"}, {Color::kBlue, "blue"}};

TEST(Fields, ReportsEveryBadFieldWithItsPath) {
  json body = json::parse(R"({"name":"Bad Name","count":-1,"color":"green","price":3.2,
                              "items":[{"n":1},{"n":"x"}],"typo":1})");
  FieldErrors errs;
  Fields f(body, "", errs);
  f.str("name", {.pattern = kSlug, .pattern_help = kSlugHelp});
  f.integer("count", 0, 100);
  f.enumeration("color", kColors);
  f.money("price", Currency::kUSD);
  f.objects("items", true, 10, [](Fields& it, size_t) { it.integer("n", 0, 5); });
  f.str("missing");
  f.finish();
  std::map<std::string, std::string> got;
  for (const auto& e : errs.list()) got[e.field] = e.reason;
  EXPECT_NE(got["name"].find("lowercase"), std::string::npos);
  EXPECT_EQ(got["count"], "must be at least 0 (got -1)");
  EXPECT_NE(got["color"].find("expected one of: red, blue"), std::string::npos);
  EXPECT_NE(got["price"].find("floating-point"), std::string::npos);
  EXPECT_EQ(got["items[1].n"], "must be an integer");
  EXPECT_EQ(got["missing"], "is required");
  EXPECT_EQ(got["typo"], "unknown field");
  EXPECT_EQ(errs.list().size(), 7u);
  EXPECT_EQ(errs.to_error().code, Code::kInvalid);
}

// A callback that finishes the nested Fields it is handed (as many decoders do) does not report
// its unknown keys a second time when object()/objects() finish it too.
TEST(Fields, AnUnknownNestedKeyIsReportedOnce) {
  json body = json::parse(R"({"constraints":{"gpu_modle":"h100"},"items":[{"n":1,"x":2}]})");
  FieldErrors errs;
  Fields f(body, "", errs);
  f.object("constraints", true, [](Fields& c) {
    c.opt_str("gpu_model");
    c.finish();
  });
  f.objects("items", true, 10, [](Fields& it, size_t) {
    it.integer("n", 0, 5);
    it.finish();
  });
  f.finish();
  f.finish();
  ASSERT_EQ(errs.list().size(), 2u) << errs.to_error().message;
  EXPECT_EQ(errs.list()[0].field, "constraints.gpu_modle");
  EXPECT_EQ(errs.list()[1].field, "items[0].x");
}

TEST(Fields, AcceptsGoodInput) {
  json body = json::parse(R"({"name":"vision","price":"3.20","color":"blue","at":"2026-11-29T00:00:00Z"})");
  FieldErrors errs;
  Fields f(body, "spec", errs);
  EXPECT_EQ(f.str("name", {.pattern = kSlug}), "vision");
  EXPECT_EQ(f.money("price", Currency::kUSD).micros(), 3'200'000);
  EXPECT_EQ(f.enumeration("color", kColors), Color::kBlue);
  EXPECT_GT(f.time("at"), 0);
  f.finish();
  EXPECT_TRUE(errs.empty());
}

// Whole-number money past int64 (JSON allows it as unsigned): refused, not wrapped to -1.
TEST(Fields, MoneyAsAHugeWholeNumberIsTooLargeNotWrapped) {
  json body = json::parse(R"({"a":18446744073709551615,"b":9223372036854775808,"c":-9000000000001,"d":12})");
  FieldErrors errs;
  Fields f(body, "", errs);
  EXPECT_FALSE(f.opt_money("a", Currency::kUSD, true).has_value());
  EXPECT_FALSE(f.opt_money("b", Currency::kUSD, true).has_value());
  EXPECT_FALSE(f.opt_money("c", Currency::kUSD, true).has_value());
  EXPECT_EQ(f.opt_money("d", Currency::kUSD, true)->micros(), 12'000'000);
  f.finish();
  std::map<std::string, std::string> got;
  for (const auto& e : errs.list()) got[e.field] = e.reason;
  EXPECT_EQ(got.size(), 3u);
  for (const char* k : {"a", "b", "c"}) EXPECT_NE(got[k].find("too large"), std::string::npos) << k << ": " << got[k];
}

TEST(YamlJson, KeepsDecimalsAsStrings) {
  auto j = yaml_to_json("name: job\nworkers: 2\nprice: 3.20\nquoted: \"12\"\nok: true\nlist: [a, 1]\n").value();
  EXPECT_EQ(j["workers"], 2);
  EXPECT_EQ(j["price"], "3.20");
  EXPECT_EQ(j["quoted"], "12");
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["list"][1], 1);
}

// A valid UTF-8 text whose scalar yaml-cpp decodes into bytes that are not (fuzz/run scenarios,
// fuzz/corpus/scenarios/regression-yaml-decodes-to-invalid-utf8): refused, not passed on as a
// string that makes nlohmann::json throw when it is serialised.
TEST(YamlJson, RefusesScalarsThatDecodeToInvalidUtf8) {
  const std::string text = std::string("fees: {billi\x14", 13) + std::string(1, '\0') + "_starts: ready}\n";
  auto r = yaml_to_json(text);  // yaml-cpp turns the NUL into a lone 0xA0
  ASSERT_FALSE(r.ok()) << r->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  EXPECT_EQ(r.error().code, Code::kBadRequest);
  EXPECT_NE(r.error().message.find("line 1, column 8 does not decode to valid UTF-8"), std::string::npos)
      << r.error().message;
  auto whole = yaml_to_json("a: \"caf\u00e9 \\xA0\"\n");  // escapes decode to valid UTF-8
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_NO_THROW((void)whole->dump());
}

// Two documents in one text: refused naming where the second starts, where yaml-cpp's Load would
// have read the first and dropped the second without a word (two jobs in one -f file, one made).
// Empty documents around the one document (a leading or trailing ---) are nothing lost.
TEST(YamlJson, ASecondDocumentIsRefusedNotDropped) {
  auto two = yaml_to_json("name: a\ngpus: 1\n---\nname: b\ngpus: 2\n");
  ASSERT_FALSE(two.ok()) << two->dump();
  EXPECT_EQ(two.error().code, Code::kBadRequest);
  EXPECT_EQ(two.error().detail.code, "yaml.several_documents");
  EXPECT_NE(two.error().message.find("line 4"), std::string::npos) << two.error().message;
  // The second document is refused even when it is malformed, never skipped unread.
  EXPECT_FALSE(yaml_to_json("name: a\n---\nb: [1\n").ok());
  // Content after an empty first document would read as nothing: refused too.
  auto late = yaml_to_json("---\n---\nname: b\n");
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().detail.code, "yaml.several_documents");
  auto framed = yaml_to_json("---\nname: a\n---\n");
  ASSERT_TRUE(framed.ok()) << framed.error().message;
  EXPECT_EQ((*framed)["name"], "a");
  auto empty = yaml_to_json("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->is_null());
  // The text on which yaml-cpp's LoadAll never ends (the fuzz replay found it): an error naming
  // where, at once.
  std::ifstream seed(std::string(GPURENT_SOURCE_DIR) + "/fuzz/corpus/yaml_specs/regression-yaml-loadall-never-ends",
                     std::ios::binary);
  const std::string never_ends((std::istreambuf_iterator<char>(seed)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(never_ends.empty());
  auto stuck = yaml_to_json(never_ends);
  ASSERT_FALSE(stuck.ok());
  EXPECT_EQ(stuck.error().code, Code::kBadRequest);
  EXPECT_EQ(stuck.error().message.find("more than 64 documents"), std::string::npos) << stuck.error().message;
  // Documents are read one by one, 64 at most.
  std::string many = "name: a\n";
  for (int i = 0; i < 100; ++i) many += "---\n";
  auto bounded = yaml_to_json(many);
  ASSERT_FALSE(bounded.ok());
  EXPECT_NE(bounded.error().message.find("more than 64 documents"), std::string::npos) << bounded.error().message;
}

TEST(YamlJson, MalformedYamlNamesTheLine) {
  auto r = yaml_to_json("a: 1\nb: [1, 2\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("line"), std::string::npos);
  EXPECT_FALSE(parse_json_or_yaml("{\"a\": }").ok());
}

}  // namespace
}  // namespace gpurent

namespace gpurent {
namespace {

TEST(YamlJson, RefusesAliasBombs) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'j'; ++c, ++prev) {
    bomb += std::string(1, c) + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) bomb += std::string(i ? ", " : "") + "*" + prev;
    bomb += "]\n";
  }
  auto r = yaml_to_json(bomb);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Code::kBadRequest);
  EXPECT_NE(r.error().message.find("aliases"), std::string::npos) << r.error().message;
  // A few honest aliases are fine.
  EXPECT_TRUE(yaml_to_json("base: &b {gpus: 8}\nnode1: *b\nnode2: *b\n").ok());
}

}  // namespace
}  // namespace gpurent
