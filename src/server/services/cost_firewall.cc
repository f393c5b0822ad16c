#include "server/services/cost_firewall.h"
#include "server/services/instance_idle.h"
#include "server/services/instance_release.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>

#include "billing/balance.h"
#include "billing/firewall.h"
#include "billing/webhook_format.h"
#include "core/ids.h"
#include "model/project.h"
#include "model/tenant.h"
#include "server/http/http_client.h"
#include "server/services/balances.h"
#include "server/services/invoices.h"
#include "server/services/issued_invoices.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

// Reads a stored alert through its codec (model/alert.h); one that no longer decodes is reported.
Result<StoredAlert> decode_alert(const Record& r) {
  return decode_record(r, decode_stored_alert, "the cost firewall cannot act on it");
}

// The firewalls running in this process, by their server's control loop, and the alerts that
// quota changes raised for them to deliver (ids, pushed inside the raising write: the firewall
// reads each back through the loop, so it sees the write's outcome). One mutex guards it all,
// and the firewalls' stopping_ flags.
struct Registry {
  std::mutex mu;
  std::condition_variable cv;
  std::set<const ControlLoop*> running;
  std::map<const ControlLoop*, std::vector<std::string>> raised;
};

Registry& registry() {
  static Registry r;
  return r;
}

// Hands an alert a quota change raised to the server's firewall; the empty id wakes it to refresh
// the gauges only (an alert resolved).
void hand_to_firewall(const ServiceContext& app, const std::string& alert_id) {
  Registry& reg = registry();
  {
    std::lock_guard<std::mutex> g(reg.mu);
    if (!reg.running.count(&app.loop)) return;
    reg.raised[&app.loop].push_back(alert_id);
  }
  reg.cv.notify_all();
}

}  // namespace

CostFirewall::CostFirewall(ServiceContext& app, int64_t interval_ms) : app_(app), interval_ms_(interval_ms) {}

CostFirewall::~CostFirewall() { stop(); }

