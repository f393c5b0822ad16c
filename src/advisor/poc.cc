// POC acceptance plan: parsing, the plan per supplier, judging recorded results, the verdict.
#include "advisor/poc.h"
#include "core/json_put.h"

#include <algorithm>
#include <set>

#include "billing/rating.h"  // format_scaled

namespace gpurent {
namespace {

constexpr int64_t kMicro = 1'000'000;
constexpr int64_t kMaxFigure = 1'000'000'000;  // units; catches misplaced decimal points
constexpr const char* kModelItem = "model_throughput";

const std::vector<std::string>& item_ids() {
  static const std::vector<std::string> ids = {
      "env_driver_cuda", "env_rdma",      "bench_fp16_gemm",     "bench_nccl",     "bench_storage",  kModelItem,
      "fault_detect",    "fault_restore", "ops_ticket_response", "ops_monitoring", "ops_export_exit"};
  return ids;
}

PocStep poc_step(Message text, std::string formula, json value) {
  return {std::move(text), std::move(formula), std::move(value)};
}

std::string fig(int64_t micro) { return format_scaled(micro, 6); }
// The throughput pass mark baseline × keep% — exact: a baseline has at most 3 decimals, so its
// micro-units are a multiple of 1000.
int64_t pass_mark(const PocInput& in) { return in.model.baseline_micro / 100 * (100 - in.max_slowdown_pct); }
std::string pct2(int64_t bp) {  // basis points -> "10.10"
  const int64_t a = bp < 0 ? -bp : bp;
  const std::string f = std::to_string(a % 100);
  return (bp < 0 ? "-" : "") + std::to_string(a / 100) + "." + (f.size() < 2 ? "0" : "") + f;
}

// "905.2" / 905 -> 905'200'000. Non-negative, at most 3 decimals; JSON floats refused (exact figures).
std::optional<int64_t> parse_figure(const json& v, Message* why) {
  const Message shape = Message("advisor.poc.figure_shape");
  if (v.is_number_integer()) {
    const bool big =
        v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(kMaxFigure) : v.get<int64_t>() > kMaxFigure;
    if (big || v.get<int64_t>() < 0) {
      *why = big ? FieldReason{"field.at_most", {{"max", std::to_string(kMaxFigure)}}}.message() : shape;
      return std::nullopt;
    }
    return v.get<int64_t>() * kMicro;
  }
  if (!v.is_string()) {
    *why = v.is_number() ? Message("advisor.poc.figure_float") : shape;
    return std::nullopt;
  }
  const std::string s = v.get<std::string>();
  int64_t whole = 0, frac = 0;
  int digits = 0, significant = 0, decimals = -1;  // leading zeros are digits, not significant ones
  for (char c : s) {
    const bool digit = c >= '0' && c <= '9';
    if (c == '.' && decimals < 0 && digits > 0) {
      decimals = 0;
    } else if (digit && decimals < 0) {
      if (significant <= 10) whole = whole * 10 + (c - '0');  // 11 significant digits at most: < 10^11
      significant += whole > 0;
      ++digits;
    } else if (digit && decimals >= 0 && decimals < 3) {
      frac = frac * 10 + (c - '0');
      ++decimals;
    } else {
      *why = Message("advisor.poc.figure_got").arg("value", s);
      return std::nullopt;
    }
  }
  if (digits == 0 || decimals == 0) {
    *why = Message("advisor.poc.figure_got").arg("value", s);
    return std::nullopt;
  }
  if (significant > 10 || whole > kMaxFigure || (whole == kMaxFigure && frac > 0)) {  // as an integer is
    *why = FieldReason{"field.at_most", {{"max", std::to_string(kMaxFigure)}}}.message();
    return std::nullopt;
  }
  for (int k = std::max(decimals, 0); k < 6; ++k) frac *= 10;
  return whole * kMicro + frac;
}

std::optional<int64_t> read_figure(Fields& f, const char* key) {
  const json* v = f.raw(key);
  if (!v) return std::nullopt;
  Message why;
  auto x = parse_figure(*v, &why);
  if (!x) f.error(key, std::move(why));
  return x;
}

struct Defaults {
  std::optional<int64_t> fp16, nccl, storage;
};

void read_supplier(Fields& sf, const Defaults& d, PocSupplier& s) {
  s.name = sf.str("name", {.min_len = 1, .max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
  s.gpu_model = sf.opt_str("gpu_model", {.min_len = 1, .max_len = 128}).value_or("");
  s.gpus = sf.integer("gpus", 1, 100'000);
  s.driver = sf.opt_str("driver", {.min_len = 1, .max_len = 64});
  s.cuda = sf.opt_str("cuda", {.min_len = 1, .max_len = 32});
  s.image = sf.opt_str("image", {.min_len = 1, .max_len = 256});
  auto mark = [&](const char* key, const std::optional<int64_t>& plan_wide, int64_t& out) {
    const bool given = sf.has(key);
    const auto v = read_figure(sf, key);
    if (v)
      out = *v;
    else if (!given && plan_wide)
      out = *plan_wide;
    else if (!given)
      sf.error(key, Message("advisor.poc.threshold_required").arg("key", key));
    if (given && v && *v == 0) sf.error(key, Message("advisor.poc.positive"));
  };
  mark("fp16_tflops", d.fp16, s.fp16_tflops_micro);
  mark("nccl_busbw_gbps", d.nccl, s.nccl_busbw_micro);
  mark("storage_gbps", d.storage, s.storage_gbps_micro);
  sf.object("results", false, [&](Fields& rf) {
    for (const std::string& id : item_ids()) {
      rf.object(id.c_str(), false, [&](Fields& x) {
        PocRecord r;
        const bool yes_item =
            id == "env_driver_cuda" || id == "env_rdma" || id == "ops_monitoring" || id == "ops_export_exit";
        if (yes_item) {
          if (!x.has("passed")) x.error("passed", Message("advisor.poc.passed_required"));
          r.passed = x.boolean("passed", false);
          if (x.has("value")) x.error("value", Message("advisor.poc.value_unused"));
          x.raw("value");
        } else {
          r.value_micro = read_figure(x, "value");
          if (!x.has("value")) x.error("value", Message("advisor.poc.value_required"));
          if (x.has("passed")) x.error("passed", Message("advisor.poc.passed_computed"));
          x.raw("passed");
        }
        r.note = x.opt_str("note", {.min_len = 0, .max_len = 1000}).value_or("");
        s.results[id] = std::move(r);
      });
    }
  });
}

}  // namespace

Result<PocInput> parse_poc_input(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  PocInput in;
  in.start = f.opt_time("start");
  f.object("model", true, [&](Fields& mf) {
    in.model.name = mf.str("name", {.min_len = 1, .max_len = 128});
    in.model.metric = mf.opt_str("metric", {.min_len = 1, .max_len = 32}).value_or("samples/s");
    const bool given = mf.has("baseline_throughput");
    const auto b = read_figure(mf, "baseline_throughput");
    if (!given)
      mf.error("baseline_throughput", Message("advisor.poc.baseline_required"));
    else if (b && *b == 0)
      mf.error("baseline_throughput", Message("advisor.poc.positive"));
    in.model.baseline_micro = b.value_or(0);
    in.model.baseline_note = mf.opt_str("baseline", {.min_len = 1, .max_len = 500}).value_or("");
  });
  in.max_slowdown_pct = f.opt_integer("max_slowdown_pct", 0, 99).value_or(10);
  Defaults d;
  f.object("thresholds", false, [&](Fields& tf) {
    auto positive = [&](const char* key) {  // a pass mark of 0 would pass anything, as a supplier's would
      auto v = read_figure(tf, key);
      if (v && *v == 0) tf.error(key, Message("advisor.poc.positive"));
      return v;
    };
    d.fp16 = positive("fp16_tflops");
    d.nccl = positive("nccl_busbw_gbps");
    d.storage = positive("storage_gbps");
    in.thresholds.fault_detect_minutes = tf.opt_integer("fault_detect_minutes", 1, 10'000).value_or(30);
    in.thresholds.restore_minutes = tf.opt_integer("restore_minutes", 1, 10'000).value_or(120);
    in.thresholds.ticket_response_minutes = tf.opt_integer("ticket_response_minutes", 1, 10'000).value_or(30);
  });
  f.object("must_pass", false, [&](Fields& mf) {
    for (const std::string& id : item_ids()) {
      if (!mf.has(id.c_str())) {
        mf.raw(id.c_str());
        continue;
      }
      if (id == kModelItem) {
        mf.error(id, Message("advisor.poc.model_item_fixed"));
        mf.raw(id.c_str());
        continue;
      }
      in.must_pass[id] = mf.boolean(id.c_str(), true);
    }
  });
  std::set<std::string> names;
  f.objects("suppliers", true, 20, [&](Fields& sf, size_t) {
    PocSupplier s;
    read_supplier(sf, d, s);
    if (!s.name.empty() && !names.insert(s.name).second)
      sf.error("name", Message("advisor.poc.listed_twice").arg("supplier", s.name));
    in.suppliers.push_back(std::move(s));
  });
  if (body.contains("suppliers") && body["suppliers"].is_array() && body["suppliers"].empty())
    errs.add("suppliers", Message("advisor.poc.no_suppliers"));
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return in;
}

std::vector<PocItem> poc_plan_items(const PocInput& in, const PocSupplier& s) {
  std::vector<PocItem> out;
  auto add = [&](const char* id, const char* cat, int64_t h0, int64_t h1, Message text, Message criterion,
                 PocCheck check, int64_t threshold, std::string unit, bool must) {
    const auto o = in.must_pass.find(id);
    out.push_back({id, cat, h0, h1, std::move(text), std::move(criterion), check, threshold, std::move(unit),
                   o == in.must_pass.end() ? must : o->second});
  };
  // What the supplier promised: versions and names, the same in every language.
  std::string versions;
  if (s.driver) versions += "driver " + *s.driver;
  if (s.cuda) versions += (versions.empty() ? "" : ", ") + std::string("CUDA ") + *s.cuda;
  if (s.image) versions += (versions.empty() ? "" : ", ") + std::string("image ") + *s.image;
  Message promised = Message("advisor.poc.criterion.env_driver_cuda");
  if (versions.empty())
    promised.arg("versions", Message("advisor.poc.versions_required"));
  else
    promised.arg("versions", versions);
  const std::string model = in.model.name, metric = in.model.metric, gpus = std::to_string(s.gpus);
  const std::string pct = std::to_string(in.max_slowdown_pct);
  add("env_driver_cuda", "environment", 0, 2, Message("advisor.poc.item.env_driver_cuda"), std::move(promised),
      PocCheck::kYes, 0, "", true);
  add("env_rdma", "environment", 2, 4, Message("advisor.poc.item.env_rdma"), Message("advisor.poc.criterion.env_rdma"),
      PocCheck::kYes, 0, "", true);
  add("bench_fp16_gemm", "benchmarks", 4, 8, Message("advisor.poc.item.bench_fp16_gemm"),
      Message("advisor.poc.criterion.bench_fp16_gemm").arg("tflops", fig(s.fp16_tflops_micro)), PocCheck::kAtLeast,
      s.fp16_tflops_micro, "TFLOPS", true);
  add("bench_nccl", "benchmarks", 8, 12, Message("advisor.poc.item.bench_nccl"),
      Message("advisor.poc.criterion.bench_nccl").arg("gbps", fig(s.nccl_busbw_micro)), PocCheck::kAtLeast,
      s.nccl_busbw_micro, "GB/s", true);
  add("bench_storage", "benchmarks", 12, 14, Message("advisor.poc.item.bench_storage"),
      Message("advisor.poc.criterion.bench_storage").arg("gbps", fig(s.storage_gbps_micro)), PocCheck::kAtLeast,
      s.storage_gbps_micro, "GB/s", true);
  add(kModelItem, "model", 14, 30,
      Message("advisor.poc.item.model_throughput").arg("model", model).arg("gpus", gpus).arg("metric", metric),
      Message("advisor.poc.criterion.model_throughput")
          .arg("floor", fig(pass_mark(in)))
          .arg("metric", metric)
          .arg("baseline", fig(in.model.baseline_micro))
          .arg("pct", pct),
      PocCheck::kAtLeast, pass_mark(in), metric, true);
  const auto& t = in.thresholds;
  add("fault_detect", "fault_injection", 30, 34, Message("advisor.poc.item.fault_detect"),
      Message("advisor.poc.criterion.fault_detect").arg("minutes", std::to_string(t.fault_detect_minutes)),
      PocCheck::kAtMost, t.fault_detect_minutes * kMicro, "min", true);
  add("fault_restore", "fault_injection", 30, 34, Message("advisor.poc.item.fault_restore"),
      Message("advisor.poc.criterion.fault_restore").arg("minutes", std::to_string(t.restore_minutes)),
      PocCheck::kAtMost, t.restore_minutes * kMicro, "min", true);
  add("ops_ticket_response", "operations", 34, 36, Message("advisor.poc.item.ops_ticket_response"),
      Message("advisor.poc.criterion.ops_ticket_response").arg("minutes", std::to_string(t.ticket_response_minutes)),
      PocCheck::kAtMost, t.ticket_response_minutes * kMicro, "min", false);
  add("ops_monitoring", "operations", 36, 40, Message("advisor.poc.item.ops_monitoring"),
      Message("advisor.poc.criterion.ops_monitoring"), PocCheck::kYes, 0, "", false);
  add("ops_export_exit", "operations", 40, 48, Message("advisor.poc.item.ops_export_exit"),
      Message("advisor.poc.criterion.ops_export_exit"), PocCheck::kYes, 0, "", true);
  return out;
}

namespace {

// A figure passes at its threshold inclusive; the model item compares value × 100 ≥ baseline ×
// (100 − max_slowdown_pct), so exactly max_slowdown_pct slower passes.
bool passes(const PocItem& it, const PocRecord& r, const PocInput& in) {
  if (it.check == PocCheck::kYes) return r.passed.value_or(false);
  const int64_t v = *r.value_micro;
  if (it.id == kModelItem)
    return static_cast<__int128>(v) * 100 >=
           static_cast<__int128>(in.model.baseline_micro) * (100 - in.max_slowdown_pct);
  return it.check == PocCheck::kAtLeast ? v >= it.threshold_micro : v <= it.threshold_micro;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

Result<PocResult> compute_poc(const PocInput& in) {
  if (in.suppliers.empty()) return Error::invalid("suppliers", Message("advisor.poc.no_suppliers"));
  if (in.model.baseline_micro <= 0) return Error::invalid("model.baseline_throughput", Message("advisor.poc.positive"));
  if (in.max_slowdown_pct < 0 || in.max_slowdown_pct > 99)
    return Error::invalid("max_slowdown_pct", Message("advisor.poc.range").arg("min", "0").arg("max", "99"));
  PocResult res;
  res.start = in.start;
  res.model = in.model;
  res.max_slowdown_pct = in.max_slowdown_pct;
  const std::string s_pct = std::to_string(in.max_slowdown_pct);
  res.steps.push_back(poc_step(Message("advisor.poc.step.pass_mark"),
                           fig(in.model.baseline_micro) + " × " + std::to_string(100 - in.max_slowdown_pct) + " ÷ 100",
                           fig(pass_mark(in))));
  for (const auto& s : in.suppliers) {
    PocSupplierPlan p;
    p.name = s.name;
    bool model_rejects = false;
    for (const auto& it : poc_plan_items(in, s)) {
      PocOutcome o{it, std::nullopt, PocStatus::kPending};
      if (auto r = s.results.find(it.id); r != s.results.end()) {
        o.record = r->second;
        o.status = passes(it, r->second, in) ? PocStatus::kPass : PocStatus::kFail;
      }
      if (it.id == kModelItem && o.record) {
        // Rounded up to 0.01%, so a rejected supplier never reads as exactly at the limit.
        const int64_t v = *o.record->value_micro, b = in.model.baseline_micro;
        const __int128 num = static_cast<__int128>(b - v) * 10'000;
        p.slowdown_bp = static_cast<int64_t>(num / b + (num % b > 0 ? 1 : 0));
        model_rejects = o.status == PocStatus::kFail;
        res.steps.push_back(poc_step(Message("advisor.poc.step.slowdown").arg("supplier", s.name),
                                 "(" + fig(b) + " − " + fig(v) + ") ÷ " + fig(b), pct2(*p.slowdown_bp) + "%"));
      }
      if (o.status != PocStatus::kPass) {
        auto& list = !it.must_pass ? p.caveats : o.status == PocStatus::kFail ? p.failed : p.pending;
        list.push_back(it.id);
      }
      p.items.push_back(std::move(o));
    }
    if (model_rejects) {
      p.verdict = PocVerdict::kReject;
      p.reason = Message("advisor.poc.reason.too_slow")
                     .arg("supplier", s.name)
                     .arg("model", in.model.name)
                     .arg("slowdown", pct2(*p.slowdown_bp))
                     .arg("max", s_pct);
    } else if (!p.failed.empty()) {
      p.verdict = PocVerdict::kReject;
      p.reason = Message("advisor.poc.reason.failed").arg("items", join(p.failed));
    } else if (!p.pending.empty()) {
      p.verdict = PocVerdict::kPending;
      p.reason = Message("advisor.poc.reason.pending").arg("items", join(p.pending));
    } else {
      p.verdict = PocVerdict::kAccept;
      const int64_t sb = p.slowdown_bp.value_or(0);
      Message vs = sb > 0   ? Message("advisor.poc.vs.below").arg("pct", pct2(sb))
                   : sb < 0 ? Message("advisor.poc.vs.above").arg("pct", pct2(-sb))
                            : Message("advisor.poc.vs.equal");
      p.reason =
          p.caveats.empty()
              ? Message("advisor.poc.reason.accept").arg("vs", std::move(vs))
              : Message("advisor.poc.reason.accept_caveats").arg("vs", std::move(vs)).arg("items", join(p.caveats));
    }
    res.steps.push_back(poc_step(Message("advisor.poc.step.verdict").arg("supplier", s.name).arg("max", s_pct),
                             "failed [" + join(p.failed) + "], pending [" + join(p.pending) + "]",
                             enum_name(kPocVerdicts, p.verdict)));
    res.suppliers.push_back(std::move(p));
  }
  return res;
}

json to_json(const PocResult& r) {
  json sups = json::array(),
       summary = {{"accept", json::array()}, {"reject", json::array()}, {"pending", json::array()}};
  for (const auto& p : r.suppliers) {
    json items = json::array();
    for (const auto& o : p.items) {
      const PocItem& it = o.item;
      json j = {{"id", it.id},
                {"category", it.category},
                {"hours", {{"from", it.hour_from}, {"to", it.hour_to}}},
                {"check", enum_name(kPocChecks, it.check)},
                {"must_pass", it.must_pass},
                {"status", enum_name(kPocStatuses, o.status)}};
      put_message(j, "text", it.text);
      put_message(j, "criterion", it.criterion);
      if (it.check != PocCheck::kYes) {
        j["threshold"] = fig(it.threshold_micro);
        j["unit"] = it.unit;
      }
      if (r.start)
        j["at"] = {{"from", format_rfc3339(*r.start + it.hour_from * kMsPerHour)},
                   {"to", format_rfc3339(*r.start + it.hour_to * kMsPerHour)}};
      if (o.record) {
        json rec = {{"note", o.record->note}};
        put_opt(rec, "passed", o.record->passed);
        if (o.record->value_micro) rec["value"] = fig(*o.record->value_micro);
        j["result"] = rec;
      }
      items.push_back(std::move(j));
    }
    json sj = {{"name", p.name},       {"verdict", enum_name(kPocVerdicts, p.verdict)},
               {"failed", p.failed},   {"pending", p.pending},
               {"caveats", p.caveats}, {"items", items}};
    put_message(sj, "reason", p.reason);
    if (p.slowdown_bp) sj["slowdown_pct"] = pct2(*p.slowdown_bp);
    summary[enum_name(kPocVerdicts, p.verdict)].push_back(p.name);
    sups.push_back(std::move(sj));
  }
  json model = {{"name", r.model.name},
                {"metric", r.model.metric},
                {"baseline_throughput", fig(r.model.baseline_micro)},
                {"baseline", r.model.baseline_note}};
  const json steps = steps_to_json(r.steps);
  json out = {{"model", model},     {"max_slowdown_pct", r.max_slowdown_pct},
              {"hours", 48},        {"suppliers", sups},
              {"summary", summary}, {"steps", steps}};
  put_opt_time(out, "start", r.start);
  return out;
}

}  // namespace gpurent
