#include "server/services/job_metrics.h"

#include <algorithm>
#include <cmath>

#include "core/fields.h"

namespace gpurent {
namespace {

// A body with thousands of bad points reports the first ones, not a response as big as the body.
constexpr size_t kMaxReportedErrors = 100;

// What a metric name may hold (a message code).
constexpr const char* kMetricNameHelp = "pattern.metric_name";

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
    f.error("name", Message("field.pattern").arg("value", r.name).arg("help", Message(kMetricNameHelp)));
  if (const json* v = f.raw("value"); !v) {
    f.error("value", FieldReason{"field.required"});
  } else if (!v->is_number()) {
    f.error("value", Message("job_metrics.value_not_number"));
  } else {
    r.value = v->get<double>();
    if (!std::isfinite(r.value)) f.error("value", Message("job_metrics.value_not_finite"));
  }
  const std::optional<TimeMs> at = f.opt_time("at");
  r.at = at.value_or(now);
  if (at && *at > now + kMaxMetricLead)
    f.error("at", Message("job_metrics.at_ahead").arg("now", format_rfc3339(now)));
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
    top.error("points", Message("job_metrics.points_required").arg("max", max));
  } else if (!list->is_array()) {
    top.error("points", Message("job_metrics.points_not_list").arg("max", max));
  } else if (list->empty()) {
    top.error("points", Message("job_metrics.points_empty"));
  } else if (list->size() > kMaxMetricPoints) {
    top.error("points", Message("job_metrics.points_too_many").arg("max", max).arg("got", std::to_string(list->size())));
  } else {
    rows.reserve(list->size());
    for (size_t i = 0; i < list->size(); ++i) {
      if (errs.list().size() >= kMaxReportedErrors) {
        errs.add("points", Message("job_metrics.validation_stopped").arg("n", std::to_string(kMaxReportedErrors)));
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
  // A coded summary names the field in its "field" argument ("error.field", perhaps inside
  // "error.and_more"): renamed too, so it still words the message.
  auto rename_detail = [&](auto& self, Message& m) -> void {
    for (MessageArg& a : m.args) {
      if (m.code == "error.field" && a.name == "field" && a.nested.empty()) rename(a.text);
      if (m.code == "error.and_more" && a.name == "first" && a.nested.size() == 1) self(self, a.nested[0]);
    }
  };
  for (FieldError& f : e.fields) rename(f.field);
  rename(e.message);
  rename_detail(rename_detail, e.detail);
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
