// The one ingest path for usage: POST /api/v1/usage and the DCGM scraper both hand a validated
// batch (meter/usage.h) to ingest_usage(), which checks the caller may report it, resolves node,
// GPU and job references inside the writer's transaction (so they are checked against the state
// the batch commits with) and stores it idempotently through the control loop.
// Thread-safe: call from any HTTP or scraper thread.
#pragma once

#include "meter/usage.h"
#include "server/services/context.h"
#include "server/services/principal.h"

namespace gpurent {

// Who may report usage: operators (anything) and suppliers (GPU samples of their own nodes).
// Tenants and viewers get kForbidden. Unknown node / GPU index / UUID / job: kInvalid naming the
// sample's field; a reused key with other content: kConflict.
Result<UsageIngestOutcome> ingest_usage(ServiceContext& app, const Principal& p, const UsageBatch& batch);

// The identity the server's own scrapers ingest as.
Principal system_principal(const std::string& name);

}  // namespace gpurent
