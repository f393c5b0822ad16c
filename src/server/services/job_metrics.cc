#include "server/services/job_metrics.h"

#include <algorithm>
#include <cmath>

#include "core/fields.h"

namespace gpurent {
namespace {

// A body with thousands of bad points reports the first ones, not a response as big as the body.
constexpr size_t kMaxReportedErrors = 100;

// [a-z0-9_.-], checked by hand: a regex per point would dominate a 10000-point request.
bool valid_name(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
  });
}

JobMetricRow parse_point(Fields& f, TimeMs now) {
  JobMetricRow r;
  r.name = f.str("name", {.min_len = 1, .max_len = kMaxMetricNameLen});
  if (!r.name.empty() && !valid_name(r.name))
    f.error("name", "'" + r.name + "' is not valid: lowercase letters, digits, '_', '.' and '-', 1-64 characters");
  if (const json* v = f.raw("value"); !v) {
    f.error("value", "is required");
  } else if (!v->is_number()) {
    f.error("value", "must be a number");
  } else {
    r.value = v->get<double>();
    if (!std::isfinite(r.value)) f.error("value", "must be a finite number");
  }
  const std::optional<TimeMs> at = f.opt_time("at");
  r.at = at.value_or(now);
  if (at && *at > now + kMaxMetricLead)
    f.error("at", "must not be more than 5 minutes ahead of the server's clock (now " + format_rfc3339(now) + ")");
  r.higher_is_better = f.boolean("higher_is_better", true);
  return r;
}

}  // namespace

Result<std::vector<JobMetricRow>> parse_job_metric_points(const json& body, TimeMs now) {
  FieldErrors errs;
  Fields top(body, "", errs);
  std::vector<JobMetricRow> rows;
  if (!top.valid_object()) return errs.to_error();
  const json* list = top.raw("points");
  const std::string max = std::to_string(kMaxMetricPoints);
  if (!list) {
    top.error("points", "is required (a list of 1 to " + max + " points)");
  } else if (!list->is_array()) {
    top.error("points", "must be a list of 1 to " + max + " points");
  } else if (list->empty()) {
    top.error("points", "must hold at least 1 point");
  } else if (list->size() > kMaxMetricPoints) {
    top.error("points", "must hold at most " + max + " points (got " + std::to_string(list->size()) + ")");
  } else {
    rows.reserve(list->size());
    for (size_t i = 0; i < list->size(); ++i) {
      if (errs.list().size() >= kMaxReportedErrors) {
        errs.add("points", "validation stopped after " + std::to_string(kMaxReportedErrors) + " errors");
        break;
      }
      Fields f((*list)[i], "points[" + std::to_string(i) + "]", errs);
      if (!f.valid_object()) continue;
      rows.push_back(parse_point(f, now));
      f.finish();
    }
  }
  top.finish();
  if (!errs.empty()) return errs.to_error();
  return rows;
}

Error rows_to_points(Error e) {
  auto rename = [](std::string& s) {
    if (s.rfind("rows[", 0) == 0) s.replace(0, 4, "points");
  };
  for (FieldError& f : e.fields) rename(f.field);
  rename(e.message);
  return e;
}

json job_metrics_json(const std::string& job_id, const std::vector<JobMetricRow>& rows) {
  json metrics = json::array();
  for (size_t i = 0; i < rows.size();) {
    const JobMetricRow& first = rows[i];
    json points = json::array();
    for (; i < rows.size() && rows[i].name == first.name; ++i)
      points.push_back({{"at", format_rfc3339(rows[i].at)}, {"value", rows[i].value}});
    metrics.push_back(
        {{"name", first.name}, {"higher_is_better", first.higher_is_better}, {"points", std::move(points)}});
  }
  return {{"job_id", job_id}, {"metrics", std::move(metrics)}};
}

}  // namespace gpurent
