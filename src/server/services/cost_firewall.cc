#include "server/services/cost_firewall.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <set>

#include "billing/firewall.h"
#include "billing/webhook_format.h"
#include "core/ids.h"
#include "model/project.h"
#include "model/tenant.h"
#include "server/http/http_client.h"
#include "server/services/invoices.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

// Reads a stored alert through its codec (model/alert.h); one that no longer decodes is reported.
Result<StoredAlert> decode_alert(const Record& r) {
  return decode_record(r, decode_stored_alert, "the cost firewall cannot act on it");
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
  std::map<std::string, std::string> project_ids;      // name -> id
  std::map<std::string, BudgetAction> actions;         // name -> action
  std::map<Currency, FirewallPolicy> policies;         // by the budgets' currencies
};

TenantRules tenant_rules(const Record& t, const std::vector<Record>& projects) {
  TenantRules rules;
  auto tenant = decode_record(t, parse_tenant, "its cost firewall runs with default thresholds");
  auto body_currency = stored_tenant_currency(t.body);
  rules.currency = tenant ? tenant->currency : body_currency ? *body_currency : Currency::kUSD;
  if (tenant) rules.settings = tenant->cost_firewall;
  for (const Record& p : projects) {
    rules.project_ids[p.name] = p.id;
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

// Records an alert that fired: a new key becomes an active alert (returned, to deliver); a
// resolved budget alert that fires again (the budget was lowered) becomes active again.
Result<std::optional<Record>> record_alert(ServiceContext& app, const Record& t, const TenantRules& rules, const Alert& a,
                                           TimeMs now) {
  auto existing = app.store.list({"alerts", {{"tenant_id", t.id}, {"name", a.key}}, "", 1});
  if (!existing) return existing.error();
  if (!existing->items.empty()) {
    const Record& r = existing->items.front();
    if (r.state != "resolved") return std::optional<Record>();
    Status st = app.loop.run([&](StoreTx& tx) -> Status {
      auto cur_r = tx.get("alerts", r.id);
      if (!cur_r) return cur_r.error();
      auto cur = decode_alert(*cur_r);
      if (!cur) return cur.error();
      cur->state = AlertState::kActive;
      cur->alert.measured = a.measured;
      Record u = *cur_r;
      u.state = "active";
      u.body = to_json(*cur);
      u.updated_at = now;
      return tx.update(u);
    });
    if (!st) return st.error();
    return std::optional<Record>();
  }
  Record r;
  r.kind = "alerts";
  r.id = new_id("alr");
  r.name = a.key;
  r.tenant_id = t.id;
  r.project_id = rules.project_ids.count(a.project) ? rules.project_ids.at(a.project) : "";
  r.state = "active";
  r.created_at = r.updated_at = now;
  r.body = to_json(new_stored_alert(a, t.name, t.id, r.project_id, now));
  Status st = app.loop.run([&](StoreTx& tx) { return tx.insert(r); });
  if (!st) return st.error();
  spdlog::warn("{}", json({{"event", "cost_alert"}, {"key", a.key}, {"tenant", t.name}, {"message", render_en(a.message)}})
                         .dump(-1, ' ', false, json::error_handler_t::replace));
  return std::optional<Record>(std::move(r));
}

// Budget alerts of the tenant that no longer fire are resolved (other kinds are facts of a day).
// One that no longer decodes is reported and kept in `failed`; the others are still checked.
Status resolve_quiet_budget_alerts(ServiceContext& app, const Record& t, const std::set<std::string>& firing, TimeMs now,
                                   std::optional<Error>& failed) {
  auto active = list_all(app.store, "alerts", {{"tenant_id", t.id}, {"state", "active"}});
  if (!active) return active.error();
  for (const Record& r : *active) {
    auto stored = decode_alert(r);
    if (!stored) {
      if (!failed) failed = stored.error();
      continue;
    }
    if (stored->alert.kind != AlertKind::kBudgetBreach || firing.count(r.name)) continue;
    Status st = app.loop.run([&](StoreTx& tx) -> Status {
      auto cur_r = tx.get("alerts", r.id);
      if (!cur_r) return cur_r.error();
      auto cur = decode_alert(*cur_r);
      if (!cur) return cur.error();
      cur->state = AlertState::kResolved;
      cur->resolved_at = now;
      Record u = *cur_r;
      u.state = "resolved";
      u.body = to_json(*cur);
      u.updated_at = now;
      return tx.update(u);
    });
    if (!st) return st.error();
  }
  return ok_status();
}

// Gauges: active alerts per kind.
void update_alert_gauges(ServiceContext& app) {
  auto active = list_all(app.store, "alerts", {{"state", "active"}});
  if (!active) return;
  std::map<std::string, int> per_kind = {{"card_daily_cost", 0}, {"storage_io_share", 0}, {"egress_daily_cost", 0}, {"budget_breach", 0}};
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
  for (const Record& t : *tenants) {
    // Egress per UTC day: volume lines per day (an invoice sums a run's month in one line).
    auto inv = build_invoice(app_.store, app_.catalog, t.id, month, add_months(month, 1), now, true);
    if (!inv) {  // e.g. a stored contract that no longer decodes: this tenant's alerts and holds
      if (!failed) failed = inv.error();  // stay as they are; the other tenants are still checked
      continue;
    }
    auto projects = list_all(app_.store, "projects", {{"tenant_id", t.id}});
    if (!projects) return projects.error();
    const TenantRules rules = tenant_rules(t, *projects);
    auto inputs = firewall_inputs(*inv, rules, month, now);
    if (!inputs) return inputs.error();
    std::set<std::string> firing;
    for (auto& [c, in] : *inputs) {
      auto pol = rules.policies.count(c) ? rules.policies.at(c) : tenant_policy(rules.settings, rules.currency, c);
      auto alerts = evaluate_firewall(pol, in);
      if (!alerts) return alerts.error();
      for (Alert a : *alerts) {
        if (a.kind == AlertKind::kBudgetBreach && rules.actions.count(a.project) &&
            rules.actions.at(a.project) == BudgetAction::kAlert)
          a.hold_submissions = false;  // the project asked to be told, not stopped
        firing.insert(a.key);
        auto fresh_alert = record_alert(app_, t, rules, a, now);
        if (!fresh_alert) return fresh_alert.error();
        if (*fresh_alert) ++fresh, to_deliver.push_back(std::move(**fresh_alert));
      }
    }
    if (auto st = resolve_quiet_budget_alerts(app_, t, firing, now, failed); !st) return st.error();
  }
  for (const Record& r : to_deliver)
    if (auto s = deliver(r); !s) spdlog::error("{}", json({{"event", "webhook_delivery_failed"}, {"error", s.error().message}}).dump());
  update_alert_gauges(app_);
  if (failed) return *failed;  // after the others: one tenant's broken record holds up no one else
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
  if (deliveries.empty()) return ok_status();
  return app_.loop.run([&](StoreTx& tx) -> Status {
    auto cur_r = tx.get("alerts", alert_record.id);
    if (!cur_r) return cur_r.error();
    auto cur = decode_alert(*cur_r);
    if (!cur) return cur.error();
    cur->deliveries.insert(cur->deliveries.end(), deliveries.begin(), deliveries.end());
    Record u = *cur_r;
    u.body = to_json(*cur);
    return tx.update(u);
  });
}

void CostFirewall::start() {
  thread_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stopping_) {
      lock.unlock();
      auto r = run_once(app_.clock.now());
      if (!r && app_.loop.running())
        spdlog::error("{}", json({{"event", "cost_firewall_failed"}, {"error", r.error().message}}).dump());
      lock.lock();
      cv_.wait_for(lock, std::chrono::milliseconds(interval_ms_), [this] { return stopping_; });
    }
  });
}

void CostFirewall::stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
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
    }
    if (page->next_after.empty()) return out;
    q.after_id = page->next_after;
  }
}

}  // namespace gpurent
