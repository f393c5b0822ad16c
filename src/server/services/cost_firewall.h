// The cost firewall in the server: every interval it rates each tenant's month to date (the same
// invoices as GET /api/v1/invoices), evaluates the rules (billing/firewall.h) and records each new
// alert once ("alerts" records, keyed by the rule's stable key), delivers it to the registered
// webhooks, and keeps the effects: a budget breach of a project whose budget_action is "hold"
// holds its new jobs (the scheduler reads active budget alerts each tick); an egress alert
// publishes a freeze of the project's egress and large uploads until an admin lifts it (through
// the alerts API, webhooks and /metrics, for the supplier's gateways to enforce: gpurent itself
// blocks no traffic). A budget alert that no longer
// fires (a higher budget, a new month) is resolved.
// Owned by run_server; one background thread; writes go through the control loop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "server/services/context.h"

namespace gpurent {

class CostFirewall {
 public:
  CostFirewall(ServiceContext& app, int64_t interval_ms);
  ~CostFirewall();
  // One evaluation of every tenant at `now`; returns how many new alerts were recorded.
  Result<int> run_once(TimeMs now);
  void start();
  void stop();

 private:
  Status deliver(const Record& alert_record);
  ServiceContext& app_;
  int64_t interval_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

// The hold reason of every project held by an active budget alert of the current month, by
// project id (read by the scheduler service inside its transaction).
Result<std::map<std::string, Message>> budget_holds(StoreTx& tx);

}  // namespace gpurent
