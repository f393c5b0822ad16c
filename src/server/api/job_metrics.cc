// /api/v1/jobs/{ref}/metrics: the quality metrics a job reports about itself (val_accuracy, loss,
// ...), which the cost-performance dashboard divides by GPU-hours. POST stores points (the job's
// writers: operator_admin, and tenant_admin / tenant_member of the job's tenant); GET reads them
// grouped by metric in time order (the job's readers). {ref} is the job's id or name, resolved and
// scoped as for every job route: another tenant's job is 404.
// Schema and semantics: docs/resources/job-metrics.md.
#include <limits>

#include "server/http/http_util.h"
#include "server/services/job_metrics.h"
#include "server/api/resources.h"

namespace gpurent {
namespace {

// from/to query parameters (RFC 3339); absent: unbounded on that side.
Result<std::pair<TimeMs, TimeMs>> range_params(const httplib::Request& req) {
  if (auto s = only_params(req, {"from", "to"}); !s) return s.error();
  FieldErrors errs;
  const TimeMs from = time_param(req, "from", errs).value_or(std::numeric_limits<TimeMs>::min());
  const TimeMs to = time_param(req, "to", errs).value_or(std::numeric_limits<TimeMs>::max());
  if (errs.empty() && to <= from) errs.add("to", Message("api.params.after_from"));
  if (!errs.empty()) return errs.to_error();
  return std::make_pair(from, to);
}

void post_metrics(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto job = find_visible(app.store, app.kinds.at("jobs"), p, req.matches[1]);
  if (!job) return send_problem(res, job.error(), req.path);
  if (!in_scope(write_scope(p, ObjectKind::kJob), p, *job))
    return send_problem(
        res, Error::make(Code::kForbidden, Message("api.job_metrics.forbidden").arg("role", role_name(p.role))),
        req.path);
  auto body = parse_body(req);  // a number no double holds (1e999) is a 400 there
  if (!body) return send_problem(res, body.error(), req.path);
  auto rows = parse_job_metric_points(*body, app.clock.now());
  if (!rows) return send_problem(res, rows.error(), req.path);
  for (JobMetricRow& r : *rows) {
    r.job_id = job->id;
    r.tenant_id = job->tenant_id;
    r.project_id = job->project_id;
  }
  // Each point is a row the single writer stores: the tenant's jobs share a budget of points.
  if (!take_metric_points(app, job->tenant_id, static_cast<int64_t>(rows->size()), req, res)) return;
  Status st = app.loop.run([&](StoreTx& tx) { return tx.insert_job_metrics(*rows); });
  if (!st) return send_problem(res, rows_to_points(st.error()), req.path);
  app.metrics.count_write("job_metrics", "report");
  send_json(res, 201, {{"job_id", job->id}, {"accepted", rows->size()}});
}

void get_metrics(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto job = find_visible(app.store, app.kinds.at("jobs"), p, req.matches[1]);
  if (!job) return send_problem(res, job.error(), req.path);
  auto range = range_params(req);
  if (!range) return send_problem(res, range.error(), req.path);
  auto rows = app.store.job_metrics({.job_id = job->id, .from = range->first, .to = range->second});
  if (!rows) return send_problem(res, rows.error(), req.path);
  send_json(res, 200, job_metrics_json(job->id, *rows));
}

}  // namespace

void register_job_metric_routes(App& app, Router& srv) {
  const char* kPattern = "/api/v1/jobs/([^/]+)/metrics";
  route(app, srv, "POST", kPattern, "/api/v1/jobs/{id}/metrics", post_metrics);
  route(app, srv, "GET", kPattern, "/api/v1/jobs/{id}/metrics", get_metrics);
}

}  // namespace gpurent
