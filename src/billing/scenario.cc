#include "billing/scenario.h"

#include "billing/rating_input_parse.h"
#include "billing/rating_output.h"
#include "core/yaml_json.h"

namespace gpurent {

std::vector<std::string> check_rating_invariants(const RatingResult& r) {
  std::vector<std::string> out;
  int64_t charges = 0, credits = 0;
  for (size_t i = 0; i < r.lines.size(); ++i) {
    const auto& l = r.lines[i];
    if (l.amount != l.amount_exact.round_to_cents())
      out.push_back("line " + std::to_string(i) + " (" + l.rule + "): amount " + l.amount.amount_string() +
                    " is not its exact amount " + l.amount_exact.amount_string() + " rounded to cents");
    // Credits are negative, charges positive; the credit cap is the one positive credit line.
    if ((l.kind == LineKind::kCredit && l.rule != "credit_cap") != (l.amount.micros() < 0) && l.amount.micros() != 0)
      out.push_back("line " + std::to_string(i) + " (" + l.rule + "): credits are negative, charges positive");
    (l.kind == LineKind::kCredit ? credits : charges) += l.amount.micros();
  }
  if (charges != r.charges.micros()) out.push_back("charges total is not the sum of the charge lines");
  if (credits != r.credits.micros()) out.push_back("credits total is not the sum of the credit lines");
  if (charges + credits != r.total.micros()) out.push_back("total is not the sum of every line");
  return out;
}

namespace {

std::string brief(const nlohmann::json& j) {
  std::string s;
  for (const auto& [k, v] : j.items()) {
    if (!s.empty()) s += ", ";
    s += k + ": " + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return "{" + s + "}";
}

void check_lines(const nlohmann::json& expect, const RatingResult& r, std::vector<std::string>& failures) {
  std::vector<nlohmann::json> actual;
  for (const auto& l : r.lines) actual.push_back(to_json(l));
  for (const auto& e : expect) {
    if (!e.is_object()) {
      failures.push_back("expect.lines: each entry is a mapping of line keys to values");
      continue;
    }
    // Every key a line can have: what any line carries, and those only some carry: `measurements`
    // (credits), `commitment` (commitments and covered time), `list_unit_price` and `list_amount`
    // (GPU time billed below the on-demand price).
    nlohmann::json known = to_json(ChargeLine{});
    for (const char* k : {"measurements", "commitment", "list_unit_price", "list_amount"}) known[k] = nullptr;
    for (const auto& [k, v] : e.items())
      if (!known.contains(k)) {
        failures.push_back("expect.lines " + brief(e) + ": '" + k + "' is not a line key");
        return;
      }
    std::vector<size_t> hits;
    for (size_t i = 0; i < actual.size(); ++i) {
      bool all = true;
      for (const auto& [k, v] : e.items()) {
        if (!actual[i].contains(k)) {  // a key this line does not carry (measurements): no match
          all = false;
          continue;
        }
        const std::string want = v.is_string() ? v.get<std::string>() : v.dump();
        const auto& got = actual[i][k];
        if ((got.is_string() ? got.get<std::string>() : got.dump()) != want) all = false;
      }
      if (all) hits.push_back(i);
    }
    if (hits.size() == 1) continue;
    std::string near;
    for (const auto& a : actual)
      if (e.contains("rule") && a["rule"] == e["rule"])
        near += "\n      have " + brief({{"rule", a["rule"]}, {"allocation", a["allocation"]}, {"quantity", a["quantity"]},
                                         {"unit_price", a["unit_price"]}, {"amount", a["amount"]}});
    failures.push_back("expected line " + brief(e) + ": " + (hits.empty() ? "no line matches" : "several lines match") + near);
  }
}

}  // namespace

Result<BillingScenarioResult> run_billing_scenario(const std::string& yaml_text, const GpuCatalog& catalog) {
  auto doc = parse_json_or_yaml(yaml_text);
  if (!doc) return doc.error();
  BillingScenarioResult out;
  if (doc->is_object() && doc->contains("description") && (*doc)["description"].is_string())
    out.description = (*doc)["description"];
  const nlohmann::json expect = doc->is_object() && doc->contains("expect") ? (*doc)["expect"] : nlohmann::json::object();
  if (!expect.is_object()) return Error::invalid("expect", Message("rating.scenario.expect_mapping"));
  for (const auto& [k, v] : expect.items())
    if (k != "lines" && k != "totals" && k != "line_count" && k != "error")
      return Error::invalid("expect." + k, Message("rating.scenario.expect_key"));
  auto input = parse_rating_input(*doc, catalog);
  if (!input) return input.error();
  auto rated = rate(*input);
  if (expect.contains("error")) {
    const std::string want = expect["error"].is_string() ? expect["error"].get<std::string>() : expect["error"].dump();
    if (rated)
      out.failures.push_back("expected an error containing '" + want + "'; the scenario rated without error");
    else if (rated.error().message.find(want) == std::string::npos)
      out.failures.push_back("expected an error containing '" + want + "'; got: " + rated.error().message);
    return out;
  }
  if (!rated) {
    out.failures.push_back("rating failed: " + rated.error().message);
    return out;
  }
  for (auto& v : check_rating_invariants(*rated)) out.failures.push_back("invariant: " + v);
  if (expect.contains("lines")) check_lines(expect["lines"], *rated, out.failures);
  if (expect.contains("line_count")) {
    const auto want = expect["line_count"];
    if (!want.is_number_integer() || want.get<int64_t>() != static_cast<int64_t>(rated->lines.size()))
      out.failures.push_back("expected " + want.dump() + " lines; got " + std::to_string(rated->lines.size()));
  }
  if (expect.contains("totals")) {
    const auto totals = to_json(*rated)["totals"];
    for (const auto& [k, v] : expect["totals"].items()) {
      if (!totals.contains(k)) {
        out.failures.push_back("expect.totals." + k + ": unknown (charges, credits, total)");
        continue;
      }
      const std::string want = v.is_string() ? v.get<std::string>() : v.dump();
      if (totals[k] != want) out.failures.push_back("expected " + k + " " + want + "; got " + totals[k].get<std::string>());
    }
  }
  out.rated = std::move(*rated);
  return out;
}

}  // namespace gpurent