namespace {

// A tenant's firewall rules: its currency and thresholds, and its projects' budgets and actions.
// A stored tenant that no longer decodes is reported; its currency still applies, with the
// default thresholds, so its month is still watched. A project that no longer decodes is
// reported and its budget not checked.
struct TenantRules {
  Currency currency = Currency::kUSD;
  CostFirewallSettings settings;
  BillingSettings billing;  // decoded: balances watched when enforced()
  bool decoded = false;     // the tenant decoded (a broken one's balance is not evaluated)
  std::map<std::string, std::string> project_ids;      // name -> id
  std::map<std::string, json> quotas;                  // id -> its stored quota as read
  std::map<std::string, BudgetAction> actions;         // name -> action
  std::map<Currency, FirewallPolicy> policies;         // by the budgets' currencies
};

TenantRules tenant_rules(const Record& t, const std::vector<Record>& projects) {
  TenantRules rules;
  auto tenant = decode_record(t, parse_tenant, "its cost firewall runs with default thresholds");
  auto body_currency = stored_tenant_currency(t.body);
  rules.currency = tenant ? tenant->currency : body_currency ? *body_currency : Currency::kUSD;
  if (tenant) rules.settings = tenant->cost_firewall, rules.billing = tenant->billing, rules.decoded = true;
  for (const Record& p : projects) {
    rules.project_ids[p.name] = p.id;
    rules.quotas[p.id] = p.body.is_object() ? p.body.value("quota", json()) : json();
    auto pj = decode_record(p, [&](const json& b) { return parse_project(b, rules.currency); }, "its budget is not checked");
    if (!pj) continue;
    rules.actions[p.name] = pj->quota.budget_action;
    if (pj->quota.monthly_budget) {
      const Currency bc = pj->quota.monthly_budget->currency();
      auto& pol = rules.policies.try_emplace(bc, tenant_policy(rules.settings, rules.currency, bc)).first->second;
      pol.monthly_budgets[p.name] = *pj->quota.monthly_budget;
    }
  }
  return rules;
}

// The firewall's input per currency from the tenant's month-to-date invoice (volume lines per
// day), with each card's cost per day; budgets of a currency nobody billed in yet still breach at
// zero.
Result<std::map<Currency, FirewallInput>> firewall_inputs(const Invoice& inv, const TenantRules& rules, TimeMs month,
                                                           TimeMs now) {
  std::map<Currency, FirewallInput> inputs;
  for (const auto& s : inv.sections) {
    FirewallInput& in = inputs[s.rated.currency];
    in.currency = s.rated.currency;
    in.month = month;
    in.day = day_start(now);
    in.lines.insert(in.lines.end(), s.rated.lines.begin(), s.rated.lines.end());
    std::vector<ChargeLine> usage;  // GPU time of runs (commitment lines name no card)
    for (const auto& l : s.rated.lines)
      if (l.kind == LineKind::kUsage && l.unit == "GPU-second") usage.push_back(l);
    auto cards = card_day_costs(usage, s.input.allocations);
    if (!cards) return cards.error();
    in.cards.insert(in.cards.end(), cards->begin(), cards->end());
  }
  for (const auto& [c, pol] : rules.policies)
    if (!inputs.count(c)) inputs[c] = FirewallInput{c, month, day_start(now), {}, {}};
  return inputs;
}

// Whether the project's stored quota is still the one the pass read (a project gone since, and
// not read either, counts as unchanged): a pass leaves the budget alert of a project whose quota
// changed after it read it to that change's own check (recheck_budget) and to the next pass.
Result<bool> quota_unchanged(StoreTx& tx, const TenantRules& rules, const std::string& project_id) {
  if (project_id.empty()) return true;
  auto read = rules.quotas.find(project_id);
  auto cur = tx.get("projects", project_id);
  if (!cur && cur.error().code != Code::kNotFound) return cur.error();
  if (!cur) return read == rules.quotas.end();
  if (read == rules.quotas.end()) return false;
  return (cur->body.is_object() ? cur->body.value("quota", json()) : json()) == read->second;
}

// Whether record_alert would change nothing for an alert already stored as `r`: a lifted one, or
// an active one holding as the alert asks (read outside the loop, so a pass skips the common case
// without a write; record_alert decides again inside it).
bool unchanged_alert(const Record& r, const Alert& a) {
  if (r.state == "lifted") return true;
  if (r.state != "active") return false;
  auto cur = decode_record(r, decode_stored_alert, "the cost firewall cannot act on it");
  return !cur || cur->alert.hold_submissions == a.hold_submissions;
}

// Records an alert that fired, inside a write: a new key becomes an active alert (returned, to
// deliver); a resolved budget alert that fires again (the budget was lowered) becomes active
// again; an active one takes the hold the alert now asks for (the project's budget_action
// changed). A lifted alert stays lifted.
Result<std::optional<Record>> record_alert(StoreTx& tx, const Record& t, const std::string& project_id, const Alert& a,
                                           TimeMs now) {
  auto existing = tx.list({"alerts", {{"tenant_id", t.id}, {"name", a.key}}, "", 1});
  if (!existing) return existing.error();
  if (!existing->items.empty()) {
    const Record& r = existing->items.front();
    if (r.state == "lifted") return std::optional<Record>();
    auto cur = decode_alert(r);
    if (!cur) return cur.error();
    const bool reactivate = r.state == "resolved";
    if (!reactivate && cur->alert.hold_submissions == a.hold_submissions) return std::optional<Record>();
    cur->state = AlertState::kActive;
    if (reactivate) cur->alert.measured = a.measured;
    cur->alert.hold_submissions = a.hold_submissions;
    Record u = r;
    u.state = "active";
    u.body = to_json(*cur);
    u.updated_at = now;
    if (auto st = tx.update(u); !st) return st.error();
    return std::optional<Record>();
  }
  Record r;
  r.kind = "alerts";
  r.id = new_id("alr");
  r.name = a.key;
  r.tenant_id = t.id;
  r.project_id = project_id;
  r.state = "active";
  r.created_at = r.updated_at = now;
  StoredAlert fresh = new_stored_alert(a, t.name, t.id, r.project_id, now);
  fresh.delivery_pending = true;  // until deliver() has tried its webhooks
  r.body = to_json(fresh);
  if (auto st = tx.insert(r); !st) return st.error();
  spdlog::warn("{}", json({{"event", "cost_alert"}, {"key", a.key}, {"tenant", t.name}, {"message", render_en(a.message)}})
                         .dump(-1, ' ', false, json::error_handler_t::replace));
  return std::optional<Record>(std::move(r));
}

// Resolves a stored budget alert inside a write (still active).
Status resolve_alert(StoreTx& tx, const std::string& alert_id, TimeMs now) {
  auto cur_r = tx.get("alerts", alert_id);
  if (!cur_r) return cur_r.error();
  if (cur_r->state != "active") return ok_status();
  auto cur = decode_alert(*cur_r);
  if (!cur) return cur.error();
  cur->state = AlertState::kResolved;
  cur->resolved_at = now;
  Record u = *cur_r;
  u.state = "resolved";
  u.body = to_json(*cur);
  u.updated_at = now;
  return tx.update(u);
}

// Budget and balance alerts of the tenant that no longer fire are resolved (other kinds are facts
// of a day), but not the budget alerts of a project whose quota changed since the pass read it
// (quota_unchanged). Resolving a balance_exhausted alert lifts its stop.
// One that no longer decodes is reported and kept in `failed`; the others are still checked.
Status resolve_quiet_budget_alerts(ServiceContext& app, const Record& t, const TenantRules& rules,
                                   const std::set<std::string>& firing, TimeMs now, std::optional<Error>& failed) {
  auto active = list_all(app.store, "alerts", {{"tenant_id", t.id}, {"state", "active"}});
  if (!active) return active.error();
  for (const Record& r : *active) {
    auto stored = decode_alert(r);
    if (!stored) {
      if (!failed) failed = stored.error();
      continue;
    }
    const AlertKind k = stored->alert.kind;
    const bool balance = k == AlertKind::kBalanceLow || k == AlertKind::kBalanceExhausted;
    if ((k != AlertKind::kBudgetBreach && !balance) || firing.count(r.name)) continue;
    if (balance) {
      if (auto st = app.loop.run([&](StoreTx& tx) { return resolve_alert(tx, r.id, now); }); !st) return st.error();
      continue;
    }
    Status st = app.loop.run([&](StoreTx& tx) -> Status {
      auto same = quota_unchanged(tx, rules, r.project_id);
      if (!same) return same.error();
      if (!*same) return ok_status();
      return resolve_alert(tx, r.id, now);
    });
    if (!st) return st.error();
  }
  return ok_status();
}

// Gauges: active alerts per kind.
void update_alert_gauges(ServiceContext& app) {
  auto active = list_all(app.store, "alerts", {{"state", "active"}});
  if (!active) return;
  std::map<std::string, int> per_kind;
  for (const auto& e : kAlertKindNames) per_kind[e.name] = 0;
  for (const Record& r : *active)
    if (auto stored = decode_alert(r)) per_kind[enum_name(kAlertKindNames, stored->alert.kind)]++;
  for (const auto& [k, n] : per_kind) app.metrics.set_alerts_active(k, n);
}

}  // namespace

