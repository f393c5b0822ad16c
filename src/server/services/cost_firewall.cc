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
    // A stored tenant that no longer decodes is reported (server/record_faults.h); its currency
    // still applies, with the default thresholds, so its month is still watched.
    auto tenant = parse_tenant(t.body);
    if (!tenant)
      (void)undecodable_record("tenants", t.id, t.name, tenant.error(), "its cost firewall runs with default thresholds");
    auto body_currency = stored_tenant_currency(t.body);
    const Currency cur = tenant ? tenant->currency : body_currency ? *body_currency : Currency::kUSD;
    const CostFirewallSettings settings = tenant ? tenant->cost_firewall : CostFirewallSettings{};
    std::map<std::string, std::string> project_ids;          // name -> id
    std::map<std::string, BudgetAction> actions;              // name -> action
    std::map<Currency, FirewallInput> inputs;
    std::map<Currency, FirewallPolicy> policies;
    for (const Record& p : *projects) {
      project_ids[p.name] = p.id;
      auto pj = parse_project(p.body, cur);
      if (!pj) {
        (void)undecodable_record("projects", p.id, p.name, pj.error(), "its budget is not checked");
        continue;
      }
      actions[p.name] = pj->quota.budget_action;
      if (pj->quota.monthly_budget) {
        const Currency bc = pj->quota.monthly_budget->currency();
        auto& pol = policies.try_emplace(bc, tenant_policy(settings, cur, bc)).first->second;
        pol.monthly_budgets[p.name] = *pj->quota.monthly_budget;
      }
    }
    for (const auto& s : inv->sections) {
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
    // Budgets of a currency nobody billed in yet still breach at zero (a zero budget).
    for (const auto& [c, pol] : policies)
      if (!inputs.count(c)) inputs[c] = FirewallInput{c, month, day_start(now), {}, {}};
    std::set<std::string> firing;
    for (auto& [c, in] : inputs) {
      auto pol = policies.count(c) ? policies.at(c) : tenant_policy(settings, cur, c);
      auto alerts = evaluate_firewall(pol, in);
      if (!alerts) return alerts.error();
      for (Alert a : *alerts) {
        if (a.kind == AlertKind::kBudgetBreach && actions.count(a.project) && actions[a.project] == BudgetAction::kAlert)
          a.hold_submissions = false;  // the project asked to be told, not stopped
        firing.insert(a.key);
        auto existing = app_.store.list({"alerts", {{"tenant_id", t.id}, {"name", a.key}}, "", 1});
        if (!existing) return existing.error();
        if (!existing->items.empty()) {
          // A resolved budget alert that fires again (the budget was lowered) becomes active again.
          Record r = existing->items.front();
          if (r.state != "resolved") continue;
          Status st = app_.loop.run([&](StoreTx& tx) -> Status {
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
          continue;
        }
        Record r;
        r.kind = "alerts";
        r.id = new_id("alr");
        r.name = a.key;
        r.tenant_id = t.id;
        r.project_id = project_ids.count(a.project) ? project_ids[a.project] : "";
        r.state = "active";
        r.created_at = r.updated_at = now;
        r.body = to_json(new_stored_alert(a, t.name, t.id, r.project_id, now));
        Status st = app_.loop.run([&](StoreTx& tx) { return tx.insert(r); });
        if (!st) return st.error();
        ++fresh;
        to_deliver.push_back(r);
        spdlog::warn("{}", json({{"event", "cost_alert"}, {"key", a.key}, {"tenant", t.name}, {"message", render_en(a.message)}})
                               .dump(-1, ' ', false, json::error_handler_t::replace));
      }
    }
    // Budget alerts of this tenant that no longer fire are resolved (other kinds are facts of a day).
    auto active = list_all(app_.store, "alerts", {{"tenant_id", t.id}, {"state", "active"}});
    if (!active) return active.error();
    for (const Record& r : *active) {
      auto stored = decode_alert(r);
      if (!stored) {  // reported; the other alerts and tenants are still checked
        if (!failed) failed = stored.error();
        continue;
      }
      if (stored->alert.kind != AlertKind::kBudgetBreach || firing.count(r.name)) continue;
      Status st = app_.loop.run([&](StoreTx& tx) -> Status {
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
  }
  for (const Record& r : to_deliver)
    if (auto s = deliver(r); !s) spdlog::error("{}", json({{"event", "webhook_delivery_failed"}, {"error", s.error().message}}).dump());
  // Gauges: active alerts per kind.
  auto active = list_all(app_.store, "alerts", {{"state", "active"}});
  if (active) {
    std::map<std::string, int> per_kind = {{"card_daily_cost", 0}, {"storage_io_share", 0}, {"egress_daily_cost", 0}, {"budget_breach", 0}};
    for (const Record& r : *active)
      if (auto stored = decode_alert(r)) per_kind[enum_name(kAlertKindNames, stored->alert.kind)]++;
    for (const auto& [k, n] : per_kind) app_.metrics.set_alerts_active(k, n);
  }
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
