// The cost firewall in the server: every interval it rates each tenant's month to date (the same
// invoices as GET /api/v1/invoices), evaluates the rules (billing/firewall.h) and records each new
// alert once ("alerts" records, keyed by the rule's stable key), delivers it to the registered
// webhooks, and keeps the effects: a budget breach of a project whose budget_action is "hold"
// holds its new jobs (the scheduler reads active budget alerts each tick); an egress alert
// publishes a freeze of the project's egress and large uploads until an admin lifts it (through
// the alerts API, webhooks and /metrics, for the supplier's gateways; the container executors cut
// the project's running containers' network themselves: egress_frozen_projects) and holds the
// project's new jobs (not admitted) until the freeze is lifted. A budget alert that no longer
// fires (a higher budget, a new month) is resolved. Tenants whose money is watched (prepaid, or a
// credit limit: services/balances.h) get balance_low and balance_exhausted alerts; the latter
// stops the tenant's running work until it no longer fires (a top-up, a payment).
// Each pass also stops idle instances (services/instance_idle.h).
// A quota change does not wait for the next pass: while the firewall runs, the write that
// changes a project's quota re-checks that project's budget in its own transaction
// (recheck_budget below), and the firewall's thread delivers the alert it raised at once.
// A pass never overturns such a change: it leaves a project whose quota changed after the pass
// read it to the change's own check (and to the next pass).
// Owned by run_server; one background thread; writes go through the control loop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "billing/rating.h"
#include "model/alert.h"
#include "model/project.h"
#include "server/services/context.h"

namespace gpurent {

// An alert recorded this long ago and still not delivered (its server stopped between the two)
// is delivered by the next pass.
inline constexpr int64_t kUndeliveredGraceMs = 5 * 60'000;

class CostFirewall {
 public:
  CostFirewall(ServiceContext& app, int64_t interval_ms);
  ~CostFirewall();
  // One evaluation of every tenant at `now`; returns how many new alerts were recorded. The first
  // pass in a month also evaluates the previous month's daily rules (card and egress cost per day)
  // up to its end, so that its final hours — after the last pass in it — still alert.
  Result<int> run_once(TimeMs now);
  // A pass now and every interval on its own thread; in between, as soon as the write that
  // raised it has committed, it delivers each alert a quota change raised (recheck_budget).
  // While it runs, quota changes of this server re-check budgets at once. With passes = false
  // (a follower of several servers on one database) it only delivers what this server's quota
  // changes raise; start(true) later (taking the lead) makes it run the passes too, and a start
  // while it runs never stops them.
  void start(bool passes = true);
  void stop();
  // Work of a room above the services that rides on each pass, after the firewall's own (the
  // market's expiry of orders whose window is over, server.cc); `failed_event` is what the log
  // says when it fails. Before start().
  void ride(std::string failed_event, std::function<Status(TimeMs)> work);

 private:
  void pass();
  Status deliver(const Record& alert_record);
  Status deliver_pending(TimeMs now);
  void deliver_raised(const std::vector<std::string>& alert_ids);
  ServiceContext& app_;
  int64_t interval_ms_;
  TimeMs next_close_try_ = 0;  // the firewall thread's: a month close that left tenants unrated waits an hour
  // The month whose previous month's daily rules a pass has evaluated to its end (run_once's caller's).
  TimeMs prev_month_done_ = 0;
  bool stopping_ = false;  // guarded by the module's registry mutex (cost_firewall.cc)
  bool passes_ = true;     // likewise
  std::thread thread_;
  std::vector<std::pair<std::string, std::function<Status(TimeMs)>>> riders_;
};

// Whether a cost firewall runs for app's server (started and not stopped), or — several servers on
// one PostgreSQL database — is configured on it (the leader runs the passes): a quota change
// re-checks its project's budget only then, on whichever server it is written through
// (`serve --firewall-interval-s 0` turns the firewall off).
bool cost_firewall_running(const ServiceContext& app);

// A tenant's month to date as a firewall pass rates it (its invoice from the month's start to
// `now`, volume lines per day), for re-checking one project's budget inside a write. Read off the
// control loop where the caller can (reads only; any thread).
struct MonthToDate {
  TimeMs now = 0;
  std::vector<ChargeLine> lines;  // every section's lines, in their currencies
};
Result<MonthToDate> rate_month_to_date(ServiceContext& app, const std::string& tenant_id, TimeMs now);

// The firewall's budget rule for one project, run inside the write that sets its quota (PUT
// /api/v1/projects/{id}/quota, POST and PUT /api/v1/projects) so that the hold it sets or lifts
// commits with the quota: the scheduler's next tick sees both, and no job of the project starts
// in between. `quota` is the project's quota as the write stores it; `mtd` its tenant's month
// (a new project: nothing spent). As a pass would, it records the project's budget_breach alert
// of the month when it fires (a resolved one fires again; an active one takes the hold its
// budget_action now asks for; a lifted one stays lifted) and resolves the project's budget alerts
// that no longer fire. The firewall's thread delivers a new alert to the webhooks once the write
// has committed. Returns the alert that fires, if any. Does nothing (and returns none) where no
// firewall runs.
Result<std::optional<Alert>> recheck_budget(ServiceContext& app, StoreTx& tx, const MonthToDate& mtd,
                                            const std::string& tenant_id, const std::string& project_id,
                                            const std::string& project, const Quota& quota);

// An alert raised outside the firewall's rules inside a write — a security alert (an artifact's
// digest: model/alert.h) by the executor, an instance's release (services/instance_release.h):
// recorded once per key (active until an admin lifts it) and handed to the firewall's thread,
// which delivers it to the webhooks once the write has committed (where no firewall runs it is
// stored and listed, not delivered). Returns the new alert's id; none when the key was known.
Result<std::optional<std::string>> record_security_alert(ServiceContext& app, StoreTx& tx, const std::string& tenant_id,
                                                         const std::string& project_id, const Alert& a, TimeMs now);

// The stop of every tenant whose balance is exhausted (an active balance_exhausted alert), by
// tenant id, as the hold reason of its jobs (read by the scheduler service inside its
// transaction: it stops the tenant's running work and admits none of it).
Result<std::map<std::string, Message>> balance_stops(StoreTx& tx);

// Resolves an active stored alert inside a write (an instance release warning no longer true).
Status resolve_stored_alert(StoreTx& tx, const std::string& alert_id, TimeMs now);

// The hold reason of every project held by an active budget alert of the current month, or by an
// egress freeze not lifted yet, by project id (read by the scheduler service inside its
// transaction).
Result<std::map<std::string, Message>> budget_holds(StoreTx& tx);

// Projects under an egress freeze not lifted yet (their containers lose their network: the
// executors, services/executor.h), by id.
Result<std::set<std::string>> egress_frozen_projects(StoreTx& tx);

}  // namespace gpurent
