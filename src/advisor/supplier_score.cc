// Supplier score: the default checklist, evaluating each item against the supplier's record and
// answers, the weighted score, the capped procurement split, and the JSON form.
#include "advisor/supplier_score.h"

#include <algorithm>

#include "advisor/supplier_score_internal.h"

namespace gpurent {

using namespace supplier_score_internal;

namespace {

json step(std::string en, std::string zh, std::string formula, json value) {
  return {{"en", std::move(en)}, {"zh", std::move(zh)}, {"formula", std::move(formula)}, {"value", std::move(value)}};
}

std::string tenths(int64_t x10) {
  const int64_t a = x10 < 0 ? -x10 : x10;
  return (x10 < 0 ? "-" : "") + std::to_string(a / 10) + "." + std::to_string(a % 10);
}

}  // namespace

std::vector<SupplierChecklistItem> default_supplier_checklist() {
  auto item = [](const char* id, const char* en, const char* zh, int64_t w, bool must) {
    SupplierChecklistItem i;
    i.id = id;
    i.en = en;
    i.zh = zh;
    i.weight = w;
    i.must_have = must;
    i.builtin = true;
    return i;
  };
  return {item("gpu_supply_30d", "Delivers additional GPUs within 30 days of an order", "下单后 30 天内可交付新增 GPU",
               12, false),
          item("allreduce_120ms", "All-reduce of 1 GB across 8 GPUs under 120 ms", "8 卡 AllReduce 1 GB 低于 120 毫秒",
               12, false),
          item("fault_30m_restore_2h", "A fault is located within 30 minutes and service restored within 2 hours",
               "故障 30 分钟内定位、2 小时内恢复", 12, false),
          item("cuda_7d", "New CUDA versions available within 7 days of release", "新 CUDA 版本发布后 7 天内可用", 8,
               false),
          item("iso27001_mlps3", "ISO/IEC 27001 certified and MLPS level 3 (等保三级) or higher",
               "通过 ISO/IEC 27001 认证且等保三级及以上", 8, true),
          item("exit_path_tested", "A tenant exit (data export, teardown) has been tested",
               "已演练租户退出（数据导出、资源回收）", 8, true)};
}

namespace {

struct Eval {
  SupplierItemStatus status = SupplierItemStatus::kUnknown;
  std::string source = "none";
  std::string en, zh;
};

Eval verdict(bool pass, std::string source, std::string en, std::string zh) {
  return {pass ? SupplierItemStatus::kPass : SupplierItemStatus::kFail, std::move(source), std::move(en),
          std::move(zh)};
}
Eval unknown(std::string en, std::string zh) {
  return {SupplierItemStatus::kUnknown, "none", std::move(en), std::move(zh)};
}

// "declared 14 ≤ 30 days" / "申报 14 ≤ 30 天"
Eval at_most(const std::optional<int64_t>& v, int64_t limit, const char* source, const char* unit_en,
             const char* unit_zh, const char* what_en, const char* what_zh) {
  if (!v) return unknown(std::string(what_en) + ": not answered", std::string(what_zh) + "：未填写");
  const bool ok = *v <= limit;
  const std::string src_zh = std::string(source) == "measured"  ? "实测"
                             : std::string(source) == "entered" ? "录入"
                                                                : "申报";
  return verdict(
      ok, source,
      std::string(what_en) + ": " + source + " " + n2s(*v) + " " + unit_en + (ok ? " ≤ " : " > ") + n2s(limit),
      std::string(what_zh) + "：" + src_zh + " " + n2s(*v) + " " + unit_zh + (ok ? " ≤ " : " > ") + n2s(limit));
}

Eval both(const Eval& a, const Eval& b) {
  Eval e;
  e.en = a.en + "; " + b.en;
  e.zh = a.zh + "；" + b.zh;
  e.source = a.source == b.source ? a.source : a.source + "+" + b.source;
  if (a.status == SupplierItemStatus::kFail || b.status == SupplierItemStatus::kFail)
    e.status = SupplierItemStatus::kFail;
  else if (a.status == SupplierItemStatus::kPass && b.status == SupplierItemStatus::kPass)
    e.status = SupplierItemStatus::kPass;
  return e;
}
bool holds(const Supplier& s, Certification c) {
  return std::find(s.certifications.begin(), s.certifications.end(), c) != s.certifications.end();
}

Eval eval_builtin(const SupplierChecklistItem& it, const SupplierCandidate& c) {
  const DueDiligence& dd = c.supplier.due_diligence;
  const SupplierHistory& h = c.history;
  if (it.id == "gpu_supply_30d") return at_most(dd.gpu_supply_days, 30, "declared", "days", "天", "delivery", "交付");
  if (it.id == "allreduce_120ms") {
    if (h.worst_nccl_busbw_gbps) {
      // Ring all-reduce moves 2(n-1)/n of the data per GPU: 8 GPUs, 1 GB -> 1.75 GB at the bus
      // bandwidth; rounded up so a figure just over the limit fails.
      const int64_t bw = *h.worst_nccl_busbw_gbps;
      const std::string src = source_of(h, "worst_nccl_busbw_gbps");
      if (bw == 0) return verdict(false, src, src + ": NCCL bus bandwidth 0 GB/s", "NCCL 总线带宽 0 GB/s");
      const int64_t ms = (1750 + bw - 1) / bw;
      return verdict(ms < 120, src,
                     src + ": worst NCCL bus bandwidth " + n2s(bw) + " GB/s -> 1.75 GB ÷ " + n2s(bw) +
                         " GB/s = " + n2s(ms) + " ms" + (ms < 120 ? " < 120" : " ≥ 120"),
                     "最低 NCCL 总线带宽 " + n2s(bw) + " GB/s -> 1.75 GB ÷ " + n2s(bw) + " GB/s = " + n2s(ms) +
                         " 毫秒" + (ms < 120 ? " < 120" : " ≥ 120"));
    }
    const bool entered = h.allreduce_8gpu_1gb_ms.has_value();
    const auto v = entered ? h.allreduce_8gpu_1gb_ms : dd.allreduce_8gpu_1gb_ms;
    if (!v) return unknown("all-reduce time: not answered", "AllReduce 时间：未填写");
    const std::string src = entered ? "entered" : "declared";
    return verdict(*v < 120, src, src + " " + n2s(*v) + " ms" + (*v < 120 ? " < 120" : " ≥ 120"),
                   std::string(entered ? "录入 " : "申报 ") + n2s(*v) + " 毫秒" + (*v < 120 ? " < 120" : " ≥ 120"));
  }
  if (it.id == "fault_30m_restore_2h") {
    const Eval locate = at_most(dd.fault_locate_minutes, 30, "declared", "min", "分钟", "locate", "定位");
    const Eval restore = h.max_restore_minutes
                             ? at_most(h.max_restore_minutes, 120, source_of(h, "max_restore_minutes").c_str(),
                                       "min (longest outage)", "分钟（最长故障）", "restore", "恢复")
                             : at_most(dd.restore_hours ? std::optional<int64_t>(*dd.restore_hours * 60) : std::nullopt,
                                       120, "declared", "min", "分钟", "restore", "恢复");
    return both(locate, restore);
  }
  if (it.id == "cuda_7d")
    return at_most(dd.cuda_update_days, 7, "declared", "days", "天", "CUDA availability", "CUDA 上线");
  if (it.id == "iso27001_mlps3") {
    const bool iso = holds(c.supplier, Certification::kIso27001);
    const bool mlps = holds(c.supplier, Certification::kMlps3) || holds(c.supplier, Certification::kMlps4);
    return verdict(
        iso && mlps, "declared",
        std::string("ISO 27001: ") + (iso ? "held" : "not held") + "; MLPS 3+: " + (mlps ? "held" : "not held"),
        std::string("ISO 27001：") + (iso ? "已获得" : "未获得") + "；等保三级及以上：" + (mlps ? "已获得" : "未获得"));
  }
  if (!dd.exit_path_tested) return unknown("exit test: not answered", "退出演练：未填写");
  return verdict(*dd.exit_path_tested, "declared", *dd.exit_path_tested ? "exit path tested" : "exit path not tested",
                 *dd.exit_path_tested ? "已演练退出" : "未演练退出");
}

Eval eval_custom(const SupplierChecklistItem& it, const SupplierCandidate& c) {
  auto a = c.answers.find(it.id);
  if (a == c.answers.end()) return unknown("not answered", "未填写");
  if (it.check == SupplierCheck::kYesNo)
    return verdict(a->second == 1, "answer", a->second ? "yes" : "no", a->second ? "是" : "否");
  const bool ok = it.check == SupplierCheck::kAtMost ? a->second <= it.threshold : a->second >= it.threshold;
  const char* op = it.check == SupplierCheck::kAtMost ? (ok ? " ≤ " : " > ") : (ok ? " ≥ " : " < ");
  const std::string s = n2s(a->second) + (it.unit.empty() ? "" : " " + it.unit) + op + n2s(it.threshold);
  return verdict(ok, "answer", "answered " + s, "回答 " + s);
}

// Integer shares summing to 1000 in proportion to w, none above cap (water-filling, then the
// largest remainders; ties to the earlier entry, the list being in score order).
std::vector<int64_t> apportion(const std::vector<int64_t>& w, int64_t cap) {
  const size_t n = w.size();
  std::vector<bool> capped(n, false);
  for (bool changed = true; changed;) {
    changed = false;
    int64_t rest = 1000, wsum = 0;
    for (size_t i = 0; i < n; ++i) {
      if (capped[i])
        rest -= cap;
      else
        wsum += w[i];
    }
    for (size_t i = 0; i < n; ++i)
      if (!capped[i] && static_cast<__int128>(rest) * w[i] > static_cast<__int128>(cap) * wsum)
        capped[i] = changed = true;
  }
  int64_t rest = 1000, wsum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (capped[i])
      rest -= cap;
    else
      wsum += w[i];
  }
  std::vector<int64_t> share(n, 0), rem(n, -1);
  int64_t given = 0;
  for (size_t i = 0; i < n; ++i) {
    if (capped[i])
      share[i] = cap;
    else if (wsum > 0) {
      share[i] = rest * w[i] / wsum;
      rem[i] = rest * w[i] % wsum;
    }
    given += share[i];
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rem[a] > rem[b]; });
  for (size_t k = 0; given < 1000 && k < n; ++k)
    if (rem[order[k]] >= 0) ++share[order[k]], ++given;
  return share;
}

}  // namespace

