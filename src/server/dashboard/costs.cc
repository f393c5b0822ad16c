#include "server/dashboard/costs.h"

#include <algorithm>
#include <tuple>

#include "insight/card_label.h"
#include "model/alert.h"
#include "model/project.h"
#include "model/tenant.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

using json = nlohmann::json;

// One tenant in one currency while the days are summed.
struct Acc {
  TenantCosts out;
  std::map<std::string, ProjectCosts> projects;                        // by name
  std::map<std::tuple<std::string, std::string, int64_t>, CardCosts> cards;  // (supplier, node, gpu)
};

class TenantBuilder {
 public:
  TenantBuilder(StoreReader& store, const GpuCatalog& catalog, const Record& tenant, const DayRange& range, TimeMs now)
      : store_(store), tenant_(tenant), range_(range), now_(now), invoices_(store, catalog, tenant.id, now) {
    auto cur = stored_tenant_currency(tenant.body);
    home_ = cur ? *cur : Currency::kUSD;
    // Should the stored tenant not decode (reported), the default thresholds are drawn.
    if (auto t = decode_record(tenant, parse_tenant, "the costs dashboard draws the default thresholds"))
      settings_ = t->cost_firewall;
  }

  Result<std::vector<TenantCosts>> build() {
    auto projects = list_all(store_, "projects", {{"tenant_id", tenant_.id}});
    if (!projects) return projects.error();
    Acc& home = acc(home_);
    for (const Record& p : *projects) {
      project(home, p.name);
      ids_[p.name] = p.id;
      auto pj = decode_record(p, [&](const json& b) { return parse_project(b, home_); }, "the costs dashboard draws no budget for it");
      if (pj && pj->quota.monthly_budget) budgets_[p.name] = *pj->quota.monthly_budget;
    }
    for (size_t i = 0; i < range_.days.size(); ++i) {
      auto inv = invoices_.day(range_.days[i]);
      if (!inv) return inv.error();
      for (const InvoiceSection& s : (*inv)->sections)
        if (auto st = add_section(s, i); !st) return st.error();
    }
    if (auto st = add_budgets(); !st) return st.error();
    if (auto st = add_alerts(); !st) return st.error();
    std::vector<TenantCosts> out;
    for (auto& [cur, a] : accs_) {
      for (auto& [name, p] : a.projects) {
        p.project_id = ids_.count(name) ? ids_[name] : "";
        a.out.projects.push_back(std::move(p));
      }
      for (auto& [key, c] : a.cards) {
        for (int64_t m : c.daily) {
          c.max_daily = std::max(c.max_daily, m);
          if (m > a.out.policy.card_daily_cost.micros()) ++c.over_threshold_days;
        }
        if (c.over_threshold_days > 0) ++a.out.cards_over_threshold;
        a.out.cards.push_back(std::move(c));
      }
      std::stable_sort(a.out.cards.begin(), a.out.cards.end(), [](const CardCosts& x, const CardCosts& y) {
        return std::tie(y.total, x.node, x.gpu) < std::tie(x.total, y.node, y.gpu);
      });
      if (a.out.cards.size() > kDashboardTopCards) a.out.cards.resize(kDashboardTopCards);
      out.push_back(std::move(a.out));
    }
    std::stable_sort(out.begin(), out.end(), [this](const TenantCosts& x, const TenantCosts& y) {
      return (x.currency == home_) > (y.currency == home_);
    });
    return out;
  }

 private:
  Acc& acc(Currency c) {
    auto [it, fresh] = accs_.try_emplace(c);
    if (fresh) {
      it->second.out.tenant_id = tenant_.id;
      it->second.out.tenant = tenant_.name;
      it->second.out.currency = c;
      it->second.out.policy = tenant_policy(settings_, home_, c);  // what the firewall alerts on
      it->second.out.daily_total.assign(range_.days.size(), 0);
    }
    return it->second;
  }

  ProjectCosts& project(Acc& a, const std::string& name) {
    auto [it, fresh] = a.projects.try_emplace(name);
    if (fresh) {
      const size_t n = range_.days.size();
      it->second.project = name;
      it->second.daily.assign(n, 0);
      it->second.storage_io_daily.assign(n, 0);
      it->second.egress_daily.assign(n, 0);
    }
    return it->second;
  }

  Result<std::string> node_id(const std::string& supplier_id, const std::string& node) {
    const std::string key = supplier_id + "/" + node;
    if (auto it = node_ids_.find(key); it != node_ids_.end()) return it->second;
    auto page = store_.list({"nodes", {{"supplier_id", supplier_id}, {"name", node}}, "", 1});
    if (!page) return page.error();
    return node_ids_[key] = page->items.empty() ? "" : page->items.front().id;
  }

