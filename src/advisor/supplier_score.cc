// Supplier score: the default checklist, evaluating each item against the supplier's record and
// answers, the weighted score, the capped procurement split, and the JSON form.
#include "advisor/supplier_score.h"

#include <algorithm>

#include "advisor/supplier_score_internal.h"

namespace gpurent {

using namespace supplier_score_internal;

namespace {

SupplierStep step(Message text, std::string formula, json value) {
  return {std::move(text), std::move(formula), std::move(value)};
}

std::string tenths(int64_t x10) {
  const int64_t a = x10 < 0 ? -x10 : x10;
  return (x10 < 0 ? "-" : "") + std::to_string(a / 10) + "." + std::to_string(a % 10);
}

}  // namespace

std::vector<SupplierChecklistItem> default_supplier_checklist() {
  auto item = [](const char* id, Message text, int64_t w, bool must) {
    SupplierChecklistItem i;
    i.id = id;
    i.text = std::move(text);
    i.weight = w;
    i.must_have = must;
    i.builtin = true;
    return i;
  };
  return {item("gpu_supply_30d", Message("advisor.suppliers.item.gpu_supply_30d"), 12, false),
          item("allreduce_120ms", Message("advisor.suppliers.item.allreduce_120ms"), 12, false),
          item("fault_30m_restore_2h", Message("advisor.suppliers.item.fault_30m_restore_2h"), 12, false),
          item("cuda_7d", Message("advisor.suppliers.item.cuda_7d"), 8, false),
          item("iso27001_mlps3", Message("advisor.suppliers.item.iso27001_mlps3"), 8, true),
          item("exit_path_tested", Message("advisor.suppliers.item.exit_path_tested"), 8, true)};
}

namespace {

struct Eval {
  SupplierItemStatus status = SupplierItemStatus::kUnknown;
  std::string source = "none";
  Message evidence;
};

Eval verdict(bool pass, std::string source, Message evidence) {
  return {pass ? SupplierItemStatus::kPass : SupplierItemStatus::kFail, std::move(source), std::move(evidence)};
}
Eval unknown(Message evidence) { return {SupplierItemStatus::kUnknown, "none", std::move(evidence)}; }
Eval not_answered(Message what) {
  return unknown(Message("advisor.suppliers.evidence.not_answered").arg("what", std::move(what)));
}

// Where a figure comes from, in words: "measured" / "实测", "entered" / "录入", "declared" / "申报".
Message source_message(const std::string& source) {
  if (source == "measured") return Message("advisor.suppliers.source.measured");
  if (source == "entered") return Message("advisor.suppliers.source.entered");
  return Message("advisor.suppliers.source.declared");
}

// "delivery: declared 14 days ≤ 30" / "交付：申报 14 天 ≤ 30"
Eval at_most(const std::optional<int64_t>& v, int64_t limit, const std::string& source, Message unit, Message what) {
  if (!v) return not_answered(std::move(what));
  const bool ok = *v <= limit;
  return verdict(ok, source,
                 Message("advisor.suppliers.evidence.at_most")
                     .arg("what", std::move(what))
                     .arg("source", source_message(source))
                     .arg("value", n2s(*v))
                     .arg("unit", std::move(unit))
                     .arg("op", ok ? "≤" : ">")
                     .arg("limit", n2s(limit)));
}

Eval both(const Eval& a, const Eval& b) {
  Eval e;
  e.evidence = Message("advisor.suppliers.evidence.both").arg("first", a.evidence).arg("second", b.evidence);
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
Message held(bool h) { return h ? Message("advisor.suppliers.held") : Message("advisor.suppliers.not_held"); }

Eval eval_builtin(const SupplierChecklistItem& it, const SupplierCandidate& c) {
  const DueDiligence& dd = c.supplier.due_diligence;
  const SupplierHistory& h = c.history;
  if (it.id == "gpu_supply_30d")
    return at_most(dd.gpu_supply_days, 30, "declared", Message("advisor.suppliers.unit.days"),
                   Message("advisor.suppliers.what.delivery"));
  if (it.id == "allreduce_120ms") {
    if (h.worst_nccl_busbw_gbps) {
      // Ring all-reduce moves 2(n-1)/n of the data per GPU: 8 GPUs, 1 GB -> 1.75 GB at the bus
      // bandwidth; rounded up so a figure just over the limit fails.
      const int64_t bw = *h.worst_nccl_busbw_gbps;
      const std::string src = source_of(h, "worst_nccl_busbw_gbps");
      if (bw == 0)
        return verdict(false, src, Message("advisor.suppliers.evidence.nccl_zero").arg("source", source_message(src)));
      const int64_t ms = (1750 + bw - 1) / bw;
      return verdict(ms < 120, src,
                     Message("advisor.suppliers.evidence.allreduce_measured")
                         .arg("source", source_message(src))
                         .arg("busbw", n2s(bw))
                         .arg("ms", n2s(ms))
                         .arg("op", ms < 120 ? "<" : "≥"));
    }
    const bool entered = h.allreduce_8gpu_1gb_ms.has_value();
    const auto v = entered ? h.allreduce_8gpu_1gb_ms : dd.allreduce_8gpu_1gb_ms;
    if (!v) return not_answered(Message("advisor.suppliers.what.allreduce_time"));
    const std::string src = entered ? "entered" : "declared";
    return verdict(*v < 120, src,
                   Message("advisor.suppliers.evidence.allreduce_figure")
                       .arg("source", source_message(src))
                       .arg("ms", n2s(*v))
                       .arg("op", *v < 120 ? "<" : "≥"));
  }
  if (it.id == "fault_30m_restore_2h") {
    const Eval locate = at_most(dd.fault_locate_minutes, 30, "declared", Message("advisor.suppliers.unit.min"),
                                Message("advisor.suppliers.what.locate"));
    const Eval restore =
        h.max_restore_minutes
            ? at_most(h.max_restore_minutes, 120, source_of(h, "max_restore_minutes"),
                      Message("advisor.suppliers.unit.min_longest_outage"), Message("advisor.suppliers.what.restore"))
            : at_most(dd.restore_hours ? std::optional<int64_t>(*dd.restore_hours * 60) : std::nullopt, 120, "declared",
                      Message("advisor.suppliers.unit.min"), Message("advisor.suppliers.what.restore"));
    return both(locate, restore);
  }
  if (it.id == "cuda_7d")
    return at_most(dd.cuda_update_days, 7, "declared", Message("advisor.suppliers.unit.days"),
                   Message("advisor.suppliers.what.cuda"));
  if (it.id == "iso27001_mlps3") {
    const bool iso = holds(c.supplier, Certification::kIso27001);
    const bool mlps = holds(c.supplier, Certification::kMlps3) || holds(c.supplier, Certification::kMlps4);
    return verdict(iso && mlps, "declared",
                   Message("advisor.suppliers.evidence.certifications").arg("iso", held(iso)).arg("mlps", held(mlps)));
  }
  if (!dd.exit_path_tested) return not_answered(Message("advisor.suppliers.what.exit_test"));
  return verdict(*dd.exit_path_tested, "declared",
                 *dd.exit_path_tested ? Message("advisor.suppliers.evidence.exit_tested")
                                      : Message("advisor.suppliers.evidence.exit_not_tested"));
}

Eval eval_custom(const SupplierChecklistItem& it, const SupplierCandidate& c) {
  auto a = c.answers.find(it.id);
  if (a == c.answers.end()) return unknown(Message("advisor.suppliers.evidence.no_answer"));
  if (it.check == SupplierCheck::kYesNo)
    return verdict(a->second == 1, "answer",
                   a->second ? Message("advisor.suppliers.answer.yes") : Message("advisor.suppliers.answer.no"));
  const bool ok = it.check == SupplierCheck::kAtMost ? a->second <= it.threshold : a->second >= it.threshold;
  const char* op = it.check == SupplierCheck::kAtMost ? (ok ? "≤" : ">") : (ok ? "≥" : "<");
  // The unit is the operator's own word (as written).
  Message m = it.unit.empty() ? Message("advisor.suppliers.evidence.answered")
                              : Message("advisor.suppliers.evidence.answered_unit").arg("unit", it.unit);
  m.arg("value", n2s(a->second)).arg("op", op).arg("threshold", n2s(it.threshold));
  return verdict(ok, "answer", std::move(m));
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

// The input's checks, in order; Σ weight of the checklist and the history rules when they pass.
Result<int64_t> checked_weight_sum(const SupplierScoreInput& in) {
  if (in.suppliers.empty()) return Error::invalid("suppliers", Message("advisor.suppliers.none"));
  int64_t wsum = 0;
  for (const auto& i : in.checklist) wsum += i.weight;
  for (const auto& r : in.history_rules) wsum += r.weight;
  if (wsum <= 0) return Error::invalid("checklist", Message("advisor.suppliers.weights_zero"));
  if (in.split.floor < 0 || in.split.floor > 99)
    return Error::invalid("split.floor", Message("advisor.suppliers.range").arg("min", "0").arg("max", "99"));
  if (in.split.cap_pct < 1 || in.split.cap_pct > 100)
    return Error::invalid("split.cap_pct", Message("advisor.suppliers.range").arg("min", "1").arg("max", "100"));
  return wsum;
}

// One supplier's items, score and eligibility; appends its score step to `steps`.
SupplierScore score_supplier(const SupplierCandidate& c, const SupplierScoreInput& in, int64_t wsum, int64_t floor_x10,
                             std::vector<SupplierStep>& steps) {
  SupplierScore s;
  s.name = c.supplier.name;
  s.display_name = c.supplier.display_name.empty() ? c.supplier.name : c.supplier.display_name;
  s.history = c.history;
  for (const auto& it : in.checklist) {
    const Eval e = it.builtin ? eval_builtin(it, c) : eval_custom(it, c);
    SupplierItemResult x{
        it.id,
        it.text,
        false,
        it.weight,
        it.must_have,
        e.status,
        e.status == SupplierItemStatus::kPass ? 1000 : 0,
        e.source,
        e.evidence,
    };
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
  s.eligible = !s.blocked && s.score_x10 > floor_x10;
  steps.push_back(step(Message("advisor.suppliers.step.score").arg("supplier", s.name),
                       formula + ") ÷ (" + n2s(wsum) + " × 10)", tenths(s.score_x10)));
  return s;
}

// The procurement split among the eligible suppliers (res.suppliers in score order): their
// shares, the effective cap, the split's text and its steps.
void split_among_eligible(SupplierScoreResult& res) {
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
    res.split = Message("advisor.suppliers.split.none").arg("floor", tenths(res.floor_x10));
    return;
  }
  const auto shares = apportion(weights, res.effective_cap_permille);
  std::string sformula;
  for (size_t i = 0; i < eligible.size(); ++i) {
    eligible[i]->share_permille = shares[i];
    sformula += (sformula.empty() ? "" : ", ") + eligible[i]->name + " " + n2s(shares[i]) + "‰";
  }
  // sformula lists names and per-mille ("beta 599‰, alpha 401‰"): the same in every language.
  Message shares_text = Message("advisor.suppliers.split.shares")
                            .arg("floor", tenths(res.floor_x10))
                            .arg("cap", n2s(res.effective_cap_permille))
                            .arg("shares", sformula);
  if (res.effective_cap_permille > res.cap_permille)
    res.split = join_messages(
        {std::move(shares_text),
         Message("advisor.suppliers.split.cap_cannot_hold").arg("eligible", n2s(n)).arg("cap", n2s(res.cap_permille))});
  else
    res.split = std::move(shares_text);
  res.steps.push_back(step(Message("advisor.suppliers.step.split_weight"), wformula, json(weights)));
  res.steps.push_back(step(Message("advisor.suppliers.step.shares"),
                           "1000 × weight ÷ Σ weight, cap " + n2s(res.effective_cap_permille) + "‰", sformula));
}

}  // namespace

Result<SupplierScoreResult> compute_supplier_score(const SupplierScoreInput& in) {
  const auto wsum = checked_weight_sum(in);
  if (!wsum) return wsum.error();
  SupplierScoreResult res;
  res.floor_x10 = in.split.floor * 10;
  res.cap_permille = in.split.cap_pct * 10;
  for (const auto& c : in.suppliers) res.suppliers.push_back(score_supplier(c, in, *wsum, res.floor_x10, res.steps));
  std::stable_sort(res.suppliers.begin(), res.suppliers.end(), [](const SupplierScore& a, const SupplierScore& b) {
    return a.score_x10 != b.score_x10 ? a.score_x10 > b.score_x10 : a.name < b.name;
  });
  split_among_eligible(res);
  return res;
}

json to_json(const SupplierScoreResult& r) {
  json sups = json::array();
  for (const auto& s : r.suppliers) {
    json items = json::array();
    for (const auto& x : s.items) {
      json item = {{"id", x.id},
                   {"kind", x.history ? "history" : "checklist"},
                   {"weight", x.weight},
                   {"must_have", x.must_have},
                   {"status", enum_name(kSupplierItemStatuses, x.status)},
                   {"credit_permille", x.credit_permille},
                   {"source", x.source}};
      put_message(item, "text", x.text);
      put_message(item, "evidence", x.evidence);
      items.push_back(std::move(item));
    }
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
  json split = {{"floor", tenths(r.floor_x10)},
                {"cap_pct", tenths(r.cap_permille)},
                {"effective_cap_pct", tenths(r.effective_cap_permille)}};
  put_message(split, "text", r.split);
  const json steps = steps_to_json(r.steps);
  return {{"suppliers", sups}, {"split", split}, {"steps", steps}};
}

}  // namespace gpurent
