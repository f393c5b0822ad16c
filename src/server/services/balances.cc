#include "server/services/balances.h"

#include <map>
#include <optional>
#include <set>

#include "billing/rating_input.h"
#include "model/tenant.h"
#include "model/top_up.h"
#include "server/services/invoices.h"
#include "server/services/issued_invoices.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

using json = nlohmann::json;

std::string month_text(TimeMs t) { return format_rfc3339(t).substr(0, 7); }

struct Draft {
  int64_t charges = 0;
  int64_t total = 0;  // charges and credits
};

// Each currency's charges and total of the tenant's invoice over [from, to) rated at `now`.
Result<std::map<Currency, Draft>> drafts(MonthInvoiceSource& invoices, TimeMs from, TimeMs to, TimeMs now) {
  std::map<Currency, Draft> out;
  auto inv = invoices.invoice(from, to, now);
  if (!inv) return inv.error();
  for (const auto& s : inv->sections) {
    out[s.rated.currency].charges += s.rated.charges.micros();
    out[s.rated.currency].total += s.rated.total.micros();
  }
  return out;
}

// A stored issued invoice's or credit note's money: its currency (`currency_text`) and the amount
// at `key` of `doc`. One that does not read is reported (record_faults.h) and fails the balance: a
// balance that silently counted it as 0 would let the tenant look solvent (the cost firewall's
// balance stop reads it).
Result<std::pair<Currency, int64_t>> stored_money(const Record& r, const std::string& currency_text, const json& doc,
                                                  const char* key) {
  return decode_record(
      r,
      [&](const json&) -> Result<std::pair<Currency, int64_t>> {
        auto c = parse_currency(currency_text);
        if (!c) return c.error();
        if (!doc.is_object() || !doc.contains(key) || !doc[key].is_string())
          return Error::invalid(key, "is missing or not a decimal string");
        auto m = Money::parse(doc[key].get<std::string>(), *c);
        if (!m) return m.error();
        return std::pair{*c, m->micros()};
      },
      "the tenant's balance cannot be computed");
}

}  // namespace

