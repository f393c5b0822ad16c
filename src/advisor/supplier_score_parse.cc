// Supplier score input: parsing and validating the request body (checklist, overrides, custom
// items, history rules, split, suppliers with answers and entered history) into a SupplierScoreInput.
#include <cstdint>
#include <set>

#include "advisor/supplier_score.h"
#include "advisor/supplier_score_internal.h"

namespace gpurent {

using namespace supplier_score_internal;

namespace {

constexpr StrRule kIdRule{.min_len = 1,
                          .max_len = 63,
                          .pattern = "[a-z0-9]([a-z0-9_-]{0,61}[a-z0-9])?",
                          .pattern_help = "pattern.checklist_item_id"};

// An operator item's name: 1..200 characters (code points) in whatever language the operator
// writes, at most 4 bytes each.
constexpr size_t kMaxNameChars = 200;
constexpr StrRule kNameRule{.min_len = 1, .max_len = 4 * kMaxNameChars};

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// `name`; without it (the earlier form) `en`, else `zh`. Every one given is checked.
std::string read_item_name(Fields& xf) {
  std::optional<std::string> chosen;
  for (const char* key : {"name", "en", "zh"}) {
    auto v = xf.opt_str(key, kNameRule);
    if (v && code_points(*v) > kMaxNameChars) {
      xf.error(key, FieldReason{"field.max_chars", {{"max", std::to_string(kMaxNameChars)}}});
      continue;
    }
    if (v && !chosen) chosen = std::move(v);
  }
  if (!chosen && !xf.has("name") && !xf.has("en") && !xf.has("zh")) xf.error("name", FieldReason{"field.required"});
  return chosen.value_or("");
}

void add_under_prefix(FieldErrors& errs, const std::string& prefix, const Error& e) {
  if (e.fields.empty()) {
    if (e.detail.empty())
      errs.add(prefix, e.message);
    else
      errs.add(prefix, e.detail);
  }
  for (const auto& fe : e.fields) {
    std::string path = fe.field.empty() ? prefix : prefix + "." + fe.field;
    if (fe.coded.empty())
      errs.add(std::move(path), fe.reason);
    else
      errs.add(std::move(path), fe.coded);
  }
}

SupplierHistory read_history(Fields& f) {
  SupplierHistory h;
  h.monthly_failure_rate_bp = f.opt_integer("monthly_failure_rate_bp", 0, 10'000);
  h.response_minutes = f.opt_integer("response_minutes", 0, 100'000);
  h.restore_minutes = f.opt_integer("restore_minutes", 0, 1'000'000);
  h.max_restore_minutes = f.opt_integer("max_restore_minutes", 0, 1'000'000);
  h.fp16_attainment_permille = f.opt_integer("fp16_attainment_permille", 0, 10'000);
  h.nccl_attainment_permille = f.opt_integer("nccl_attainment_permille", 0, 10'000);
  h.worst_nccl_busbw_gbps = f.opt_integer("worst_nccl_busbw_gbps", 0, 100'000);
  h.allreduce_8gpu_1gb_ms = f.opt_integer("allreduce_8gpu_1gb_ms", 0, 1'000'000);
  return h;
}

void read_checklist(Fields& f, std::vector<SupplierChecklistItem>& items) {
  items = f.boolean("use_defaults", true) ? default_supplier_checklist() : std::vector<SupplierChecklistItem>{};
  f.object("overrides", false, [&](Fields& of) {
    for (auto& it : items) {
      if (!it.builtin) continue;
      of.object(it.id.c_str(), false, [&](Fields& x) {
        it.weight = x.opt_integer("weight", 0, 100).value_or(it.weight);
        it.must_have = x.boolean("must_have", it.must_have);
      });
    }
  });
  std::set<std::string> ids;
  for (const auto& it : items) ids.insert(it.id);
  f.objects("items", false, 50, [&](Fields& xf, size_t) {
    SupplierChecklistItem it;
    it.id = xf.str("id", kIdRule);
    if (!it.id.empty() && !ids.insert(it.id).second)
      xf.error("id", Message("advisor.suppliers.item_duplicate").arg("item", it.id));
    it.text = verbatim(read_item_name(xf));
    it.weight = xf.integer("weight", 0, 100);
    it.must_have = xf.boolean("must_have", false);
    it.check = xf.enumeration("check", kSupplierChecks, std::make_optional(SupplierCheck::kYesNo));
    if (it.check == SupplierCheck::kYesNo) {
      if (xf.has("threshold")) xf.error("threshold", Message("advisor.suppliers.threshold_unused"));
      xf.raw("threshold");
    } else {
      it.threshold = xf.integer("threshold", -1'000'000'000, 1'000'000'000);
    }
    it.unit = xf.opt_str("unit", {.min_len = 0, .max_len = 32}).value_or("");
    items.push_back(std::move(it));
  });
}

void read_history_rules(Fields& f, std::vector<SupplierHistoryRule>& rules) {
  f.object("history_rules", false, [&](Fields& hf) {
    for (auto& r : rules)
      hf.object(r.id.c_str(), false, [&](Fields& x) {
        r.weight = x.opt_integer("weight", 0, 100).value_or(r.weight);
        r.good = x.opt_integer("good", 0, 1'000'000).value_or(r.good);
        r.bad = x.opt_integer("bad", 0, 1'000'000).value_or(r.bad);
        if (r.good == r.bad) x.error("bad", Message("advisor.suppliers.bad_equals_good").arg("good", n2s(r.good)));
        const bool higher_better = r.id == "fp16_attainment" || r.id == "nccl_attainment";
        if (higher_better && r.good < r.bad) x.error("good", Message("advisor.suppliers.good_above_bad"));
        if (!higher_better && r.good > r.bad)
          x.error("good", Message("advisor.suppliers.good_below_bad").arg("rule", r.id));
      });
  });
}

void read_answers(Fields& af, const std::vector<SupplierChecklistItem>& items, std::map<std::string, int64_t>& out) {
  for (const auto& it : items) {
    if (it.builtin) continue;
    const json* v = af.raw(it.id.c_str());
    if (!v) continue;
    if (it.check == SupplierCheck::kYesNo) {
      if (!v->is_boolean())
        af.error(it.id, Message("advisor.suppliers.answer_yes_no"));
      else
        out[it.id] = v->get<bool>() ? 1 : 0;
    } else if (!v->is_number_integer()) {
      af.error(it.id, it.unit.empty() ? FieldReason{"field.integer"}.message()
                                      : Message("advisor.suppliers.answer_integer_unit").arg("unit", it.unit));
    } else if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      // Read as int64 it would wrap to a negative answer that passes any at_most threshold.
      af.error(it.id, FieldReason{"field.at_most", {{"max", std::to_string(INT64_MAX)}}}.message());
    } else {
      out[it.id] = v->get<int64_t>();
    }
  }
  for (const auto& it : items)
    if (it.builtin && af.has(it.id.c_str())) {
      af.error(it.id, Message("advisor.suppliers.answer_builtin"));
      af.raw(it.id.c_str());
    }
}

}  // namespace

Result<SupplierScoreInput> parse_supplier_score_input(const json& body, const std::vector<SupplierCandidate>& known,
                                                      size_t max_suppliers) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  SupplierScoreInput in;
  in.checklist = default_supplier_checklist();
  in.history_rules = default_history_rules();
  f.object("checklist", false, [&](Fields& cf) { read_checklist(cf, in.checklist); });
  read_history_rules(f, in.history_rules);
  f.object("split", false, [&](Fields& sf) {
    in.split.floor = sf.opt_integer("floor", 0, 99).value_or(60);
    in.split.cap_pct = sf.opt_integer("cap_pct", 1, 100).value_or(60);
  });
  int64_t total_weight = 0;
  for (const auto& i : in.checklist) total_weight += i.weight;
  for (const auto& r : in.history_rules) total_weight += r.weight;
  if (total_weight == 0) errs.add("checklist", Message("advisor.suppliers.weights_zero"));
  std::set<std::string> names;
  f.objects("suppliers", true, max_suppliers, [&](Fields& sf, size_t) {
    SupplierCandidate c;
    SupplierHistory entered;
    bool have = false;
    if (const json* s = sf.raw("supplier")) {
      if (s->is_string()) {
        for (const auto& k : known)
          if (k.supplier.name == s->get<std::string>()) {
            c = k;
            have = true;
          }
        if (!have)
          sf.error("supplier", Message("advisor.suppliers.unknown_supplier").arg("supplier", s->get<std::string>()));
      } else {
        auto p = parse_supplier(*s);
        if (!p)
          add_under_prefix(errs, sf.path_of("supplier"), p.error());
        else
          c.supplier = std::move(*p), have = true;
      }
    } else {
      sf.error("supplier", Message("advisor.suppliers.supplier_required"));
    }
    sf.object("answers", false, [&](Fields& af) { read_answers(af, in.checklist, c.answers); });
    sf.object("history", false, [&](Fields& hf) { entered = read_history(hf); });
    if (!have) return;
    c.history = merge_history(c.history, entered);
    if (!names.insert(c.supplier.name).second)
      sf.error("supplier", Message("advisor.suppliers.listed_twice").arg("supplier", c.supplier.name));
    in.suppliers.push_back(std::move(c));
  });
  if (body.contains("suppliers") && body["suppliers"].is_array() && body["suppliers"].empty())
    errs.add("suppliers", Message("advisor.suppliers.none"));
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return in;
}

}  // namespace gpurent
