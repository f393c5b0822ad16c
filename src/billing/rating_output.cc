#include "billing/rating_output.h"

#include "billing/rating_impl.h"

namespace gpurent {

using json = nlohmann::json;

json to_json(const ChargeLine& l) {
  json j = {{"kind", enum_name(kLineKindNames, l.kind)},
          {"rule", l.rule},
          {"project", l.project},
          {"job", l.job},
          {"allocation", l.allocation},
          {"offer", l.offer},
          {"billing_mode", l.billing_mode},
          {"quantity", l.quantity},
          {"unit", l.unit},
          {"unit_price", l.unit_price},
          {"price_unit", l.price_unit},
          {"from", format_rfc3339(l.from)},
          {"to", format_rfc3339(l.to)},
          {"amount", l.amount.amount_string()},
          {"amount_exact", l.amount_exact.amount_string()},
          {"description", l.description}};
  if (!l.measurements.empty()) j["measurements"] = l.measurements;
  return j;
}

json to_json(const RatingResult& r) {
  json lines = json::array();
  for (const auto& l : r.lines) lines.push_back(to_json(l));
  return {{"currency", currency_code(r.currency)},
          {"period", {{"from", format_rfc3339(r.from)}, {"to", format_rfc3339(r.to)}}},
          {"lines", std::move(lines)},
          {"line_count", r.lines.size()},
          {"totals",
           {{"charges", r.charges.amount_string()}, {"credits", r.credits.amount_string()}, {"total", r.total.amount_string()}}}};
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

namespace {

std::string row(std::initializer_list<std::string> cells) {
  std::string out;
  for (const auto& c : cells) {
    if (!out.empty()) out += ',';
    out += csv_field(c);
  }
  return out + "\n";
}

}  // namespace

std::string to_csv(const RatingResult& r) {
  std::string out = row({"kind", "rule", "project", "job", "allocation", "offer", "billing_mode", "quantity", "unit",
                         "unit_price", "price_unit", "from", "to", "amount", "amount_exact", "currency", "description"});
  const std::string cur = currency_code(r.currency);
  for (const auto& l : r.lines)
    out += row({enum_name(kLineKindNames, l.kind), l.rule, l.project, l.job, l.allocation, l.offer, l.billing_mode, l.quantity,
                l.unit, l.unit_price, l.price_unit, format_rfc3339(l.from), format_rfc3339(l.to), l.amount.amount_string(),
                l.amount_exact.amount_string(), cur, l.description});
  return out;
}

namespace {

const char* charge_category(const ChargeLine& l) {
  if (l.rule == "credit_cap") return "Adjustment";
  switch (l.kind) {
    case LineKind::kCommitment: return "Purchase";
    case LineKind::kCredit: return "Credit";
    default: return "Usage";
  }
}

const char* charge_frequency(const ChargeLine& l) {
  if (l.kind == LineKind::kCredit || l.rule == "reserved_prepaid") return "One-Time";
  if (l.kind == LineKind::kCommitment) return "Recurring";
  return "Usage-Based";
}

std::string pricing_category(const ChargeLine& l) {
  if (l.kind == LineKind::kCredit) return "";
  if (l.billing_mode == "spot") return "Dynamic";
  if (l.billing_mode == "reserved" && l.rule != "reserved_overflow") return "Committed";
  return "Standard";
}

const char* service_category(const ChargeLine& l) {
  if (l.rule.rfind("storage_io", 0) == 0 || l.rule.rfind("image_storage", 0) == 0) return "Storage";
  if (l.rule.rfind("egress", 0) == 0) return "Networking";
  if (l.billing_mode == "per_token" || l.billing_mode == "per_qps") return "AI and Machine Learning";
  return "Compute";
}

// Pricing quantity in the price's unit (GPU-hours from GPU-seconds, QPS- and GB-months of 730 h
// from QPS- and GB-seconds; 9 decimals, rounded half to even).
std::string pricing_quantity(const ChargeLine& l) {
  if (l.unit == "GPU-second" || l.unit == "QPS-second" || l.unit == "GB-second") {
    // quantity has at most 6 (GPU) / 3 (QPS) / 12 (GB) decimals: scale to an integer, divide exactly-rounded.
    const int scale = l.unit == "GPU-second" ? 6 : l.unit == "QPS-second" ? 3 : 12;
    __int128 v = 0;
    bool neg = false;
    int decimals = -1;
    for (char ch : l.quantity) {
      if (ch == '-') neg = true;
      else if (ch == '.') decimals = 0;
      else {
        v = v * 10 + (ch - '0');
        if (decimals >= 0) ++decimals;
      }
    }
    for (int d = std::max(decimals, 0); d < scale; ++d) v *= 10;
    const int64_t per = l.unit == "GPU-second" ? kSecondsPerHour : kHoursPerBillingMonth * kSecondsPerHour;
    __int128 pow = 1;
    for (int i = 0; i < scale; ++i) pow *= 10;
    // value in units of 1e-9 pricing units: v / 10^scale / per × 10^9 (a unit price: in range)
    const int64_t nano = div_half_even_checked(v * 1'000'000'000, static_cast<int64_t>(pow) * per);
    return format_scaled(neg ? -nano : nano, 9);
  }
  if (l.unit == "token") {  // priced per 1M tokens
    __int128 v = 0;
    for (char ch : l.quantity) v = v * 10 + (ch - '0');
    return format_scaled(v, 6);
  }
  return l.quantity;
}

}  // namespace

std::string to_focus_csv(const RatingResult& r, const BillingParties& who) {
  std::string out = row({"BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd",
                         "BillingPeriodStart", "ChargeCategory", "ChargeClass", "ChargeDescription", "ChargeFrequency",
                         "ChargePeriodEnd", "ChargePeriodStart", "CommitmentDiscountId", "ConsumedQuantity", "ConsumedUnit",
                         "ContractedCost", "ContractedUnitPrice", "EffectiveCost", "InvoiceIssuerName", "ListCost",
                         "ListUnitPrice", "PricingCategory", "PricingQuantity", "PricingUnit", "ProviderName",
                         "PublisherName", "RegionId", "ResourceId", "ResourceName", "ServiceCategory", "ServiceName",
                         "SkuId", "SubAccountId", "SubAccountName", "x_Rule", "x_Job"});
  const std::string cur = currency_code(r.currency);
  for (const auto& l : r.lines) {
    const bool credit = l.kind == LineKind::kCredit;
    const std::string cost = l.amount.amount_string();
    const std::string commitment = l.billing_mode == "reserved" && l.rule != "reserved_overflow" ? l.allocation : "";
    out += row({cost, who.account_id, who.account_name, cur, format_rfc3339(r.to), format_rfc3339(r.from),
                charge_category(l), "", l.description, charge_frequency(l), format_rfc3339(l.to), format_rfc3339(l.from),
                commitment, credit ? "" : l.quantity, credit ? "" : l.unit, cost, credit ? "" : l.unit_price, cost,
                who.provider, cost, credit ? "" : l.unit_price, pricing_category(l), credit ? "" : pricing_quantity(l),
                credit ? "" : l.price_unit, who.provider, who.provider, who.region, l.allocation, l.job,
                service_category(l), "gpurent " + (l.offer.empty() ? std::string("contract") : l.offer),
                l.offer.empty() ? "" : l.offer + ":" + l.rule, l.project, l.project, l.rule, l.job});
  }
  return out;
}

}  // namespace gpurent
