// Prometheus metrics of the server (text exposition at /metrics). Thread-safe (prometheus-cpp).
#pragma once

#include <memory>
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
  // Prometheus text format 0.0.4; the stored objects' and active alerts' counts only when
  // `with_objects` (the operator's view).
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
};

}  // namespace gpurent