Result<int> CostFirewall::run_once(TimeMs now) {
  const TimeMs month = month_start(now);
  auto tenants = list_all(app_.store, "tenants", {});
  if (!tenants) return tenants.error();
  int fresh = 0;
  std::vector<Record> to_deliver;
  std::optional<Error> failed;  // the first tenant whose month could not be rated
  const bool prev_month_too = prev_month_done_ != month;
  for (const Record& t : *tenants) {
    std::set<std::string> firing;
    // Records each alert not recorded as it is (a new key, or one that changed).
    auto record_all = [&](const std::vector<Alert>& alerts, const TenantRules& rules) -> Status {
      for (Alert a : alerts) {
        if (a.kind == AlertKind::kBudgetBreach && rules.actions.count(a.project) &&
            rules.actions.at(a.project) == BudgetAction::kAlert)
          a.hold_submissions = false;  // the project asked to be told, not stopped
        firing.insert(a.key);
        auto stored = app_.store.list({"alerts", {{"tenant_id", t.id}, {"name", a.key}}, "", 1});
        if (!stored) return stored.error();
        if (!stored->items.empty() && unchanged_alert(stored->items.front(), a)) continue;
        const std::string project_id = rules.project_ids.count(a.project) ? rules.project_ids.at(a.project) : "";
        std::optional<Record> fresh_alert;
        Status st = app_.loop.run([&](StoreTx& tx) -> Status {
          if (a.kind == AlertKind::kBudgetBreach) {
            auto same = quota_unchanged(tx, rules, project_id);
            if (!same) return same.error();
            if (!*same) return ok_status();
          }
          auto rec = record_alert(tx, t, project_id, a, now);
          if (!rec) return rec.error();
          fresh_alert = std::move(*rec);
          return ok_status();
        });
        if (!st) return st.error();
        if (fresh_alert) ++fresh, to_deliver.push_back(std::move(*fresh_alert));
      }
      return ok_status();
    };
    // Lines per UTC day (an invoice sums a run's month in one line): each day's egress and GPU time.
    // The month is read once for this invoice and the balance's draft and burn (to an hour ahead);
    // the previous month, while it is rated, once more.
    MonthInvoiceSource invoices(app_.store, app_.catalog, t.id, now + kMsPerHour);
    auto inv = invoices.invoice(month, add_months(month, 1), now, true);
    if (!inv) {  // e.g. a stored contract that no longer decodes: this tenant's alerts and holds
      if (!failed) failed = inv.error();  // stay as they are; the other tenants are still checked
      continue;
    }
    auto projects = list_all(app_.store, "projects", {{"tenant_id", t.id}});
    if (!projects) return projects.error();
    const TenantRules rules = tenant_rules(t, *projects);
    // The rules over month `m` up to `day` (daily_only: the card and egress rules alone), recorded.
    auto evaluate = [&](const Invoice& i, TimeMs m, TimeMs day, bool daily_only) -> Status {
      auto inputs = firewall_inputs(i, rules, m, day);
      if (!inputs) return inputs.error();
      for (auto& [c, in] : *inputs) {
        auto pol = rules.policies.count(c) ? rules.policies.at(c) : tenant_policy(rules.settings, rules.currency, c);
        auto alerts = evaluate_firewall(pol, in);
        if (!alerts) return alerts.error();
        std::erase_if(*alerts, [&](const Alert& a) {
          return daily_only && a.kind != AlertKind::kCardDailyCost && a.kind != AlertKind::kEgressDailyCost;
        });
        if (auto st = record_all(*alerts, rules); !st) return st;
      }
      return ok_status();
    };
    if (auto st = evaluate(*inv, month, now, false); !st) return st.error();
    // The previous month to its end, once: its daily rules only (its budget is over, a hold for it moot).
    if (prev_month_too) {
      const TimeMs prev = add_months(month, -1);
      auto last = invoices.invoice(prev, month, month, true);
      if (!last) {
        if (!failed) failed = last.error();
      } else if (auto st = evaluate(*last, prev, month - 1, true); !st) {
        return st.error();
      }
    }
    // Balances: the money left against the burn (prepaid, or postpaid with a credit limit).
    if (rules.decoded && rules.billing.enforced()) {
      auto bal = tenant_balances(app_.store, app_.catalog, t, now, &invoices);
      if (!bal) {
        if (!failed) failed = bal.error();
      } else {
        for (const Balance& b : bal->balances)
          for (const Alert& a : evaluate_balance(rules.billing, b, t.name, now)) {
            firing.insert(a.key);
            auto stored = app_.store.list({"alerts", {{"tenant_id", t.id}, {"name", a.key}}, "", 1});
            if (!stored) return stored.error();
            if (!stored->items.empty() && unchanged_alert(stored->items.front(), a)) continue;
            std::optional<Record> fresh_alert;
            Status st = app_.loop.run([&](StoreTx& tx) -> Status {
              auto rec = record_alert(tx, t, "", a, now);
              if (!rec) return rec.error();
              fresh_alert = std::move(*rec);
              return ok_status();
            });
            if (!st) return st.error();
            if (fresh_alert) ++fresh, to_deliver.push_back(std::move(*fresh_alert));
          }
      }
    }
    if (auto st = resolve_quiet_budget_alerts(app_, t, rules, firing, now, failed); !st) return st.error();
  }
  for (const Record& r : to_deliver)
    if (auto s = deliver(r); !s)
      spdlog::error("{}", json({{"event", "webhook_delivery_failed"}, {"error", s.error().message}}).dump());
  update_alert_gauges(app_);
  if (failed) return *failed;  // after the others: one tenant's broken record holds up no one else
  prev_month_done_ = month;
  return fresh;
}

