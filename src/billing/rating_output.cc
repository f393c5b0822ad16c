#include "billing/rating_output.h"

#include <algorithm>
#include <map>

#include "billing/rating_impl.h"
#include "core/message.h"

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
  if (!l.description_message.empty()) j["description_message"] = message_to_json(l.description_message);
  if (!l.measurements.empty()) j["measurements"] = l.measurements;
  if (!l.commitment.empty()) j["commitment"] = l.commitment;
  if (!l.list_unit_price.empty()) {
    j["list_unit_price"] = l.list_unit_price;
    j["list_amount"] = l.list_amount.amount_string();
  }
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

bool purchase(const ChargeLine& l) { return l.kind == LineKind::kCommitment; }
bool no_quantity(const ChargeLine& l) { return l.kind == LineKind::kCredit; }  // credits and the credit cap

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
  if (no_quantity(l)) return "";
  if (l.rule == "reserved_covered") return "Committed";
  if (l.billing_mode == "spot") return "Dynamic";
  return "Standard";
}

const char* service_category(const ChargeLine& l) {
  if (l.rule.rfind("storage_io", 0) == 0 || l.rule.rfind("image_storage", 0) == 0 || l.rule.rfind("artifact_storage", 0) == 0 ||
      l.rule.rfind("volume_storage", 0) == 0)
    return "Storage";
  if (l.rule.rfind("egress", 0) == 0) return "Networking";
  if (l.billing_mode == "per_token" || l.billing_mode == "per_qps" || l.billing_mode == "per_request")
    return "AI and Machine Learning";
  return "Compute";
}

const char* resource_type(const ChargeLine& l) {
  if (purchase(l)) return "Reserved commitment";
  if (no_quantity(l) || l.allocation.empty()) return "";
  return "GPU allocation";
}

// gpurent's units in the FOCUS UnitFormat (`<singular>-<plural>` compounds, `<quantity> <plural>`).
std::string focus_unit(const std::string& u) {
  static const std::map<std::string, std::string> m = {
      {"GPU-second", "GPU-Seconds"}, {"GPU-hour", "GPU-Hours"},         {"GB", "GB"},
      {"GB-second", "GB-Seconds"},   {"GB-month (730 h)", "GB-Months"}, {"token", "Tokens"},
      {"1M tokens", "1000000 Tokens"}, {"QPS-second", "QPS-Seconds"},   {"QPS-month (730 h)", "QPS-Months"},
      {"request", "Requests"},       {"1M requests", "1000000 Requests"}};
  auto it = m.find(u);
  return it == m.end() ? u : it->second;
}

// FOCUS date-times: "YYYY-MM-DDTHH:mm:ssZ" in UTC; ends (exclusive) round up to the second.
std::string focus_time(TimeMs t, bool end) {
  const TimeMs s = end ? (t + 999) / 1000 * 1000 : t / 1000 * 1000;  // times are after 1970
  std::string f = format_rfc3339(s);
  return f.substr(0, 19) + "Z";
}

// An exact decimal ("123.456789", "-5") as an integer scaled by 10^scale (digits beyond it dropped:
// quantities never carry more).
__int128 scaled(const std::string& q, int scale) {
  __int128 v = 0;
  bool neg = false;
  int decimals = -1;
  for (char ch : q) {
    if (ch == '-') neg = true;
    else if (ch == '.') decimals = 0;
    else if (decimals < scale) {
      v = v * 10 + (ch - '0');
      if (decimals >= 0) ++decimals;
    }
  }
  for (int d = std::max(decimals, 0); d < scale; ++d) v *= 10;
  return neg ? -v : v;
}

