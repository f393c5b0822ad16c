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
  void set_gauge(const std::string& name, const std::string& label_key, const std::string& label_value, double v);
  // Prometheus text format 0.0.4; the stored objects' counts only when `with_objects`.
  std::string render(bool with_objects = true);
  prometheus::Registry& registry() { return *registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Counter>& writes_;
  prometheus::Family<prometheus::Gauge>& objects_;
  prometheus::Family<prometheus::Gauge>& queue_;
};

}  // namespace gpurent
