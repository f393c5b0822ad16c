// The shell's file and environment access (room: io). The engines (catalog, sched, demo, billing,
// advisor) read no file, no environment variable and no clock: the server and the CLI read
// through here and pass the text in. Free functions; thread-safe (each call opens its own file).
#pragma once

#include <cstdint>
#include <string>

#include "catalog/gpu_catalog.h"
#include "core/result.h"
#include "demo/demo_world.h"
#include "sched/engine_types.h"

namespace gpurent {

// The whole of a regular file of at most `max_bytes`; errors say `what` and the path
// (kNotFound: missing or unreadable, kInvalid: not a regular file, kTooLarge).
Result<std::string> read_text_file(const std::string& path, int64_t max_bytes, const std::string& what);

// $GPURENT_CATALOG if set, else the source tree's data/gpu_catalog.yaml.
std::string default_catalog_path();
// $GPURENT_DATA_DIR if set, else "<source dir>/../shared/data" when it exists, else "".
std::string default_data_dir();

// The GPU catalog file (YAML or JSON, at most 4 MiB); errors name the file.
Result<GpuCatalog> load_catalog_file(const std::string& path);
// A scheduler policy file (sched/sched_config.h); errors name the file under "--sched-config".
Result<SchedConfig> load_sched_config_file(const std::string& path, SchedConfig defaults = {});
// The public price lists a data folder holds (<dir>/prices/<provider>_vms.csv for the demo's
// providers, when present); an empty or missing folder gives none (the demo's built-in lists).
Result<DemoPriceFiles> read_demo_price_files(const std::string& data_dir);

}  // namespace gpurent