Status CostFirewall::deliver(const Record& alert_record) {
  auto hooks = list_all(app_.store, "webhooks", {});
  if (!hooks) return hooks.error();
  auto stored = decode_alert(alert_record);
  if (!stored) return stored.error();
  const Alert& a = stored->alert;
  std::vector<AlertDelivery> deliveries;
  for (const Record& h : *hooks) {
    auto hook = decode_record(h, decode_webhook, "alerts are not delivered to it");
    if (!hook) {
      deliveries.push_back({h.name, app_.clock.now(), std::nullopt, hook.error().message});
      continue;
    }
    if (!hook->tenant_id.empty() && hook->tenant_id != alert_record.tenant_id) continue;
    if (!hook->wants(a.kind)) continue;
    const TimeMs now = app_.clock.now();
    AlertDelivery d{h.name, now, std::nullopt, std::nullopt};
    auto req = webhook_request(hook->type, hook->url, hook->secret.value_or(""), a, now);
    if (!req) {
      d.error = req.error().message;
    } else {
      OutboundRequest out;
      out.method = "POST";
      out.url = req->url;
      out.body = req->body;
      for (const auto& [k, v] : req->headers) {
        if (k == "Content-Type")
          out.content_type = v;
        else
          out.headers.emplace_back(k, v);
      }
      auto res = send_request(out);
      if (!res)
        d.error = res.error().message;
      else
        d.status = res->status;
    }
    deliveries.push_back(std::move(d));
  }
  if (deliveries.empty() && !stored->delivery_pending) return ok_status();
  return app_.loop.run([&](StoreTx& tx) -> Status {
    auto cur_r = tx.get("alerts", alert_record.id);
    if (!cur_r) return cur_r.error();
    auto cur = decode_alert(*cur_r);
    if (!cur) return cur.error();
    cur->deliveries.insert(cur->deliveries.end(), deliveries.begin(), deliveries.end());
    cur->delivery_pending = false;
    Record u = *cur_r;
    u.body = to_json(*cur);
    return tx.update(u);
  });
}

