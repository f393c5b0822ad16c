// Reads a rating scenario (the `gpurent rate -f` file and the billing test scenarios) into a
// RatingInput: period, offers (the API's offer schema), contract terms, commitments, allocations,
// usage, spot prices and measurements. Format: docs/billing.md. Every error names its field.
// Pure; thread-safe.
#pragma once

#include <nlohmann/json.hpp>

#include "billing/rating_input.h"
#include "core/result.h"

namespace gpurent {

class GpuCatalog;

// `body` is the scenario as JSON (YAML goes through core/yaml_json.h first). Keys `description`
// and `expect` are accepted and ignored (the scenario runner reads them).
Result<RatingInput> parse_rating_input(const nlohmann::json& body, const GpuCatalog& catalog);

}  // namespace gpurent
