// What every service of the server gets: the store, the catalog, the single writer, the clock, the
// metrics and the options. Owned by run_server(); services read through `store` from any thread
// and write only through `loop` (control_loop.h): `store` is a StoreReader, so the single writer
// is the type's rule, not a convention (only ControlLoop holds the Store). The API layer's App (server/api/app.h) extends
// it with what routes need; services see only this, so they never include the HTTP library
// (tests/layering_test.sh checks it).
#pragma once

#include "catalog/gpu_catalog.h"
#include "core/clock.h"
#include "server/server.h"
#include "server/services/control_loop.h"
#include "server/services/metrics.h"
#include "store/store.h"

namespace gpurent {

struct ServiceContext {
  StoreReader& store;
  const GpuCatalog& catalog;
  ControlLoop& loop;
  const Clock& clock;
  Metrics& metrics;
  const ServerOptions& opts;
};

}  // namespace gpurent
