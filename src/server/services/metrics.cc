#include "server/services/metrics.h"

#include <prometheus/text_serializer.h>

#include <algorithm>

#include "cli/version.h"

namespace gpurent {

// The compiler that built this binary, for gpurent_build_info.
static std::string compiler() {
#if defined(__clang__)
  return "clang-" + std::to_string(__clang_major__) + "." + std::to_string(__clang_minor__) + "." +
         std::to_string(__clang_patchlevel__);
#elif defined(__GNUC__)
  return "gcc-" + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(prometheus::BuildCounter()
                    .Name("gpurent_http_requests_total")
                    .Help("HTTP requests by method, route and status code")
                    .Register(*registry_)),
      latency_(prometheus::BuildHistogram()
                   .Name("gpurent_http_request_duration_seconds")
                   .Help("HTTP request latency by route")
                   .Register(*registry_)),
      writes_(prometheus::BuildCounter()
                  .Name("gpurent_store_writes_total")
                  .Help("Committed writes by resource kind and action")
                  .Register(*registry_)),
      objects_(prometheus::BuildGauge()
                   .Name("gpurent_objects")
                   .Help("Stored objects by kind (sampled at scrape)")
                   .Register(*registry_)),
      queue_(prometheus::BuildGauge()
                 .Name("gpurent_control_loop_queue_depth")
                 .Help("Commands waiting for the single writer")
                 .Register(*registry_)),
      undecodable_(prometheus::BuildGauge()
                       .Name("gpurent_records_undecodable")
                       .Help("Stored records a reader found undecodable, by kind (listed in /readyz)")
                       .Register(*registry_)),
      alerts_(prometheus::BuildGauge()
                  .Name("gpurent_alerts_active")
                  .Help("Active cost-firewall alerts by kind (an egress_daily_cost one is a published freeze)")
                  .Register(*registry_)),
      dcgm_scrapes_(prometheus::BuildCounter()
                        .Name("gpurent_dcgm_scrapes_total")
                        .Help("Scrapes of a node's dcgm-exporter by result (ok, failed)")
                        .Register(*registry_)),
      dcgm_gpus_(prometheus::BuildGauge()
                     .Name("gpurent_dcgm_gpus_metered")
                     .Help("GPUs the node's last successful DCGM scrape metered")
                     .Register(*registry_)),
      dcgm_skipped_(prometheus::BuildGauge()
                        .Name("gpurent_dcgm_gpus_skipped")
                        .Help("GPUs the node's last successful DCGM scrape left out (no utilization, an "
                              "unreadable MIG instance, a UUID that is not the node's), logged with why")
                        .Register(*registry_)),
      dcgm_mig_(prometheus::BuildGauge()
                    .Name("gpurent_dcgm_mig_instances")
                    .Help("MIG instances the node's last successful DCGM scrape folded into their GPUs")
                    .Register(*registry_)),
      dcgm_last_ok_(prometheus::BuildGauge()
                        .Name("gpurent_dcgm_last_success_timestamp_seconds")
                        .Help("When the node's last DCGM scrape succeeded (Unix time)")
                        .Register(*registry_)),
      dcgm_lag_(prometheus::BuildGauge()
                    .Name("gpurent_dcgm_sample_lag_seconds")
                    .Help("Age of the exporter's readings at the node's last successful scrape (scrape time minus "
                          "the newest series timestamp; only for exporters that stamp their series)")
                    .Register(*registry_)),
      health_drains_(prometheus::BuildCounter()
                         .Name("gpurent_gpu_health_drains_total")
                         .Help("Nodes taken out of service by a GPU health rule, by node and rule")
                         .Register(*registry_)),
      outputs_removed_(prometheus::BuildCounter()
                           .Name("gpurent_job_output_files_removed_total")
                           .Help("Jobs' output files (logs, status and ready files) removed by their retention "
                                 "(serve --job-log-retention-days)")
                           .Register(*registry_)),
      output_bytes_removed_(prometheus::BuildCounter()
                                .Name("gpurent_job_output_bytes_removed_total")
                                .Help("Disk space the removed output files held, in bytes")
                                .Register(*registry_)) {
  // Always 1: the labels say which build is running (the Prometheus *_build_info convention).
  prometheus::BuildGauge()
      .Name("gpurent_build_info")
      .Help("The running gpurent: its version and the compiler that built it (always 1)")
      .Register(*registry_)
      .Add({{"version", kGpurentVersion}, {"compiler", compiler()}})
      .Set(1);
}

void Metrics::set_undecodable(const std::string& kind, int64_t n) {
  undecodable_.Add({{"kind", kind}}).Set(static_cast<double>(n));
}

void Metrics::observe_request(const std::string& method, const std::string& route, int status, double seconds) {
  requests_.Add({{"method", method}, {"route", route}, {"status", std::to_string(status)}}).Increment();
  static const prometheus::Histogram::BucketBoundaries kBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                                0.05,   0.1,   0.25,   0.5,   1,    2.5};
  latency_.Add({{"route", route}}, kBuckets).Observe(seconds);
}

void Metrics::count_write(const std::string& kind, const std::string& action) {
  writes_.Add({{"kind", kind}, {"action", action}}).Increment();
}

void Metrics::set_objects(const std::string& kind, int64_t n) {
  objects_.Add({{"kind", kind}}).Set(static_cast<double>(n));
}
void Metrics::set_queue_depth(int64_t n) { queue_.Add({}).Set(static_cast<double>(n)); }
void Metrics::set_alerts_active(const std::string& kind, int64_t n) {
  alerts_.Add({{"kind", kind}}).Set(static_cast<double>(n));
}

void Metrics::observe_dcgm_scrape(const std::string& node, bool ok, const DcgmScrapeFigures& f) {
  dcgm_scrapes_.Add({{"node", node}, {"result", ok ? "ok" : "failed"}}).Increment();
  if (!ok) return;
  dcgm_gpus_.Add({{"node", node}}).Set(static_cast<double>(f.gpus));
  dcgm_skipped_.Add({{"node", node}}).Set(static_cast<double>(f.skipped));
  dcgm_mig_.Add({{"node", node}}).Set(static_cast<double>(f.mig_instances));
  dcgm_last_ok_.Add({{"node", node}}).Set(f.at_s);
  if (f.lag_s) dcgm_lag_.Add({{"node", node}}).Set(*f.lag_s);
}

void Metrics::count_health_drain(const std::string& node, const std::string& rule) {
  health_drains_.Add({{"node", node}, {"rule", rule}}).Increment();
}

void Metrics::count_job_outputs_removed(int64_t files, int64_t bytes) {
  outputs_removed_.Add({}).Increment(static_cast<double>(files));
  output_bytes_removed_.Add({}).Increment(static_cast<double>(bytes));
}

std::string Metrics::render(bool with_objects) {
  auto families = registry_->Collect();
  if (!with_objects)
    families.erase(std::remove_if(families.begin(), families.end(),
                                  [](const prometheus::MetricFamily& f) {
                                    return f.name == "gpurent_objects" || f.name == "gpurent_alerts_active" ||
                                           f.name.rfind("gpurent_dcgm_", 0) == 0 ||
                                           f.name == "gpurent_gpu_health_drains_total" ||
                                           f.name.rfind("gpurent_job_output_", 0) == 0;
                                  }),
                   families.end());
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace gpurent
