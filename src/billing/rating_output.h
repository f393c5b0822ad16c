// Rated lines out: the JSON document (API, `gpurent rate -o json`), a plain CSV of the lines, and
// the FinOps FOCUS 1.0 cost-and-usage columns (docs/billing.md#focus lists the mapping).
// Pure; thread-safe.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "billing/rating.h"

namespace gpurent {

// Who the lines are billed to and by, for exports that name them.
struct BillingParties {
  std::string account_id;    // the tenant
  std::string account_name;
  std::string provider;      // the supplier
  std::string region;
};

nlohmann::json to_json(const ChargeLine& l);
// {"currency","period":{"from","to"},"lines":[...],"totals":{"charges","credits","total"},"line_count"}
nlohmann::json to_json(const RatingResult& r);
std::string to_csv(const RatingResult& r);
std::string to_focus_csv(const RatingResult& r, const BillingParties& who);
// RFC 4180 quoting when needed.
std::string csv_field(const std::string& s);

}  // namespace gpurent