  // The supplier's name (its id should the supplier be gone): node names are unique only within one.
  Result<std::string> supplier_name(const std::string& supplier_id) {
    if (auto it = supplier_names_.find(supplier_id); it != supplier_names_.end()) return it->second;
    auto r = store_.get("suppliers", supplier_id);
    if (!r && r.error().code != Code::kNotFound) return r.error();
    return supplier_names_[supplier_id] = r ? r->name : supplier_id;
  }

  Status add_section(const InvoiceSection& s, size_t day) {
    Acc& a = acc(s.rated.currency);
    a.out.daily_total[day] += s.rated.total.micros();
    std::vector<ChargeLine> gpu_time;  // GPU time of runs: what card_day_costs shares among cards
    for (const ChargeLine& l : s.rated.lines) {
      if (l.kind == LineKind::kUsage && l.unit == "GPU-second") gpu_time.push_back(l);
      if (!l.project.empty()) add_project_line(project(a, l.project), l, day);
    }
    auto cards = card_day_costs(gpu_time, s.input.allocations);
    if (!cards) return cards.error();
    // Every piece belongs to this day's invoice, even a minimum increment running past midnight.
    for (const CardDayCost& c : *cards) {
      auto [it, fresh] = a.cards.try_emplace(std::make_tuple(s.supplier_id, c.node, c.gpu));
      CardCosts& card = it->second;
      if (fresh) {
        auto id = node_id(s.supplier_id, c.node);
        if (!id) return id.error();
        auto supplier = supplier_name(s.supplier_id);
        if (!supplier) return supplier.error();
        card.node_id = *id;
        card.node = c.node;
        card.supplier = *supplier;
        card.gpu = c.gpu;
        card.daily.assign(range_.days.size(), 0);
      }
      card.daily[day] += c.cost.micros();
      card.total += c.cost.micros();
    }
    return ok_status();
  }

  // Burn-down of each budget for the month holding the range's last day, as of now (or the range's
  // end when that is earlier).
  Status add_budgets() {
    if (budgets_.empty()) return ok_status();
    const TimeMs month = month_start(range_.to - 1);
    auto burns = budget_burns(invoices_, budgets_, month, std::min(now_, range_.to));
    if (!burns) return burns.error();
    for (auto& [name, burn] : *burns) project(acc(burn.monthly.currency()), name).budget = std::move(burn);
    return ok_status();
  }

  // The firewall's alerts whose measured period meets the range, with the currency they are
  // stated in (a share, in %, with the tenant's own currency).
  Status add_alerts() {
    auto alerts = list_all(store_, "alerts", {{"tenant_id", tenant_.id}});
    if (!alerts) return alerts.error();
    std::vector<std::pair<const Record*, StoredAlert>> met;
    for (const Record& r : *alerts) {
      auto a = decode_record(r, decode_stored_alert, "the costs dashboard cannot show it");
      if (!a) return a.error();
      if (a->alert.from < range_.to && a->alert.to > range_.from) met.emplace_back(&r, std::move(*a));
    }
    std::stable_sort(met.begin(), met.end(), [](const auto& x, const auto& y) {
      return std::tie(x.second.alert.from, x.first->name) < std::tie(y.second.alert.from, y.first->name);
    });
    for (const auto& [r, s] : met) {
      const bool coded = s.alert.message.code != "text";  // "text": an alert stored before codes
      DashboardAlert a{r->id,
                       enum_name(kAlertKindNames, s.alert.kind),
                       s.alert.project,
                       r->state,
                       s.message_en,
                       s.message_zh,
                       coded ? message_to_json(s.alert.message) : json(),
                       s.alert.freeze_egress && r->state == "active"};
      auto cur = parse_currency(s.alert.unit);
      acc(cur ? *cur : home_).out.alerts.push_back(std::move(a));
    }
    return ok_status();
  }

  StoreReader& store_;
  const Record& tenant_;
  const DayRange& range_;
  TimeMs now_;
  DayInvoices invoices_;
  Currency home_ = Currency::kUSD;
  CostFirewallSettings settings_;
  std::map<Currency, Acc> accs_;
  std::map<std::string, std::string> ids_;     // project name -> id
  std::map<std::string, Money> budgets_;       // project name -> monthly budget
  std::map<std::string, std::string> node_ids_;
  std::map<std::string, std::string> supplier_names_;  // supplier id -> name
};

}  // namespace

