// One line of a calculator's arithmetic, shared by the six calculators: what it computes (a
// message code, worded in the reader's language at the edge), its formula and its value.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/message.h"

namespace gpurent {

struct AdvisorStep {
  Message text;
  std::string formula;  // the arithmetic with the figures filled in
  nlohmann::json value;
};

// [{"text", "text_message", "formula", "value"}]: "text" is English; the server words it in the
// reader's language from "text_message".
nlohmann::json steps_to_json(const std::vector<AdvisorStep>& steps);

}  // namespace gpurent
