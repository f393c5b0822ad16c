// Quote comparison, input side: parsing and validating the request body into a QuotesInput,
// and the cross-field checks compute_quotes also applies to inputs the server builds.
#include <algorithm>
#include <set>

#include "advisor/quotes.h"
#include "advisor/quotes_internal.h"
#include "catalog/gpu_catalog.h"

namespace gpurent {

using namespace quotes_internal;

namespace {

// A reason as the error gave it: its code when it has one, else its text.
void add_reason(FieldErrors& errs, std::string field, const std::string& text, const Message& coded) {
  if (coded.empty())
    errs.add(std::move(field), text);
  else
    errs.add(std::move(field), coded);
}

void add_prefixed(FieldErrors& errs, const std::string& prefix, const Error& e) {
  if (e.fields.empty()) add_reason(errs, prefix, e.message, e.detail);
  for (const auto& fe : e.fields)
    add_reason(errs, fe.field.empty() ? prefix : prefix + "." + fe.field, fe.reason, fe.coded);
}

QuoteColdStart read_cold_start(Fields& f) {
  QuoteColdStart c;
  c.to_running_seconds = f.opt_integer("to_running_seconds", 0, 86'400).value_or(0);
  c.to_ready_seconds = f.opt_integer("to_ready_seconds", 0, 86'400).value_or(0);
  return c;
}

void read_run_form(Fields& f, QuoteWorkload& w) {
  const auto run = f.opt_integer("run_minutes", 1, kMaxRunMinutes);
  const auto idle_pct = f.opt_integer("idle_pct", 0, 100);
  const auto busy = f.opt_integer("busy_utilization_pct", 1, 100);
  const auto idle_util = f.opt_integer("idle_utilization_pct", 0, 100);
  const int64_t ip = idle_pct.value_or(0), bu = busy.value_or(90), iu = idle_util.value_or(0);
  if (ip == 100) f.error("idle_pct", Message("advisor.quotes.idle_pct_all"));
  if (bu < w.idle_below_pct)
    f.error("busy_utilization_pct",
            Message("advisor.quotes.busy_below_idle").arg("idle_below_pct", std::to_string(w.idle_below_pct)));
  if (ip > 0 && iu >= w.idle_below_pct)
    f.error("idle_utilization_pct",
            Message("advisor.quotes.idle_not_idle").arg("idle_below_pct", std::to_string(w.idle_below_pct)));
  if (!run || ip >= 100) return;
  const int64_t run_ms = *run * kMsPerMinute;
  const int64_t busy_ms = run_ms * (100 - ip) / 100;  // exact: run_ms is a multiple of 100
  w.profile.push_back({busy_ms, bu});
  if (busy_ms < run_ms) w.profile.push_back({run_ms - busy_ms, iu});
}

void read_profile_form(Fields& f, QuoteWorkload& w) {
  for (const char* key : {"idle_pct", "busy_utilization_pct", "idle_utilization_pct"})
    if (f.has(key)) {
      f.error(key, Message("advisor.quotes.run_minutes_only"));
      f.raw(key);
    }
  int64_t minutes = 0;
  bool computes = false, all_valid = true;
  f.objects("profile", true, 1000, [&](Fields& sf, size_t) {
    const auto m = sf.opt_integer("minutes", 1, kMaxRunMinutes);
    const auto u = sf.opt_integer("utilization_pct", 0, 100);
    if (!sf.has("minutes")) sf.error("minutes", FieldReason{"field.required"});
    if (!sf.has("utilization_pct")) sf.error("utilization_pct", FieldReason{"field.required"});
    if (!m || !u) {
      all_valid = false;
      return;
    }
    minutes += *m;
    computes = computes || *u >= w.idle_below_pct;
    w.profile.push_back({*m * kMsPerMinute, *u});
  });
  const json* p = f.raw("profile");
  if (!p || !p->is_array() || !all_valid) return;
  if (p->empty())
    f.error("profile", Message("advisor.quotes.profile_empty"));
  else if (minutes > kMaxRunMinutes)
    f.error("profile", Message("advisor.quotes.profile_too_long")
                           .arg("minutes", std::to_string(minutes))
                           .arg("max", std::to_string(kMaxRunMinutes)));
  else if (!computes)
    f.error("profile",
            Message("advisor.quotes.profile_never_computes").arg("idle_below_pct", std::to_string(w.idle_below_pct)));
}

void read_workload(Fields& f, QuoteWorkload& w) {
  const auto n = f.opt_integer("launches_per_month", 1, kMaxLaunches);
  const auto g = f.opt_integer("gpus", 1, kMaxGpus);
  if (!f.has("launches_per_month")) f.error("launches_per_month", FieldReason{"field.required"});
  if (!f.has("gpus")) f.error("gpus", FieldReason{"field.required"});
  w.launches_per_month = n.value_or(1);
  w.gpus = g.value_or(1);
  if (n && g && *n * *g > kMaxGpuLaunches)
    f.error("gpus", Message("advisor.quotes.gpu_launches_max")
                        .arg("max", std::to_string(kMaxGpuLaunches))
                        .arg("got", std::to_string(*n * *g)));
  w.idle_below_pct = f.opt_integer("idle_below_pct", 1, 100).value_or(5);
  const bool has_profile = f.has("profile"), has_run = f.has("run_minutes");
  if (has_profile && has_run) {
    f.error("run_minutes", Message("advisor.quotes.run_or_profile"));
    f.raw("run_minutes");
  }
  if (!has_profile && !has_run) {
    f.error("run_minutes", Message("advisor.quotes.run_minutes_required"));
    for (const char* key : {"idle_pct", "busy_utilization_pct", "idle_utilization_pct"}) f.raw(key);
  } else if (has_profile) {
    w.profile_given = true;
    read_profile_form(f, w);
  } else {
    read_run_form(f, w);
  }
  f.object("cold_start", false, [&](Fields& cf) { w.cold_start = read_cold_start(cf); });
  w.storage_io_gb = f.opt_integer("storage_io_gb", 0, 1'000'000'000).value_or(0);
  w.egress_gb = f.opt_integer("egress_gb", 0, 1'000'000'000).value_or(0);
  enum class Precision { kNone, kFp16, kBf16, kFp8 };
  static constexpr EnumEntry<Precision> kPrecisions[] = {
      {Precision::kFp16, "fp16"}, {Precision::kBf16, "bf16"}, {Precision::kFp8, "fp8"}};
  if (f.has("precision")) w.precision = enum_name(kPrecisions, f.enumeration("precision", kPrecisions));
  f.object("work", false, [&](Fields& wf) {
    enum class Unit { kStep, kHour };
    static constexpr EnumEntry<Unit> kUnits[] = {{Unit::kStep, "step"}, {Unit::kHour, "hour_of_current_work"}};
    w.work_unit = enum_name(kUnits, wf.enumeration("unit", kUnits));
    if (auto t = wf.opt_integer("tokens_per_unit", 1, 1'000'000'000'000'000)) w.tokens_per_unit = *t;
    const json* times = wf.raw("us_per_unit");
    if (!times || !times->is_object() || times->empty() || times->size() > 64) {
      wf.error("us_per_unit", Message("advisor.quotes.work_times"));
      return;
    }
    for (const auto& [model, us] : times->items()) {
      if (!us.is_number_integer() || us.get<int64_t>() < 1 || us.get<int64_t>() > 3'600'000'000'000)
        wf.error("us_per_unit", Message("advisor.quotes.work_time").arg("model", model));
      else
        w.us_per_unit[model] = us.get<int64_t>();
    }
  });
}

// The catalog's dense TFLOPS (×10) of a model at a precision; nullopt when unknown or unpublished.
std::optional<int64_t> datasheet_tflops(const GpuCatalog& catalog, const std::string& model, const std::string& precision) {
  const GpuModel* m = catalog.find(model);
  if (!m) return std::nullopt;
  const std::optional<int64_t>& v = precision == "fp16"   ? m->fp16_tflops_x10
                                    : precision == "bf16" ? m->bf16_tflops_x10
                                                          : m->fp8_tflops_x10;
  if (!v || *v <= 0) return std::nullopt;  // 0: the part lacks the precision
  return v;
}

// The offer a per-offer map's key names (supplier/name, or a name unique among the offers);
// nullptr with the reason added under `path`.
QuoteOffer* offer_named(std::vector<QuoteOffer>& offers, const std::string& key, const std::string& path,
                        FieldErrors& errs) {
  std::vector<QuoteOffer*> hits;
  for (auto& o : offers)
    if (quote_offer_label(o.offer) == key) hits.push_back(&o);
  if (hits.empty())
    for (auto& o : offers)
      if (o.offer.name == key) hits.push_back(&o);
  if (hits.empty())
    errs.add(path, Message("advisor.quotes.cold_start_unknown_offer"));
  else if (hits.size() > 1)
    errs.add(path, Message("advisor.quotes.cold_start_ambiguous").arg("n", std::to_string(hits.size())));
  return hits.size() == 1 ? hits[0] : nullptr;
}

// "measured_tflops": {"<offer>": "871.4"}: the offer's dense TFLOPS per GPU at the workload's
// precision as benchmarked on its cards.
void read_measured(Fields& f, FieldErrors& errs, const QuoteWorkload& w, std::vector<QuoteOffer>& offers) {
  const json* ms = f.raw("measured_tflops");
  if (!ms) return;
  if (!ms->is_object()) return f.error("measured_tflops", Message("advisor.quotes.measured_map"));
  if (w.precision.empty() && !ms->empty()) return f.error("measured_tflops", Message("advisor.quotes.measured_needs_precision"));
  for (auto it = ms->begin(); it != ms->end(); ++it) {
    const std::string path = "measured_tflops." + it.key();
    auto v = parse_tflops_x10(it.value());
    if (!v || *v <= 0) {
      errs.add(path, Message("advisor.quotes.measured_value"));
      continue;
    }
    if (QuoteOffer* o = offer_named(offers, it.key(), path, errs)) o->measured_tflops_x10 = *v;
  }
}

void read_offers(Fields& f, FieldErrors& errs, const GpuCatalog& catalog, const std::vector<Offer>& known,
                 std::vector<QuoteOffer>& out) {
  const json* list = f.raw("offers");
  if (!list) return f.error("offers", FieldReason{"field.required"});
  if (!list->is_array()) return f.error("offers", Message("advisor.quotes.offers_list"));
  if (list->empty()) return f.error("offers", Message("advisor.quotes.offers_empty"));
  if (list->size() > kMaxOffers)
    return f.error("offers", FieldReason{"field.max_items_got",
                                         {{"max", std::to_string(kMaxOffers)}, {"got", std::to_string(list->size())}}});
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string path = "offers[" + std::to_string(i) + "]";
    const json& item = (*list)[i];
    if (item.is_object()) {
      auto o = parse_offer(item, catalog);
      if (!o)
        add_prefixed(errs, path, o.error());
      else
        out.push_back({std::move(*o), std::nullopt});
      continue;
    }
    if (!item.is_string()) {
      errs.add(path, Message("advisor.quotes.offer_item"));
      continue;
    }
    const std::string ref = item.get<std::string>();
    std::vector<const Offer*> hits;
    for (const auto& k : known)
      if (quote_offer_label(k) == ref) hits.push_back(&k);
    if (hits.empty())
      for (const auto& k : known)
        if (k.name == ref) hits.push_back(&k);
    if (hits.size() == 1)
      out.push_back({*hits[0], std::nullopt});
    else if (hits.empty())
      errs.add(path, Message("advisor.quotes.unknown_offer").arg("ref", ref));
    else
      errs.add(path, Message("advisor.quotes.ambiguous_offer").arg("ref", ref).arg("n", std::to_string(hits.size())));
  }
}

void read_cold_starts(Fields& f, FieldErrors& errs, std::vector<QuoteOffer>& offers) {
  const json* cs = f.raw("cold_starts");
  if (!cs) return;
  if (!cs->is_object())
    return f.error("cold_starts", Message("advisor.quotes.cold_starts_map"));
  for (auto it = cs->begin(); it != cs->end(); ++it) {
    const std::string path = "cold_starts." + it.key();
    Fields cf(it.value(), path, errs);
    if (!cf.valid_object()) continue;
    const QuoteColdStart c = read_cold_start(cf);
    cf.finish();
    QuoteOffer* o = offer_named(offers, it.key(), path, errs);
    if (o && o->cold_start)
      errs.add(path, Message("advisor.quotes.cold_start_twice").arg("offer", quote_offer_label(o->offer)));
    else if (o)
      o->cold_start = c;
  }
}

void read_terms(Fields& f, std::vector<int64_t>& terms) {
  const json* t = f.raw("commit_terms_months");
  if (!t) return;
  terms.clear();
  if (!t->is_array()) return f.error("commit_terms_months", Message("advisor.quotes.terms_list"));
  for (size_t i = 0; i < t->size(); ++i) {
    const json& v = (*t)[i];
    const std::string key = "commit_terms_months[" + std::to_string(i) + "]";
    if (!v.is_number_integer() || (v.get<int64_t>() != 1 && v.get<int64_t>() != 12 && v.get<int64_t>() != 36))
      f.error(key, Message("advisor.quotes.term_value"));
    else if (std::count(terms.begin(), terms.end(), v.get<int64_t>()))
      f.error(key, Message("advisor.quotes.term_twice").arg("months", std::to_string(v.get<int64_t>())));
    else
      terms.push_back(v.get<int64_t>());
  }
}

}  // namespace

void quotes_internal::check_input(const QuotesInput& in, FieldErrors& errs) {
  const auto& w = in.workload;
  if (w.launches_per_month < 1 || w.launches_per_month > kMaxLaunches)
    errs.add("workload.launches_per_month",
             Message("advisor.quotes.range").arg("min", "1").arg("max", std::to_string(kMaxLaunches)));
  if (w.gpus < 1 || w.gpus > kMaxGpus || w.launches_per_month * w.gpus > kMaxGpuLaunches)
    errs.add("workload.gpus", Message("advisor.quotes.gpus_range")
                                  .arg("max", std::to_string(kMaxGpus))
                                  .arg("max_launches", std::to_string(kMaxGpuLaunches)));
  for (const auto& seg : w.profile)
    if (seg.duration_ms <= 0 || seg.utilization_pct < 0 || seg.utilization_pct > 100) {
      errs.add("workload.profile", Message("advisor.quotes.profile_segments"));
      break;
    }
  if (run_ms_of(w) > kMaxRunMinutes * kMsPerMinute)
    errs.add("workload.profile", Message("advisor.quotes.run_too_long"));
  if (w.launches_per_month * static_cast<int64_t>(w.profile.size()) > kMaxLaunchSegments)
    errs.add("workload.profile",
             Message("advisor.quotes.launch_segments")
                 .arg("max", std::to_string(kMaxLaunchSegments))
                 .arg("got", std::to_string(w.launches_per_month * static_cast<int64_t>(w.profile.size()))));
  if (w.idle_below_pct < 1 || w.idle_below_pct > 100)
    errs.add("workload.idle_below_pct", Message("advisor.quotes.range").arg("min", "1").arg("max", "100"));
  if (busy_ms_of(w) <= 0) errs.add("workload.profile", Message("advisor.quotes.never_computes"));
  if (w.storage_io_gb < 0 || w.egress_gb < 0 || w.storage_io_gb > 1'000'000'000 || w.egress_gb > 1'000'000'000)
    errs.add("workload", Message("advisor.quotes.volumes_range").arg("max", "1000000000"));
  auto bad_cold = [](const QuoteColdStart& c) {
    return c.to_running_seconds < 0 || c.to_ready_seconds < 0 || c.to_running_seconds > 86'400 ||
           c.to_ready_seconds > 86'400;
  };
  if (bad_cold(w.cold_start))
    errs.add("workload.cold_start", Message("advisor.quotes.cold_start_seconds").arg("max", "86400"));
  for (const auto& o : in.offers)
    if (o.cold_start && bad_cold(*o.cold_start))
      errs.add("cold_starts." + quote_offer_label(o.offer),
               Message("advisor.quotes.cold_start_seconds").arg("max", "86400"));
  if (in.offers.empty() || in.offers.size() > kMaxOffers)
    errs.add("offers", Message("advisor.quotes.offers_count")
                           .arg("max", std::to_string(kMaxOffers))
                           .arg("got", std::to_string(in.offers.size())));
  for (int64_t t : in.commit_terms_months)
    if (t != 1 && t != 12 && t != 36) errs.add("commit_terms_months", Message("advisor.quotes.terms_values"));
  if (!errs.empty()) return;
  const int64_t period = month_to() - month_from();
  std::set<std::string> labels;
  for (size_t i = 0; i < in.offers.size(); ++i) {
    const Offer& o = in.offers[i].offer;
    const std::string path = "offers[" + std::to_string(i) + "]";
    if (o.currency != in.offers[0].offer.currency)
      errs.add(path + ".currency", Message("advisor.quotes.mixed_currency")
                                       .arg("currency", currency_code(o.currency))
                                       .arg("first", currency_code(in.offers[0].offer.currency)));
    if (!labels.insert(quote_offer_label(o)).second)
      errs.add(path, Message("advisor.quotes.offer_twice").arg("offer", quote_offer_label(o)));
    // Several launches must all end inside the month (a run's rounding is billed when it ends).
    const int64_t cold = cold_ms(cold_of(in, in.offers[i])), span = cold + run_ms_of(w);
    if (span > period - (w.launches_per_month > 1 ? 1 : 0))
      errs.add(w.launches_per_month > 1 ? "workload.launches_per_month"
               : w.profile_given        ? "workload.profile"
                                        : "workload.run_minutes",
               (w.launches_per_month > 1 ? Message("advisor.quotes.launch_leaves_no_room")
                                         : Message("advisor.quotes.launch_too_long"))
                   .arg("seconds", std::to_string(span / 1000))
                   .arg("cold", std::to_string(cold / 1000))
                   .arg("offer", quote_offer_label(o)));
  }
}

std::string quote_offer_label(const Offer& o) { return o.supplier.empty() ? o.name : o.supplier + "/" + o.name; }

Result<QuotesInput> parse_quotes_input(const json& body, const GpuCatalog& catalog, const std::vector<Offer>& known) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  QuotesInput in;
  f.object("workload", true, [&](Fields& wf) { read_workload(wf, in.workload); });
  read_offers(f, errs, catalog, known, in.offers);
  read_cold_starts(f, errs, in.offers);
  read_measured(f, errs, in.workload, in.offers);
  if (!in.workload.precision.empty())
    for (auto& o : in.offers) o.datasheet_tflops_x10 = datasheet_tflops(catalog, o.offer.gpu_model, in.workload.precision);
  // The unit times' GPU models as catalog ids (aliases resolved).
  std::map<std::string, int64_t> by_id;
  for (const auto& [model, us] : in.workload.us_per_unit) {
    const GpuModel* m = catalog.find(model);
    if (!m)
      errs.add("workload.work.us_per_unit", Message("advisor.quotes.work_model").arg("model", model));
    else
      by_id[m->id] = us;
  }
  in.workload.us_per_unit = std::move(by_id);
  read_terms(f, in.commit_terms_months);
  f.finish();
  if (errs.empty()) check_input(in, errs);
  if (!errs.empty()) return errs.to_error();
  return in;
}

}  // namespace gpurent