void CostFirewall::start(bool passes) {
  {
    Registry& reg = registry();
    std::lock_guard<std::mutex> g(reg.mu);
    if (thread_.joinable()) {  // running already: passes from now on (a follower took the lead), never fewer
      passes_ = passes_ || passes;
      reg.cv.notify_all();
      return;
    }
    passes_ = passes;
    stopping_ = false;
    reg.running.insert(&app_.loop);
  }
  thread_ = std::thread([this] {
    Registry& reg = registry();
    std::unique_lock<std::mutex> lock(reg.mu);
    while (!stopping_) {
      const bool passing = passes_;
      lock.unlock();
      if (passing) {
        // Nothing a pass meets may end the process: an exception is logged and the next pass
        // tries again (the HTTP routes answer the same failure with a 500).
        try {
          pass();
        } catch (const std::exception& e) {
          spdlog::error("{}", json({{"event", "cost_firewall_failed"}, {"error", e.what()}}).dump());
        }
      }
      lock.lock();
      // Until the next pass: deliver what quota changes raise, as they raise it.
      const auto next = std::chrono::steady_clock::now() + std::chrono::milliseconds(interval_ms_);
      auto pending = [&] { return !stopping_ && reg.raised.count(&app_.loop) && !reg.raised[&app_.loop].empty(); };
      auto promoted = [&] { return passes_ && !passing; };
      while (reg.cv.wait_until(lock, next, [&] { return stopping_ || pending() || promoted(); }) && !stopping_ && !promoted()) {
        std::vector<std::string> ids;
        ids.swap(reg.raised[&app_.loop]);
        lock.unlock();
        deliver_raised(ids);
        lock.lock();
      }
    }
  });
}

