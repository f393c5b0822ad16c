#include "core/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <regex>

namespace gpurent {

static nlohmann::json convert(const YAML::Node& n, int depth) {
  if (depth > 64) throw std::runtime_error("nesting deeper than 64 levels");
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
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
        if (!kv.first.IsScalar()) throw std::runtime_error("mapping keys must be plain strings");
        obj[kv.first.Scalar()] = convert(kv.second, depth + 1);
      }
      return obj;
    }
  }
  return nullptr;
}

Result<nlohmann::json> yaml_to_json(const std::string& text) {
  try {
    YAML::Node root = YAML::Load(text);
    return convert(root, 0);
  } catch (const YAML::Exception& e) {
    return Error::make(Code::kBadRequest, "malformed YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                                  std::to_string(e.mark.column + 1) + ": " + e.msg);
  } catch (const std::exception& e) {
    return Error::make(Code::kBadRequest, std::string("malformed YAML: ") + e.what());
  }
}

Result<nlohmann::json> parse_json_or_yaml(const std::string& text) {
  size_t i = text.find_first_not_of(" \t\r\n");
  if (i != std::string::npos && (text[i] == '{' || text[i] == '[')) {
    try {
      return nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
      return Error::make(Code::kBadRequest, std::string("malformed JSON: ") + e.what());
    }
  }
  return yaml_to_json(text);
}

}  // namespace gpurent