Result<TenantBalances> tenant_balances(StoreReader& store, const GpuCatalog& catalog, const Record& tenant, TimeMs now,
                                       MonthInvoiceSource* invoices) {
  std::optional<MonthInvoiceSource> own;
  if (!invoices) invoices = &own.emplace(store, catalog, tenant.id, now + kMsPerHour);
  TenantBalances out;
  out.tenant_id = tenant.id;
  out.tenant = tenant.name;
  out.at = now;
  auto t = decode_record(tenant, parse_tenant, "its balance cannot be computed");
  if (!t) return t.error();
  out.currency = t->currency;
  out.settings = t->billing;
  const bool prepaid = t->billing.payment == Payment::kPrepaid;
  std::map<Currency, BalanceFigures> figs;
  figs[t->currency].currency = t->currency;
  auto fig = [&](Currency c) -> BalanceFigures& {
    auto& f = figs[c];
    f.currency = c;
    return f;
  };
  // Sums of stored money: one past int64 (a corrupt or absurd record) is an error, never a wrap.
  bool overflow = false;
  auto add = [&](int64_t& into, int64_t v) { overflow |= __builtin_add_overflow(into, v, &into); };

  auto tops = list_all(store, "top-ups", {{"tenant_id", tenant.id}});
  if (!tops) return tops.error();
  for (const Record& r : *tops) {
    auto tu = decode_record(r, decode_top_up, "it does not count toward the balance");
    if (!tu) return tu.error();  // a balance that silently skipped money would be wrong
    add(fig(tu->amount.currency()).top_ups, tu->amount.micros());
  }

  auto issued = list_all(store, "issued-invoices", {{"tenant_id", tenant.id}});
  if (!issued) return issued.error();
  auto notes = list_all(store, "credit-notes", {{"tenant_id", tenant.id}});
  if (!notes) return notes.error();
  std::map<std::string, int64_t> credited;  // invoice id -> credit notes
  for (const Record& n : *notes) {
    auto m = stored_money(n, n.body.value("currency", ""), n.body, "amount");
    if (!m) return m.error();
    add(credited[n.state], m->second);
  }
  const TimeMs month = month_start(now);
  std::set<std::pair<std::string, Currency>> issued_for;  // (month, currency) with an issued invoice
  std::map<Currency, int64_t> drawn_before;               // a tenant postpaid now: its prepaid invoices, per currency
  for (const Record& r : *issued) {
    const json totals = r.body.value("totals", json::object());
    auto money = stored_money(r, r.gpu_model, totals, "total");
    if (!money) return money.error();
    const auto c = std::optional<Currency>(money->first);
    issued_for.insert({r.region, *c});
    // Read as the tenant paid when it was issued (its `payment`; invoices from before that field:
    // as the tenant pays now). A postpaid invoice is owed until paid. A prepaid one came out of
    // the top-ups whatever its state: it counts against them while the tenant prepays; once it
    // pays afterwards (postpaid, top-ups no longer count) only what its top-ups did not cover is
    // owed (below).
    const bool drawn = r.body.contains("payment") ? r.body.value("payment", "") == "prepaid" : prepaid;
    if (r.state == "void" || (!drawn && r.state == "paid")) continue;
    int64_t& into = drawn && !prepaid ? drawn_before[*c] : fig(*c).invoiced;
    add(into, money->second);
    add(into, -credited[r.id]);
  }
  for (const auto& [c, drawn] : drawn_before) {
    int64_t short_by = 0;  // prepaid invoices past the top-ups: still owed
    add(short_by, drawn);
    add(short_by, -fig(c).top_ups);
    if (short_by > 0) add(fig(c).invoiced, short_by);
  }

  // Drafts: the month to date; the previous month while its close has not issued it.
  auto cur = drafts(*invoices, month, add_months(month, 1), now);
  if (!cur) return cur.error();
  for (const auto& [c, d] : *cur) add(fig(c).accruing, d.total);
  // Ended months whose close has not issued them: the previous one until its close, any earlier
  // one a failed close left open.
  auto open_months = unclosed_months(store, now, 0);
  if (!open_months) return open_months.error();
  for (TimeMs m : *open_months) {
    auto past = drafts(*invoices, m, add_months(m, 1), now);
    if (!past) return past.error();
    for (const auto& [c, d] : *past)
      if (!issued_for.count({month_text(m), c})) add(fig(c).accruing, d.total);
  }
  // Burn: the charges of [month, now + 1 h) with the open runs going on, less the month's to date.
  const TimeMs later = now + kMsPerHour;
  auto ahead = drafts(*invoices, month, later, later);
  if (!ahead) return ahead.error();
  for (const auto& [c, d] : *ahead) {
    const int64_t before = cur->count(c) ? cur->at(c).charges : 0;
    fig(c).burn_per_hour = std::max<int64_t>(0, d.charges - before);
  }

  if (overflow) return Error::make(Code::kInvalid, Message("money.overflow"));
  for (auto& [c, f] : figs)
    if (!prepaid && t->billing.credit_limit && c == t->currency) f.credit_limit = t->billing.credit_limit->micros();
  auto push = [&](const BalanceFigures& f) { out.balances.push_back(balance_of(t->billing, f)); };
  push(figs[t->currency]);
  for (const auto& [c, f] : figs)
    if (c != t->currency && (f.top_ups || f.invoiced || f.accruing || f.burn_per_hour)) push(f);
  return out;
}

json to_json(const TenantBalances& b) {
  json list = json::array();
  for (const Balance& x : b.balances) {
    const Currency c = x.figures.currency;
    auto m = [&](int64_t v) { return Money(v, c).round_to_cents().amount_string(); };
    json j = {{"currency", currency_code(c)},
              {"top_ups", m(x.figures.top_ups)},
              {"invoiced", m(x.figures.invoiced)},
              {"accruing", m(x.figures.accruing)},
              {"burn_per_hour", m(x.figures.burn_per_hour)}};
    if (x.figures.credit_limit) j["credit_limit"] = m(*x.figures.credit_limit);
    if (x.available) j["available"] = m(*x.available);
    if (x.runway_minutes) j["runway_minutes"] = *x.runway_minutes;
    list.push_back(std::move(j));
  }
  json out = {{"tenant_id", b.tenant_id},
              {"tenant", b.tenant},
              {"at", format_rfc3339(b.at)},
              {"payment", enum_name(kPaymentNames, b.settings.payment)},
              {"watched", b.settings.enforced()},
              {"runway_alert_minutes", b.settings.runway_alert_minutes},
              {"stop_minutes", b.settings.stop_minutes},
              {"balances", std::move(list)}};
  if (b.settings.credit_limit) out["credit_limit"] = b.settings.credit_limit->amount_string();
  return out;
}

}  // namespace gpurent
