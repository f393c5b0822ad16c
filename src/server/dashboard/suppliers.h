// The dashboard's supplier health (GET /api/v1/dashboard/suppliers; docs/api.md, "Dashboard"):
// per supplier its fleet, node-hours, incidents (incident measurements, plus scheduler faults that
// no incident covers) per UTC day with their outage minutes, availability, and the advisor's
// measured history (failure rate, restore and response times, FP16 and NCCL attainment), score,
// block and procurement share — the advisor's supplier score (advisor/supplier_score.h) over every
// supplier of the platform with the default checklist and rules, as POST /api/v1/advise/suppliers
// with {} computes it, so the figures agree with the advisor's.
// Reads the store only; safe from any HTTP thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "catalog/gpu_catalog.h"
#include "core/clock.h"
#include "core/result.h"
#include "store/store.h"

namespace gpurent {

struct SupplierHealthScope {
  TimeMs from = 0, to = 0;  // [from, to); days are the UTC days from the one holding `from`
  TimeMs now = 0;           // history, node-hours and availability stop at min(to, now); from < now
  std::string supplier_id;  // "" = every supplier
};

// {"from","to","suppliers":[{supplier_id,supplier,nodes,gpus,node_hours,incidents,failure_rate_bp,
//   restore_minutes,response_minutes,fp16_attainment_permille,nccl_attainment_permille,
//   availability_pct,score,blocked,share_pct,daily:[{date,incidents,outage_minutes}]}]}
// by supplier name; a figure without evidence is null.
Result<nlohmann::json> supplier_health_report(StoreReader& store, const GpuCatalog& catalog, const SupplierHealthScope& s);

}  // namespace gpurent