// Active alerts recorded and never delivered: the server stopped between the two (or a follower
// that raised one did). Delivered once older than kUndeliveredGraceMs (a delivery of another
// thread or server may be on its way): at least once, never lost while the alert is active.
Status CostFirewall::deliver_pending(TimeMs now) {
  auto active = list_all(app_.store, "alerts", {{"state", "active"}});
  if (!active) return active.error();
  for (const Record& r : *active) {
    if (r.created_at + kUndeliveredGraceMs > now) continue;
    auto stored = decode_alert(r);
    if (!stored || !stored->delivery_pending) continue;
    if (auto s = deliver(r); !s)
      spdlog::error("{}", json({{"event", "webhook_delivery_failed"}, {"error", s.error().message}}).dump());
  }
  return ok_status();
}

// One pass: the evaluation, and the work that rides on it.
void CostFirewall::pass() {
  if (auto pending = deliver_pending(app_.clock.now()); !pending && app_.loop.running())
    spdlog::error("{}", json({{"event", "cost_firewall_failed"}, {"error", pending.error().message}}).dump());
  auto r = run_once(app_.clock.now());
  if (!r && app_.loop.running())
    spdlog::error("{}", json({{"event", "cost_firewall_failed"}, {"error", r.error().message}}).dump());
  // Idle instances ride on the same pass (services/instance_idle.h): a GPU nobody uses is
  // the cost a firewall is for.
  if (auto idle = stop_idle_instances(app_, app_.clock.now()); !idle && app_.loop.running())
    spdlog::error("{}", json({{"event", "instance_idle_stop_failed"}, {"error", idle.error().message}}).dump());
  // And instances past their stop_at (a start that waited for room would run past it).
  if (auto timed = stop_timed_out_instances(app_, app_.clock.now()); !timed && app_.loop.running())
    spdlog::error("{}", json({{"event", "instance_stop_at_failed"}, {"error", timed.error().message}}).dump());
  // And instances of tenants whose money ran out: stopped, not left to restart on a top-up.
  if (auto broke = stop_unfunded_instances(app_, app_.clock.now()); !broke && app_.loop.running())
    spdlog::error("{}", json({{"event", "instance_balance_stop_failed"}, {"error", broke.error().message}}).dump());
  // So do stopped instances' releases (services/instance_release.h): storage kept for an
  // instance nobody starts is a cost too.
  if (auto rel = release_stopped_instances(app_, app_.clock.now()); !rel && app_.loop.running())
    spdlog::error("{}", json({{"event", "instance_release_failed"}, {"error", rel.error().message}}).dump());
  for (const auto& [failed_event, work] : riders_)
    if (auto s = work(app_.clock.now()); !s && app_.loop.running())
      spdlog::error("{}", json({{"event", failed_event}, {"error", s.error().message}}).dump());
  // Month close rides on the same pass: last month's invoices, once the delay has passed. A
  // close that could not rate every tenant (a record that does not decode) is retried hourly,
  // not on every pass: each try rates every tenant's whole month.
  const TimeMs now = app_.clock.now();
  if (now >= next_close_try_) {
    auto closed = close_due_month(app_, now, app_.opts.month_close_delay_h * kMsPerHour);
    if (!closed && app_.loop.running())
      spdlog::error("{}", json({{"event", "month_close_failed"}, {"error", closed.error().message}}).dump());
    if (!closed || (*closed && !(*closed)->failed.empty())) next_close_try_ = now + kMsPerHour;
  }
}