Result<SupplierScoreResult> compute_supplier_score(const SupplierScoreInput& in) {
  if (in.suppliers.empty()) return Error::invalid("suppliers", "must list at least one supplier");
  int64_t wsum = 0;
  for (const auto& i : in.checklist) wsum += i.weight;
  for (const auto& r : in.history_rules) wsum += r.weight;
  if (wsum <= 0) return Error::invalid("checklist", "every weight is zero: nothing to score");
  if (in.split.floor < 0 || in.split.floor > 99) return Error::invalid("split.floor", "must be 0..99");
  if (in.split.cap_pct < 1 || in.split.cap_pct > 100) return Error::invalid("split.cap_pct", "must be 1..100");
  SupplierScoreResult res;
  res.floor_x10 = in.split.floor * 10;
  res.cap_permille = in.split.cap_pct * 10;
  for (const auto& c : in.suppliers) {
    SupplierScore s;
    s.name = c.supplier.name;
    s.display_name = c.supplier.display_name.empty() ? c.supplier.name : c.supplier.display_name;
    s.history = c.history;
    for (const auto& it : in.checklist) {
      const Eval e = it.builtin ? eval_builtin(it, c) : eval_custom(it, c);
      SupplierItemResult x{it.id,     it.en,        it.zh,    false,
                           it.weight, it.must_have, e.status, e.status == SupplierItemStatus::kPass ? 1000 : 0,
                           e.source,  e.en,         e.zh};
      if (it.must_have && e.status != SupplierItemStatus::kPass) {
        s.blocked = true;
        s.hard_failures.push_back(it.id);
      }
      s.items.push_back(std::move(x));
    }
    for (const auto& r : in.history_rules) s.items.push_back(grade(r, c.history));
    __int128 points = 0;
    std::string formula;
    for (const auto& x : s.items) {
      points += static_cast<__int128>(x.weight) * x.credit_permille;
      if (x.weight > 0) formula += (formula.empty() ? "(" : " + ") + n2s(x.weight) + "×" + n2s(x.credit_permille);
    }
    s.score_x10 = he128(points, wsum);  // Σ w × credit‰ ÷ (Σ w × 1000) × 100, in tenths
    s.eligible = !s.blocked && s.score_x10 > res.floor_x10;
    res.steps.push_back(step(s.name + ": score = Σ weight × credit‰ ÷ (Σ weight × 10)",
                             s.name + "：得分 = Σ 权重 × 得分率‰ ÷ (Σ 权重 × 10)",
                             formula + ") ÷ (" + n2s(wsum) + " × 10)", tenths(s.score_x10)));
    res.suppliers.push_back(std::move(s));
  }
  std::stable_sort(res.suppliers.begin(), res.suppliers.end(), [](const SupplierScore& a, const SupplierScore& b) {
    return a.score_x10 != b.score_x10 ? a.score_x10 > b.score_x10 : a.name < b.name;
  });
  std::vector<SupplierScore*> eligible;
  std::vector<int64_t> weights;
  std::string wformula;
  for (auto& s : res.suppliers)
    if (s.eligible) {
      eligible.push_back(&s);
      weights.push_back(s.score_x10 - res.floor_x10);
      wformula += (wformula.empty() ? "" : ", ") + s.name + " " + tenths(s.score_x10) + " − " + tenths(res.floor_x10);
    }
  const int64_t n = static_cast<int64_t>(eligible.size());
  res.effective_cap_permille = n > 0 ? std::max(res.cap_permille, (1000 + n - 1) / n) : res.cap_permille;
  if (n == 0) {
    res.split_en = "No supplier qualifies (every one is blocked by a must-have item or scores at or below " +
                   tenths(res.floor_x10) + "): no procurement split.";
    res.split_zh = "没有供应商达标（均因必备项被否决或得分不高于 " + tenths(res.floor_x10) + "）：不做采购分配。";
    return res;
  }
  const auto shares = apportion(weights, res.effective_cap_permille);
  std::string sformula;
  for (size_t i = 0; i < eligible.size(); ++i) {
    eligible[i]->share_permille = shares[i];
    sformula += (sformula.empty() ? "" : ", ") + eligible[i]->name + " " + n2s(shares[i]) + "‰";
  }
  res.split_en = "Shares in proportion to each eligible supplier's score above " + tenths(res.floor_x10) +
                 ", at most " + n2s(res.effective_cap_permille) +
                 "‰ each, in whole per-mille summing to 1000: " + sformula + ".";
  res.split_zh = "按各合格供应商超出 " + tenths(res.floor_x10) + " 分的部分成比例分配，每家不超过 " +
                 n2s(res.effective_cap_permille) + "‰，以整数千分比合计 1000：" + sformula + "。";
  if (res.effective_cap_permille > res.cap_permille) {
    res.split_en += " Only " + n2s(n) + " supplier(s) qualify, so the " + n2s(res.cap_permille) +
                    "‰ cap cannot hold; qualify more suppliers for resilience.";
    res.split_zh += " 仅 " + n2s(n) + " 家供应商合格，无法满足每家不超过 " + n2s(res.cap_permille) +
                    "‰ 的上限；为保证韧性请引入更多供应商。";
  }
  res.steps.push_back(
      step("Split weight = score − floor for suppliers with no hard failure and a score above the floor",
           "分配权重 = 得分 − 门槛（仅限无必备项否决且得分高于门槛的供应商）", wformula, json(weights)));
  res.steps.push_back(
      step("Shares: proportional to the weights, capped (water-filling), floored to per-mille, the "
           "remainder to the largest fractions",
           "份额：按权重成比例，超上限者封顶（注水法），向下取整到千分比，余数给小数部分最大者",
           "1000 × weight ÷ Σ weight, cap " + n2s(res.effective_cap_permille) + "‰", sformula));
  return res;
}

