#include "advisor/advisor_util.h"
#include "advisor/advisor_step.h"

#include <limits>
#include <string>

namespace gpurent {

std::optional<Money> read_capped_money(Fields& f, const char* key, Currency c, int64_t max_units, bool required,
                                       bool positive) {
  if (!f.has(key)) {
    if (required) f.error(key, FieldReason{"field.required"});
    f.raw(key);
    return std::nullopt;
  }
  auto m = f.opt_money(key, c);
  if (!m) return std::nullopt;
  if (positive && m->micros() == 0) {
    f.error(key, Message("advisor.price.positive"));
    return std::nullopt;
  }
  if (m->micros() > max_units * Money::kMicrosPerUnit) {
    f.error(key,
            Message("advisor.price.at_most").arg("max", std::to_string(max_units)).arg("currency", currency_code(c)));
    return std::nullopt;
  }
  return m;
}

}  // namespace gpurent

namespace gpurent {

nlohmann::json steps_to_json(const std::vector<AdvisorStep>& steps) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : steps) {
    nlohmann::json j = text_json(s.text);
    j["formula"] = s.formula;
    j["value"] = s.value;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace gpurent
