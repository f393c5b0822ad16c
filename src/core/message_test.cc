#include "core/message.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

namespace gpurent {
namespace {

const Message kRequeued =
    Message("sched.requeued").arg("why", Message("sched.node_failed_detail").arg("node", "h100-01").arg("detail", "Xid 79"));

TEST(Message, RendersInTheReadersLanguageWithNestedArguments) {
  EXPECT_EQ(render(kRequeued, "en"), "requeued: node h100-01 failed: Xid 79");
  EXPECT_EQ(render(kRequeued, "zh"), "重新排队：节点 h100-01 故障：Xid 79");
  // An unknown language is English; verbatim text is the same in every language.
  EXPECT_EQ(render(kRequeued, "fr"), render_en(kRequeued));
  EXPECT_EQ(render(verbatim("drained by ops"), "zh"), "drained by ops");
  EXPECT_EQ(render(Message(), "zh"), "");
}

TEST(Message, AnUnknownCodeShowsItselfAndItsArgumentsAndAMissingArgumentItsPlaceholder) {
  EXPECT_EQ(render_en(Message("no.such.code").arg("a", "1").arg("b", verbatim("x"))), "no.such.code a=1 b=x");
  EXPECT_EQ(render_en(Message("sched.node_failed")), "node {node} failed");
}

TEST(Message, ArgumentsAreSortedAndAGivenNameKeepsItsLastValue) {
  const Message m = Message("text").arg("text", "b").arg("a", "1").arg("text", "c");
  ASSERT_EQ(m.args.size(), 2u);
  EXPECT_EQ(m.args[0].name, "a");
  EXPECT_EQ(m.text_of("text"), "c");
}

TEST(Message, SurvivesJsonAndRefusesMalformedJsonNamingTheField) {
  const auto j = message_to_json(kRequeued);
  EXPECT_EQ(j["args"]["why"]["args"]["node"], "h100-01");
  EXPECT_EQ(*message_from_json(j), kRequeued);
  EXPECT_EQ(message_from_json(nlohmann::json::parse(R"({"args":{}})")).error().fields[0].field, "message.code");
  EXPECT_EQ(message_from_json(nlohmann::json::parse(R"({"code":"x","args":[1]})")).error().fields[0].field,
            "message.args");
  nlohmann::json deep = {{"code", "text"}};
  for (int i = 0; i < 20; ++i) deep = {{"code", "sched.requeued"}, {"args", {{"why", deep}}}};
  EXPECT_FALSE(message_from_json(deep).ok());
}

TEST(Message, JoinedSentencesKeepTheirOrderAndTheLanguagesSeparatorAndSurviveJson) {
  std::vector<Message> parts;
  for (int i = 0; i < 12; ++i) parts.push_back(verbatim("s" + std::to_string(i)));
  parts.push_back(kRequeued);
  const Message j = join_messages(parts);
  EXPECT_EQ(render_en(j), "s0 s1 s2 s3 s4 s5 s6 s7 s8 s9 s10 s11 requeued: node h100-01 failed: Xid 79");
  EXPECT_EQ(render(j, "zh"), "s0s1s2s3s4s5s6s7s8s9s10s11重新排队：节点 h100-01 故障：Xid 79");
  EXPECT_EQ(*message_from_json(message_to_json(j)), j);
  EXPECT_EQ(render_en(join_messages({})), "");
  const auto t = text_json(kRequeued);
  EXPECT_EQ(t["text"], render_en(kRequeued));
  EXPECT_EQ(t["text_message"], message_to_json(kRequeued));
}

TEST(Message, PicksTheLanguageFromTheQueryThenAcceptLanguage) {
  EXPECT_EQ(pick_language("zh", ""), "zh");
  EXPECT_EQ(pick_language("zh-CN", "en"), "zh");
  EXPECT_EQ(pick_language("", "zh-CN,zh;q=0.9,en;q=0.8"), "zh");
  EXPECT_EQ(pick_language("", "fr-FR, en;q=0.5, zh;q=0.7"), "zh");
  EXPECT_EQ(pick_language("", "en-US,en;q=0.9,zh;q=0.8"), "en");
  EXPECT_EQ(pick_language("klingon", "fr"), "en");
  EXPECT_EQ(pick_language("", "zh;q=0"), "en");
  EXPECT_EQ(pick_language("", ";;,,q=,zh;q=abc"), "en");
  EXPECT_EQ(pick_language("", ""), "en");
}

std::set<std::string> placeholders(const std::string& t) {
  std::set<std::string> out;
  static const std::regex re(R"(\{(\w+)\})");
  for (auto it = std::sregex_iterator(t.begin(), t.end(), re); it != std::sregex_iterator(); ++it) out.insert((*it)[1]);
  return out;
}

nlohmann::json read_catalogue(const std::string& lang) {
  std::ifstream in(std::string(GPURENT_SOURCE_DIR) + "/src/messages/" + lang + ".json");
  return nlohmann::json::parse(in);
}

TEST(MessageCatalogues, EveryLanguageTranslatesEveryCodeWithTheSamePlaceholders) {
  const auto en = read_catalogue("en");
  const auto langs = message_languages();
  ASSERT_GE(langs.size(), 2u);
  EXPECT_EQ(langs.front(), "en");
  for (const auto& lang : langs) {
    const auto cat = read_catalogue(lang);
    for (const auto& [code, text] : en.items()) {
      ASSERT_TRUE(cat.contains(code)) << lang << " lacks " << code;
      EXPECT_EQ(placeholders(cat[code]), placeholders(text)) << lang << ": " << code;
      EXPECT_TRUE(has_message(lang, code)) << lang << ": " << code << " is not embedded (rebuild)";
    }
    for (const auto& [code, text] : cat.items()) EXPECT_TRUE(en.contains(code)) << lang << " has " << code << ", en does not";
  }
}

TEST(MessageCatalogues, EveryCodeTheSourcesUseIsInTheCatalogue) {
  // Message("code"), FieldReason{"code"…} and pattern helps are how the C++ sources name a message; a code
  // missing from the catalogue would reach readers as the bare code.
  // A pattern's help is a code too (StrRule::pattern_help, constants named k…Help).
  static const std::regex re(R"re((?:Message\(|FieldReason\{|pattern_help = |Help = )"([a-z0-9_.]+)")re");
  size_t seen = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(GPURENT_SOURCE_DIR) + "/src")) {
    const auto p = e.path().string();
    if (e.path().extension() != ".cc" && e.path().extension() != ".h") continue;
    if (p.ends_with("_test.cc")) continue;
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
      ++seen;
      EXPECT_TRUE(has_message("en", (*it)[1].str())) << p << " uses " << (*it)[1] << ", which en.json lacks";
    }
  }
  EXPECT_GT(seen, 30u);
}

}  // namespace
}  // namespace gpurent
