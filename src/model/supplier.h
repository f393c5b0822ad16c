// Supplier: a company that provides GPU capacity (nodes) and sells it through offers. Carries what
// an operator lists and what a tenant's CTO checks in due diligence: where its data centres are,
// which certifications it holds, and its answers to the standard supply/operations questions.
// Schema: docs/resources/suppliers.md. Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/enums_supply.h"
#include "model/resource.h"

namespace gpurent {

// A data centre (or hall) the supplier operates from. Nodes name their site.
struct Site {
  std::string name;             // slug, unique within the supplier
  std::string region;           // kRegionPattern
  std::string city;             // free text ("上海", "Ashburn")
  std::optional<int64_t> tier;  // Uptime Institute tier 1..4, when rated
  // ISO 3166-1 alpha-2 of the site when it is not the supplier's own country (data sovereignty
  // places work by it); absent: the supplier's.
  std::optional<std::string> country;

  bool operator==(const Site&) const = default;
};

// The supplier's answers to the due-diligence questions; each is absent until answered.
struct DueDiligence {
  std::optional<int64_t> gpu_supply_days;          // days to deliver additional GPUs after an order
  std::optional<int64_t> allreduce_8gpu_1gb_ms;    // ms for an all-reduce of 1 GB across 8 GPUs of one node
  std::optional<int64_t> fault_locate_minutes;     // minutes from a fault to its located cause
  std::optional<int64_t> restore_hours;            // hours from a failure to restored service
  std::optional<int64_t> cuda_update_days;         // days from a CUDA release to its availability
  std::optional<bool> exit_path_tested;            // a tenant exit (data export, teardown) has been rehearsed
  std::optional<int64_t> monthly_failure_rate_bp;  // GPU failures per month, basis points of the fleet
  std::optional<std::string> notes;                // free text

  bool operator==(const DueDiligence&) const = default;
};

struct Supplier {
  std::string name;          // slug, globally unique
  std::string display_name;  // any text; defaults to name
  std::string region;        // home region
  std::string country;       // ISO 3166-1 alpha-2
  std::vector<Site> sites;
  std::vector<Certification> certifications;  // no duplicates, order kept
  DueDiligence due_diligence;
  std::string contact_email;

  bool has_site(const std::string& site_name) const {
    for (const Site& s : sites)
      if (s.name == site_name) return true;
    return false;
  }
  bool operator==(const Supplier&) const = default;
};

// Validates a create/update body; errors name every offending field.
Result<Supplier> parse_supplier(const json& body);
json to_json(const Supplier& s);
IndexCols index_of(const Supplier& s);  // name, region

}  // namespace gpurent
