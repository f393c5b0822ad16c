// Rent vs build, input side: the hidden-cost table (keys, default shares, descriptions) and
// parse_tco_input. The arithmetic is in tco.cc.
#include <array>
#include <optional>
#include <string>

#include "advisor/advisor_util.h"
#include "advisor/tco.h"
#include "advisor/tco_internal.h"
#include "model/enums_supply.h"

namespace gpurent {
namespace {

using tco_internal::kMaxGpus;

constexpr int64_t kMaxCurveHours = 87'600;  // ten years of hours
constexpr int64_t kMaxDemand = 10'000'000;
// Ceilings in whole currency units: they catch misplaced decimal points and keep every product
// inside 128 bits (the results are checked against 64 bits).
constexpr int64_t kMaxUnitPrice = 10'000'000;  // a GPU, a server, a hidden cost
constexpr int64_t kMaxHourPrice = 10'000;      // per GPU-hour
constexpr int64_t kMaxKwhPrice = 100;
constexpr int64_t kMaxMonthPrice = 10'000'000;

const std::array<HiddenCostInfo, kHiddenCostCount> kHidden = {{
    {HiddenCost::kNetworking, "networking", 1000, "advisor.tco.hidden.networking"},
    {HiddenCost::kStorage, "storage", 600, "advisor.tco.hidden.storage"},
    {HiddenCost::kSoftware, "software", 300, "advisor.tco.hidden.software"},
    {HiddenCost::kSpares, "spares", 400, "advisor.tco.hidden.spares"},
    {HiddenCost::kFacility, "facility", 400, "advisor.tco.hidden.facility"},
    {HiddenCost::kSecurity, "security", 200, "advisor.tco.hidden.security"},
    {HiddenCost::kDelay, "delay", 300, "advisor.tco.hidden.delay"},
}};

}  // namespace

const std::array<HiddenCostInfo, kHiddenCostCount>& hidden_cost_table() { return kHidden; }

Result<TcoInput> parse_tco_input(const json& body, const GpuCatalog& catalog) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  TcoInput in;
  in.currency = f.enumeration("currency", kCurrencies, std::optional<Currency>(Currency::kUSD));
  const Currency c = in.currency;
  const GpuModel* m = read_gpu_model_ref(f, catalog, "gpu_model");
  if (m) in.gpu_model = m->id;
  in.gpu_count = f.integer("gpu_count", 1, kMaxGpus);
  in.gpus_per_server = f.opt_integer("gpus_per_server", 1, 64).value_or(8);
  in.price_per_gpu = read_capped_money(f, "price_per_gpu", c, kMaxUnitPrice, true, true).value_or(Money::zero(c));
  in.server_overhead = read_capped_money(f, "server_overhead", c, kMaxUnitPrice, true, false).value_or(Money::zero(c));
  in.window_months = f.opt_integer("window_months", 1, 120).value_or(18);
  in.physical_life_months = f.opt_integer("physical_life_months", 1, 240).value_or(60);
  if (in.window_months > in.physical_life_months)
    f.error("window_months",
            Message("advisor.tco.window_exceeds_life").arg("months", std::to_string(in.physical_life_months)));
  in.residual_method = f.enumeration("residual_method", kResidualMethodNames,
                                     std::optional<ResidualMethod>(ResidualMethod::kStraightLine));
  auto resale = f.opt_integer("resale_bp", 0, 10'000);
  if (in.residual_method == ResidualMethod::kResale && !resale && !f.has("resale_bp"))
    f.error("resale_bp", Message("advisor.tco.resale_bp_required"));
  if (in.residual_method != ResidualMethod::kResale && f.has("resale_bp"))
    f.error("resale_bp", Message("advisor.tco.resale_bp_only_resale"));
  in.resale_bp = resale.value_or(0);
  if (auto w = f.opt_integer("gpu_watts", 1, 5'000)) {
    in.gpu_watts = *w;
  } else if (!f.has("gpu_watts") && m) {
    if (m->tdp_watts && *m->tdp_watts > 0)
      in.gpu_watts = *m->tdp_watts;
    else
      f.error("gpu_watts", Message("advisor.tco.gpu_watts_required").arg("model", m->id));
  }
  in.server_overhead_watts = f.opt_integer("server_overhead_watts", 0, 100'000).value_or(3000);
  in.power_draw_pct = f.opt_integer("power_draw_pct", 1, 100).value_or(100);
  in.pue_x100 = f.opt_integer("pue_x100", 100, 300).value_or(130);
  in.electricity_per_kwh =
      read_capped_money(f, "electricity_per_kwh", c, kMaxKwhPrice, true, false).value_or(Money::zero(c));
  in.space_per_rack_unit_month = read_capped_money(f, "space_per_rack_unit_month", c, kMaxMonthPrice, false, false);
  in.space_per_kw_month = read_capped_money(f, "space_per_kw_month", c, kMaxMonthPrice, false, false);
  const bool ru = f.has("space_per_rack_unit_month"), kw = f.has("space_per_kw_month");
  if (ru && kw) f.error("space_per_kw_month", Message("advisor.tco.space_both"));
  if (!ru && !kw) f.error("space_per_kw_month", Message("advisor.tco.space_required"));
  if (auto u = f.opt_integer("rack_units_per_server", 1, 48)) {
    in.rack_units_per_server = *u;
    if (!ru) f.error("rack_units_per_server", Message("advisor.tco.rack_units_only_ru"));
  }
  in.staff_fte_cost_per_month =
      read_capped_money(f, "staff_fte_cost_per_month", c, kMaxMonthPrice, true, false).value_or(Money::zero(c));
  in.gpus_per_fte = f.opt_integer("gpus_per_fte", 1, kMaxGpus).value_or(256);
  for (size_t i = 0; i < kHiddenCostCount; ++i) in.hidden[i].bp = kHidden[i].default_bp;
  f.object("hidden_costs", false, [&](Fields& h) {
    for (size_t i = 0; i < kHiddenCostCount; ++i) {
      h.object(kHidden[i].key, false, [&](Fields& e) {
        auto bp = e.opt_integer("bp", 0, 10'000);
        auto a = read_capped_money(e, "amount", c, kMaxUnitPrice, false, false);
        const bool has_bp = e.has("bp"), has_amount = e.has("amount");
        if (has_bp && has_amount) e.error("amount", Message("advisor.tco.hidden_both"));
        if (!has_bp && !has_amount) e.error("bp", Message("advisor.tco.hidden_required"));
        if (bp) in.hidden[i].bp = *bp;
        if (a) {
          in.hidden[i].amount = a;
          in.hidden[i].bp = 0;
        }
      });
    }
  });
  in.interest_bp = f.opt_integer("interest_bp", 0, 5'000).value_or(0);
  if (const json* curve = f.raw("demand_curve")) {
    if (!curve->is_array() || curve->empty()) {
      f.error("demand_curve", Message("advisor.tco.curve_empty"));
    } else if (curve->size() > static_cast<size_t>(kMaxCurveHours)) {
      f.error("demand_curve", Message("advisor.tco.curve_too_long").arg("max", std::to_string(kMaxCurveHours)));
    } else {
      int64_t sum = 0;
      bool element_errors = false;
      for (size_t i = 0; i < curve->size(); ++i) {
        const json& v = (*curve)[i];
        const std::string path = "demand_curve[" + std::to_string(i) + "]";
        if (!v.is_number_integer()) {
          errs.add(path, Message("advisor.tco.curve_whole"));
          element_errors = true;
        } else if (v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxDemand) {
          errs.add(path, Message("advisor.tco.range").arg("min", "0").arg("max", std::to_string(kMaxDemand)));
          element_errors = true;
        } else {
          in.demand_curve.push_back(v.get<int64_t>());
          sum += v.get<int64_t>();
        }
      }
      if (!element_errors && sum == 0) f.error("demand_curve", Message("advisor.tco.curve_no_demand"));
    }
  }
  in.utilization_pct = f.opt_integer("utilization_pct", 1, 100);
  const bool has_curve = f.has("demand_curve"), has_pct = f.has("utilization_pct");
  if (has_curve && has_pct) f.error("utilization_pct", Message("advisor.tco.utilization_both"));
  if (!has_curve && !has_pct) f.error("utilization_pct", Message("advisor.tco.utilization_required"));
  f.objects("offers", false, kMaxTcoOffers, [&](Fields& o, size_t) {
    TcoOffer off;
    off.name = o.str("name", {.max_len = 64});
    off.on_demand_per_gpu_hour =
        read_capped_money(o, "on_demand_per_gpu_hour", c, kMaxHourPrice, true, true).value_or(Money::zero(c));
    off.reserved_per_gpu_hour = read_capped_money(o, "reserved_per_gpu_hour", c, kMaxHourPrice, false, true);
    in.offers.push_back(std::move(off));
  });
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return in;
}

}  // namespace gpurent
