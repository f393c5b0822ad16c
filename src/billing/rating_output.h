// Rated lines out: the JSON document (API, `gpurent rate -o json`), a plain CSV of the lines, and
// the FinOps FOCUS 1.0 cost-and-usage columns (docs/billing.md#focus lists the mapping).
// Pure; thread-safe.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "billing/rating.h"

namespace gpurent {

// Who the lines are billed to and by, for exports that name them.
struct BillingParties {
  std::string account_id;      // the tenant's id
  std::string account_name;    // its name
  std::string provider;        // the supplier's name (ProviderName, PublisherName)
  std::string invoice_issuer;  // who invoices the tenant (InvoiceIssuerName): the platform
  std::map<std::string, std::string> regions;  // offer name → its region (RegionId, RegionName)
};

nlohmann::json to_json(const ChargeLine& l);
// {"currency","period":{"from","to"},"lines":[...],"totals":{"charges","credits","total"},"line_count"}
nlohmann::json to_json(const RatingResult& r);
std::string to_csv(const RatingResult& r);
// FOCUS 1.0 columns (docs/billing.md#focus-export): one row per line, plus one "Unused" row per
// commitment whose share of the period its usage did not use up.
std::string to_focus_csv(const RatingResult& r, const BillingParties& who);
// The parties of a scenario file (`gpurent rate`): its contract's tenant (default "scenario") and
// supplier (default: the first offer's), issued by "gpurent", offers' regions.
BillingParties scenario_parties(const RatingInput& in);
// RFC 4180 quoting when needed.
std::string csv_field(const std::string& s);

}  // namespace gpurent
