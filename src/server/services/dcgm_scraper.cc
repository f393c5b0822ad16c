#include "server/services/dcgm_scraper.h"

#include <spdlog/spdlog.h>

#include "meter/dcgm.h"
#include "server/http/http_client.h"
#include "server/services/usage_ingest.h"

namespace gpurent {

Result<DcgmTarget> parse_dcgm_target(const std::string& spec) {
  const size_t at = spec.rfind('@');
  if (at == std::string::npos || at == 0 || at + 1 == spec.size())
    return Error::invalid("dcgm-target", "'" + spec + "' must be URL@NODE, e.g. http://10.0.0.7:9400/metrics@node-7");
  DcgmTarget t{spec.substr(0, at), spec.substr(at + 1)};
  const size_t scheme = t.url.find("://");
  if (scheme == std::string::npos ||
      (t.url.compare(0, scheme, "http") != 0 && t.url.compare(0, scheme, "https") != 0) || scheme + 3 >= t.url.size() ||
      t.url[scheme + 3] == '/')
    return Error::invalid("dcgm-target", "'" + t.url + "' must be an http:// or https:// URL with a host");
  if (!valid_idempotency_key(t.node) || t.node.size() > 64)
    return Error::invalid("dcgm-target", "'" + t.node + "' is not a node id or name");
  return t;
}

Result<UsageBatch> dcgm_batch(std::string_view exposition, const std::string& node, TimeMs scraped_at) {
  auto samples = parse_prometheus_text(exposition);
  if (!samples) return samples.error();
  auto readings = map_dcgm(*samples);
  if (!readings) return readings.error();
  if (readings->gpus.empty())
    return Error::invalid("", "the exposition has no GPU with DCGM_FI_DEV_GPU_UTIL or DCGM_FI_PROF_GR_ENGINE_ACTIVE");
  UsageBatch b;
  b.idempotency_key = "dcgm:" + node + ":" + std::to_string(scraped_at);
  for (const DcgmGpuReading& r : readings->gpus) {
    GpuSample s;
    s.at = scraped_at;
    if (r.at && *r.at >= scraped_at - kSampleMaxAgeMs && *r.at <= scraped_at + kSampleMaxAheadMs) s.at = *r.at;
    if (r.gpu) {
      s.node = node;
      s.gpu = r.gpu;
    } else {
      s.uuid = r.uuid;
    }
    s.metrics = r.metrics;
    b.gpu_samples.push_back(std::move(s));
  }
  return b;
}

Result<UsageIngestOutcome> UsageBackground::scrape_once(const DcgmTarget& t) {
  const TimeMs now = app_.clock.now();
  auto res = send_request({"GET", t.url, {}, "", "", 5000, 10000});
  if (!res) return res.error();
  if (res->status != 200)
    return Error::make(Code::kUnavailable, "GET " + t.url + ": HTTP " + std::to_string(res->status));
  auto batch = dcgm_batch(res->body, t.node, now);
  if (!batch) return batch.error();
  return ingest_usage(app_, system_principal("dcgm-scraper"), *batch);
}

Result<UsageRollupStats> UsageBackground::roll_up_once(TimeMs now) {
  const TimeMs raw_before = now - app_.opts.usage_retention_hours * kMsPerHour;
  UsageRollupStats stats;
  Status st = app_.loop.run([&](StoreTx& tx) -> Status {
    auto r = tx.roll_up_usage(raw_before, now - kIdempotencyKeyMemoryMs);
    if (!r) return r.error();
    stats = *r;
    return ok_status();
  });
  if (!st) return st.error();
  return stats;
}

bool UsageBackground::wait(int64_t ms) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_; });
}

static void log_json(spdlog::level::level_enum lvl, const json& j) {
  spdlog::log(lvl, "{}", j.dump(-1, ' ', false, json::error_handler_t::replace));
}

Status UsageBackground::start(const std::vector<std::string>& dcgm_targets) {
  std::vector<DcgmTarget> targets;
  for (const auto& spec : dcgm_targets) {
    auto t = parse_dcgm_target(spec);
    if (!t) return t.error();
    targets.push_back(*t);
  }
  for (const DcgmTarget& t : targets) {
    threads_.emplace_back([this, t] {
      const int64_t every = app_.opts.dcgm_interval_s * 1000;
      do {
        auto r = scrape_once(t);
        if (!r)
          log_json(spdlog::level::warn,
                   {{"event", "dcgm_scrape_failed"}, {"url", t.url}, {"node", t.node}, {"error", r.error().message}});
        else
          log_json(spdlog::level::debug, {{"event", "dcgm_scrape"},
                                          {"url", t.url},
                                          {"node", t.node},
                                          {"gpu_samples", r->gpu_samples},
                                          {"duplicate", r->duplicate}});
      } while (wait(every));
    });
  }
  threads_.emplace_back([this] {
    while (wait(app_.opts.usage_rollup_interval_s * 1000)) {
      auto r = roll_up_once(app_.clock.now());
      if (!r)
        log_json(spdlog::level::warn, {{"event", "usage_rollup_failed"}, {"error", r.error().message}});
      else if (r->gpu_samples + r->job_samples + r->batches_forgotten > 0)
        log_json(spdlog::level::info, {{"event", "usage_rollup"},
                                       {"gpu_samples", r->gpu_samples},
                                       {"job_samples", r->job_samples},
                                       {"batches_forgotten", r->batches_forgotten}});
    }
  });
  return ok_status();
}

void UsageBackground::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

}  // namespace gpurent