json to_json(const SupplierScoreResult& r) {
  json sups = json::array();
  for (const auto& s : r.suppliers) {
    json items = json::array();
    for (const auto& x : s.items)
      items.push_back({{"id", x.id},
                       {"en", x.en},
                       {"zh", x.zh},
                       {"kind", x.history ? "history" : "checklist"},
                       {"weight", x.weight},
                       {"must_have", x.must_have},
                       {"status", enum_name(kSupplierItemStatuses, x.status)},
                       {"credit_permille", x.credit_permille},
                       {"source", x.source},
                       {"evidence", {{"en", x.evidence_en}, {"zh", x.evidence_zh}}}});
    sups.push_back({{"name", s.name},
                    {"display_name", s.display_name},
                    {"score", tenths(s.score_x10)},
                    {"score_x10", s.score_x10},
                    {"blocked", s.blocked},
                    {"hard_failures", s.hard_failures},
                    {"eligible", s.eligible},
                    {"share_permille", s.share_permille},
                    {"share_pct", tenths(s.share_permille)},
                    {"items", items},
                    {"history", to_json(s.history)}});
  }
  return {{"suppliers", sups},
          {"split",
           {{"floor", tenths(r.floor_x10)},
            {"cap_pct", tenths(r.cap_permille)},
            {"effective_cap_pct", tenths(r.effective_cap_permille)},
            {"en", r.split_en},
            {"zh", r.split_zh}}},
          {"steps", r.steps}};
}

}  // namespace gpurent
