// The dashboard's GPU utilization heatmap (GET /api/v1/dashboard/utilization; docs/api.md,
// "Dashboard"): mean utilization per card and UTC hour from the usage store's per-bucket sums
// (Store::gpu_usage_buckets: raw samples and rolled-up minutes), never reading the points. The
// route resolves who may see what into a UtilizationScope; this file only computes.
// Reads the store only; safe from any HTTP thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "store/store.h"

namespace gpurent {

inline constexpr int64_t kIdleThresholdPct = 10;  // a card whose mean over the range is below this is idle
inline constexpr DurationMs kHeatmapBucketMs = kMsPerHour;

struct UtilizationScope {
  TimeMs from = 0, to = 0;  // [from, to); hours are UTC hours from the one holding `from`
  TimeMs now = 0;           // allocations still open run up to now
  // Narrowing: only the nodes of one supplier, only one node ("" = no narrowing).
  std::string supplier_id, node_id;
  // Allocation scope: when either is set, only the cards that ran the tenant's (the project's)
  // allocations count, and only their samples inside those allocations' [running_at, ended_at or
  // now) intervals (a rolled-up minute counts when its start lies inside).
  std::string tenant_id, project_id;
  bool show_projects = true;  // false for supplier users: tenants' project names stay private
};

// {"from","to","bucket_seconds","hours":[…],"idle_threshold_pct","cards":[{node_id,node,gpu,
//  supplier_id,supplier,gpu_model,projects,mean_pct,samples,idle}],"cells":[[card,hour,mean_pct,samples]]}
// Cards with at least one sample in scope, ordered by supplier name, node name, GPU index; cells
// only for hours with samples, by card then hour. Means are rounded half to even.
Result<nlohmann::json> utilization_report(StoreReader& store, const UtilizationScope& scope);

}  // namespace gpurent