Result<std::map<std::string, BudgetBurn>> budget_burns(DayInvoices& invoices,
                                                       const std::map<std::string, Money>& budgets, TimeMs month,
                                                       TimeMs until) {
  std::map<std::string, BudgetBurn> out;
  if (budgets.empty()) return out;
  const TimeMs asof = std::clamp(until, month, add_months(month, 1));
  std::map<std::string, std::vector<Money>> spent;  // by project
  for (const auto& [name, b] : budgets) spent[name] = {};
  for (TimeMs d = month; d < asof; d += kMsPerDay) {
    for (auto& [name, v] : spent) v.push_back(Money::zero(budgets.at(name).currency()));
    auto inv = invoices.day(d);
    if (!inv) return inv.error();
    for (const InvoiceSection& s : (*inv)->sections)
      for (const ChargeLine& l : s.rated.lines) {
        auto it = spent.find(l.project);
        if (it == spent.end() || l.kind == LineKind::kCredit ||
            l.amount_exact.currency() != it->second.back().currency())
          continue;
        it->second.back() = Money(it->second.back().micros() + l.amount_exact.micros(), l.amount_exact.currency());
      }
  }
  for (const auto& [name, budget] : budgets) {
    auto burn = burn_down(budget, month, asof, spent[name]);
    if (!burn) return burn.error();
    out.emplace(name, std::move(*burn));
  }
  return out;
}

Result<CostsDashboard> build_costs_dashboard(StoreReader& store, const GpuCatalog& catalog,
                                             const std::vector<Record>& tenants, const DayRange& range, TimeMs now) {
  CostsDashboard d;
  d.range = range;
  for (const Record& t : tenants) {
    auto costs = TenantBuilder(store, catalog, t, range, now).build();
    if (!costs) return costs.error();
    for (auto& c : *costs) d.tenants.push_back(std::move(c));
  }
  return d;
}

json to_json(const CostsDashboard& d) {
  json days = json::array();
  for (TimeMs day : d.range.days) days.push_back(utc_date(day));
  json tenants = json::array();
  for (const TenantCosts& t : d.tenants) {
    const Currency c = t.currency;
    json projects = json::array();
    for (const ProjectCosts& p : t.projects) projects.push_back(project_costs_json(p, c, t.policy.storage_io_share_pct));
    std::vector<CardName> names;
    for (const CardCosts& k : t.cards) names.push_back({k.node_id, k.node, k.supplier, k.gpu});
    const std::vector<std::string> labels = card_labels(names);
    json cards = json::array();
    for (size_t i = 0; i < t.cards.size(); ++i) {
      const CardCosts& k = t.cards[i];
      cards.push_back({{"node_id", k.node_id},
                       {"node", k.node},
                       {"supplier", k.supplier},
                       {"label", labels[i]},
                       {"gpu", k.gpu},
                       {"daily", money_list(k.daily, c)},
                       {"max_daily", Money(k.max_daily, c).amount_string()},
                       {"over_threshold_days", k.over_threshold_days}});
    }
    json alerts = json::array();
    for (const DashboardAlert& a : t.alerts)
      alerts.push_back({{"id", a.id},
                        {"kind", a.kind},
                        {"project", a.project},
                        {"state", a.state},
                        {"message_en", a.message_en},
                        {"message_zh", a.message_zh},
                        {"frozen", a.frozen}});
    for (size_t i = 0; i < t.alerts.size(); ++i)
      if (!t.alerts[i].text_message.is_null()) {
        alerts[i]["text"] = t.alerts[i].message_en;
        alerts[i]["text_message"] = t.alerts[i].text_message;
      }
    tenants.push_back({{"tenant_id", t.tenant_id},
                       {"tenant", t.tenant},
                       {"currency", currency_code(c)},
                       {"card_threshold", t.policy.card_daily_cost.amount_string()},
                       {"egress_threshold", t.policy.egress_daily_cost.amount_string()},
                       {"storage_io_share_threshold_pct", t.policy.storage_io_share_pct},
                       {"daily_total", money_list(t.daily_total, c)},
                       {"projects", std::move(projects)},
                       {"cards", std::move(cards)},
                       {"cards_over_threshold", t.cards_over_threshold},
                       {"alerts", std::move(alerts)}});
  }
  return {{"from", format_rfc3339(d.range.from)},
          {"to", format_rfc3339(d.range.to)},
          {"days", std::move(days)},
          {"tenants", std::move(tenants)}};
}

}  // namespace gpurent