void CostFirewall::ride(std::string failed_event, std::function<Status(TimeMs)> work) {
  riders_.emplace_back(std::move(failed_event), std::move(work));
}

void CostFirewall::stop() {
  Registry& reg = registry();
  {
    std::lock_guard<std::mutex> g(reg.mu);
    stopping_ = true;
    if (thread_.joinable()) {  // a firewall never started leaves the running one's entry alone
      reg.running.erase(&app_.loop);
      reg.raised.erase(&app_.loop);
    }
  }
  reg.cv.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CostFirewall::deliver_raised(const std::vector<std::string>& alert_ids) {
  for (const std::string& id : alert_ids) {
    if (id.empty()) continue;  // an alert resolved: only the gauges change
    // Read through the loop: it runs after the write that raised the alert, so this sees its
    // outcome (a write that rolled back leaves nothing to deliver).
    std::optional<Record> alert;
    Status st = app_.loop.run([&](StoreTx& tx) -> Status {
      auto r = tx.get("alerts", id);
      if (!r && r.error().code != Code::kNotFound) return r.error();
      if (r && r->state == "active") alert = std::move(*r);
      return ok_status();
    });
    if (!st && app_.loop.running())
      spdlog::error("{}", json({{"event", "cost_firewall_failed"}, {"error", st.error().message}}).dump());
    if (!alert) continue;
    if (auto s = deliver(*alert); !s)
      spdlog::error("{}", json({{"event", "webhook_delivery_failed"}, {"error", s.error().message}}).dump());
  }
  update_alert_gauges(app_);
}

bool cost_firewall_running(const ServiceContext& app) {
  // Several servers on one PostgreSQL database: the leader runs the passes, and every server
  // configured with a firewall re-checks a quota written through it (a follower too).
  if (app.opts.firewall_interval_s > 0 && is_postgres_url(app.opts.db_path)) return true;
  Registry& reg = registry();
  std::lock_guard<std::mutex> g(reg.mu);
  return reg.running.count(&app.loop) > 0;
}

Result<MonthToDate> rate_month_to_date(ServiceContext& app, const std::string& tenant_id, TimeMs now) {
  const TimeMs month = month_start(now);
  auto inv = build_invoice(app.store, app.catalog, tenant_id, month, add_months(month, 1), now, true);
  if (!inv) return inv.error();
  MonthToDate m;
  m.now = now;
  for (const auto& s : inv->sections) m.lines.insert(m.lines.end(), s.rated.lines.begin(), s.rated.lines.end());
  return m;
}

Result<std::optional<Alert>> recheck_budget(ServiceContext& app, StoreTx& tx, const MonthToDate& mtd,
                                            const std::string& tenant_id, const std::string& project_id,
                                            const std::string& project, const Quota& quota) {
  if (!cost_firewall_running(app)) return std::optional<Alert>();
  auto t = tx.get("tenants", tenant_id);
  if (!t) return t.error();
  const TenantRules rules = tenant_rules(*t, {});  // the tenant's currency and thresholds
  std::optional<Alert> firing;
  if (quota.monthly_budget) {
    // The pass's evaluation, narrowed to this project's budget and lines.
    const Currency c = quota.monthly_budget->currency();
    FirewallPolicy pol = tenant_policy(rules.settings, rules.currency, c);
    pol.monthly_budgets[project] = *quota.monthly_budget;
    FirewallInput in{c, month_start(mtd.now), day_start(mtd.now), {}, {}};
    for (const ChargeLine& l : mtd.lines)
      if (l.project == project && l.amount_exact.currency() == c) in.lines.push_back(l);
    auto alerts = evaluate_firewall(pol, in);
    if (!alerts) return alerts.error();
    for (Alert& a : *alerts)
      if (a.kind == AlertKind::kBudgetBreach && a.project == project) {
        a.hold_submissions = quota.budget_action == BudgetAction::kHold;
        firing = std::move(a);
      }
  }
  bool changed = false;
  if (firing) {
    auto rec = record_alert(tx, *t, project_id, *firing, mtd.now);
    if (!rec) return rec.error();
    if (*rec) hand_to_firewall(app, (*rec)->id);
  }
  auto active = list_all(tx, "alerts", {{"tenant_id", tenant_id}, {"project_id", project_id}, {"state", "active"}});
  if (!active) return active.error();
  for (const Record& r : *active) {
    if (firing && r.name == firing->key) continue;
    auto stored = decode_record(r, decode_stored_alert, "its budget hold, if any, is not re-checked");
    if (!stored || stored->alert.kind != AlertKind::kBudgetBreach) continue;
    if (auto st = resolve_alert(tx, r.id, mtd.now); !st) return st.error();
    changed = true;
  }
  if (changed) hand_to_firewall(app, "");
  return firing;
}

Status resolve_stored_alert(StoreTx& tx, const std::string& alert_id, TimeMs now) {
  return resolve_alert(tx, alert_id, now);
}

Result<std::optional<std::string>> record_security_alert(ServiceContext& app, StoreTx& tx, const std::string& tenant_id,
                                                         const std::string& project_id, const Alert& a, TimeMs now) {
  auto t = tx.get("tenants", tenant_id);
  if (!t) return t.error();
  auto rec = record_alert(tx, *t, project_id, a, now);
  if (!rec) return rec.error();
  if (!*rec) return std::optional<std::string>();
  hand_to_firewall(app, (*rec)->id);
  return std::optional<std::string>((*rec)->id);
}

Result<std::map<std::string, Message>> balance_stops(StoreTx& tx) {
  std::map<std::string, Message> out;
  auto active = list_all(tx, "alerts", {{"state", "active"}});
  if (!active) return active.error();
  for (const Record& r : *active) {
    if (r.name.rfind("balance_exhausted:", 0) != 0) continue;
    auto stored = decode_record(r, decode_stored_alert, "its stop, if any, is not applied");
    if (!stored || !stored->alert.stop_work) continue;
    out.emplace(r.tenant_id, Message("sched.hold.balance").arg("alert", stored->alert.message));
  }
  return out;
}

Result<std::set<std::string>> egress_frozen_projects(StoreTx& tx) {
  std::set<std::string> out;
  ListQuery q{"alerts", {{"state", "active"}}, "", 1000};
  for (;;) {
    auto page = tx.list(q);
    if (!page) return page.error();
    for (const Record& r : page->items) {
      if (r.project_id.empty() || out.count(r.project_id)) continue;
      auto stored = decode_record(r, decode_stored_alert, "its egress freeze, if any, is not applied");
      if (stored && stored->alert.freeze_egress) out.insert(r.project_id);
    }
    if (page->next_after.empty()) return out;
    q.after_id = page->next_after;
  }
}

Result<std::map<std::string, Message>> budget_holds(StoreTx& tx) {
  std::map<std::string, Message> out;
  ListQuery q{"alerts", {{"state", "active"}}, "", 1000};
  for (;;) {
    auto page = tx.list(q);
    if (!page) return page.error();
    for (const Record& r : page->items) {
      if (r.project_id.empty()) continue;
      // An alert that no longer decodes is reported (log, /readyz, metric) and holds nothing: one
      // broken record must not stop the scheduler for everyone.
      auto stored = decode_record(r, decode_stored_alert, "its budget hold, if any, is not applied");
      if (!stored) continue;
      if (stored->alert.hold_submissions) out[r.project_id] = Message("sched.hold.budget").arg("alert", stored->alert.message);
      // An egress freeze holds the project's new starts until an admin lifts it.
      else if (stored->alert.freeze_egress && !out.count(r.project_id))
        out[r.project_id] = Message("sched.hold.egress").arg("alert", stored->alert.message);
    }
    if (page->next_after.empty()) return out;
    q.after_id = page->next_after;
  }
}

}  // namespace gpurent
