#include "core/yaml_json.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <regex>
#include <sstream>
#include <stdexcept>

#include "core/json_limits.h"

namespace gpurent {

// A document yaml-cpp reads but JSON cannot hold, with the reason as a message.
struct YamlShapeError : std::runtime_error {
  Message what_message;
  explicit YamlShapeError(Message m) : std::runtime_error(m.code), what_message(std::move(m)) {}
};

// yaml-cpp decodes a few byte sequences of a valid UTF-8 text into bytes that are not (a NUL
// inside a plain scalar turned "\x14\x00" into a lone 0xA0, found by fuzz/run scenarios): every
// scalar it returns is checked again, since a string nothing can serialise must not reach JSON.
static const std::string& checked(const YAML::Node& n) {
  const std::string& s = n.Scalar();
  if (first_invalid_utf8(s) != std::string_view::npos)
    throw YamlShapeError(Message("yaml.scalar_not_utf8")
                             .arg("line", std::to_string(n.Mark().line + 1))
                             .arg("column", std::to_string(n.Mark().column + 1)));
  return s;
}

static nlohmann::json convert(const YAML::Node& n, int depth) {
  if (depth > 64) throw YamlShapeError(Message("yaml.too_deep").arg("max", "64"));
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& s = checked(n);
      if (n.Tag() == "!") return s;  // quoted scalar: always a string
      static const std::regex kInt("[-+]?[0-9]{1,18}");
      if (std::regex_match(s, kInt)) return std::stoll(s);
      if (s == "true" || s == "True" || s == "TRUE") return true;
      if (s == "false" || s == "False" || s == "FALSE") return false;
      if (s == "null" || s == "Null" || s == "NULL" || s == "~") return nullptr;
      return s;
    }
    case YAML::NodeType::Sequence: {
      auto arr = nlohmann::json::array();
      for (const auto& item : n) arr.push_back(convert(item, depth + 1));
      return arr;
    }
    case YAML::NodeType::Map: {
      auto obj = nlohmann::json::object();
      for (const auto& kv : n) {
        if (!kv.first.IsScalar()) throw YamlShapeError(Message("yaml.key_not_string"));
        std::string key = checked(kv.first);
        // Given twice, one of the two would be dropped without a word: which one the writer meant
        // is not known, so the document is refused.
        if (obj.contains(key))
          throw YamlShapeError(Message("yaml.duplicate_key")
                                   .arg("key", verbatim(utf8_prefix(key, 128)))
                                   .arg("line", std::to_string(kv.first.Mark().line + 1)));
        obj[std::move(key)] = convert(kv.second, depth + 1);
      }
      return obj;
    }
  }
  return nullptr;
}

// Spends one unit of `budget` per node `n` expands to, following aliases; false once it is spent.
// Without aliases a YAML text has about as many nodes as bytes at most ("{a,b}" is five), so a
// budget of twice its size refuses only documents whose aliases multiply them: the "billion
// laughs", where ten levels of ten aliases each expand a few hundred bytes into 10^10 nodes and
// take the server's memory. Past 64 levels the count stops; yaml_to_json refuses that nesting.
static bool yaml_fits(const YAML::Node& n, size_t& budget, int depth) {
  if (budget == 0) return false;
  --budget;
  if (depth > 64) return true;
  if (n.IsSequence()) {
    for (const auto& item : n)
      if (!yaml_fits(item, budget, depth + 1)) return false;
  } else if (n.IsMap()) {
    for (const auto& kv : n)
      if (!yaml_fits(kv.first, budget, depth + 1) || !yaml_fits(kv.second, budget, depth + 1)) return false;
  }
  return true;
}

static Status check_yaml_expansion(const YAML::Node& root, const std::string& text) {
  const size_t limit = 2 * text.size() + 1024;
  size_t budget = limit;
  if (!yaml_fits(root, budget, 0))
    return Error::make(Code::kBadRequest, Message("yaml.too_many_nodes").arg("limit", std::to_string(limit)));
  return ok_status();
}

// Sees whether a YAML document holds anything (an empty one, or a lone ~, holds nothing) and
// where it starts.
class DocumentProbe : public YAML::EventHandler {
 public:
  bool content = false;
  int line = 0;      // 1-based, of the document's first node
  YAML::Mark start;  // where the document began

  void OnDocumentStart(const YAML::Mark& m) override {
    content = false;
    start = m;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { seen(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { seen(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    seen(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    seen(m);
  }
  void OnMapEnd() override {}

 private:
  void seen(const YAML::Mark& m) {
    if (!content) line = m.line + 1;
    content = true;
  }
};

// Refuses a text with content past its first document: YAML::Load reads the first and never looks
// further, so a file of two jobs would create one and say nothing of the other (and one whose
// first document is empty, "---\n---\nname: x", would read as nothing). Empty documents after
// the first (a trailing ---) are nothing lost. The parser is driven document by document, at
// most 64 of them: YAML::LoadAll loops without end on some malformed texts (fuzz_yaml_specs
// found one: a token the parser reads as an empty document without consuming it), which would
// hold a server thread and grow its memory; a document that starts where the last one did is
// that token, and refused naming where it is.
static Status check_one_document(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentProbe probe;
  for (int i = 0; i < 64; ++i) {
    const int last_start = probe.start.pos;
    if (!parser.HandleNextDocument(probe)) return ok_status();
    if (i > 0 && probe.content)
      return Error::make(Code::kBadRequest, Message("yaml.several_documents").arg("line", std::to_string(probe.line)));
    if (i > 0 && probe.start.pos == last_start)
      return Error::make(Code::kBadRequest, Message("yaml.malformed_at")
                                                .arg("line", std::to_string(probe.start.line + 1))
                                                .arg("column", std::to_string(probe.start.column + 1))
                                                .arg("detail", "a token that starts no document"));
  }
  return Error::make(Code::kBadRequest, Message("yaml.malformed").arg("detail", "more than 64 documents"));
}

Result<nlohmann::json> yaml_to_json(const std::string& text) {
  // JSON strings are UTF-8; a YAML text that is not would become strings nothing can serialise.
  if (size_t bad = first_invalid_utf8(text); bad != std::string_view::npos)
    return Error::make(Code::kBadRequest, Message("yaml.invalid_utf8").arg("byte", std::to_string(bad)));
  try {
    const YAML::Node root = YAML::Load(text);
    if (auto s = check_one_document(text); !s) return s.error();
    if (auto s = check_yaml_expansion(root, text); !s) return s.error();
    return convert(root, 0);
  } catch (const YAML::Exception& e) {
    // yaml-cpp's own words (English in every language) after the position.
    return Error::make(Code::kBadRequest, Message("yaml.malformed_at")
                                              .arg("line", std::to_string(e.mark.line + 1))
                                              .arg("column", std::to_string(e.mark.column + 1))
                                              .arg("detail", e.msg));
  } catch (const YamlShapeError& e) {
    return Error::make(Code::kBadRequest, Message("yaml.malformed").arg("detail", e.what_message));
  } catch (const std::exception& e) {
    return Error::make(Code::kBadRequest, Message("yaml.malformed").arg("detail", e.what()));
  }
}

Result<nlohmann::json> parse_json_or_yaml(const std::string& text) {
  size_t i = text.find_first_not_of(" \t\r\n");
  if (i != std::string::npos && (text[i] == '{' || text[i] == '[')) {
    return parse_json_bounded(text);
  }
  return yaml_to_json(text);
}

}  // namespace gpurent
