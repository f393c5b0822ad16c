// GET /api/v1/dashboard/fragmentation: the GPUs stranded by fragmentation in the nodes in service,
// per GPU model and job shape (insight/stranded.h), from the nodes, the open runs of the allocation
// ledger (a card any run holds is not free; one fractional runs share with room left is "partly
// used") and the waiting jobs' shapes. Any thread (reads the store).
#pragma once

#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "core/result.h"
#include "store/store.h"

namespace gpurent {

// {"nodes","gpus","free_gpus","models":[{"gpu_model","nodes","gpus","free_gpus","partly_used",
//  "shapes":[{"gpus_per_worker","usable_gpus","stranded_gpus","nodes_that_fit","waiting_jobs",
//  "blocked_by_fragmentation"}]}],"waiting_jobs","fractional_waiting_jobs"}
Result<nlohmann::json> fragmentation_report(StoreReader& store, const GpuCatalog& catalog);

}  // namespace gpurent
