// Prometheus metrics of the server (text exposition at /metrics). Thread-safe (prometheus-cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace gpurent {

class Metrics {
 public:
  Metrics();
  void observe_request(const std::string& method, const std::string& route, int status, double seconds);
  void count_write(const std::string& kind, const std::string& action);
  // Gauges sampled at scrape or by their owner: stored objects by kind, the control loop's queue,
  // active cost-firewall alerts by kind.
  void set_objects(const std::string& kind, int64_t n);
  void set_queue_depth(int64_t n);
  void set_alerts_active(const std::string& kind, int64_t n);
  // Stored records of a kind that no longer decode (server/record_faults.h).
  void set_undecodable(const std::string& kind, int64_t n);
  // One scrape of a node's dcgm-exporter (services/dcgm_scraper.h): counted by result; on success
  // the GPUs metered and left out, the MIG instances folded, when it succeeded (Unix seconds) and
  // how old the exporter's readings were (only when it stamps its series).
  struct DcgmScrapeFigures {
    int64_t gpus = 0, skipped = 0, mig_instances = 0;
    double at_s = 0;
    std::optional<double> lag_s;
  };
  void observe_dcgm_scrape(const std::string& node, bool ok, const DcgmScrapeFigures& f);
  // A node taken out of service by a GPU health rule (meter/gpu_health.h).
  void count_health_drain(const std::string& node, const std::string& rule);
  // Jobs' output files removed by their retention (services/job_output_retention.h) and the disk
  // space they held.
  void count_job_outputs_removed(int64_t files, int64_t bytes);
  // Prometheus text format 0.0.4; the stored objects', active alerts' and DCGM scrapes' figures
  // only when `with_objects` (the operator's view).
  std::string render(bool with_objects = true);
  prometheus::Registry& registry() { return *registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Counter>& writes_;
  prometheus::Family<prometheus::Gauge>& objects_;
  prometheus::Family<prometheus::Gauge>& queue_;
  prometheus::Family<prometheus::Gauge>& undecodable_;
  prometheus::Family<prometheus::Gauge>& alerts_;
  prometheus::Family<prometheus::Counter>& dcgm_scrapes_;
  prometheus::Family<prometheus::Gauge>& dcgm_gpus_;
  prometheus::Family<prometheus::Gauge>& dcgm_skipped_;
  prometheus::Family<prometheus::Gauge>& dcgm_mig_;
  prometheus::Family<prometheus::Gauge>& dcgm_last_ok_;
  prometheus::Family<prometheus::Gauge>& dcgm_lag_;
  prometheus::Family<prometheus::Counter>& health_drains_;
  prometheus::Family<prometheus::Counter>& outputs_removed_;
  prometheus::Family<prometheus::Counter>& output_bytes_removed_;
};

}  // namespace gpurent
