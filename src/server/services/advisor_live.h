// What the advisor's calculators (src/advisor) read from the platform's own records: the offers
// on sale, each supplier's measured history (nodes, offers' promises, measurements), a tenant's
// hourly GPU demand from the allocation ledger, and a job's profile from its metered samples.
// Reads the store only; safe from any HTTP thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "advisor/demand.h"
#include "advisor/fingerprint.h"
#include "advisor/supplier_score.h"
#include "catalog/gpu_catalog.h"
#include "model/offer.h"
#include "store/store.h"

namespace gpurent {

// Every offer, parsed, with supplier_id set and `supplier` set to the supplier's name (labels
// read "supplier/offer"); `ids` (when given) receives each offer's id, in the same order.
Result<std::vector<Offer>> load_offers(StoreReader& store, const GpuCatalog& catalog,
                                       std::vector<std::string>* ids = nullptr);

// Every supplier with its history over [from, to) derived from its nodes, offers and the
// measurements on those nodes.
Result<std::vector<SupplierCandidate>> load_supplier_candidates(StoreReader& store, const GpuCatalog& catalog, TimeMs from,
                                                                TimeMs to);

// GPUs the tenant held in each hour of [from, to), from the allocation ledger (runs still open
// count up to `now`). kInvalid naming `field` when the tenant ran nothing then.
Result<DemandCurve> ledger_demand(StoreReader& store, const std::string& tenant_id, TimeMs from, TimeMs to, TimeMs now,
                                  HourlyMeasure measure, const std::string& field);

// A job's profile from the meter: its runs in the ledger (GPU model, GPUs, time), the GPU samples
// of its cards (mean utilization, peak memory) and its storage I/O. The price per GPU-hour is
// `price` or else the on-demand price of the offer its latest run was billed under.
Result<FingerprintInput> metered_fingerprint(StoreReader& store, const GpuCatalog& catalog, const Record& job, TimeMs now,
                                             std::optional<Money> price);

}  // namespace gpurent
