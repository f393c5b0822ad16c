#include "model/tenant.h"

#include "model/top_up.h"

#include "core/json_put.h"

#include <regex>

namespace gpurent {
namespace {

constexpr EnumEntry<Currency> kTenantCurrencies[] = {{Currency::kUSD, "USD"}, {Currency::kCNY, "CNY"}};

constexpr const char* kLabelValuePattern = "([A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?)?";

// Lengths are checked before matching: libstdc++'s regex recurses per character.
bool valid_label_key(const std::string& k) {
  if (k.empty() || k.size() > 317) return false;
  static const std::regex re(
      "([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*/)?"
      "[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?");
  return std::regex_match(k, re);
}

}  // namespace

Labels parse_labels(Fields& f, const char* key) {
  Labels out;
  const json* raw = f.raw(key);
  if (!raw) return out;
  if (raw->is_object() && raw->size() > kMaxLabels) {
    f.error(key, Message("label.too_many").arg("max", std::to_string(kMaxLabels)).arg("got", std::to_string(raw->size())));
    return out;
  }
  f.object(key, false, [&](Fields& m) {
    for (auto it = raw->begin(); it != raw->end(); ++it) {
      const std::string& k = it.key();
      m.raw(k.c_str());  // consumed, whatever the verdict
      if (!valid_label_key(k)) {
        m.error(k, Message("label.bad_key"));
      } else if (!it->is_string()) {
        m.error(k, Message("field.string"));
      } else if (auto v = m.opt_str(k.c_str(), {.min_len = 0, .max_len = 63, .pattern = kLabelValuePattern,
                                                .pattern_help = "pattern.label_value"})) {
        out[k] = *v;
      }
    }
  });
  return out;
}

json labels_to_json(const Labels& labels) {
  json j = json::object();
  for (const auto& [k, v] : labels) j[k] = v;
  return j;
}

Result<Currency> stored_tenant_currency(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  const Currency c = f.enumeration("currency", kTenantCurrencies, std::optional(Currency::kUSD));
  if (!errs.empty()) return errs.to_error();
  return c;
}

void parse_billing_settings(Fields& f, BillingSettings& b, Currency c) {
  b.payment = f.enumeration("payment", kPaymentNames, std::optional(Payment::kPostpaid));
  b.credit_limit = f.opt_money("credit_limit", c);
  if (b.credit_limit && b.credit_limit->micros() > kMaxTopUpUnits * 1'000'000)  // as a top-up: sums stay far from int64's end
    f.error("credit_limit", Message("top_up.amount_range").arg("max", std::to_string(kMaxTopUpUnits)));
  if (b.credit_limit && b.payment == Payment::kPrepaid) f.error("credit_limit", Message("tenant.billing.limit_prepaid"));
  b.runway_alert_minutes = f.opt_integer("runway_alert_minutes", 0, 525'600).value_or(kDefaultRunwayAlertMinutes);
  b.stop_minutes = f.opt_integer("stop_minutes", 0, 10'080).value_or(kDefaultStopMinutes);
}

json to_json(const BillingSettings& b) {
  json j = {{"payment", enum_name(kPaymentNames, b.payment)},
            {"runway_alert_minutes", b.runway_alert_minutes},
            {"stop_minutes", b.stop_minutes}};
  put_opt_money(j, "credit_limit", b.credit_limit);
  return j;
}

std::vector<ProcurementShare> parse_procurement_split(Fields& f, const char* key) {
  std::vector<ProcurementShare> out;
  int64_t sum = 0;
  f.objects(key, false, kMaxProcurementShares, [&](Fields& e, size_t i) {
    ProcurementShare s;
    s.supplier = e.str("supplier", {.min_len = 1, .max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
    s.share_permille = e.integer("share_permille", 1, 1000);
    e.finish();
    for (size_t k = 0; k < out.size(); ++k)
      if (!s.supplier.empty() && out[k].supplier == s.supplier)
        f.error(std::string(key) + "[" + std::to_string(i) + "].supplier",
                Message("tenant.split.duplicate").arg("index", std::to_string(k)));
    sum += s.share_permille;
    out.push_back(std::move(s));
  });
  if (sum > 1000) f.error(key, Message("sched.split.sum").arg("sum", std::to_string(sum)));
  return out;
}

json to_json(const std::vector<ProcurementShare>& split) {
  json a = json::array();
  for (const auto& s : split) a.push_back({{"supplier", s.supplier}, {"share_permille", s.share_permille}});
  return a;
}

Result<Tenant> parse_tenant(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Tenant t;
  t.name = f.str("name", {.max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
  t.display_name = f.opt_str("display_name", kDisplayNameRule).value_or(t.name);
  t.currency = f.enumeration("currency", kTenantCurrencies, std::optional(Currency::kUSD));
  t.contact_email = f.str("contact_email", kEmailRule);
  t.labels = parse_labels(f, "labels");
  f.object("cost_firewall", false, [&](Fields& c) {
    t.cost_firewall.card_daily_cost = c.opt_money("card_daily_cost", t.currency);
    t.cost_firewall.egress_daily_cost = c.opt_money("egress_daily_cost", t.currency);
    t.cost_firewall.storage_io_share_pct = c.opt_integer("storage_io_share_pct", 0, 100);
  });
  f.object("billing", false, [&](Fields& b) { parse_billing_settings(b, t.billing, t.currency); });
  t.instance_idle_stop = read_idle_stop(f, "instance_idle_stop");
  t.procurement_split = parse_procurement_split(f, "procurement_split");
  ignore_server_keys(f);
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return t;
}

json to_json(const Tenant& t) {
  json j = {{"name", t.name},
            {"display_name", t.display_name},
            {"currency", currency_code(t.currency)},
            {"contact_email", t.contact_email}};
  if (!t.labels.empty()) j["labels"] = labels_to_json(t.labels);
  if (!t.cost_firewall.empty()) {
    const CostFirewallSettings& c = t.cost_firewall;
    json fw = json::object();
    put_opt_money(fw, "card_daily_cost", c.card_daily_cost);
    put_opt_money(fw, "egress_daily_cost", c.egress_daily_cost);
    put_opt(fw, "storage_io_share_pct", c.storage_io_share_pct);
    j["cost_firewall"] = std::move(fw);
  }
  if (!t.billing.is_default()) j["billing"] = to_json(t.billing);
  if (t.instance_idle_stop) j["instance_idle_stop"] = idle_stop_json(*t.instance_idle_stop);
  if (!t.procurement_split.empty()) j["procurement_split"] = to_json(t.procurement_split);
  return j;
}

IndexCols index_of(const Tenant& t) {
  IndexCols c;
  c.name = t.name;
  return c;
}

}  // namespace gpurent
