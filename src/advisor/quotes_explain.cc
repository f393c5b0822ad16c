// Quote comparison, explanation side: component labels, the difference of each offer against the
// cheapest in words (en/zh), warnings, whether the list price misleads, and the JSON form.
#include <algorithm>
#include <cstdlib>
#include <map>

#include "advisor/quotes.h"
#include "advisor/quotes_internal.h"

namespace gpurent {

using namespace quotes_internal;

namespace {

const char* start_zh(BillingStart b) {
  switch (b) {
    case BillingStart::kApiCall:
      return "API 调用";
    case BillingStart::kRunning:
      return "实例运行";
    case BillingStart::kReady:
      break;
  }
  return "就绪";
}

std::pair<std::string, std::string> idle_rule_text(const Offer& o) {
  if (!o.fees.idle) return {"no idle rule (idle GPUs are billed as busy)", "无闲置规则（闲置 GPU 照常计费）"};
  const auto& r = *o.fees.idle;
  const std::string en = "below " + std::to_string(r.utilization_below_pct) + "% the first " +
                         std::to_string(r.window_minutes) + " min are billed as usual, then ";
  const std::string zh = "利用率低于 " + std::to_string(r.utilization_below_pct) + "% 时前 " +
                         std::to_string(r.window_minutes) + " 分钟照常计费，之后";
  switch (r.action) {
    case IdleAction::kCharge:
      return {en + "charged in full", zh + "全额计费"};
    case IdleAction::kDiscount:
      return {en + std::to_string(*r.discount_pct) + "% off",
              zh + "按 " + std::to_string(100 - *r.discount_pct) + "% 计费"};
    case IdleAction::kStop:
      break;
  }
  return {en + "billing stops (not charged; the job is not stopped)", zh + "停止计费（不计费；作业不会被停止）"};
}

const QuoteComponent& comp_of(const QuotePlan& p, const std::string& key) {
  for (const auto& c : p.components)
    if (c.key == key) return c;
  return p.components.front();  // every plan has every key (make_plan)
}

std::pair<std::string, std::string> component_label(const std::string& key) {
  static const std::map<std::string, std::pair<std::string, std::string>> k = {
      {"list_price", {"Useful GPU time at the list price", "有效 GPU 时间（按标价）"}},
      {"cold_start", {"Cold start billed", "冷启动计费"}},
      {"idle", {"Idle GPU time billed", "闲置 GPU 计费"}},
      {"min_increment", {"Rounding up to the minimum increment", "最小计费单位向上取整"}},
      {"commitment", {"Reserved commitment against the list price", "预留承诺（相对标价）"}},
      {"storage_io", {"Storage I/O beyond the free allowance", "超出免费额度的存储 I/O"}},
      {"egress", {"Egress beyond the free allowance", "超出免费额度的出网流量"}},
      {"rounding", {"Invoice lines rounded to the cent", "发票行按分舍入"}}};
  return k.at(key);
}

std::pair<std::string, std::string> volume_text(const Offer& o, const std::optional<VolumeFee>& fee, const QuotePlan& p,
                                                const char* key) {
  if (!fee) return {"not charged", "不收费"};
  const std::string gb = comp_of(p, key).quantity;
  const std::string price = fee->per_gb.amount_string() + " " + currency_code(o.currency);
  return {gb + " GB beyond " + std::to_string(fee->free_gb) + " GB free at " + price + "/GB",
          "超出免费 " + std::to_string(fee->free_gb) + " GB 后 " + gb + " GB，每 GB " + price};
}

// Why `key` differs between offer x and the cheapest offer b: (en, zh) without the amount.
std::pair<std::string, std::string> why(const std::string& key, const OfferQuote& x, const OfferQuote& b) {
  const QuotePlan &px = x.plans[x.best], &pb = b.plans[b.best];
  const Currency c = x.offer.currency;
  if (key == "list_price")
    return {"list price " + x.offer.prices.on_demand.amount_string() + " vs " +
                b.offer.prices.on_demand.amount_string() + " " + currency_code(c) + "/GPU-hour over " +
                comp_of(px, key).quantity + " useful GPU-hours",
            "标价每 GPU 小时 " + x.offer.prices.on_demand.amount_string() + " 对 " +
                b.offer.prices.on_demand.amount_string() + " " + currency_code(c) + "，有效 " +
                comp_of(px, key).quantity + " GPU 小时"};
  if (key == "cold_start")
    return {std::string("billing from ") + enum_name(kBillingStarts, x.offer.fees.billing_starts) + " bills " +
                std::to_string(x.billed_cold_seconds) + " s of each launch's start-up (" + comp_of(px, key).quantity +
                " GPU-hours) vs " + std::to_string(b.billed_cold_seconds) + " s from " +
                enum_name(kBillingStarts, b.offer.fees.billing_starts) + " (" + comp_of(pb, key).quantity + ")",
            std::string("自") + start_zh(x.offer.fees.billing_starts) + "起计费，每次启动计 " +
                std::to_string(x.billed_cold_seconds) + " 秒（" + comp_of(px, key).quantity + " GPU 小时），对比自" +
                start_zh(b.offer.fees.billing_starts) + "起计 " + std::to_string(b.billed_cold_seconds) + " 秒（" +
                comp_of(pb, key).quantity + "）"};
  if (key == "idle") {
    auto [ex, zx] = idle_rule_text(x.offer);
    auto [eb, zb] = idle_rule_text(b.offer);
    return {ex + " (" + comp_of(px, key).quantity + " idle GPU-hours billed) vs " + eb + " (" +
                comp_of(pb, key).quantity + ")",
            zx + "（计费闲置 " + comp_of(px, key).quantity + " GPU 小时），对比 " + zb + "（" +
                comp_of(pb, key).quantity + "）"};
  }
  if (key == "min_increment")
    return {"minimum increment " + std::to_string(x.offer.min_increment_seconds) + " s adds " +
                comp_of(px, key).quantity + " GPU-hours vs " + std::to_string(b.offer.min_increment_seconds) +
                " s adding " + comp_of(pb, key).quantity,
            "最小计费单位 " + std::to_string(x.offer.min_increment_seconds) + " 秒，多计 " + comp_of(px, key).quantity +
                " GPU 小时；对比 " + std::to_string(b.offer.min_increment_seconds) + " 秒，多计 " +
                comp_of(pb, key).quantity};
  if (key == "commitment") {
    auto [ex, zx] = plan_text(px, c);
    auto [eb, zb] = plan_text(pb, c);
    return {ex + " vs " + eb, zx + "，对比 " + zb};
  }
  if (key == "storage_io" || key == "egress") {
    const bool io = key == "storage_io";
    auto [ex, zx] = volume_text(x.offer, io ? x.offer.fees.storage_io : x.offer.fees.egress, px, key.c_str());
    auto [eb, zb] = volume_text(b.offer, io ? b.offer.fees.storage_io : b.offer.fees.egress, pb, key.c_str());
    return {std::string(io ? "storage I/O: " : "egress: ") + ex + " vs " + eb,
            std::string(io ? "存储 I/O：" : "出网流量：") + zx + "，对比 " + zb};
  }
  return {"each invoice line is rounded to the cent", "每一发票行按分舍入"};
}

}  // namespace

std::pair<std::string, std::string> quotes_internal::plan_text(const QuotePlan& p, Currency c) {
  const std::string price = p.unit_price.amount_string() + " " + currency_code(c);
  if (p.term_months == 0) return {"on-demand at " + price + "/GPU-hour", "按需，每 GPU 小时 " + price};
  return {std::to_string(p.committed_gpus) + " GPUs reserved for " + std::to_string(p.term_months) + " months at " +
              price + "/GPU-hour (billed whether used or not), the rest on-demand",
          "预留 " + std::to_string(p.committed_gpus) + " 张 GPU " + std::to_string(p.term_months) +
              " 个月，每 GPU 小时 " + price + "（用与不用都计费），其余按需"};
}

void quotes_internal::explain(OfferQuote& x, const OfferQuote& b) {
  const QuotePlan &px = x.plans[x.best], &pb = b.plans[b.best];
  const Currency c = x.offer.currency;
  const std::string cur = currency_code(c);
  if (&x == &b) {
    auto [pe, pz] = plan_text(px, c);
    x.summary_en = "Cheapest per useful GPU-hour: " + px.per_useful_gpu_hour.amount_string() + " " + cur + " (" + pe +
                   "); the month costs " + cents(px.total) + " " + cur + " against a sticker of " + cents(x.sticker) +
                   ".";
    x.summary_zh = "每有效 GPU 小时最便宜：" + px.per_useful_gpu_hour.amount_string() + " " + cur + "（" + pz +
                   "）；当月费用 " + cents(px.total) + " " + cur + "，按标价估算为 " + cents(x.sticker) + "。";
    return;
  }
  const Money diff(px.total.micros() - pb.total.micros(), c);
  const std::string pct =
      pct_tenths(px.per_useful_gpu_hour.micros() - pb.per_useful_gpu_hour.micros(), pb.per_useful_gpu_hour.micros());
  x.summary_en = x.label + " costs " + cents(diff) + " " + cur + " more a month than " + b.label + ": " +
                 px.per_useful_gpu_hour.amount_string() + " vs " + pb.per_useful_gpu_hour.amount_string() + " " + cur +
                 " per useful GPU-hour (+" + pct + "%).";
  x.summary_zh = x.label + " 每月比 " + b.label + " 多 " + cents(diff) + " " + cur + "：每有效 GPU 小时 " +
                 px.per_useful_gpu_hour.amount_string() + " 对 " + pb.per_useful_gpu_hour.amount_string() + " " + cur +
                 "（高 " + pct + "%）。";
  for (size_t i = 0; i < px.components.size(); ++i) {
    const std::string& key = px.components[i].key;
    const int64_t d = px.components[i].amount.micros() - comp_of(pb, key).amount.micros();
    if (d == 0 || (key == "rounding" && (d < 10'000 && d > -10'000))) continue;
    auto [en, zh] = why(key, x, b);
    const Money dm(d, c);
    const auto [le, lz] = component_label(key);
    x.vs_cheapest.push_back({key, dm, le + ": " + signed_cents(dm) + " " + cur + " (" + en + ")",
                             lz + "：" + signed_cents(dm) + " " + cur + "（" + zh + "）"});
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
        q.warnings.push_back({"The offer's idle rule (below " + std::to_string(o.fees.idle->utilization_below_pct) +
                                  "%) treats the workload's computing at " + std::to_string(s.utilization_pct) +
                                  "% as idle",
                              "该报价的闲置规则（低于 " + std::to_string(o.fees.idle->utilization_below_pct) +
                                  "%）会把本负载 " + std::to_string(s.utilization_pct) + "% 利用率的计算时段当作闲置"});
        break;
      }
  const QuotePlan& p = q.plans[q.best];
  if (p.term_months > 1)
    q.warnings.push_back({"The " + std::to_string(p.term_months) +
                              "-month commitment assumes this workload runs every month of the term",
                          std::to_string(p.term_months) + " 个月的预留承诺假设该负载在整个期限内每月都如此运行"});
}

void quotes_internal::explain_sticker(QuotesResult& res) {
  const OfferQuote& best = res.offers[0];
  const OfferQuote* list_best = &best;
  for (const auto& q : res.offers)
    if (q.list_rank == 1) list_best = &q;
  const std::string cur = currency_code(res.currency);
  if (!res.sticker_misleads) {
    res.misleads_en = "The list-price order holds for this workload.";
    res.misleads_zh = "对这一负载，标价排序与真实成本排序一致。";
  } else if (list_best != &best) {
    const auto &lp = list_best->plans[list_best->best], &bp = best.plans[best.best];
    res.misleads_en =
        "By list price " + list_best->label + " looks cheapest (" + list_best->offer.prices.on_demand.amount_string() +
        " " + cur + "/GPU-hour), but for this workload " + best.label + " is cheapest at " +
        bp.per_useful_gpu_hour.amount_string() + " " + cur + " per useful GPU-hour; " + list_best->label +
        " comes to " + lp.per_useful_gpu_hour.amount_string() + " (rank " + std::to_string(list_best->rank) + ").";
    res.misleads_zh = "按标价 " + list_best->label + " 看起来最便宜（每 GPU 小时 " +
                      list_best->offer.prices.on_demand.amount_string() + " " + cur + "），但对这一负载 " + best.label +
                      " 才最便宜，每有效 GPU 小时 " + bp.per_useful_gpu_hour.amount_string() + " " + cur + "；" +
                      list_best->label + " 实为 " + lp.per_useful_gpu_hour.amount_string() + "（第 " +
                      std::to_string(list_best->rank) + " 名）。";
  } else {
    res.misleads_en = "The cheapest offer is the same by list price and by true cost (" + best.label +
                      "), but the order of the others changes.";
    res.misleads_zh = "按标价和按真实成本最便宜的都是 " + best.label + "，但其余报价的排序发生了变化。";
  }
}

json to_json(const QuotesResult& r) {
  const std::string cur = currency_code(r.currency);
  json ranking = json::array(), by_list = json::array();
  for (const auto& q : r.offers) {
    const QuotePlan& best = q.plans[q.best];
    auto comps = [](const QuotePlan& p) {
      json a = json::array();
      for (const auto& c : p.components) {
        const auto [en, zh] = component_label(c.key);
        a.push_back({{"key", c.key},
                     {"en", en},
                     {"zh", zh},
                     {"quantity", c.quantity},
                     {"unit", c.unit},
                     {"amount", c.amount.amount_string()}});
      }
      return a;
    };
    json plans = json::array();
    for (const auto& p : q.plans) {
      json rules = json::array();
      for (const auto& x : p.rules)
        rules.push_back({{"rule", x.rule},
                         {"lines", x.lines},
                         {"quantity", x.quantity},
                         {"unit", x.unit},
                         {"amount", x.amount.amount_string()}});
      const auto [en, zh] = plan_text(p, r.currency);
      plans.push_back({{"plan", p.name},
                       {"term_months", p.term_months},
                       {"committed_gpus", p.committed_gpus},
                       {"unit_price", p.unit_price.amount_string()},
                       {"total", p.total.amount_string()},
                       {"per_useful_gpu_hour", p.per_useful_gpu_hour.amount_string()},
                       {"en", en},
                       {"zh", zh},
                       {"components", comps(p)},
                       {"invoice_rules", rules}});
    }
    json diffs = json::array();
    for (const auto& d : q.vs_cheapest)
      diffs.push_back({{"component", d.component}, {"diff", d.diff.amount_string()}, {"en", d.en}, {"zh", d.zh}});
    json warnings = json::array();
    for (const auto& [en, zh] : q.warnings) warnings.push_back({{"en", en}, {"zh", zh}});
    const auto [ie, iz] = idle_rule_text(q.offer);
    const int64_t overhead = best.total.micros() - q.sticker.micros();
    ranking.push_back(
        {{"rank", q.rank},
         {"list_rank", q.list_rank},
         {"offer", q.label},
         {"supplier", q.offer.supplier},
         {"name", q.offer.name},
         {"gpu_model", q.offer.gpu_model},
         {"list_price", q.offer.prices.on_demand.amount_string()},
         {"billing_starts", enum_name(kBillingStarts, q.offer.fees.billing_starts)},
         {"min_increment_seconds", q.offer.min_increment_seconds},
         {"idle_rule", {{"en", ie}, {"zh", iz}}},
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
         {"components", comps(best)},
         {"plans", plans},
         {"vs_cheapest",
          {{"diff", Money(best.total.micros() - r.offers[0].plans[r.offers[0].best].total.micros(), r.currency)
                        .amount_string()},
           {"differences", diffs}}},
         {"summary", {{"en", q.summary_en}, {"zh", q.summary_zh}}},
         {"warnings", warnings}});
  }
  std::vector<const OfferQuote*> order;
  for (const auto& q : r.offers) order.push_back(&q);
  std::sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->list_rank < b->list_rank; });
  for (const auto* q : order)
    by_list.push_back({{"list_rank", q->list_rank},
                       {"offer", q->label},
                       {"list_price", q->offer.prices.on_demand.amount_string()},
                       {"rank", q->rank},
                       {"per_useful_gpu_hour", q->plans[q->best].per_useful_gpu_hour.amount_string()}});
  return {{"currency", cur},
          {"period",
           {{"from", format_rfc3339(r.from)}, {"to", format_rfc3339(r.to)}, {"hours", (r.to - r.from) / kMsPerHour}}},
          {"workload",
           {{"useful_gpu_hours", gpu_hours(r.useful_milli_gpu_ms)},
            {"run_seconds_per_launch", format_scaled(r.run_ms_per_launch, 3)},
            {"computing_seconds_per_launch", format_scaled(r.busy_ms_per_launch, 3)}}},
          {"ranking", ranking},
          {"list_price_ranking", by_list},
          {"sticker_misleads", r.sticker_misleads},
          {"misleads", {{"en", r.misleads_en}, {"zh", r.misleads_zh}}},
          {"steps", r.steps}};
}

}  // namespace gpurent