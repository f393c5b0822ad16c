// The cost firewall's rules over rated lines and card-day costs (billing/firewall.h).
#include "billing/firewall.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

namespace gpurent {

namespace {

using Micros = __int128;

// "a, b, c" in English, "a、b、c" in Chinese.
Message list_message(const std::vector<std::string>& v) {
  Message out;
  for (auto it = v.rbegin(); it != v.rend(); ++it)
    out = out.empty() ? verbatim(*it) : Message("list.comma").arg("a", verbatim(*it)).arg("b", std::move(out));
  return out;
}

std::string firewall_month_label(TimeMs t) { return format_rfc3339(t).substr(0, 7); }

// A share in percent, rounded up to 0.01 so that a share above an integer threshold never reads
// as equal to it ("20.001%" -> "20.01").
std::string percent_ceil(Micros part, Micros whole) {
  const Micros centi = (part * 10000 + whole - 1) / whole;  // part, whole > 0
  const std::string frac = std::to_string(static_cast<int>(centi % 100));
  return format_scaled(centi / 100, 0) + "." + (frac.size() == 1 ? "0" : "") + frac;
}

std::string gb_text(int64_t bytes) { return format_scaled(bytes, 9) + " GB"; }

bool fits(Micros v) {
  return v >= std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
}

Message currency_differs(Currency got, Currency evaluated) {
  return Message("firewall.currency_differs")
      .arg("currency", currency_code(got))
      .arg("evaluated", currency_code(evaluated));
}

void check_money(FieldErrors& errs, const std::string& field, const Money& m, Currency c) {
  if (m.currency() != c)
    errs.add(field, currency_differs(m.currency(), c));
  else if (m.micros() < 0)
    errs.add(field, FieldReason{"field.not_negative"});
}

Status validate(const FirewallPolicy& p, const FirewallInput& in) {
  FieldErrors errs;
  if (month_start(in.month) != in.month) errs.add("month", Message("firewall.not_month_start"));
  if (day_start(in.day) != in.day)
    errs.add("day", Message("firewall.not_day_start"));
  else if (in.day < in.month || in.day >= add_months(in.month, 1))
    errs.add("day", Message("firewall.day_outside_month").arg("month", firewall_month_label(in.month)));
  check_money(errs, "policy.card_daily_cost", p.card_daily_cost, in.currency);
  check_money(errs, "policy.egress_daily_cost", p.egress_daily_cost, in.currency);
  if (p.storage_io_share_pct < 0 || p.storage_io_share_pct > 100)
    errs.add("policy.storage_io_share_pct", Message("firewall.between").arg("min", "0").arg("max", "100"));
  if (p.large_upload_bytes <= 0) errs.add("policy.large_upload_bytes", Message("firewall.positive"));
  for (const auto& [project, budget] : p.monthly_budgets) {
    if (project.empty()) errs.add("policy.monthly_budgets", Message("firewall.budget_no_project"));
    check_money(errs, "policy.monthly_budgets." + project, budget, in.currency);
  }
  for (size_t i = 0; i < in.lines.size(); ++i)
    if (in.lines[i].amount_exact.currency() != in.currency)
      errs.add("lines[" + std::to_string(i) + "].amount_exact",
               currency_differs(in.lines[i].amount_exact.currency(), in.currency));
  for (size_t i = 0; i < in.cards.size(); ++i)
    if (in.cards[i].cost.currency() != in.currency)
      errs.add("cards[" + std::to_string(i) + "].cost", currency_differs(in.cards[i].cost.currency(), in.currency));
  if (!errs.empty()) return errs.to_error();
  return ok_status();
}

struct ProjectFacts {
  Micros total = 0;  // month-to-date charges
  Micros covered = 0;  // value of its GPU time covered by reserved commitments (not in total)
  Micros storage_io = 0;
  std::map<TimeMs, Micros> egress_by_day;
};

struct CardFacts {
  Micros cost = 0;
  std::set<std::string> projects;
};

Alert make(AlertKind kind, AlertSeverity sev, std::string subject, const std::string& period_label) {
  Alert a;
  a.kind = kind;
  a.severity = sev;
  a.key = std::string(enum_name(kAlertKindNames, kind)) + ":" + subject + ":" + period_label;
  a.subject = std::move(subject);
  return a;
}

}  // namespace

FirewallPolicy FirewallPolicy::defaults(Currency c) {
  FirewallPolicy p;
  p.card_daily_cost = Money(100 * Money::kMicrosPerUnit, c);
  p.egress_daily_cost = Money(500 * Money::kMicrosPerUnit, c);
  return p;
}

std::string utc_date(TimeMs t) { return format_rfc3339(t).substr(0, 10); }

namespace {

// What the rules look at, from the lines and cards of [month, day + 1 day): per project its
// month-to-date cost, reserved-covered value, storage I/O and egress per day; per card and day its
// cost and who ran on it.
struct Facts {
  std::map<std::string, ProjectFacts> projects;
  std::map<std::tuple<std::string, int64_t, TimeMs>, CardFacts> cards;  // (node, gpu, day)
};

Result<Facts> gather_facts(const FirewallInput& in) {
  const TimeMs end = in.day + kMsPerDay;
  Facts facts;
  auto& projects = facts.projects;
  auto& cards = facts.cards;
  for (const auto& l : in.lines) {
    if (l.kind == LineKind::kCredit || l.project.empty() || l.from < in.month || l.from >= end) continue;
    ProjectFacts& f = projects[l.project];
    f.total += l.amount_exact.micros();
    f.covered += l.covered_value.micros();
    if (l.rule == "storage_io") f.storage_io += l.amount_exact.micros();
    if (l.rule == "egress") f.egress_by_day[day_start(l.from)] += l.amount_exact.micros();
  }
  for (const auto& c : in.cards) {
    if (c.day < in.month || c.day >= end) continue;
    CardFacts& f = cards[{c.node, c.gpu, day_start(c.day)}];
    f.cost += c.cost.micros();
    f.projects.insert(c.projects.begin(), c.projects.end());
  }
  for (const auto& [_, f] : projects)
    if (!fits(f.total) || !fits(f.total + f.covered))
      return Error::invalid("lines", Message("firewall.project_cost_overflow"));
  for (const auto& [_, f] : cards)
    if (!fits(f.cost)) return Error::invalid("cards", Message("firewall.card_cost_overflow"));
  return facts;
}

// card_daily_cost: a card's cost on a UTC day above the threshold.
void card_alerts(const FirewallPolicy& p, const FirewallInput& in, const Facts& facts, std::vector<Alert>& out) {
  const Currency cur = in.currency;
  const std::string code = currency_code(cur);
  for (const auto& [k, f] : facts.cards) {
    const auto& [node, gpu, day] = k;
    if (f.cost <= p.card_daily_cost.micros()) continue;
    const std::string card = node + "/" + std::to_string(gpu), date = utc_date(day);
    Alert a = make(AlertKind::kCardDailyCost, AlertSeverity::kWarning, card, date);
    const std::vector<std::string> who(f.projects.begin(), f.projects.end());
    if (who.size() == 1) a.project = who[0];
    a.from = day;
    a.to = day + kMsPerDay;
    const Money cost(static_cast<int64_t>(f.cost), cur);
    a.measured = cost.amount_string();
    a.threshold = p.card_daily_cost.amount_string();
    a.unit = code;
    a.message = (who.empty() ? Message("alert.card_daily_cost") : Message("alert.card_daily_cost_projects"))
                    .arg("card", card)
                    .arg("cost", cost.to_string())
                    .arg("date", date)
                    .arg("threshold", p.card_daily_cost.to_string());
    if (!who.empty()) a.message.arg("projects", list_message(who));
    out.push_back(std::move(a));
  }
}

// storage_io_share: a project's storage I/O over its month-to-date cost plus reserved-covered
// value, in integers: io / (total + covered) > pct / 100.
void io_share_alert(const FirewallPolicy& p, const FirewallInput& in, const std::string& project, const ProjectFacts& f,
                    std::vector<Alert>& out) {
  const Currency cur = in.currency;
  const TimeMs end = in.day + kMsPerDay;
  const std::string month = firewall_month_label(in.month);
  const Micros base = f.total + f.covered;
  if (f.storage_io > 0 && base > 0 && f.storage_io * 100 > p.storage_io_share_pct * base) {
    Alert a = make(AlertKind::kStorageIoShare, AlertSeverity::kWarning, project, month);
    a.project = project;
    a.from = in.month;
    a.to = end;
    a.measured = percent_ceil(f.storage_io, base);
    a.threshold = std::to_string(p.storage_io_share_pct);
    a.unit = "%";
    const Money io(static_cast<int64_t>(f.storage_io), cur), total(static_cast<int64_t>(base), cur);
    const Money covered(static_cast<int64_t>(f.covered), cur);
    a.message = (f.covered > 0 ? Message("alert.storage_io_share_covered") : Message("alert.storage_io_share"))
                    .arg("project", project)
                    .arg("io", io.to_string())
                    .arg("share", a.measured)
                    .arg("total", total.to_string())
                    .arg("month", month)
                    .arg("threshold", a.threshold);
    if (f.covered > 0) a.message.arg("covered", covered.to_string());
    out.push_back(std::move(a));
  }
}

// egress_daily_cost: a project's egress on a UTC day above the threshold (publishes a freeze).
void egress_alerts(const FirewallPolicy& p, const FirewallInput& in, const std::string& project, const ProjectFacts& f,
                   std::vector<Alert>& out) {
  const Currency cur = in.currency;
  const std::string code = currency_code(cur);
  // Egress cost per day.
  for (const auto& [day, egress] : f.egress_by_day) {
    if (egress <= p.egress_daily_cost.micros()) continue;
    const std::string date = utc_date(day), gb = gb_text(p.large_upload_bytes);
    Alert a = make(AlertKind::kEgressDailyCost, AlertSeverity::kCritical, project, date);
    a.project = project;
    a.from = day;
    a.to = day + kMsPerDay;
    const Money cost(static_cast<int64_t>(egress), cur);
    a.measured = cost.amount_string();
    a.threshold = p.egress_daily_cost.amount_string();
    a.unit = code;
    a.freeze_egress = true;
    a.upload_limit_bytes = p.large_upload_bytes;
    a.message = Message("alert.egress_daily_cost")
                    .arg("project", project)
                    .arg("cost", cost.to_string())
                    .arg("date", date)
                    .arg("threshold", p.egress_daily_cost.to_string())
                    .arg("upload_limit", gb);
    out.push_back(std::move(a));
  }
}

// budget_breach: every budgeted project, with or without cost so far (a zero budget holds at once).
void budget_alerts(const FirewallPolicy& p, const FirewallInput& in, const Facts& facts, std::vector<Alert>& out) {
  const Currency cur = in.currency;
  const std::string code = currency_code(cur);
  const TimeMs end = in.day + kMsPerDay;
  const std::string month = firewall_month_label(in.month);
  const auto& projects = facts.projects;
  for (const auto& [project, budget] : p.monthly_budgets) {
    const auto it = projects.find(project);
    const Micros spent = it == projects.end() ? 0 : it->second.total;
    if (spent < budget.micros()) continue;
    Alert a = make(AlertKind::kBudgetBreach, AlertSeverity::kCritical, project, month);
    a.project = project;
    a.from = in.month;
    a.to = end;
    const Money cost(static_cast<int64_t>(spent), cur);
    a.measured = cost.amount_string();
    a.threshold = budget.amount_string();
    a.unit = code;
    a.hold_submissions = true;
    a.message = Message("alert.budget_breach")
                    .arg("project", project)
                    .arg("cost", cost.to_string())
                    .arg("month", month)
                    .arg("budget", budget.to_string());
    out.push_back(std::move(a));
  }
}

}  // namespace

Result<std::vector<Alert>> evaluate_firewall(const FirewallPolicy& p, const FirewallInput& in) {
  if (auto st = validate(p, in); !st) return st.error();
  auto facts = gather_facts(in);
  if (!facts) return facts.error();
  std::vector<Alert> out;
  card_alerts(p, in, *facts, out);
  for (const auto& [project, f] : facts->projects) {
    io_share_alert(p, in, project, f, out);
    egress_alerts(p, in, project, f, out);
  }
  budget_alerts(p, in, *facts, out);
  std::stable_sort(out.begin(), out.end(),
                   [](const Alert& x, const Alert& y) { return std::tie(x.kind, x.key) < std::tie(y.kind, y.key); });
  return out;
}

FirewallPolicy tenant_policy(const CostFirewallSettings& settings, Currency tenant_currency, Currency c) {
  FirewallPolicy p = FirewallPolicy::defaults(c);
  if (c != tenant_currency) return p;
  if (settings.card_daily_cost) p.card_daily_cost = *settings.card_daily_cost;
  if (settings.egress_daily_cost) p.egress_daily_cost = *settings.egress_daily_cost;
  if (settings.storage_io_share_pct) p.storage_io_share_pct = *settings.storage_io_share_pct;
  return p;
}

Result<std::vector<CardDayCost>> card_day_costs(const std::vector<ChargeLine>& lines,
                                                const std::vector<Allocation>& allocations) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < allocations.size(); ++i) index.emplace(allocations[i].id, i);
  FieldErrors errs;
  std::map<std::tuple<TimeMs, std::string, int64_t>, CardFacts> acc;
  std::optional<Currency> cur;
  for (size_t i = 0; i < lines.size(); ++i) {
    const ChargeLine& l = lines[i];
    if (l.kind == LineKind::kCredit || l.allocation.empty() || l.unit != "GPU-second") continue;
    const std::string field = "lines[" + std::to_string(i) + "]";
    if (cur && l.amount_exact.currency() != *cur) {
      errs.add(field + ".amount_exact", Message("firewall.currency_differs_first")
                                            .arg("currency", currency_code(l.amount_exact.currency()))
                                            .arg("first", currency_code(*cur)));
      continue;
    }
    cur = l.amount_exact.currency();
    const auto it = index.find(l.allocation);
    if (it == index.end()) {
      errs.add(field + ".allocation", Message("firewall.unknown_allocation").arg("allocation", l.allocation));
      continue;
    }
    std::vector<std::pair<std::string, int64_t>> cards;
    for (const auto& part : allocations[it->second].placement)
      for (int64_t g : part.gpus) cards.emplace_back(part.node, g);
    if (cards.empty()) {
      errs.add("allocations[" + std::to_string(it->second) + "].placement",
               Message("firewall.no_cards").arg("line", field));
      continue;
    }
    // (day, share numerator, share denominator) of the line's time.
    std::vector<std::tuple<TimeMs, int64_t, int64_t>> days;
    if (l.to <= l.from) {
      days.emplace_back(day_start(l.from), 1, 1);
    } else {
      for (TimeMs d = day_start(l.from); d < l.to; d += kMsPerDay)
        days.emplace_back(d, std::min(l.to, d + kMsPerDay) - std::max(l.from, d), l.to - l.from);
    }
    const int64_t n = static_cast<int64_t>(cards.size());
    for (const auto& [day, num, den] : days) {
      // A piece never exceeds the line's amount: an overflow is a bug (throws).
      const int64_t piece = div_half_even_checked(static_cast<Micros>(l.amount_exact.micros()) * num, den * n);
      for (const auto& [node, gpu] : cards) {
        CardFacts& f = acc[{day, node, gpu}];
        f.cost += piece;
        if (!l.project.empty()) f.projects.insert(l.project);
      }
    }
  }
  if (!errs.empty()) return errs.to_error();
  std::vector<CardDayCost> out;
  for (const auto& [k, f] : acc) {
    if (!fits(f.cost)) return Error::invalid("lines", Message("firewall.card_cost_overflow"));
    const auto& [day, node, gpu] = k;
    out.push_back({node, gpu, day, Money(static_cast<int64_t>(f.cost), *cur), {f.projects.begin(), f.projects.end()}});
  }
  return out;
}

}  // namespace gpurent
