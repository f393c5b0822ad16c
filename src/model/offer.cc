#include "model/offer.h"

#include "core/json_put.h"

#include <set>

#include "catalog/gpu_catalog.h"

namespace gpurent {
namespace {

constexpr StrRule kOfferRefRule{.min_len = 1, .max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp};
constexpr StrRule kServedModelRule{.min_len = 1, .max_len = 128, .pattern = "[A-Za-z0-9][A-Za-z0-9._/:-]*",
                                   .pattern_help = "pattern.served_model"};
constexpr StrRule kSovereigntyRule{.min_len = 2, .max_len = 63, .pattern = "([A-Z]{2})|([a-z]{2}(-[a-z0-9]+){1,3})",
                                   .pattern_help = "pattern.sovereignty"};

// Ceilings (in whole currency units) that catch misplaced decimal points, not market limits.
constexpr int64_t kMaxGpuHour = 10'000;
constexpr int64_t kMaxCpuHour = 1'000;  // per core-hour or GiB-hour
constexpr int64_t kMaxPerMillionTokens = 10'000;
constexpr int64_t kMaxPerQpsMonth = 1'000'000;
constexpr int64_t kMaxPerGb = 1'000;

std::optional<Money> price(Fields& f, const char* key, Currency c, int64_t max_units, bool required = false) {
  if (required && !f.has(key)) {
    f.error(key, Message("field.required"));
    f.raw(key);
    return std::nullopt;
  }
  auto m = f.opt_money(key, c);
  if (m && m->micros() > max_units * Money::kMicrosPerUnit) {
    f.error(key, Message("offer.price.at_most")
                     .arg("max", std::to_string(max_units))
                     .arg("currency", currency_code(c))
                     .arg("got", m->amount_string()));
    return std::nullopt;
  }
  return m;
}

OfferPrices parse_prices(Fields& f, Currency c) {
  OfferPrices p;
  auto on_demand = price(f, "on_demand", c, kMaxGpuHour, true);
  if (on_demand && on_demand->micros() == 0) {
    f.error("on_demand", Message("offer.positive"));
    on_demand.reset();
  }
  p.on_demand = on_demand.value_or(Money::zero(c));
  p.reserved_1m = price(f, "reserved_1m", c, kMaxGpuHour);
  p.reserved_12m = price(f, "reserved_12m", c, kMaxGpuHour);
  p.reserved_36m = price(f, "reserved_36m", c, kMaxGpuHour);
  p.spot = price(f, "spot", c, kMaxGpuHour);
  p.cpu_core_hour = price(f, "cpu_core_hour", c, kMaxCpuHour);
  p.memory_gib_hour = price(f, "memory_gib_hour", c, kMaxCpuHour);
  if (p.memory_gib_hour && !p.cpu_core_hour) f.error("memory_gib_hour", Message("offer.price.memory_without_cpu"));
  if (!on_demand) return p;
  auto cap = [&](const char* key, const std::optional<Money>& m, const Message& why) {
    if (m && m->micros() > on_demand->micros())
      f.error(key, Message("offer.price.above_on_demand")
                       .arg("on_demand", on_demand->amount_string())
                       .arg("currency", currency_code(c))
                       .arg("why", why));
  };
  const Message commitment = Message("offer.price.commitment_below_on_demand");
  cap("reserved_1m", p.reserved_1m, commitment);
  cap("reserved_12m", p.reserved_12m, commitment);
  cap("reserved_36m", p.reserved_36m, commitment);
  cap("spot", p.spot, Message("offer.price.spot_below_on_demand"));
  return p;
}

VolumeFee parse_volume_fee(Fields& f, Currency c) {
  VolumeFee v;
  v.per_gb = price(f, "per_gb", c, kMaxPerGb, true).value_or(Money::zero(c));
  v.free_gb = f.opt_integer("free_gb", 0, 1'000'000'000).value_or(0);
  return v;
}

StorageFee parse_storage_fee(Fields& f, Currency c) {
  StorageFee v;
  v.per_gb_month = price(f, "per_gb_month", c, kMaxPerGb, true).value_or(Money::zero(c));
  v.free_gb = f.opt_integer("free_gb", 0, 1'000'000'000).value_or(0);
  return v;
}

OfferFees parse_fees(Fields& f, Currency c) {
  OfferFees fees;
  fees.billing_starts = f.enumeration("billing_starts", kBillingStarts);
  f.object("idle", false, [&](Fields& idf) {
    IdleRule r;
    r.utilization_below_pct = idf.integer("utilization_below_pct", 1, 100);
    r.window_minutes = idf.integer("window_minutes", 1, 1440);
    const json* a = idf.raw("action");  // peek: the discount rule applies only to a valid action
    const bool action_ok = a && a->is_string() && enum_parse(kIdleActions, a->get_ref<const std::string&>());
    r.action = idf.enumeration("action", kIdleActions);
    r.discount_pct = idf.opt_integer("discount_pct", 1, 100);
    if (action_ok && r.action == IdleAction::kDiscount && !idf.has("discount_pct"))
      idf.error("discount_pct", Message("offer.idle.discount_required"));
    if (action_ok && r.action != IdleAction::kDiscount && idf.has("discount_pct")) {
      idf.error("discount_pct", Message("offer.idle.discount_only").arg("action", enum_name(kIdleActions, r.action)));
      r.discount_pct.reset();
    }
    fees.idle = r;
  });
  f.object("storage_io", false, [&](Fields& sf) { fees.storage_io = parse_volume_fee(sf, c); });
  f.object("egress", false, [&](Fields& ef) { fees.egress = parse_volume_fee(ef, c); });
  f.object("image_storage", false, [&](Fields& sf) { fees.image_storage = parse_storage_fee(sf, c); });
  f.object("artifact_storage", false, [&](Fields& sf) { fees.artifact_storage = parse_storage_fee(sf, c); });
  f.object("volume_storage", false, [&](Fields& sf) { fees.volume_storage = parse_storage_fee(sf, c); });
  return fees;
}

ContractTemplate parse_contract_fields(Fields& f, const GpuModel* model) {
  ContractTemplate t;
  t.model_lock = f.boolean("model_lock", true);
  if (const json* v = f.raw("min_fp16_tflops")) {
    auto x10 = parse_tflops_x10(*v);
    if (!x10) {
      const Error& e = x10.error();
      if (!e.fields.empty()) {
        if (!e.fields[0].coded.empty()) f.error("min_fp16_tflops", e.fields[0].coded);
        else f.error("min_fp16_tflops", e.fields[0].reason);
      } else if (!e.detail.empty()) {
        f.error("min_fp16_tflops", e.detail);
      } else {
        f.error("min_fp16_tflops", e.message);
      }
    } else if (*x10 <= 0) {
      f.error("min_fp16_tflops", Message("offer.positive"));
    } else if (model && model->fp16_tflops_x10 && *x10 > *model->fp16_tflops_x10) {
      f.error("min_fp16_tflops", Message("offer.contract.min_fp16_above_datasheet")
                                     .arg("model", model->id)
                                     .arg("tflops", format_tflops_x10(*model->fp16_tflops_x10)));
    } else {
      t.min_fp16_tflops_x10 = *x10;
    }
  }
  t.min_nccl_busbw_gbps = f.opt_integer("min_nccl_busbw_gbps", 1, 10'000);
  t.outage_compensation_pct = f.opt_integer("outage_compensation_pct", 0, 1000).value_or(200);
  t.exit_notice_days = f.opt_integer("exit_notice_days", 0, 365).value_or(30);
  t.exit_refund_prepaid = f.boolean("exit_refund_prepaid", true);
  t.data_sovereignty = f.opt_str("data_sovereignty", kSovereigntyRule);
  t.audit_rights = f.boolean("audit_rights", false);
  f.object("penalty", false, [&](Fields& pf) {
    t.penalty.fee_pct_per_step = pf.opt_integer("fee_pct_per_step", 0, 100).value_or(5);
    t.penalty.step_pct_below_promise = pf.opt_integer("step_pct_below_promise", 1, 100).value_or(10);
    t.penalty.base = pf.enumeration("base", kPenaltyBaseNames, std::optional(PenaltyBase::kShortCards));
  });
  return t;
}

json volume_fee_json(const VolumeFee& v) { return {{"per_gb", v.per_gb.amount_string()}, {"free_gb", v.free_gb}}; }

}  // namespace

ContractTemplate parse_contract_template(Fields& f, const GpuModel* model) { return parse_contract_fields(f, model); }

Result<OfferReach> stored_offer_reach(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  OfferReach r;
  r.region = f.str("region", kRegionRule);
  r.gpu_model = f.str("gpu_model", {.max_len = 64});  // stored as the catalog id
  f.object("node_selector", false, [&](Fields& sf) {
    r.node_selector.site = sf.opt_str("site", kSlugRule);
    r.node_selector.node_names = sf.str_list("node_names", kSlugRule);
  });
  if (!errs.empty()) return errs.to_error();
  return r;
}

Result<int64_t> stored_offer_exit_notice_days(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  int64_t days = 30;
  // Only this key: the template's other clauses are no concern here, so the reader is not
  // finished (finish() would call each of them an unknown field, and every stored template has
  // them: the notice read as 30 days whatever the offer said).
  if (const json* t = f.raw("contract_template"); t && !t->is_null()) {
    Fields tf(*t, "contract_template", errs);
    if (tf.valid_object()) days = tf.opt_integer("exit_notice_days", 0, 365).value_or(30);
  }
  if (!errs.empty()) return errs.to_error();
  return days;
}

Result<Offer> parse_offer(const json& body, const GpuCatalog& catalog) {
  FieldErrors errs;
  Fields f(body, "", errs);
  Offer o;
  if (!f.valid_object()) return errs.to_error();

  o.name = f.str("name", kSlugRule);
  o.supplier = f.str("supplier", kOfferRefRule);
  o.region = f.str("region", kRegionRule);
  const GpuModel* model = read_gpu_model_ref(f, catalog, "gpu_model");
  if (model) o.gpu_model = model->id;
  f.object("node_selector", false, [&](Fields& sf) {
    o.node_selector.site = sf.opt_str("site", kSlugRule);
    o.node_selector.node_names = sf.str_list("node_names", kSlugRule);
    std::set<std::string> names;
    for (const std::string& n : o.node_selector.node_names)
      if (!names.insert(n).second) sf.error("node_names", Message("offer.node_names.duplicate").arg("node", n));
  });
  o.currency = f.enumeration("currency", kCurrencies);
  const Currency c = o.currency;
  f.object("prices", true, [&](Fields& pf) { o.prices = parse_prices(pf, c); });

  std::set<std::string> served;
  f.objects("served_models", false, 256, [&](Fields& mf, size_t i) {
    ServedModel m;
    m.model = mf.str("model", kServedModelRule);
    if (!m.model.empty() && !served.insert(m.model).second)
      mf.error("model", Message("offer.served_model.duplicate").arg("model", m.model));
    m.per_million_input_tokens = price(mf, "per_million_input_tokens", c, kMaxPerMillionTokens);
    m.per_million_output_tokens = price(mf, "per_million_output_tokens", c, kMaxPerMillionTokens);
    m.per_qps_month = price(mf, "per_qps_month", c, kMaxPerQpsMonth);
    m.per_million_requests = price(mf, "per_million_requests", c, kMaxPerMillionTokens);
    if (!mf.has("per_million_input_tokens") && !mf.has("per_million_output_tokens") && !mf.has("per_qps_month") &&
        !mf.has("per_million_requests"))
      errs.add("served_models[" + std::to_string(i) + "]", Message("offer.served_model.no_price"));
    o.served_models.push_back(std::move(m));
  });
  o.min_increment_seconds = f.opt_integer("min_increment_seconds", 1, 3600).value_or(1);
  o.stopped_instance_release_days = f.opt_integer("stopped_instance_release_days", 1, 365);
  o.contract_only = f.boolean("contract_only", false);
  f.object("fees", true, [&](Fields& ff) { o.fees = parse_fees(ff, c); });
  f.object("contract_template", false, [&](Fields& tf) { o.contract_template = parse_contract_fields(tf, model); });

  ignore_server_keys(f);
  f.ignore({"supplier_id"});  // server-resolved from `supplier`
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return o;
}

json to_json(const ContractTemplate& t) {
  json contract = {{"model_lock", t.model_lock},
                   {"outage_compensation_pct", t.outage_compensation_pct},
                   {"exit_notice_days", t.exit_notice_days},
                   {"exit_refund_prepaid", t.exit_refund_prepaid},
                   {"audit_rights", t.audit_rights},
                   {"penalty", {{"fee_pct_per_step", t.penalty.fee_pct_per_step},
                                {"step_pct_below_promise", t.penalty.step_pct_below_promise},
                                {"base", enum_name(kPenaltyBaseNames, t.penalty.base)}}}};
  if (t.min_fp16_tflops_x10) contract["min_fp16_tflops"] = format_tflops_x10(*t.min_fp16_tflops_x10);
  put_opt(contract, "min_nccl_busbw_gbps", t.min_nccl_busbw_gbps);
  put_opt(contract, "data_sovereignty", t.data_sovereignty);

  return contract;
}

json to_json(const Offer& o) {
  json selector = json::object();
  put_opt(selector, "site", o.node_selector.site);
  if (!o.node_selector.node_names.empty()) selector["node_names"] = o.node_selector.node_names;

  json prices = {{"on_demand", o.prices.on_demand.amount_string()}};
  put_opt_money(prices, "reserved_1m", o.prices.reserved_1m);
  put_opt_money(prices, "reserved_12m", o.prices.reserved_12m);
  put_opt_money(prices, "reserved_36m", o.prices.reserved_36m);
  put_opt_money(prices, "spot", o.prices.spot);
  put_opt_money(prices, "cpu_core_hour", o.prices.cpu_core_hour);
  put_opt_money(prices, "memory_gib_hour", o.prices.memory_gib_hour);

  json served = json::array();
  for (const ServedModel& m : o.served_models) {
    json j = {{"model", m.model}};
    put_opt_money(j, "per_million_input_tokens", m.per_million_input_tokens);
    put_opt_money(j, "per_million_output_tokens", m.per_million_output_tokens);
    put_opt_money(j, "per_qps_month", m.per_qps_month);
    put_opt_money(j, "per_million_requests", m.per_million_requests);
    served.push_back(std::move(j));
  }

  json fees = {{"billing_starts", enum_name(kBillingStarts, o.fees.billing_starts)}};
  if (const auto& idle = o.fees.idle) {
    json j = {{"utilization_below_pct", idle->utilization_below_pct},
              {"window_minutes", idle->window_minutes},
              {"action", enum_name(kIdleActions, idle->action)}};
    put_opt(j, "discount_pct", idle->discount_pct);
    fees["idle"] = std::move(j);
  }
  if (o.fees.storage_io) fees["storage_io"] = volume_fee_json(*o.fees.storage_io);
  if (o.fees.egress) fees["egress"] = volume_fee_json(*o.fees.egress);
  if (const auto& st = o.fees.image_storage)
    fees["image_storage"] = {{"per_gb_month", st->per_gb_month.amount_string()}, {"free_gb", st->free_gb}};
  if (const auto& st = o.fees.artifact_storage)
    fees["artifact_storage"] = {{"per_gb_month", st->per_gb_month.amount_string()}, {"free_gb", st->free_gb}};
  if (const auto& st = o.fees.volume_storage)
    fees["volume_storage"] = {{"per_gb_month", st->per_gb_month.amount_string()}, {"free_gb", st->free_gb}};

  json j = {{"name", o.name},
            {"supplier", o.supplier},
            {"region", o.region},
            {"gpu_model", o.gpu_model},
            {"node_selector", std::move(selector)},
            {"currency", currency_code(o.currency)},
            {"prices", std::move(prices)},
            {"served_models", std::move(served)},
            {"min_increment_seconds", o.min_increment_seconds},
            {"fees", std::move(fees)},
            {"contract_template", to_json(o.contract_template)}};
  if (!o.supplier_id.empty()) j["supplier_id"] = o.supplier_id;
  if (o.stopped_instance_release_days) j["stopped_instance_release_days"] = *o.stopped_instance_release_days;
  j["contract_only"] = o.contract_only;
  return j;
}

IndexCols index_of(const Offer& o) {
  IndexCols c;
  c.name = o.name;
  c.supplier_id = o.supplier_id;
  c.region = o.region;
  c.gpu_model = o.gpu_model;
  return c;
}

Result<SpotPriceEntry> parse_spot_price(const json& body, Currency c, TimeMs now) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  SpotPriceEntry e;
  e.offer = f.str("offer", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
  auto p = price(f, "price", c, kMaxGpuHour, true);
  if (p && p->micros() == 0) f.error("price", Message("offer.positive"));
  e.price = p.value_or(Money::zero(c));
  e.from = f.opt_time("from").value_or(now);
  if (f.has("from") && e.from < now) f.error("from", Message("spot_price.from_past"));
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return e;
}

Result<SpotPriceEntry> decode_spot_price(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  SpotPriceEntry e;
  e.offer_id = f.str("offer_id", {.min_len = 1, .max_len = 64});
  const Currency c = f.enumeration("currency", kCurrencies);
  e.price = f.opt_money("price", c).value_or(Money::zero(c));
  e.from = f.time("from");
  if (!errs.empty()) return errs.to_error();
  return e;
}

json to_json(const SpotPriceEntry& e, Currency c) {
  return {{"offer_id", e.offer_id}, {"price", e.price.amount_string()}, {"currency", currency_code(c)},
          {"from", format_rfc3339(e.from)}};
}

}  // namespace gpurent
