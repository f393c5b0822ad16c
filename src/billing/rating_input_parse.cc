#include "billing/rating_input_parse.h"

#include "catalog/gpu_catalog.h"
#include "core/fields.h"

namespace gpurent {
namespace {

constexpr StrRule kId{
    .min_len = 1, .max_len = 128, .pattern = "[A-Za-z0-9][A-Za-z0-9._:/-]*", .pattern_help = "pattern.rating_id"};
constexpr size_t kMaxItems = 10'000'000;

void parse_contract_terms(Fields& f, ContractTerms& k, const ContractTemplate& offer_template) {
  k.name = f.opt_str("name", kId).value_or("contract");
  k.tenant = f.opt_str("tenant", kId).value_or("");
  k.supplier = f.opt_str("supplier", kId).value_or("");
  if (auto c = f.opt_str("currency")) {
    auto cur = parse_currency(*c);
    if (!cur)
      f.error("currency", Message("rating.currency"));
    else
      k.currency = *cur;
  }
  k.clauses = offer_template;
  f.object("clauses", false, [&](Fields& cf) { k.clauses = parse_contract_template(cf, nullptr); });
  k.nccl_compensation_pct = f.opt_integer("nccl_compensation_pct", 0, 1000).value_or(200);
  k.performance_remedy = f.enumeration("performance_remedy", kPerformanceRemedyNames, std::optional(PerformanceRemedy::kProportional));
  k.cap_credits = f.boolean("cap_credits", true);
  f.object("exit", false, [&](Fields& ef) {
    k.exit_notice_at = ef.time("notice_at");
    k.exit_at = ef.opt_time("exit_at");
    ef.finish();
  });
}

Allocation parse_allocation(Fields& f) {
  Allocation a;
  a.id = f.str("id", kId);
  a.project = f.opt_str("project", kId).value_or("");
  a.job = f.opt_str("job", kId).value_or(a.id);
  a.offer = f.str("offer", kId);
  a.mode = f.enumeration("mode", kBillingModeNames, std::optional(BillingMode::kOnDemand));
  const bool has_gpus = f.has("gpus"), has_milli = f.has("gpu_milli");
  if (has_gpus && has_milli) f.error("gpu_milli", Message("rating.gpus_or_milli"));
  // CPU-only: `gpus: 0` with `cpus` (and `memory_gib`), billed at the offer's CPU prices.
  const bool cpu_only = !has_milli && f.has("gpus") && f.raw("gpus")->is_number_integer() && f.raw("gpus")->get<int64_t>() == 0;
  if (has_milli)
    a.gpu_milli = f.integer("gpu_milli", 1, 999);
  else
    a.gpu_milli = f.opt_integer("gpus", cpu_only ? 0 : 1, 16 * 1024).value_or(1) * 1000;
  if (cpu_only) {
    a.cpu_cores = f.integer("cpus", 1, 1'048'576);
    a.memory_gib = f.opt_integer("memory_gib", 0, 16'777'216).value_or(0);
  } else if (f.has("cpus") || f.has("memory_gib")) {
    f.error(f.has("cpus") ? "cpus" : "memory_gib", Message("rating.cpu_with_gpus"));
  }
  f.objects("placement", false, 1024, [&](Fields& pf, size_t) {
    PlacementPart p;
    p.node = pf.str("node", kId);
    if (const json* g = pf.raw("gpus")) {
      if (!g->is_array() || g->empty()) {
        pf.error("gpus", Message("rating.gpu_list"));
      } else {
        for (const auto& x : *g)
          if (x.is_number_integer() && x.get<int64_t>() >= 0 && x.get<int64_t>() < 64)
            p.gpus.push_back(x.get<int64_t>());
          else
            pf.error("gpus", Message("rating.gpu_index"));
      }
    } else {
      pf.error("gpus", FieldReason{"field.required"});
    }
    pf.finish();
    a.placement.push_back(std::move(p));
  });
  a.by_use = f.boolean("by_use", false);
  a.requested_at = f.time("requested_at");
  a.running_at = f.opt_time("running_at");
  a.ready_at = f.opt_time("ready_at");
  a.ended_at = f.opt_time("ended_at");
  f.objects("utilization", false, kMaxItems, [&](Fields& uf, size_t) {
    UtilSample s;
    s.at = uf.time("at");
    s.utilization_pct = uf.integer("pct", 0, 100);
    uf.finish();
    a.utilization.push_back(s);
  });
  return a;
}

}  // namespace

Result<RatingInput> parse_rating_input(const json& body, const GpuCatalog& catalog) {
  if (!body.is_object()) return Error::make(Code::kBadRequest, Message("rating.not_mapping"));
  RatingInput in;
  FieldErrors errs;
  Fields f(body, "", errs);
  f.ignore({"description", "expect"});
  f.object("period", true, [&](Fields& pf) {
    in.from = pf.time("from");
    in.to = pf.time("to");
    pf.finish();
  });
  // Offers first: the contract's clauses default to the first offer's template and its currency.
  ContractTemplate tmpl;
  std::optional<Currency> first_currency;
  if (const json* offers = f.raw("offers")) {
    if (!offers->is_array() || offers->empty()) {
      errs.add("offers", Message("rating.offers_list"));
    } else {
      for (size_t i = 0; i < offers->size(); ++i) {
        json o = (*offers)[i];
        const std::string at = "offers[" + std::to_string(i) + "]";
        // An earlier version of an offer listed again: in force until `in_force_until`.
        std::optional<TimeMs> until;
        if (o.is_object() && o.contains("in_force_until")) {
          const json u = o["in_force_until"];
          o.erase("in_force_until");
          auto t = u.is_string() ? parse_rfc3339(u.get<std::string>(), at + ".in_force_until")
                                 : Result<TimeMs>(Error::invalid(at + ".in_force_until", Message("field.time_string")));
          if (!t) {
            errs.add(at + ".in_force_until", t.error().fields.at(0).coded);
            continue;
          }
          until = *t;
        }
        if (o.is_object() && !o.contains("supplier")) o["supplier"] = "scenario";
        if (o.is_object() && !o.contains("region")) o["region"] = "zz-scenario";
        auto parsed = parse_offer(o, catalog);
        if (!parsed) {
          for (const auto& fe : parsed.error().fields) {
            if (fe.coded.empty())
              errs.add(at + "." + fe.field, fe.reason);
            else
              errs.add(at + "." + fe.field, fe.coded);
          }
          if (parsed.error().fields.empty()) {
            if (parsed.error().detail.empty())
              errs.add(at, parsed.error().message);
            else
              errs.add(at, parsed.error().detail);
          }
          continue;
        }
        if (i == 0) tmpl = parsed->contract_template, first_currency = parsed->currency;
        if (in.offers.count(parsed->name)) {
          errs.add(at + ".name", Message(until ? "rating.history_after_current" : "rating.duplicate_offer"));
          continue;
        }
        if (until) {
          in.offer_history[parsed->name].push_back({*until, std::move(*parsed)});  // order checked by rate()
        } else {
          in.offers[parsed->name] = std::move(*parsed);
        }
      }
      for (const auto& [name, h] : in.offer_history)
        if (!in.offers.count(name)) errs.add("offers", Message("rating.history_no_current").arg("offer", name));
    }
  } else {
    errs.add("offers", FieldReason{"field.required"});
  }
  if (first_currency) in.contract.currency = *first_currency;
  f.object("contract", false, [&](Fields& cf) {
    parse_contract_terms(cf, in.contract, tmpl);
    cf.finish();
  });
  if (!f.has("contract")) in.contract.clauses = tmpl;
  f.objects("commitments", false, 10'000, [&](Fields& cf, size_t) {
    Commitment c;
    c.id = cf.str("id", kId);
    c.offer = cf.str("offer", kId);
    c.gpus = cf.integer("gpus", 1, 1'000'000);
    c.start = cf.time("start");
    if (cf.has("price")) {  // a market commitment: a window at the trade price (docs/market.md#settlement)
      c.term_months = 0;
      c.price = cf.money("price", in.contract.currency).micros();
      if (*c.price <= 0) cf.error("price", Message("contract.commitment.price_positive"));
      c.end = cf.time("end");
      if (c.end <= c.start) cf.error("end", Message("contract.commitment.ends_after_start"));
      c.trade = cf.opt_str("trade", {.max_len = 63}).value_or("");
      c.defaults = read_commitment_defaults(cf, c.gpus, c.start, c.end, in.contract.currency);
      c.resales = read_commitment_resales(cf, c.gpus, in.contract.currency);
    } else {
      c.term_months = cf.integer("term_months", 1, 36);
      if (c.term_months != 1 && c.term_months != 12 && c.term_months != 36)
        cf.error("term_months", Message("rating.term_months"));
      c.end = add_months(c.start, c.term_months);
      c.prepaid = cf.boolean("prepaid", false);
    }
    cf.finish();
    in.commitments.push_back(std::move(c));
  });
  f.objects("allocations", false, kMaxItems, [&](Fields& af, size_t) {
    in.allocations.push_back(parse_allocation(af));
    af.finish();
  });
  f.object("usage", false, [&](Fields& uf) {
    uf.objects("volume", false, kMaxItems, [&](Fields& vf, size_t) {
      VolumeUsage v;
      v.at = vf.time("at");
      v.allocation = vf.str("allocation", kId);
      v.storage_io_bytes = vf.opt_integer("storage_io_bytes", 0, INT64_MAX / 4).value_or(0);
      v.egress_bytes = vf.opt_integer("egress_bytes", 0, INT64_MAX / 4).value_or(0);
      vf.finish();
      in.volume.push_back(std::move(v));
    });
    uf.objects("tokens", false, kMaxItems, [&](Fields& tf, size_t) {
      TokenUsage t;
      t.at = tf.time("at");
      t.project = tf.opt_str("project", kId).value_or("");
      t.offer = tf.str("offer", kId);
      t.model = tf.str("model", {.min_len = 1, .max_len = 128});
      t.input_tokens = tf.opt_integer("input_tokens", 0, INT64_MAX / 4).value_or(0);
      t.output_tokens = tf.opt_integer("output_tokens", 0, INT64_MAX / 4).value_or(0);
      t.requests = tf.opt_integer("requests", 0, INT64_MAX / 4).value_or(0);
      tf.finish();
      in.tokens.push_back(std::move(t));
    });
    uf.objects("qps", false, kMaxItems, [&](Fields& qf, size_t) {
      QpsProvision q;
      q.project = qf.opt_str("project", kId).value_or("");
      q.offer = qf.str("offer", kId);
      q.model = qf.str("model", {.min_len = 1, .max_len = 128});
      q.qps = qf.integer("qps", 1, 100'000'000);
      q.from = qf.time("from");
      q.to = qf.time("to");
      qf.finish();
      in.qps.push_back(std::move(q));
    });
    for (auto [key, name_key, list] : {std::tuple{"images", "image", &in.images}, std::tuple{"artifacts", "artifact", &in.artifacts},
                                       std::tuple{"volumes", "volume", &in.volumes}})
      // name_key and list by init-capture: clang 14 (fuzz/run) cannot capture a structured binding.
      uf.objects(key, false, kMaxItems, [&, name_key = name_key, list = list](Fields& imf, size_t) {
        StoredImage im;
        im.id = imf.str("id", kId);
        im.image = imf.opt_str(name_key, kId).value_or(im.id);
        im.offer = imf.str("offer", kId);
        im.bytes = imf.integer("bytes", 0, INT64_MAX / 4);
        im.from = imf.time("from");
        im.to = imf.opt_time("to");
        imf.finish();
        list->push_back(std::move(im));
      });
    uf.finish();
  });
  if (const json* sp = f.raw("spot_prices")) {
    if (!sp->is_object()) {
      errs.add("spot_prices", Message("rating.spot_prices_map"));
    } else {
      for (const auto& item : sp->items()) {
        const std::string offer = item.key();  // a named copy: clang 14 cannot capture a binding
        const json& list = item.value();
        json wrap = {{"p", list}};
        Fields wf(wrap, "spot_prices." + offer, errs);
        wf.objects("p", true, 1'000'000, [&](Fields& pf, size_t) {
          SpotPrice p;
          p.from = pf.time("from");
          p.price = pf.money("price", in.contract.currency);
          pf.finish();
          in.spot_prices[offer].push_back(p);
        });
      }
    }
  }
  f.object("measurements", false, [&](Fields& mf) {
    mf.objects("tflops", false, kMaxItems, [&](Fields& tf, size_t) {
      TflopsMeasurement m;
      m.id = tf.opt_str("id", kId).value_or("");
      m.at = tf.time("at");
      m.node = tf.str("node", kId);
      m.gpu = tf.integer("gpu", 0, 63);
      if (const json* v = tf.raw("fp16_tflops")) {
        auto x10 = parse_tflops_x10(*v);
        if (!x10 || *x10 <= 0)
          tf.error("fp16_tflops", Message("rating.tflops"));
        else
          m.fp16_tflops_x10 = *x10;
      } else {
        tf.error("fp16_tflops", FieldReason{"field.required"});
      }
      tf.finish();
      in.tflops.push_back(m);
    });
    mf.objects("nccl", false, kMaxItems, [&](Fields& nf, size_t) {
      NcclMeasurement m;
      m.id = nf.opt_str("id", kId).value_or("");
      m.node = nf.str("node", kId);
      m.from = nf.time("from");
      m.to = nf.time("to");
      m.busbw_gbps = nf.integer("busbw_gbps", 0, 100'000);
      nf.finish();
      in.nccl.push_back(m);
    });
    mf.objects("incidents", false, 1'000'000, [&](Fields& xf, size_t i) {
      Incident x;
      x.id = xf.opt_str("id", kId).value_or("incident-" + std::to_string(i + 1));
      x.from = xf.time("from");
      x.to = xf.time("to");
      x.node = xf.opt_str("node", kId).value_or("");
      x.allocation = xf.opt_str("allocation", kId).value_or("");
      x.reason = xf.opt_str("reason", {.min_len = 0, .max_len = 1024}).value_or("");
      xf.finish();
      in.incidents.push_back(std::move(x));
    });
    mf.finish();
  });
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return in;
}

}  // namespace gpurent
