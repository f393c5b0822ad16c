// /api/v1/usage: metered usage. POST takes a batch of GPU and job samples (operators; suppliers
// for their own nodes' GPUs) and stores it once per idempotency key; GET /usage/gpus reads one
// GPU's series (operators; suppliers for their own nodes), GET /usage/jobs one job's series and
// totals, or per-job totals of a project or tenant (tenants: their own only).
// Schema and semantics: docs/resources/usage.md.
#include "meter/usage.h"

#include <spdlog/spdlog.h>

#include "billing/rating_input.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/issued_invoices.h"
#include "server/services/usage_ingest.h"

namespace gpurent {
namespace {

constexpr int kUsageDefaultLimit = 10'000;
constexpr int kUsageMaxLimit = 100'000;
constexpr DurationMs kDefaultRange = kMsPerHour;

struct Range {
  TimeMs from = 0, to = 0;
  int limit = kUsageDefaultLimit;
};

// from/to (RFC 3339; default: the last hour up to now) and limit (1..100000).
Result<Range> usage_range_params(const httplib::Request& req, TimeMs now) {
  Range r;
  FieldErrors errs;
  r.to = time_param(req, "to", errs).value_or(now);
  r.from = time_param(req, "from", errs).value_or(r.to - kDefaultRange);
  if (errs.empty() && r.to <= r.from) errs.add("to", Message("api.params.after_from"));
  if (req.has_param("limit")) {
    const std::string v = req.get_param_value("limit");
    if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos || std::stoi(v) < 1 ||
        std::stoi(v) > kUsageMaxLimit)
      errs.add("limit", Message("http.limit.integer").arg("max", std::to_string(kUsageMaxLimit)));
    else
      r.limit = std::stoi(v);
  }
  if (!errs.empty()) return errs.to_error();
  return r;
}

json stat_json(const UsageStat& s) {
  return {{"n", s.n}, {"sum", s.sum}, {"avg", (2 * s.sum + s.n) / (2 * s.n)}, {"max", s.max}};
}

json point_json(const GpuUsagePoint& p) {
  json j = {{"at", format_rfc3339(p.at)}, {"resolution", p.minute ? "minute" : "raw"}, {"samples", p.samples}};
  const std::pair<const char*, const UsageStat*> stats[] = {{"utilization_pct", &p.utilization_pct},
                                                            {"memory_used_mib", &p.memory_used_mib},
                                                            {"power_mw", &p.power_mw},
                                                            {"sm_clock_mhz", &p.sm_clock_mhz},
                                                            {"gr_engine_active_pct", &p.gr_engine_active_pct}};
  for (const auto& [name, s] : stats)
    if (s->n > 0) j[name] = stat_json(*s);
  return j;
}

template <class T>
json counters_json(const T& c) {
  return {{"storage_io_bytes", c.storage_io_bytes},
          {"egress_bytes", c.egress_bytes},
          {"input_tokens", c.input_tokens},
          {"output_tokens", c.output_tokens},
          {"requests", c.requests}};
}

json point_json(const JobUsagePoint& p) {
  json j = counters_json(p);
  j["at"] = format_rfc3339(p.at);
  j["resolution"] = p.minute ? "minute" : "raw";
  j["samples"] = p.samples;
  return j;
}

// Cuts a page of points fetched with limit + 1: when there are more, the page ends before the
// last instant it would split, and next_from is that instant (so no point is skipped or repeated).
template <class P>
Result<json> page_of(std::vector<P> pts, int limit) {
  json next = nullptr;
  if (pts.size() > static_cast<size_t>(limit)) {
    const TimeMs cut = pts[limit].at;
    pts.resize(limit);
    while (!pts.empty() && pts.back().at == cut) pts.pop_back();
    if (pts.empty())
      return Error::invalid("limit", Message("api.usage.limit_instant").arg("limit", std::to_string(limit)));
    next = format_rfc3339(cut);
  }
  json items = json::array();
  for (const P& p : pts) items.push_back(point_json(p));
  return json{{"points", std::move(items)}, {"next_from", std::move(next)}};
}

void post_usage(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  if (write_scope(p, ObjectKind::kGpuTelemetry) == Scope::kNone)
    return send_problem(
        res, Error::make(Code::kForbidden, Message("api.usage.report_forbidden").arg("role", role_name(p.role))),
        req.path);
  UsageParseOptions opts{app.clock.now(), kMaxSamplesPerBatch};
  auto closed =
      billable_from(app.store, opts.now, app.opts.firewall_interval_s > 0, app.opts.month_close_delay_h * kMsPerHour);
  if (!closed) return send_problem(res, closed.error(), req.path);
  opts.not_before = *closed;
  // JSON bodies take the DOM-free path; anything it declines (YAML, errors, unusual forms) the
  // document path validates and, when invalid, reports field by field.
  const std::string ct = req.get_header_value("Content-Type");
  std::optional<UsageBatch> batch;
  if (ct.empty() || (ct.find("json") != std::string::npos && ct.find("yaml") == std::string::npos))
    batch = parse_usage_batch_fast(req.body, opts);
  if (!batch) {
    auto body = parse_body(req);
    if (!body) return send_problem(res, body.error(), req.path);
    auto parsed = parse_usage_batch(*body, opts);
    if (!parsed) return send_problem(res, parsed.error(), req.path);
    batch = std::move(parsed).value();
  }
  auto out = ingest_usage(app, p, *batch);
  if (!out) return send_problem(res, out.error(), req.path);
  if (!out->duplicate) app.metrics.count_write("usage", "ingest");
  send_json(res, out->duplicate ? 200 : 201,
            {{"idempotency_key", batch->idempotency_key},
             {"duplicate", out->duplicate},
             {"gpu_samples", out->gpu_samples},
             {"job_samples", out->job_samples},
             {"received_at", format_rfc3339(out->received_at)}});
}

void get_gpu_usage(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  if (auto s = only_params(req, {"node", "gpu", "from", "to", "limit"}); !s)
    return send_problem(res, s.error(), req.path);
  if (read_scope(p, ObjectKind::kGpuTelemetry) == Scope::kNone)
    return send_problem(res, Error::make(Code::kForbidden, Message("api.usage.telemetry_forbidden")), req.path);
  if (!req.has_param("node") || !req.has_param("gpu")) {
    FieldErrors errs;
    if (!req.has_param("node")) errs.add("node", Message("api.usage.node_required"));
    if (!req.has_param("gpu")) errs.add("gpu", Message("api.usage.gpu_required"));
    return send_problem(res, errs.to_error(), req.path);
  }
  auto node = find_visible(app.store, app.kinds.at("nodes"), p, req.get_param_value("node"));
  if (!node) return send_problem(res, node.error(), req.path);
  if (!in_scope(read_scope(p, ObjectKind::kGpuTelemetry), p, *node))
    return send_problem(res, Error::make(Code::kForbidden, Message("api.nodes.other_supplier").arg("node", node->name)),
                        req.path);
  const std::string g = req.get_param_value("gpu");
  if (g.empty() || g.size() > 4 || g.find_first_not_of("0123456789") != std::string::npos)
    return send_problem(res, Error::invalid("gpu", Message("api.usage.gpu_index")), req.path);
  const int64_t gpu = std::stoll(g);
  auto range = usage_range_params(req, app.clock.now());
  if (!range) return send_problem(res, range.error(), req.path);
  auto pts = app.store.gpu_usage(node->id, gpu, range->from, range->to, range->limit + 1);
  if (!pts) return send_problem(res, pts.error(), req.path);
  auto page = page_of(std::move(pts).value(), range->limit);
  if (!page) return send_problem(res, page.error(), req.path);
  json out = {{"node_id", node->id},
              {"node", node->name},
              {"gpu", gpu},
              {"from", format_rfc3339(range->from)},
              {"to", format_rfc3339(range->to)}};
  out.update(*page);
  send_json(res, 200, out);
}

void get_job_usage(App& app, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  if (auto s = only_params(req, {"job", "project", "tenant", "from", "to", "limit"}); !s)
    return send_problem(res, s.error(), req.path);
  const int given = req.has_param("job") + req.has_param("project") + req.has_param("tenant");
  if (given != 1) return send_problem(res, Error::invalid("job", Message("api.usage.one_scope")), req.path);
  if (read_scope(p, ObjectKind::kJobUsage) == Scope::kNone)
    return send_problem(res, Error::make(Code::kForbidden, Message("api.usage.job_usage_forbidden")), req.path);
  auto range = usage_range_params(req, app.clock.now());
  if (!range) return send_problem(res, range.error(), req.path);
  JobUsageFilter f{.from = range->from, .to = range->to};
  json out = {{"from", format_rfc3339(range->from)}, {"to", format_rfc3339(range->to)}};
  if (req.has_param("job")) {
    // find_visible applies the read scope: another tenant's job is 404, as everywhere.
    auto job = find_visible(app.store, app.kinds.at("jobs"), p, req.get_param_value("job"));
    if (!job) return send_problem(res, job.error(), req.path);
    f.job_id = job->id;
    auto pts = app.store.job_usage(job->id, range->from, range->to, range->limit + 1);
    if (!pts) return send_problem(res, pts.error(), req.path);
    auto page = page_of(std::move(pts).value(), range->limit);
    if (!page) return send_problem(res, page.error(), req.path);
    out.update(*page);
  } else if (req.has_param("project")) {
    auto project = find_visible(app.store, app.kinds.at("projects"), p, req.get_param_value("project"));
    if (!project) return send_problem(res, project.error(), req.path);
    f.project_id = project->id;
  } else {
    auto tenant = find_visible(app.store, app.kinds.at("tenants"), p, req.get_param_value("tenant"));
    if (!tenant) return send_problem(res, tenant.error(), req.path);
    f.tenant_id = tenant->id;
  }
  auto totals = app.store.job_usage_totals(f);
  if (!totals) return send_problem(res, totals.error(), req.path);
  JobUsageTotals sum;
  json jobs = json::array();
  bool overflow = false;  // sums of stored counters past int64 (years of a meter at its caps): refused
  const auto add = [&overflow](int64_t& into, int64_t v) { overflow |= __builtin_add_overflow(into, v, &into); };
  for (const JobUsageTotals& t : *totals) {
    json j = counters_json(t);
    j["job_id"] = t.job_id;
    j["project_id"] = t.project_id;
    j["tenant_id"] = t.tenant_id;
    j["samples"] = t.samples;
    jobs.push_back(std::move(j));
    add(sum.samples, t.samples);
    add(sum.storage_io_bytes, t.storage_io_bytes);
    add(sum.egress_bytes, t.egress_bytes);
    add(sum.input_tokens, t.input_tokens);
    add(sum.output_tokens, t.output_tokens);
    add(sum.requests, t.requests);
  }
  if (overflow) return send_problem(res, Error::invalid("from", Message("api.usage.totals_overflow")), req.path);
  json total = counters_json(sum);
  total["samples"] = sum.samples;
  out["totals"] = std::move(total);
  out["jobs"] = std::move(jobs);
  if (!out.contains("points")) {
    out["points"] = json::array();
    out["next_from"] = nullptr;
  }
  send_json(res, 200, out);
}

}  // namespace

void register_usage_routes(App& app, Router& srv) {
  route(app, srv, "POST", "/api/v1/usage", "/api/v1/usage", post_usage);
  route(app, srv, "GET", "/api/v1/usage/gpus", "/api/v1/usage/gpus", get_gpu_usage);
  route(app, srv, "GET", "/api/v1/usage/jobs", "/api/v1/usage/jobs", get_job_usage);
}

}  // namespace gpurent
