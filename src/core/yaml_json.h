// YAML (job, supplier and offer spec files) to JSON, so files and the API share one validator.
// Scalars: plain integers become JSON integers, true/false booleans, null/~ null; everything
// else (including "3.20") stays a string: money must never pass through a double.
// Errors carry the file's line and column.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace gpurent {

Result<nlohmann::json> yaml_to_json(const std::string& text);
// JSON if the text starts with '{' or '[', YAML otherwise.
Result<nlohmann::json> parse_json_or_yaml(const std::string& text);

}  // namespace gpurent
