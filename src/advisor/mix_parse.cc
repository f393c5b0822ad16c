// The mix optimizer's input: the JSON body's parser, the checks it shares with inputs built in
// code, and the capacity options an offer's prices imply.
#include <algorithm>

#include "advisor/mix.h"
#include "advisor/mix_internal.h"
#include "core/fields.h"

namespace gpurent {

using namespace mix_detail;

namespace {

// An error's first field problem, its code kept when it has one.
void add_first(FieldErrors& errs, const Error& e) {
  const FieldError& fe = e.fields[0];
  if (fe.coded.empty())
    errs.add(fe.field, fe.reason);
  else
    errs.add(fe.field, fe.coded);
}

Message range_got(int64_t min, int64_t max, int64_t got) {
  return Message("advisor.mix.range_got").arg("min", num(min)).arg("max", num(max)).arg("got", num(got));
}

void check_mix_input(const MixInput& in, FieldErrors& errs, const std::string& demand_field, bool check_demand) {
  bool demand_ok = true;
  if (check_demand)
    if (auto s = validate_demand(in.demand, demand_field); !s) {
      add_first(errs, s.error());
      demand_ok = false;
    }
  if (demand_ok && std::all_of(in.demand.gpus.begin(), in.demand.gpus.end(), [](int64_t g) { return g == 0; }))
    errs.add(demand_field, Message("advisor.mix.nothing_to_buy"));
  if (in.options.empty()) errs.add("options", Message("advisor.mix.no_options"));
  if (static_cast<int64_t>(in.options.size()) > kMaxMixOptions)
    errs.add("options", FieldReason{"field.max_items", {{"max", num(kMaxMixOptions)}}});
  if (in.reservation_unit_gpus < 1 || in.reservation_unit_gpus > 1024)
    errs.add("reservation_unit_gpus", range_got(1, 1024, in.reservation_unit_gpus));
  for (size_t i = 0; i < in.options.size(); ++i) {
    const CapacityOption& o = in.options[i];
    const std::string at = "options[" + std::to_string(i) + "]";
    if (o.offer.empty()) errs.add(at + ".offer", FieldReason{"field.required"});
    const Money& p = o.price_per_gpu_hour;
    if (p.currency() != in.currency)
      errs.add(at + ".price_per_gpu_hour", Message("advisor.mix.currency_mismatch")
                                               .arg("currency", currency_code(p.currency()))
                                               .arg("input", currency_code(in.currency)));
    else if (p.micros() <= 0)
      errs.add(at + ".price_per_gpu_hour", Message("advisor.mix.positive_got").arg("got", p.amount_string()));
    else if (p.micros() > kMaxPricePerGpuHourMicros)
      errs.add(at + ".price_per_gpu_hour",
               Message("advisor.mix.price_too_high").arg("max", "1000000").arg("got", p.amount_string()));
    if (o.max_gpus && (*o.max_gpus < 1 || *o.max_gpus > kMaxGpusPerHour))
      errs.add(at + ".max_gpus", range_got(1, kMaxGpusPerHour, *o.max_gpus));
    else if (o.max_gpus && is_reserved(o.mode) && *o.max_gpus < in.reservation_unit_gpus)
      errs.add(at + ".max_gpus", Message("advisor.mix.max_gpus_below_unit")
                                     .arg("unit", num(in.reservation_unit_gpus))
                                     .arg("got", num(*o.max_gpus)));
    for (size_t j = 0; j < i; ++j)
      if (in.options[j].offer == o.offer && in.options[j].mode == o.mode) {
        errs.add(at, Message("advisor.mix.repeated_option").arg("option", std::to_string(j)));
        break;
      }
  }
  if (in.spot_interruption_permille < 0 || in.spot_interruption_permille > 1000)
    errs.add("spot_interruption_permille", range_got(0, 1000, in.spot_interruption_permille));
  if (in.max_spot_share_pct < 0 || in.max_spot_share_pct > 100)
    errs.add("max_spot_share_pct", range_got(0, 100, in.max_spot_share_pct));
  if (in.budget && in.budget->currency() != in.currency)
    errs.add("budget", Message("advisor.mix.currency_mismatch")
                           .arg("currency", currency_code(in.budget->currency()))
                           .arg("input", currency_code(in.currency)));
  else if (in.budget && in.budget->micros() <= 0)
    errs.add("budget", Message("advisor.mix.positive_got").arg("got", in.budget->amount_string()));
}

}  // namespace

Status validate_mix_input(const MixInput& in) {
  FieldErrors errs;
  check_mix_input(in, errs, "demand", true);
  if (!errs.empty()) return errs.to_error();
  return ok_status();
}

Result<MixInput> parse_mix_input(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  MixInput in;
  if (auto c = f.opt_str("currency", {.min_len = 3, .max_len = 3})) {
    if (auto pc = parse_currency(*c))
      in.currency = *pc;
    else
      f.error("currency", Message("advisor.mix.currency").arg("got", *c));
  }
  std::string demand_field = "demand";
  bool demand_ok = false;
  f.object("demand", true, [&](Fields& d) {
    const size_t before = errs.list().size();
    const json* arr = d.raw("gpus_per_hour");
    const bool has_csv = d.has("csv");
    const json* csv = d.raw("csv");  // multi-line text: read raw (Fields' strings refuse newlines)
    if (csv && !csv->is_string()) return d.error("csv", Message("advisor.mix.csv_string"));
    auto start = d.opt_time("start");
    if (arr && has_csv) return d.error("csv", Message("advisor.mix.list_or_csv"));
    if (!arr && !has_csv) return d.error("gpus_per_hour", Message("advisor.mix.demand_required"));
    if (arr) {
      demand_field = "demand.gpus_per_hour";
      if (!arr->is_array()) return d.error("gpus_per_hour", Message("advisor.mix.gpus_per_hour_list"));
      if (static_cast<int64_t>(arr->size()) > kMaxDemandHours)
        return d.error("gpus_per_hour", Message("advisor.demand.too_many_hours")
                                            .arg("hours", std::to_string(arr->size()))
                                            .arg("max", num(kMaxDemandHours)));
      for (size_t i = 0; i < arr->size(); ++i) {
        const json& v = (*arr)[i];
        if (!v.is_number_integer())
          return errs.add(demand_field + "[" + std::to_string(i) + "]", Message("advisor.mix.whole_gpus"));
        in.demand.gpus.push_back(v.is_number_unsigned()
                                     ? static_cast<int64_t>(std::min<uint64_t>(v.get<uint64_t>(), kMaxGpusPerHour + 1))
                                     : v.get<int64_t>());
      }
      in.demand.start = start;
      if (auto s = validate_demand(in.demand, demand_field); !s) add_first(errs, s.error());
    } else if (csv) {
      demand_field = "demand.csv";
      if (start) return d.error("start", Message("advisor.mix.start_with_csv"));
      auto c = parse_demand_csv(csv->get_ref<const std::string&>(), demand_field);
      if (!c) return add_first(errs, c.error());
      in.demand = std::move(*c);
    }
    demand_ok = errs.list().size() == before;
  });
  f.objects("options", true, kMaxMixOptions, [&](Fields& o, size_t) {
    CapacityOption c;
    c.offer = o.str("offer", {.min_len = 1, .max_len = 128, .pattern = kRefPattern, .pattern_help = kRefHelp});
    c.mode = o.enumeration("mode", kModes);
    c.price_per_gpu_hour = o.money("price_per_gpu_hour", in.currency);
    c.max_gpus = o.opt_integer("max_gpus", 1, kMaxGpusPerHour);
    in.options.push_back(std::move(c));
  });
  in.spot_interruption_permille = f.opt_integer("spot_interruption_permille", 0, 1000).value_or(0);
  in.max_spot_share_pct = f.opt_integer("max_spot_share_pct", 0, 100).value_or(100);
  in.budget = f.opt_money("budget", in.currency);
  in.reservation_unit_gpus = f.opt_integer("reservation_unit_gpus", 1, 1024).value_or(1);
  in.count_whole_terms = f.boolean("count_whole_terms", false);
  f.finish();
  if (errs.empty() && demand_ok) check_mix_input(in, errs, demand_field, false);
  if (!errs.empty()) return errs.to_error();
  return in;
}

std::vector<CapacityOption> options_from_offer(const Offer& o) {
  std::vector<CapacityOption> out;
  out.push_back({o.name, CapacityMode::kOnDemand, o.prices.on_demand, std::nullopt});
  const std::pair<CapacityMode, const std::optional<Money>*> more[] = {
      {CapacityMode::kReserved1m, &o.prices.reserved_1m},
      {CapacityMode::kReserved12m, &o.prices.reserved_12m},
      {CapacityMode::kReserved36m, &o.prices.reserved_36m},
      {CapacityMode::kSpot, &o.prices.spot}};
  for (const auto& [mode, price] : more)
    if (*price) out.push_back({o.name, mode, **price, std::nullopt});
  return out;
}

}  // namespace gpurent
