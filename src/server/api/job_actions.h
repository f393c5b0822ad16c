// What other route files do to jobs (api/jobs.cc, api/job_cost.cc): an instance's stop cancels its
// job inside its own transaction (cancel_job_in, services/job_cancel.h); its cost per hour prices
// its run as the job's cost does.
#pragma once

#include <string>

#include "core/message.h"
#include "model/job_run.h"
#include "model/offer.h"
#include "server/services/job_cancel.h"  // cancel_job_in
#include "store/store.h"

namespace gpurent {


// The offer's price per GPU-hour for a run's billing mode, as the billing engine rates it at `at`
// (the offer's sheet then: an earlier version after a price change), and which price that is
// ("on_demand", "spot", "reserved_1m|12m|36m", "market_trade"): api/job_cost.cc.
struct UnitPrice {
  Money price;
  std::string basis;
};
Result<UnitPrice> unit_price_of(StoreReader& store, const GpuCatalog& catalog, const JobRun& run, const Offer& o,
                                const std::string& offer_id, TimeMs at);

}  // namespace gpurent
