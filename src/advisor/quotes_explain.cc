// Quote comparison, explanation side: component labels, the difference of each offer against the
// cheapest as message codes (core/message.h), warnings, whether the list price misleads, and the JSON form.
#include <algorithm>
#include <cstdlib>

#include "advisor/quotes.h"
#include "advisor/quotes_internal.h"
#include "billing/rating.h"
#include "catalog/gpu_model.h"

namespace gpurent {

using namespace quotes_internal;

namespace {

Message idle_rule_text(const Offer& o) {
  if (!o.fees.idle) return Message("advisor.quotes.idle_rule.none");
  const auto& r = *o.fees.idle;
  const std::string below = std::to_string(r.utilization_below_pct), window = std::to_string(r.window_minutes);
  switch (r.action) {
    case IdleAction::kCharge:
      return Message("advisor.quotes.idle_rule.charge").arg("below", below).arg("window", window);
    case IdleAction::kDiscount:
      return Message("advisor.quotes.idle_rule.discount")
          .arg("below", below)
          .arg("window", window)
          .arg("discount", std::to_string(*r.discount_pct));
    case IdleAction::kStop:
      break;
  }
  return Message("advisor.quotes.idle_rule.stop").arg("below", below).arg("window", window);
}

const QuoteComponent& comp_of(const QuotePlan& p, const std::string& key) {
  for (const auto& c : p.components)
    if (c.key == key) return c;
  return p.components.front();  // every plan has every key (make_plan)
}

Message component_label(const std::string& key) {
  if (key == "list_price") return Message("advisor.quotes.component.list_price");
  if (key == "cold_start") return Message("advisor.quotes.component.cold_start");
  if (key == "idle") return Message("advisor.quotes.component.idle");
  if (key == "min_increment") return Message("advisor.quotes.component.min_increment");
  if (key == "commitment") return Message("advisor.quotes.component.commitment");
  if (key == "storage_io") return Message("advisor.quotes.component.storage_io");
  if (key == "egress") return Message("advisor.quotes.component.egress");
  return Message("advisor.quotes.component.rounding");  // the last key (make_plan)
}

Message volume_text(const Offer& o, const std::optional<VolumeFee>& fee, const QuotePlan& p, const char* key) {
  if (!fee) return Message("advisor.quotes.volume.not_charged");
  return Message("advisor.quotes.volume.charged")
      .arg("gb", comp_of(p, key).quantity)
      .arg("free_gb", std::to_string(fee->free_gb))
      .arg("price", fee->per_gb.amount_string() + " " + currency_code(o.currency));
}

// Why `key` differs between offer x and the cheapest offer b, without the amount.
Message why(const std::string& key, const OfferQuote& x, const OfferQuote& b) {
  const QuotePlan &px = x.plans[x.best], &pb = b.plans[b.best];
  const Currency c = x.offer.currency;
  if (key == "list_price")
    return Message("advisor.quotes.why.list_price")
        .arg("price", x.offer.prices.on_demand.amount_string())
        .arg("other_price", b.offer.prices.on_demand.amount_string())
        .arg("currency", currency_code(c))
        .arg("hours", comp_of(px, key).quantity);
  if (key == "cold_start")
    return Message("advisor.quotes.why.cold_start")
        .arg("start", billing_start_message(x.offer.fees.billing_starts))
        .arg("seconds", std::to_string(x.billed_cold_seconds))
        .arg("hours", comp_of(px, key).quantity)
        .arg("other_start", billing_start_message(b.offer.fees.billing_starts))
        .arg("other_seconds", std::to_string(b.billed_cold_seconds))
        .arg("other_hours", comp_of(pb, key).quantity);
  if (key == "idle")
    return Message("advisor.quotes.why.idle")
        .arg("rule", idle_rule_text(x.offer))
        .arg("hours", comp_of(px, key).quantity)
        .arg("other_rule", idle_rule_text(b.offer))
        .arg("other_hours", comp_of(pb, key).quantity);
  if (key == "min_increment")
    return Message("advisor.quotes.why.min_increment")
        .arg("seconds", std::to_string(x.offer.min_increment_seconds))
        .arg("hours", comp_of(px, key).quantity)
        .arg("other_seconds", std::to_string(b.offer.min_increment_seconds))
        .arg("other_hours", comp_of(pb, key).quantity);
  if (key == "commitment")
    return Message("advisor.quotes.why.commitment").arg("plan", plan_text(px, c)).arg("other_plan", plan_text(pb, c));
  if (key == "storage_io")
    return Message("advisor.quotes.why.storage_io")
        .arg("fee", volume_text(x.offer, x.offer.fees.storage_io, px, "storage_io"))
        .arg("other_fee", volume_text(b.offer, b.offer.fees.storage_io, pb, "storage_io"));
  if (key == "egress")
    return Message("advisor.quotes.why.egress")
        .arg("fee", volume_text(x.offer, x.offer.fees.egress, px, "egress"))
        .arg("other_fee", volume_text(b.offer, b.offer.fees.egress, pb, "egress"));
  return Message("advisor.quotes.why.rounding");
}

}  // namespace

Message quotes_internal::plan_text(const QuotePlan& p, Currency c) {
  const std::string price = p.unit_price.amount_string() + " " + currency_code(c);
  if (p.term_months == 0) return Message("advisor.quotes.plan.on_demand").arg("price", price);
  return Message("advisor.quotes.plan.reserved")
      .arg("gpus", std::to_string(p.committed_gpus))
      .arg("months", std::to_string(p.term_months))
      .arg("price", price);
}

namespace {

// The summary by compute: cost per useful PFLOP-hour at the precision, the TFLOPS and whose.
Message compute_summary(const OfferQuote& x, const OfferQuote& b, const std::string& precision) {
  const QuotePlan& px = x.plans[x.best];
  const std::string cur = currency_code(x.offer.currency);
  if (!x.per_useful_pflop_hour)
    return Message("advisor.quotes.summary.no_tflops")
        .arg("offer", x.label)
        .arg("precision", precision)
        .arg("model", x.offer.gpu_model)
        .arg("per_useful", px.per_useful_gpu_hour.amount_string())
        .arg("currency", cur);
  Message m = Message(&x == &b ? "advisor.quotes.summary.cheapest_compute" : "advisor.quotes.summary.dearer_compute")
                  .arg("offer", x.label)
                  .arg("precision", precision)
                  .arg("per_pflop", x.per_useful_pflop_hour->amount_string())
                  .arg("currency", cur)
                  .arg("tflops", format_tflops_x10(*x.tflops_x10))
                  .arg("source", Message(x.tflops_source == "measured" ? "advisor.quotes.tflops_source.measured"
                                                                        : "advisor.quotes.tflops_source.datasheet"))
                  .arg("per_useful", px.per_useful_gpu_hour.amount_string())
                  .arg("total", cents(px.total));
  if (&x != &b && b.per_useful_pflop_hour)
    m.arg("cheapest", b.label)
        .arg("cheapest_per_pflop", b.per_useful_pflop_hour->amount_string())
        .arg("pct", pct_tenths(x.per_useful_pflop_hour->micros() - b.per_useful_pflop_hour->micros(),
                               b.per_useful_pflop_hour->micros()));
  return m;
}

}  // namespace

// The summary by the job's work: cost per unit on the offer's model, and against the cheapest.
static Message work_summary(const OfferQuote& x, const OfferQuote& b, const std::string& unit) {
  const QuotePlan& px = x.plans[x.best];
  const std::string cur = currency_code(x.offer.currency);
  const Message unit_text = quotes_internal::work_unit_text(unit);
  if (!x.per_unit_of_work)
    return Message("advisor.quotes.summary.no_unit_time")
        .arg("offer", x.label)
        .arg("model", x.offer.gpu_model)
        .arg("unit", unit_text)
        .arg("per_useful", px.per_useful_gpu_hour.amount_string())
        .arg("currency", cur);
  Message m = Message(&x == &b ? "advisor.quotes.summary.cheapest_work" : "advisor.quotes.summary.dearer_work")
                  .arg("offer", x.label)
                  .arg("per_unit", x.per_unit_of_work->amount_string())
                  .arg("currency", cur)
                  .arg("unit", unit_text)
                  .arg("us", std::to_string(*x.us_per_unit))
                  .arg("model", x.offer.gpu_model)
                  .arg("per_useful", px.per_useful_gpu_hour.amount_string());
  if (&x != &b && b.per_unit_of_work)
    m.arg("cheapest", b.label)
        .arg("cheapest_per_unit", b.per_unit_of_work->amount_string())
        .arg("pct", pct_tenths(x.per_unit_of_work->micros() - b.per_unit_of_work->micros(), b.per_unit_of_work->micros()));
  return m;
}

void quotes_internal::explain(OfferQuote& x, const OfferQuote& b, const std::string& precision,
                              const std::string& work_unit) {
  const QuotePlan &px = x.plans[x.best], &pb = b.plans[b.best];
  const Currency c = x.offer.currency;
  const std::string cur = currency_code(c);
  if (!precision.empty()) x.summary = compute_summary(x, b, precision);
  if (!work_unit.empty()) x.summary = work_summary(x, b, work_unit);
  if (&x == &b) {
    if (!precision.empty() || !work_unit.empty()) return;
    x.summary = Message("advisor.quotes.summary.cheapest")
                    .arg("per_useful", px.per_useful_gpu_hour.amount_string())
                    .arg("currency", cur)
                    .arg("plan", plan_text(px, c))
                    .arg("total", cents(px.total))
                    .arg("sticker", cents(x.sticker));
    return;
  }
  const Money diff(px.total.micros() - pb.total.micros(), c);
  const std::string pct =
      pct_tenths(px.per_useful_gpu_hour.micros() - pb.per_useful_gpu_hour.micros(), pb.per_useful_gpu_hour.micros());
  if (precision.empty() && work_unit.empty())
    x.summary = Message("advisor.quotes.summary.dearer")
                  .arg("offer", x.label)
                  .arg("diff", cents(diff))
                  .arg("currency", cur)
                  .arg("cheapest", b.label)
                  .arg("per_useful", px.per_useful_gpu_hour.amount_string())
                  .arg("cheapest_per_useful", pb.per_useful_gpu_hour.amount_string())
                  .arg("pct", pct);
  for (size_t i = 0; i < px.components.size(); ++i) {
    const std::string& key = px.components[i].key;
    const int64_t d = px.components[i].amount.micros() - comp_of(pb, key).amount.micros();
    if (d == 0 || (key == "rounding" && (d < 10'000 && d > -10'000))) continue;
    const Money dm(d, c);
    x.vs_cheapest.push_back({key, dm,
                             Message("advisor.quotes.difference")
                                 .arg("component", component_label(key))
                                 .arg("diff", signed_cents(dm))
                                 .arg("currency", cur)
                                 .arg("why", why(key, x, b))});
  }
  std::stable_sort(x.vs_cheapest.begin(), x.vs_cheapest.end(), [](const QuoteDifference& p, const QuoteDifference& q) {
    return std::abs(p.diff.micros()) > std::abs(q.diff.micros());
  });
}

void quotes_internal::add_warnings(const Month& m, OfferQuote& q) {
  const Offer& o = q.offer;
  if (o.fees.idle)
    for (const auto& s : m.in.workload.profile)
      if (s.utilization_pct >= m.in.workload.idle_below_pct && s.utilization_pct < o.fees.idle->utilization_below_pct) {
        q.warnings.push_back(Message("advisor.quotes.warning.idle_rule")
                                 .arg("below", std::to_string(o.fees.idle->utilization_below_pct))
                                 .arg("utilization", std::to_string(s.utilization_pct)));
        break;
      }
  const QuotePlan& p = q.plans[q.best];
  if (p.term_months > 1)
    q.warnings.push_back(Message("advisor.quotes.warning.term").arg("months", std::to_string(p.term_months)));
}

void quotes_internal::explain_sticker(QuotesResult& res) {
  // The lowest true cost per useful GPU-hour (the first-ranked offer unless ranked by compute).
  const OfferQuote* cheapest = &res.offers[0];
  for (const auto& q : res.offers)
    if (q.plans[q.best].total.micros() < cheapest->plans[cheapest->best].total.micros()) cheapest = &q;
  const OfferQuote& best = *cheapest;
  const OfferQuote* list_best = &best;
  for (const auto& q : res.offers)
    if (q.list_rank == 1) list_best = &q;
  const std::string cur = currency_code(res.currency);
  if (!res.sticker_misleads) {
    res.misleads = Message("advisor.quotes.misleads.holds");
  } else if (list_best != &best) {
    const auto &lp = list_best->plans[list_best->best], &bp = best.plans[best.best];
    res.misleads = Message("advisor.quotes.misleads.list_cheapest")
                       .arg("list_offer", list_best->label)
                       .arg("list_price", list_best->offer.prices.on_demand.amount_string())
                       .arg("currency", cur)
                       .arg("best_offer", best.label)
                       .arg("best_per_useful", bp.per_useful_gpu_hour.amount_string())
                       .arg("list_per_useful", lp.per_useful_gpu_hour.amount_string())
                       .arg("rank", std::to_string(list_best->rank));
  } else {
    res.misleads = Message("advisor.quotes.misleads.others_reordered").arg("offer", best.label);
  }
}

namespace {

// A plan's components, each with its label.
json components_json(const QuotePlan& p) {
  json a = json::array();
  for (const auto& c : p.components) {
    const Message label = component_label(c.key);
    a.push_back({{"key", c.key},
                 {"text", render_en(label)},
                 {"text_message", message_to_json(label)},
                 {"quantity", c.quantity},
                 {"unit", c.unit},
                 {"amount", c.amount.amount_string()}});
  }
  return a;
}

// Every plan rated for q, with its invoice lines summed per rule.
json plans_json(const OfferQuote& q, Currency currency) {
  json plans = json::array();
  for (const auto& p : q.plans) {
    json rules = json::array();
    for (const auto& x : p.rules)
      rules.push_back({{"rule", x.rule},
                       {"lines", x.lines},
                       {"quantity", x.quantity},
                       {"unit", x.unit},
                       {"amount", x.amount.amount_string()}});
    const Message text = plan_text(p, currency);
    plans.push_back({{"plan", p.name},
                     {"term_months", p.term_months},
                     {"committed_gpus", p.committed_gpus},
                     {"unit_price", p.unit_price.amount_string()},
                     {"total", p.total.amount_string()},
                     {"per_useful_gpu_hour", p.per_useful_gpu_hour.amount_string()},
                     {"text", render_en(text)},
                     {"text_message", message_to_json(text)},
                     {"components", components_json(p)},
                     {"invoice_rules", rules}});
  }
  return plans;
}

// q's differences against the cheapest offer.
json differences_json(const OfferQuote& q) {
  json diffs = json::array();
  for (const auto& d : q.vs_cheapest)
    diffs.push_back({{"component", d.component},
                     {"diff", d.diff.amount_string()},
                     {"text", render_en(d.text)},
                     {"text_message", message_to_json(d.text)}});
  return diffs;
}

// One offer's entry in "ranking".
json ranking_entry(const QuotesResult& r, const OfferQuote& q) {
  const QuotePlan& best = q.plans[q.best];
  json plans = plans_json(q, r.currency);
  json diffs = differences_json(q);
  json warnings = json::array();
  for (const auto& w : q.warnings) warnings.push_back(text_json(w));
  const int64_t overhead = best.total.micros() - q.sticker.micros();
  json entry = {
      {"rank", q.rank},
      {"list_rank", q.list_rank},
      {"offer", q.label},
      {"supplier", q.offer.supplier},
      {"name", q.offer.name},
      {"gpu_model", q.offer.gpu_model},
      {"list_price", q.offer.prices.on_demand.amount_string()},
      {"billing_starts", enum_name(kBillingStarts, q.offer.fees.billing_starts)},
      {"min_increment_seconds", q.offer.min_increment_seconds},
      {"cold_start",
       {{"to_running_seconds", q.cold_start.to_running_seconds},
        {"to_ready_seconds", q.cold_start.to_ready_seconds},
        {"billed_seconds_per_launch", q.billed_cold_seconds}}},
      {"plan", best.name},
      {"total", best.total.amount_string()},
      {"per_useful_gpu_hour", best.per_useful_gpu_hour.amount_string()},
      {"sticker", q.sticker.amount_string()},
      {"overhead", Money(overhead, r.currency).amount_string()},
      {"overhead_pct", pct_tenths(overhead, q.sticker.micros())},
      {"components", components_json(best)},
      {"plans", plans},
      {"vs_cheapest",
       {{"diff",
         Money(best.total.micros() - r.offers[0].plans[r.offers[0].best].total.micros(), r.currency).amount_string()},
        {"differences", diffs}}},
      {"warnings", warnings}};
  if (r.ranked_by == "per_useful_pflop_hour")
    entry["compute"] = q.tflops_x10 ? json{{"tflops", format_tflops_x10(*q.tflops_x10)},
                                           {"source", q.tflops_source},
                                           {"per_useful_pflop_hour", q.per_useful_pflop_hour->amount_string()}}
                                    : json{{"tflops", nullptr}, {"source", nullptr}, {"per_useful_pflop_hour", nullptr}};
  if (q.measured_cards > 0) entry["compute"]["measured_cards"] = q.measured_cards;
  if (r.ranked_by == "per_unit_of_work")
  {
    entry["work"] = q.per_unit_of_work ? json{{"us_per_unit", *q.us_per_unit}, {"per_unit", q.per_unit_of_work->amount_string()}}
                                       : json{{"us_per_unit", nullptr}, {"per_unit", nullptr}};
    if (q.per_million_tokens) entry["work"]["per_million_tokens"] = q.per_million_tokens->amount_string();
  }
  put_message(entry, "idle_rule", idle_rule_text(q.offer));
  put_message(entry, "summary", q.summary);
  return entry;
}

// "list_price_ranking": the offers by list rank.
json list_price_ranking_json(const QuotesResult& r) {
  json by_list = json::array();
  std::vector<const OfferQuote*> order;
  for (const auto& q : r.offers) order.push_back(&q);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->list_rank < b->list_rank; });
  for (const auto* q : order)
    by_list.push_back({{"list_rank", q->list_rank},
                       {"offer", q->label},
                       {"list_price", q->offer.prices.on_demand.amount_string()},
                       {"rank", q->rank},
                       {"per_useful_gpu_hour", q->plans[q->best].per_useful_gpu_hour.amount_string()}});
  return by_list;
}

}  // namespace

json to_json(const QuotesResult& r) {
  const std::string cur = currency_code(r.currency);
  json ranking = json::array();
  for (const auto& q : r.offers) ranking.push_back(ranking_entry(r, q));
  const json by_list = list_price_ranking_json(r);
  const json steps = steps_to_json(r.steps);
  json out = {
      {"currency", cur},
      {"period",
       {{"from", format_rfc3339(r.from)}, {"to", format_rfc3339(r.to)}, {"hours", (r.to - r.from) / kMsPerHour}}},
      {"workload",
       {{"useful_gpu_hours", gpu_hours(r.useful_milli_gpu_ms)},
        {"run_seconds_per_launch", format_scaled(r.run_ms_per_launch, 3)},
        {"computing_seconds_per_launch", format_scaled(r.busy_ms_per_launch, 3)}}},
      {"ranked_by", r.ranked_by},
      {"ranking", ranking},
      {"list_price_ranking", by_list},
      {"sticker_misleads", r.sticker_misleads},
      {"steps", steps}};
  put_message(out, "misleads", r.misleads);
  return out;
}

}  // namespace gpurent