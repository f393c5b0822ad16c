// Billing scenario files: a rating input (billing/rating_input_parse.h) plus what must come out —
// expected lines (each must match exactly one rated line on every key it gives), totals, a line
// count, or an expected error. tests/scenarios/billing/*.yaml are the suite; docs/billing.md
// describes the format. The runner also checks the invariants every rating must satisfy: each
// line's amount is its exact amount rounded half to even to cents, and the totals are the sums of
// the lines. Not thread-safe; one run per call.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "billing/rating.h"
#include "catalog/gpu_catalog.h"

namespace gpurent {

struct BillingScenarioResult {
  std::string description;
  std::optional<RatingResult> rated;  // absent when the scenario expects (and got) an error
  std::vector<std::string> failures;  // "expected line {rule: on_demand, amount: 2304.00}: no line matches; ..."
};

// Errors for a malformed file name the field; rating errors are failures unless `expect.error` matches.
Result<BillingScenarioResult> run_billing_scenario(const std::string& yaml_text, const GpuCatalog& catalog);

// The invariants above; returns the violations (empty when the result is consistent).
std::vector<std::string> check_rating_invariants(const RatingResult& r);

}  // namespace gpurent
