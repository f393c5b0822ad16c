// Job metrics at the API boundary (docs/resources/job-metrics.md): validation of the body of
// POST /api/v1/jobs/{ref}/metrics and the shape of the GET answer. The route file does the I/O.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/result.h"
#include "store/store.h"

namespace gpurent {

inline constexpr size_t kMaxMetricPoints = 10'000;
inline constexpr size_t kMaxMetricNameLen = 64;
inline constexpr DurationMs kMaxMetricLead = 5 * kMsPerMinute;  // how far ahead of the server's clock `at` may be

// Parses {"points": [{"name", "value", "at"?, "higher_is_better"?}, ...]} (1..10000 points):
// name 1..64 of [a-z0-9_.-]; value a finite JSON number; at RFC 3339, default `now`, at most 5
// minutes after `now`; higher_is_better a boolean, default true. Unknown keys are errors. kInvalid
// names every offending field ("points[2].value"), the first 100 of them. The rows come in the
// body's order with name, at, value and higher_is_better set; job, tenant and project are the
// caller's to fill.
Result<std::vector<JobMetricRow>> parse_job_metric_points(const nlohmann::json& body, TimeMs now);

// The store's errors about rows[i] (StoreTx::insert_job_metrics) renamed to the request's points[i].
Error rows_to_points(Error e);

// {"job_id", "metrics": [{"name", "higher_is_better", "points": [{"at", "value"}]}]} from one job's
// rows ordered by name and time (Store::job_metrics order).
nlohmann::json job_metrics_json(const std::string& job_id, const std::vector<JobMetricRow>& rows);

}  // namespace gpurent
