// The terms of placement as the scheduler reads them from the store (docs/scheduler.md#terms):
// every offer with its price in force now (the latest spot price, its sheet's otherwise), whether
// it is contract-only, the tenants whose contracts in force name it and their reserved
// commitments on it; which offers sell each node; where each node is (its site's country); each
// tenant's currency, the places its contracts keep its data in and its procurement split. Records that no longer decode
// are reported (decode_record) and left out: one broken offer must not stop the scheduler.
// Read inside the control loop's transaction; values; thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "sched/engine_types.h"
#include "store/store.h"

namespace gpurent {

struct PlacementTerms {
  std::vector<SchedOffer> offers;
  std::map<std::string, std::vector<std::string>> node_offers;  // node id -> offer ids selling it
  std::map<std::string, std::string> node_country;              // node id -> ISO country
  std::map<std::string, std::string> tenant_currency;           // tenant id -> ISO 4217
  std::map<std::string, std::vector<std::string>> tenant_places;  // tenant id -> sovereignty places
  std::map<std::string, std::map<std::string, int64_t>> tenant_split;  // tenant id -> supplier id -> ‰
};

Result<PlacementTerms> read_placement_terms(StoreTx& tx, const GpuCatalog& catalog, TimeMs now);

// Fills the job's tenant terms: its currency (unless a price cap set it) and sovereignty places.
void apply_tenant_terms(const PlacementTerms& terms, SchedJob& job);

}  // namespace gpurent
