// Rent vs build, arithmetic: compute_tco (capex, residual, the cost lines, per-hour figures,
// utilization and the offer comparisons) and to_json. Parsing is in tco_parse.cc.
#include "advisor/tco.h"

#include <algorithm>
#include <limits>
#include <string>

#include "advisor/advisor_util.h"
#include "advisor/tco_internal.h"

namespace gpurent {
namespace {

using i128 = __int128;

bool fits64(i128 v) { return v <= std::numeric_limits<int64_t>::max() && v >= std::numeric_limits<int64_t>::min(); }

// "money overflow computing <what>"; `what` names the figure (advisor.tco.overflow.*).
Error overflow(Message what) {
  return Error::make(Code::kInvalid, Message("advisor.tco.money_overflow").arg("what", std::move(what)));
}

// m x num / den, rounded half to even once at the micro-unit.
Result<Money> scaled(const Money& m, i128 num, i128 den, const Message& what) {
  i128 prod;
  if (__builtin_mul_overflow(static_cast<i128>(m.micros()), num, &prod)) return overflow(what);
  const i128 q = div_half_even(prod, den);
  if (!fits64(q)) return overflow(what);
  return Money(static_cast<int64_t>(q), m.currency());
}

std::string pct_bp(int64_t bp) {  // 7127 -> "71.27 %"
  std::string frac = std::to_string(bp % 100);
  if (frac.size() < 2) frac.insert(0, "0");
  return std::to_string(bp / 100) + "." + frac + " %";
}

std::string amt(const Money& m) { return m.to_string(); }

}  // namespace

namespace {

// One line of the arithmetic shown to the user, as a message code, with its formula.
void tco_step(TcoResult& r, Message text, std::string formula, json value) {
  r.steps.push_back({std::move(text), std::move(formula), std::move(value)});
}

// A cost line of the window (also shown as a step).
void add_line(TcoResult& r, std::string key, Message text, std::string formula, Money amount) {
  tco_step(r, text, formula, amount.amount_string());
  r.lines.push_back({std::move(key), std::move(text), std::move(formula), amount});
}

Status check_tco_input(const TcoInput& in) {
  if (in.gpu_count < 1 || in.gpu_count > tco_internal::kMaxGpus)
    return Error::invalid("gpu_count", Message("advisor.tco.range").arg("min", "1").arg("max", "1000000"));
  if (in.gpus_per_server < 1) return Error::invalid("gpus_per_server", Message("advisor.tco.at_least").arg("min", "1"));
  if (in.window_months < 1 || in.window_months > in.physical_life_months)
    return Error::invalid("window_months", Message("advisor.tco.window_range"));
  if (in.gpu_watts < 1) return Error::invalid("gpu_watts", Message("advisor.tco.at_least").arg("min", "1"));
  if (in.pue_x100 < 100) return Error::invalid("pue_x100", Message("advisor.tco.at_least").arg("min", "100"));
  if (in.power_draw_pct < 1 || in.power_draw_pct > 100)
    return Error::invalid("power_draw_pct", Message("advisor.tco.range").arg("min", "1").arg("max", "100"));
  if (in.gpus_per_fte < 1) return Error::invalid("gpus_per_fte", Message("advisor.tco.at_least").arg("min", "1"));
  if (in.demand_curve.empty() == !in.utilization_pct)
    return Error::invalid("utilization_pct", Message("advisor.tco.utilization_exactly_one"));
  if (!in.space_per_kw_month == !in.space_per_rack_unit_month)
    return Error::invalid("space_per_kw_month", Message("advisor.tco.space_exactly_one"));

  return ok_status();
}

// Servers, capex and the residual value at the end of the window.
Status add_capex(TcoResult& r, const TcoInput& in) {
  const Currency c = in.currency;
  const int64_t n = in.gpu_count, months = in.window_months, life = in.physical_life_months;
  // Capex and residual.
  auto gpus = scaled(in.price_per_gpu, n, 1, Message("advisor.tco.overflow.capex"));
  auto servers = scaled(in.server_overhead, r.servers, 1, Message("advisor.tco.overflow.capex"));
  if (!gpus) return gpus.error();
  if (!servers) return servers.error();
  auto capex = gpus->plus(*servers);
  if (!capex) return overflow(Message("advisor.tco.overflow.capex"));
  r.capex = *capex;
  tco_step(r, Message("advisor.tco.servers"),
       "ceil(" + std::to_string(n) + " / " + std::to_string(in.gpus_per_server) + ") = " + std::to_string(r.servers),
       r.servers);
  tco_step(r, Message("advisor.tco.capex"),
       std::to_string(n) + " x " + amt(in.price_per_gpu) + " + " + std::to_string(r.servers) + " x " +
           amt(in.server_overhead) + " = " + amt(r.capex),
       r.capex.amount_string());
  std::string residual_formula;
  switch (in.residual_method) {
    case ResidualMethod::kStraightLine: {
      auto v = scaled(r.capex, life - months, life, Message("advisor.tco.overflow.residual"));
      if (!v) return v.error();
      r.residual = *v;
      residual_formula = amt(r.capex) + " x (" + std::to_string(life) + " - " + std::to_string(months) + ") / " +
                         std::to_string(life) + " = " + amt(r.residual);
      break;
    }
    case ResidualMethod::kResale: {
      auto v = scaled(r.capex, in.resale_bp, 10'000, Message("advisor.tco.overflow.residual"));
      if (!v) return v.error();
      r.residual = *v;
      residual_formula = amt(r.capex) + " x " + pct_bp(in.resale_bp) + " = " + amt(r.residual);
      break;
    }
    case ResidualMethod::kNone:
      r.residual = Money::zero(c);
      residual_formula = "0 (the whole capex is charged to the window)";
      break;
  }
  tco_step(r, Message("advisor.tco.residual").arg("method", enum_name(kResidualMethodNames, in.residual_method)),
       residual_formula,
       r.residual.amount_string());
  return ok_status();
}

// Depreciation, financing and the hidden costs (each a share of capex or an amount given).
Status add_ownership_lines(TcoResult& r, const TcoInput& in) {
  const Currency c = in.currency;
  const int64_t months = in.window_months;
  const auto& hidden = hidden_cost_table();
  // Lines.
  auto dep = r.capex.minus(r.residual);
  if (!dep) return overflow(Message("advisor.tco.overflow.depreciation"));
  add_line(r, "depreciation", Message("advisor.tco.depreciation"),
       amt(r.capex) + " - " + amt(r.residual) + " = " + amt(*dep), *dep);
  // Equal monthly principal repayments over the window, interest monthly on the opening balance:
  // sum over k = 0..m-1 of capex x (m - k)/m x rate/12 = capex x rate x (m + 1) / 24.
  auto fin = scaled(r.capex, static_cast<i128>(in.interest_bp) * (months + 1), 2 * 12 * 10'000,
                    Message("advisor.tco.overflow.financing"));
  if (!fin) return fin.error();
  add_line(r, "financing", Message("advisor.tco.financing"),
       amt(r.capex) + " x " + pct_bp(in.interest_bp) + " x " + std::to_string(months + 1) + " / 24 = " + amt(*fin),
       *fin);
  for (size_t i = 0; i < kHiddenCostCount; ++i) {
    const HiddenCostSpec& h = in.hidden[i];
    Money v = Money::zero(c);
    std::string formula;
    if (h.amount) {
      v = *h.amount;
      formula = "given: " + amt(v);
    } else {
      auto s = scaled(r.capex, h.bp, 10'000, Message("advisor.tco.overflow.hidden").arg("key", hidden[i].key));
      if (!s) return s.error();
      v = *s;
      formula = amt(r.capex) + " x " + pct_bp(h.bp) + " = " + amt(v);
    }
    add_line(r, std::string("hidden.") + hidden[i].key,
             Message("advisor.tco.hidden").arg("what", Message(hidden[i].code)), formula, v);
  }
  return ok_status();
}

// Power, space and staff over the window.
Status add_running_lines(TcoResult& r, const TcoInput& in) {
  const int64_t n = in.gpu_count, months = in.window_months;
  r.it_watts = n * in.gpu_watts + r.servers * in.server_overhead_watts;
  // kWh = W x draw% x PUE x hours / 1000; cost = price per kWh x kWh, one rounding.
  auto power =
      scaled(in.electricity_per_kwh, static_cast<i128>(r.it_watts) * in.power_draw_pct * in.pue_x100 * r.window_hours,
             100 * 100 * 1000, Message("advisor.tco.overflow.power"));
  if (!power) return power.error();
  add_line(r, "power", Message("advisor.tco.power"),
       "(" + std::to_string(n) + " x " + std::to_string(in.gpu_watts) + " W + " + std::to_string(r.servers) + " x " +
           std::to_string(in.server_overhead_watts) + " W) x " + std::to_string(in.power_draw_pct) + " % x " +
           std::to_string(in.pue_x100 / 100) + "." + (in.pue_x100 % 100 < 10 ? "0" : "") +
           std::to_string(in.pue_x100 % 100) + " x " + std::to_string(r.window_hours) + " h / 1000 x " +
           amt(in.electricity_per_kwh) + " = " + amt(*power),
       *power);
  if (in.space_per_kw_month) {
    auto s = scaled(*in.space_per_kw_month, static_cast<i128>(r.it_watts) * months, 1000,
                    Message("advisor.tco.overflow.space"));
    if (!s) return s.error();
    add_line(r, "space", Message("advisor.tco.space_kw"),
         std::to_string(r.it_watts) + " W / 1000 x " + amt(*in.space_per_kw_month) + " x " + std::to_string(months) +
             " = " + amt(*s),
         *s);
  } else {
    auto s = scaled(*in.space_per_rack_unit_month, static_cast<i128>(r.servers) * in.rack_units_per_server * months, 1,
                    Message("advisor.tco.overflow.space"));
    if (!s) return s.error();
    add_line(r, "space", Message("advisor.tco.space_u"),
         std::to_string(r.servers) + " x " + std::to_string(in.rack_units_per_server) + " U x " +
             amt(*in.space_per_rack_unit_month) + " x " + std::to_string(months) + " = " + amt(*s),
         *s);
  }
  auto staff = scaled(in.staff_fte_cost_per_month, static_cast<i128>(months) * n, in.gpus_per_fte,
                      Message("advisor.tco.overflow.staff"));
  if (!staff) return staff.error();
  add_line(r, "staff", Message("advisor.tco.staff"),
       amt(in.staff_fte_cost_per_month) + " x " + std::to_string(months) + " x " + std::to_string(n) + " / " +
           std::to_string(in.gpus_per_fte) + " = " + amt(*staff),
       *staff);
  return ok_status();
}

// The total and the per-month and per-owned-GPU-hour figures.
Status add_totals(TcoResult& r, const TcoInput& in) {
  const Currency c = in.currency;
  const int64_t n = in.gpu_count, months = in.window_months;
  r.total = Money::zero(c);
  for (const auto& l : r.lines) {
    auto t = r.total.plus(l.amount);
    if (!t) return overflow(Message("advisor.tco.overflow.total"));
    r.total = *t;
  }
  tco_step(r, Message("advisor.tco.total"), "total = " + amt(r.total),
       r.total.amount_string());
  auto per_month = scaled(r.total, 1, months, Message("advisor.tco.overflow.per_month"));
  auto per_owned = scaled(r.total, 1, r.owned_gpu_hours, Message("advisor.tco.overflow.per_gpu_hour"));
  if (!per_month) return per_month.error();
  if (!per_owned) return per_owned.error();
  r.per_month = *per_month;
  r.cost_per_owned_gpu_hour = *per_owned;
  tco_step(r, Message("advisor.tco.owned_gpu_hours"),
       std::to_string(n) + " x " + std::to_string(months) + " x 730 = " + std::to_string(r.owned_gpu_hours),
       r.owned_gpu_hours);
  tco_step(r, Message("advisor.tco.per_owned_gpu_hour"),
       amt(r.total) + " / " + std::to_string(r.owned_gpu_hours) + " = " + amt(r.cost_per_owned_gpu_hour),
       r.cost_per_owned_gpu_hour.amount_string());
  return ok_status();
}

// Utilization as an exact fraction (given, or from the demand curve) and the cost per useful GPU-hour.
Status add_utilization(TcoResult& r, const TcoInput& in) {
  const int64_t n = in.gpu_count;
  if (in.utilization_pct) {
    r.utilized_num = *in.utilization_pct;
    r.utilized_den = 100;
    tco_step(r, Message("advisor.tco.utilization_given"), std::to_string(*in.utilization_pct) + " %",
         *in.utilization_pct * 100);
  } else {
    int64_t served = 0, unmet = 0, demand = 0;
    for (int64_t d : in.demand_curve) {
      served += std::min(d, n);
      unmet += std::max<int64_t>(d - n, 0);
      demand += d;
    }
    if (served == 0) return Error::invalid("demand_curve", Message("advisor.tco.no_demand"));
    r.utilized_num = served;
    r.utilized_den = n * static_cast<int64_t>(in.demand_curve.size());
    r.unmet_demand_bp = static_cast<int64_t>(div_half_even(static_cast<i128>(unmet) * 10'000, demand));
    tco_step(r, Message("advisor.tco.utilization_curve"),
         std::to_string(served) + " / (" + std::to_string(n) + " x " + std::to_string(in.demand_curve.size()) + ")",
         static_cast<int64_t>(div_half_even(static_cast<i128>(served) * 10'000, r.utilized_den)));
    if (unmet > 0)
      tco_step(r, Message("advisor.tco.unmet_demand"),
           std::to_string(unmet) + " / " + std::to_string(demand) + " = " + pct_bp(r.unmet_demand_bp),
           r.unmet_demand_bp);
  }
  r.utilization_bp = static_cast<int64_t>(div_half_even(static_cast<i128>(r.utilized_num) * 10'000, r.utilized_den));
  r.useful_gpu_hours_micro = static_cast<int64_t>(
      div_half_even(static_cast<i128>(r.owned_gpu_hours) * r.utilized_num * 1'000'000, r.utilized_den));
  auto per_useful = scaled(r.total, r.utilized_den, static_cast<i128>(r.owned_gpu_hours) * r.utilized_num,
                           Message("advisor.tco.overflow.per_useful_gpu_hour"));
  if (!per_useful) return per_useful.error();
  r.cost_per_useful_gpu_hour = *per_useful;
  tco_step(r, Message("advisor.tco.per_useful_gpu_hour"),
       amt(r.total) + " / (" + std::to_string(r.owned_gpu_hours) + " x " + pct_bp(r.utilization_bp) +
           ") = " + amt(r.cost_per_useful_gpu_hour),
       r.cost_per_useful_gpu_hour.amount_string());
  return ok_status();
}

// Each offer against building. Exact comparisons: every cost is scaled by utilized_den so no
// rounding decides.
Status add_comparisons(TcoResult& r, const TcoInput& in) {
  const i128 build_key = static_cast<i128>(r.total.micros()) * r.utilized_den;
  for (const auto& o : in.offers) {
    TcoOfferComparison cmp;
    cmp.name = o.name;
    cmp.on_demand_per_gpu_hour = o.on_demand_per_gpu_hour;
    cmp.reserved_per_gpu_hour = o.reserved_per_gpu_hour;
    auto od = scaled(o.on_demand_per_gpu_hour, static_cast<i128>(r.owned_gpu_hours) * r.utilized_num, r.utilized_den,
                     Message("advisor.tco.overflow.on_demand_cost"));
    if (!od) return od.error();
    cmp.on_demand_cost = *od;
    const i128 od_key = static_cast<i128>(o.on_demand_per_gpu_hour.micros()) * r.owned_gpu_hours * r.utilized_num;
    cmp.build_break_even_utilization_bp =
        static_cast<int64_t>(div_half_even(static_cast<i128>(r.total.micros()) * 10'000,
                                           static_cast<i128>(o.on_demand_per_gpu_hour.micros()) * r.owned_gpu_hours));
    // On-demand first, then reserved, then build: a tie goes to the option with less commitment.
    cmp.cheapest = "on_demand";
    i128 best = od_key;
    if (o.reserved_per_gpu_hour) {
      auto rc = scaled(*o.reserved_per_gpu_hour, r.owned_gpu_hours, 1, Message("advisor.tco.overflow.reserved_cost"));
      if (!rc) return rc.error();
      cmp.reserved_cost = *rc;
      auto ru = scaled(*o.reserved_per_gpu_hour, r.utilized_den, r.utilized_num,
                       Message("advisor.tco.overflow.reserved_per_useful_gpu_hour"));
      if (!ru) return ru.error();
      cmp.reserved_per_useful_gpu_hour = *ru;
      cmp.reserved_break_even_utilization_bp = static_cast<int64_t>(div_half_even(
          static_cast<i128>(o.reserved_per_gpu_hour->micros()) * 10'000, o.on_demand_per_gpu_hour.micros()));
      auto diff = o.reserved_per_gpu_hour->minus(r.cost_per_owned_gpu_hour);
      if (!diff) return overflow(Message("advisor.tco.overflow.build_vs_reserved"));
      cmp.build_vs_reserved_per_gpu_hour = *diff;
      const i128 res_key = static_cast<i128>(rc->micros()) * r.utilized_den;
      if (res_key < best) {
        best = res_key;
        cmp.cheapest = "reserved";
      }
    }
    if (build_key < best) cmp.cheapest = "build";
    const std::string be = cmp.build_break_even_utilization_bp > 10'000 ? "never (above 100 %)"
                                                                        : pct_bp(cmp.build_break_even_utilization_bp);
    tco_step(r, Message("advisor.tco.offer_break_even").arg("offer", o.name),
         amt(r.total) + " / (" + std::to_string(r.owned_gpu_hours) + " x " + amt(o.on_demand_per_gpu_hour) +
             ") = " + be + "; at " + pct_bp(r.utilization_bp) + ": build " + amt(r.total) + ", on-demand " +
             amt(cmp.on_demand_cost) + (cmp.reserved_cost ? ", reserved " + amt(*cmp.reserved_cost) : "") + " -> " +
             cmp.cheapest,
         cmp.build_break_even_utilization_bp);
    r.comparisons.push_back(std::move(cmp));
  }
  return ok_status();
}

Message option_message(const std::string& cheapest) {
  if (cheapest == "build") return Message("advisor.tco.option.build");
  if (cheapest == "reserved") return Message("advisor.tco.option.reserved");
  return Message("advisor.tco.option.on_demand");
}

void write_summary(TcoResult& r, const TcoInput& in) {
  std::vector<Message> parts;
  parts.push_back(Message("advisor.tco.summary")
                      .arg("gpus", std::to_string(in.gpu_count))
                      .arg("model", in.gpu_model)
                      .arg("total", amt(r.total))
                      .arg("months", std::to_string(in.window_months))
                      .arg("per_owned", amt(r.cost_per_owned_gpu_hour))
                      .arg("per_useful", amt(r.cost_per_useful_gpu_hour))
                      .arg("utilization", pct_bp(r.utilization_bp)));
  for (const auto& cmp : r.comparisons) {
    const bool never = cmp.build_break_even_utilization_bp > 10'000;
    parts.push_back(Message("advisor.tco.summary_offer")
                        .arg("offer", cmp.name)
                        .arg("cheapest", option_message(cmp.cheapest))
                        .arg("build", never ? Message("advisor.tco.build_never_beats")
                                            : Message("advisor.tco.build_beats_above")
                                                  .arg("utilization", pct_bp(cmp.build_break_even_utilization_bp))));
  }
  r.summary = join_messages(std::move(parts));
}

}  // namespace

Result<TcoResult> compute_tco(const TcoInput& in) {
  if (auto s = check_tco_input(in); !s) return s.error();
  TcoResult r;
  r.input = in;
  r.servers = (in.gpu_count + in.gpus_per_server - 1) / in.gpus_per_server;
  r.window_hours = in.window_months * kHoursPerMonth;
  r.owned_gpu_hours = in.gpu_count * r.window_hours;
  for (auto part : {add_capex, add_ownership_lines, add_running_lines, add_totals, add_utilization, add_comparisons})
    if (auto s = part(r, in); !s) return s.error();
  write_summary(r, in);
  return r;
}

json to_json(const TcoResult& r) {
  const TcoInput& in = r.input;
  json lines = json::array();
  for (const auto& l : r.lines)
    lines.push_back(
        {{"key", l.key}, {"text", render_en(l.text)}, {"text_message", message_to_json(l.text)}, {"formula", l.formula},
         {"amount", l.amount.amount_string()}});
  json cmps = json::array();
  for (const auto& c : r.comparisons) {
    json j = {{"name", c.name},
              {"on_demand_per_gpu_hour", c.on_demand_per_gpu_hour.amount_string()},
              {"on_demand_cost", c.on_demand_cost.amount_string()},
              {"cheapest", c.cheapest},
              {"build_break_even_utilization_bp", c.build_break_even_utilization_bp},
              {"build_ever_beats_on_demand", c.build_break_even_utilization_bp <= 10'000}};
    if (c.reserved_per_gpu_hour) {
      j["reserved_per_gpu_hour"] = c.reserved_per_gpu_hour->amount_string();
      j["reserved_cost"] = c.reserved_cost->amount_string();
      j["reserved_per_useful_gpu_hour"] = c.reserved_per_useful_gpu_hour->amount_string();
      j["reserved_break_even_utilization_bp"] = *c.reserved_break_even_utilization_bp;
      j["build_vs_reserved_per_gpu_hour"] = c.build_vs_reserved_per_gpu_hour->amount_string();
    }
    cmps.push_back(std::move(j));
  }
  const json steps = steps_to_json(r.steps);
  const int64_t whole = r.useful_gpu_hours_micro / 1'000'000, frac = r.useful_gpu_hours_micro % 1'000'000;
  std::string useful = std::to_string(frac);
  useful.insert(0, 6 - useful.size(), '0');
  json out = {{"currency", currency_code(in.currency)},
          {"gpu_model", in.gpu_model},
          {"gpu_count", in.gpu_count},
          {"servers", r.servers},
          {"window_months", in.window_months},
          {"physical_life_months", in.physical_life_months},
          {"residual_method", enum_name(kResidualMethodNames, in.residual_method)},
          {"capex", r.capex.amount_string()},
          {"residual", r.residual.amount_string()},
          {"it_watts", r.it_watts},
          {"lines", lines},
          {"total", r.total.amount_string()},
          {"per_month", r.per_month.amount_string()},
          {"owned_gpu_hours", r.owned_gpu_hours},
          {"utilization_bp", r.utilization_bp},
          {"unmet_demand_bp", r.unmet_demand_bp},
          {"useful_gpu_hours", std::to_string(whole) + "." + useful},
          {"cost_per_owned_gpu_hour", r.cost_per_owned_gpu_hour.amount_string()},
          {"cost_per_useful_gpu_hour", r.cost_per_useful_gpu_hour.amount_string()},
          {"comparisons", cmps},
          {"steps", steps}};
  put_message(out, "summary", r.summary);
  return out;
}

}  // namespace gpurent