__int128 pow10(int n) {
  __int128 p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

// A quantity of GPU-, QPS- or GB-seconds (at most 6, 3 and 12 decimals) in the price's unit:
// GPU-hours, QPS- and GB-months of 730 h, 9 decimals, rounded half to even.
std::string per_time_quantity(__int128 v, int scale, int64_t seconds_per_unit) {
  const int64_t nano = div_half_even_checked(v * 1'000'000'000, static_cast<int64_t>(pow10(scale)) * seconds_per_unit);
  return format_scaled(nano, 9);
}

std::string pricing_quantity(const ChargeLine& l) {
  if (l.unit == "GPU-second") return per_time_quantity(scaled(l.quantity, 6), 6, kSecondsPerHour);
  if (l.unit == "QPS-second") return per_time_quantity(scaled(l.quantity, 3), 3, kHoursPerBillingMonth * kSecondsPerHour);
  if (l.unit == "GB-second") return per_time_quantity(scaled(l.quantity, 12), 12, kHoursPerBillingMonth * kSecondsPerHour);
  if (l.unit == "token" || l.unit == "request") return format_scaled(scaled(l.quantity, 0), 6);  // priced per 1M
  return l.quantity;
}

// Splits `total` cents over `weights` in proportion, to the cent, largest remainders first (ties:
// the earlier weight): the parts add up to `total` exactly.
std::vector<int64_t> split_cents(int64_t total, const std::vector<__int128>& weights) {
  std::vector<int64_t> out(weights.size(), 0);
  __int128 sum = 0;
  for (auto w : weights) sum += w;
  if (sum <= 0) return out;
  std::vector<std::pair<__int128, size_t>> rem;
  int64_t given = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const __int128 num = static_cast<__int128>(total) * weights[i];
    out[i] = static_cast<int64_t>(num / sum);
    given += out[i];
    rem.push_back({num % sum, i});
  }
  std::stable_sort(rem.begin(), rem.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  for (size_t k = 0; given < total && k < rem.size(); ++k, ++given) ++out[rem[k].second];
  return out;
}

struct Amortized {
  std::map<size_t, int64_t> effective;  // line index → EffectiveCost (micros, whole cents)
  std::map<std::string, int64_t> unused;  // commitment id → EffectiveCost of its unused part
  std::map<std::string, __int128> unused_milli_ms;  // commitment id → GPU time it did not cover
};

// Each commitment's share of the period (in cents) spread over the covered lines in proportion to
// their value at the commitment's price, the remainder being its unused part.
Amortized amortize(const RatingResult& r) {
  Amortized a;
  for (const auto& cm : r.commitments) {
    std::vector<size_t> idx;
    std::vector<__int128> w;
    __int128 covered = 0, covered_time = 0;
    for (size_t i = 0; i < r.lines.size(); ++i) {
      const ChargeLine& l = r.lines[i];
      if (l.rule != "reserved_covered" || l.commitment != cm.id) continue;
      idx.push_back(i);
      w.push_back(l.covered_value.micros());
      covered += l.covered_value.micros();
      covered_time += scaled(l.quantity, 6);  // milli-GPU × ms
    }
    w.push_back(std::max<__int128>(cm.amortized.micros() - covered, 0));
    const int64_t cents = cm.amortized.round_to_cents().micros() / 10'000;
    const auto parts = split_cents(cents, w);
    for (size_t k = 0; k < idx.size(); ++k) a.effective[idx[k]] = parts[k] * 10'000;
    a.unused[cm.id] = parts.back() * 10'000;
    a.unused_milli_ms[cm.id] =
        std::max<__int128>(static_cast<__int128>(cm.gpus) * 1000 * (cm.to - cm.from) - covered_time, 0);
  }
  return a;
}

}  // namespace

std::string to_focus_csv(const RatingResult& r, const BillingParties& who) {
  std::string out = row({"BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd",
                         "BillingPeriodStart", "ChargeCategory", "ChargeClass", "ChargeDescription", "ChargeFrequency",
                         "ChargePeriodEnd", "ChargePeriodStart", "CommitmentDiscountCategory", "CommitmentDiscountId",
                         "CommitmentDiscountName", "CommitmentDiscountStatus", "CommitmentDiscountType",
                         "ConsumedQuantity", "ConsumedUnit", "ContractedCost", "ContractedUnitPrice", "EffectiveCost",
                         "InvoiceIssuerName", "ListCost", "ListUnitPrice", "PricingCategory", "PricingQuantity",
                         "PricingUnit", "ProviderName", "PublisherName", "RegionId", "RegionName", "ResourceId",
                         "ResourceName", "ResourceType", "ServiceCategory", "ServiceName", "SkuId", "SkuPriceId",
                         "SubAccountId", "SubAccountName", "x_Rule", "x_Job"});
  const Currency cur = r.currency;
  const std::string code = currency_code(cur);
  // The billing period: the whole calendar months the rated period lies in.
  const TimeMs period_start = month_start(r.from);
  const TimeMs period_end = std::max(add_months(period_start, 1), add_months(month_start(r.to - 1), 1));
  const std::string bp_start = focus_time(period_start, false), bp_end = focus_time(period_end, true);
  auto money = [&](int64_t micros) { return Money(micros, cur).amount_string(); };
  auto region = [&](const std::string& offer) {
    auto it = who.regions.find(offer);
    return it == who.regions.end() ? std::string() : it->second;
  };
  std::map<std::string, const CommitmentShare*> shares;
  for (const auto& cm : r.commitments) shares[cm.id] = &cm;
  auto commitment_name = [&](const std::string& id, const std::string& fallback) {
    auto it = shares.find(id);
    return it == shares.end() ? fallback : it->second->description;
  };
  const Amortized am = amortize(r);
  for (size_t i = 0; i < r.lines.size(); ++i) {
    const ChargeLine& l = r.lines[i];
    const bool credit = no_quantity(l);
    const std::string cost = l.amount.amount_string();
    const bool listed = !l.list_unit_price.empty();
    const std::string list_price = credit ? "" : listed ? l.list_unit_price : l.unit_price;
    const std::string list_cost = listed ? l.list_amount.amount_string() : cost;
    const bool covered = l.rule == "reserved_covered";
    std::string effective = cost;
    if (purchase(l)) effective = money(0);  // amortized over the usage it covers
    if (auto it = am.effective.find(i); it != am.effective.end()) effective = money(it->second);
    const bool has_cm = !l.commitment.empty();
    const TimeMs from = std::clamp(l.from, period_start, period_end), to = std::clamp(l.to, period_start, period_end);
    out += row({cost, who.account_id, who.account_name, code, bp_end, bp_start, charge_category(l), "", l.description,
                charge_frequency(l), focus_time(std::max(from, to), true), focus_time(from, false),
                has_cm ? "Usage" : "", l.commitment, has_cm ? commitment_name(l.commitment, l.description) : "",
                has_cm && !purchase(l) ? "Used" : "", has_cm ? "Reserved GPU-Hours" : "",
                credit || purchase(l) ? "" : l.quantity, credit || purchase(l) ? "" : focus_unit(l.unit),
                covered ? list_cost : cost, credit ? "" : covered ? list_price : l.unit_price, effective, who.invoice_issuer,
                list_cost, list_price, pricing_category(l), credit ? "" : pricing_quantity(l),
                credit ? "" : focus_unit(l.price_unit), who.provider, who.provider, region(l.offer), region(l.offer),
                credit ? "" : l.allocation, credit ? "" : purchase(l) ? l.allocation : l.job, resource_type(l),
                service_category(l), "gpurent " + (l.offer.empty() ? std::string("contract") : l.offer),
                l.offer.empty() || credit ? "" : l.offer + ":" + l.rule,
                l.offer.empty() || credit ? "" : l.offer + ":" + l.rule + ":" + l.unit_price, l.project, l.project, l.rule,
                l.job});
  }
  // Each commitment's part its usage did not cover: a Usage row billed 0 whose EffectiveCost is
  // the rest of the commitment's share of the period.
  for (const auto& cm : r.commitments) {
    const int64_t unused = am.unused.at(cm.id);
    const __int128 time = am.unused_milli_ms.at(cm.id);
    if (unused == 0 && time == 0) continue;
    out += row({money(0), who.account_id, who.account_name, code, bp_end, bp_start, "Usage", "",
                cm.description + ", the part its usage did not cover", "Usage-Based", focus_time(cm.to, true), focus_time(cm.from, false),
                "Usage", cm.id, cm.description, "Unused", "Reserved GPU-Hours", "", "", money(0), "", money(unused),
                who.invoice_issuer, money(0), "", "Committed", per_time_quantity(time, 6, kSecondsPerHour), "GPU-Hours",
                who.provider, who.provider, region(cm.offer), region(cm.offer), cm.id, cm.id, "Reserved commitment",
                "Compute", "gpurent " + cm.offer, cm.offer + ":reserved_unused", "", "", "", "reserved_unused", ""});
  }
  return out;
}

BillingParties scenario_parties(const RatingInput& in) {
  BillingParties who{in.contract.tenant, in.contract.tenant, in.contract.supplier, "gpurent", {}};
  for (const auto& [name, offer] : in.offers) {
    who.regions[name] = offer.region;
    if (who.provider.empty()) who.provider = offer.supplier;
  }
  if (who.account_id.empty()) who.account_id = who.account_name = "scenario";
  return who;
}

}  // namespace gpurent
