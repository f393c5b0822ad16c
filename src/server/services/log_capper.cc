// server/services/log_capper.h: the log cap's own thread.
#include "server/services/log_capper.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <vector>

#include "exec/log_cap.h"

namespace gpurent {

using nlohmann::json;

LogCapper::LogCapper(std::string dir, int64_t keep_bytes, int64_t interval_ms)
    : dir_(std::move(dir)), keep_bytes_(keep_bytes), interval_ms_(interval_ms) {
  if (interval_ms_ <= 0) return;
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stopping_; });
      if (stopping_) break;
      lock.unlock();
      pass();
      lock.lock();
    }
  });
}

LogCapper::~LogCapper() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LogCapper::watch(std::map<std::string, Log> logs) {
  std::lock_guard<std::mutex> lock(mu_);
  watched_ = std::move(logs);
}

void LogCapper::pass() {
  if (probe_ == Probe::kDisabled) return;
  if (probe_ == Probe::kNotYet) {
    Status usable = probe_hole_punching(dir_);
    if (!usable && usable.error().code == Code::kNotFound) return;  // no folder yet: no logs either
    if (!usable && usable.error().code != Code::kInvalid) {         // a full disk, say: asked again next pass
      if (!probe_failure_said_)
        spdlog::warn("{}",
                     json({{"event", "job_log_cap_probe_failed"}, {"folder", dir_}, {"error", usable.error().message}})
                         .dump(-1, ' ', false, json::error_handler_t::replace));
      probe_failure_said_ = true;
      return;
    }
    if (!usable) {
      probe_ = Probe::kDisabled;
      spdlog::warn("{}", json({{"event", "job_log_cap_disabled"}, {"folder", dir_}, {"error", usable.error().message}})
                             .dump(-1, ' ', false, json::error_handler_t::replace));
      return;
    }
    probe_ = Probe::kUsable;
  }
  std::map<std::string, Log> logs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    logs = watched_;
  }
  for (const auto& [path, log] : logs) {
    if (log.ended && ended_done_.contains(path)) continue;
    auto freed = cap_log(path, keep_bytes_);
    // An ended run's log was written to its end: one look at it after that is its last (one not
    // there yet, as on storage slow to show it, is looked for again).
    if (log.ended && (freed || freed.error().code != Code::kNotFound)) ended_done_.insert(path);
    if (!freed) {
      if (freed.error().code != Code::kNotFound && failure_said_.insert(path).second)
        spdlog::warn(
            "{}",
            json(
                {{"event", "job_log_cap_failed"}, {"job", log.job}, {"run", log.run}, {"error", freed.error().message}})
                .dump(-1, ' ', false, json::error_handler_t::replace));
      continue;
    }
    if (*freed > 0 && capped_said_.insert(path).second)
      spdlog::info("{}", json({{"event", "job_log_capped"},
                               {"job", log.job},
                               {"run", log.run},
                               {"kept_bytes", keep_bytes_},
                               {"freed_bytes", *freed}})
                             .dump());
  }
  for (auto* said : {&capped_said_, &failure_said_, &ended_done_})
    std::erase_if(*said, [&](const std::string& p) { return !logs.contains(p); });
}

}  // namespace gpurent
