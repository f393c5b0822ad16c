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

json alert_body(const Alert& a, const std::string& tenant_name, TimeMs now) {
  json j = to_json(a);  // the generic webhook document (billing/webhook_format.h)
  j.erase("event");
  j["tenant"] = tenant_name;
  j["state"] = "active";
  j["first_seen"] = format_rfc3339(now);
  j["deliveries"] = json::array();
  // The message as its code (the API renders "text" in the reader's language from it); the
  // generic document above already carries it in English and 简体中文.
  j["text"] = render_en(a.message);
  j["text_message"] = message_to_json(a.message);
  return j;
}

// A stored alert's message: its code, or for an alert stored before codes its English text.
Message stored_alert_message(const json& b) {
  if (auto m = b.find("text_message"); m != b.end())
    if (auto msg = message_from_json(*m)) return std::move(msg.value());
  return verbatim(b.value("message_en", ""));
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
    auto body_currency = parse_currency(t.body.value("currency", "USD"));
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
            Record u = *cur_r;
            u.state = "active";
            u.body["state"] = "active";
            u.body["measured"] = a.measured;
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
        r.body = alert_body(a, t.name, now);
        r.body["tenant_id"] = t.id;
        r.body["project_id"] = r.project_id;
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
      if (r.body.value("kind", "") != "budget_breach" || firing.count(r.name)) continue;
      Status st = app_.loop.run([&](StoreTx& tx) -> Status {
        auto cur_r = tx.get("alerts", r.id);
        if (!cur_r) return cur_r.error();
        Record u = *cur_r;
        u.state = "resolved";
        u.body["state"] = "resolved";
        u.body["resolved_at"] = format_rfc3339(now);
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
    for (const Record& r : *active) per_kind[r.body.value("kind", "")]++;
    for (const auto& [k, n] : per_kind) app_.metrics.set_alerts_active(k, n);
  }
  if (failed) return *failed;  // after the others: one tenant's broken record holds up no one else
  return fresh;
}

Status CostFirewall::deliver(const Record& alert_record) {
  auto hooks = list_all(app_.store, "webhooks", {});
  if (!hooks) return hooks.error();
  const json& b = alert_record.body;
  Alert a;
  a.key = b.value("key", "");
  a.kind = enum_parse(kAlertKindNames, b.value("kind", "")).value_or(AlertKind::kCardDailyCost);
  a.severity = enum_parse(kAlertSeverityNames, b.value("severity", "")).value_or(AlertSeverity::kWarning);
  a.project = b.value("project", "");
  a.subject = b.value("subject", "");
  a.measured = b.value("measured", "");
  a.threshold = b.value("threshold", "");
  a.unit = b.value("unit", "");
  a.message = stored_alert_message(b);
  a.freeze_egress = b.value("freeze_egress", false);
  a.upload_limit_bytes = b.value("upload_limit_bytes", int64_t{0});
  a.hold_submissions = b.value("hold_submissions", false);
  json deliveries = json::array();
  for (const Record& h : *hooks) {
    const std::string tenant = h.body.value("tenant_id", "");
    if (!tenant.empty() && tenant != alert_record.tenant_id) continue;
    const auto kinds = h.body.value("kinds", std::vector<std::string>{});
    if (!kinds.empty() && std::find(kinds.begin(), kinds.end(), b.value("kind", "")) == kinds.end()) continue;
    const auto type = enum_parse(kWebhookTypeNames, h.body.value("type", "generic")).value_or(WebhookType::kGeneric);
    const TimeMs now = app_.clock.now();
    auto req = webhook_request(type, h.body.value("url", ""), h.body.value("secret", ""), a, now);
    json d = {{"webhook", h.name}, {"at", format_rfc3339(now)}};
    if (!req) {
      d["error"] = req.error().message;
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
        d["error"] = res.error().message;
      else
        d["status"] = res->status;
    }
    deliveries.push_back(std::move(d));
  }
  if (deliveries.empty()) return ok_status();
  return app_.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get("alerts", alert_record.id);
    if (!cur) return cur.error();
    Record u = *cur;
    for (auto& d : deliveries) u.body["deliveries"].push_back(d);
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
    for (const Record& r : page->items)
      if (r.body.value("hold_submissions", false) && !r.project_id.empty())
        out[r.project_id] = Message("sched.hold.budget").arg("alert", stored_alert_message(r.body));
    if (page->next_after.empty()) return out;
    q.after_id = page->next_after;
  }
}

}  // namespace gpurent
