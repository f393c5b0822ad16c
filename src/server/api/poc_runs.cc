// /api/v1/poc-runs: a tenant's 48-hour POC of one supplier kept as a run (docs/advisor/poc.md#poc-runs).
// Created with the POC advisor's input for that supplier (start, model and baseline, thresholds,
// must-pass overrides, what the supplier promised) and optionally the tenant's contract with it,
// whose floors stand in for FP16 and NCCL pass marks not given. Results are appended as the
// stages run — `POST …/{id}/results` with one item's result, or with an acceptance run whose
// figures become the benchmark results ([../../docs/acceptance.md]) — and never edited: a later
// result for an item replaces an earlier one in the judgement, both stay in `results`. Every read
// judges the run now (the advisor's plan: hour slots at absolute times, each item's status, the
// verdict), and `GET …/{id}/report` is that judgement as Markdown in English or 简体中文.
// Writers: operators and the tenant's admins; readers: operators and the tenant's users.
#include <set>

#include "advisor/poc.h"
#include "model/contract.h"
#include "model/offer.h"
#include "meter/acceptance.h"
#include "server/api/resources.h"
#include "server/http/http_util.h"
#include "server/services/record_faults.h"

namespace gpurent {

Status fill_poc_from_acceptance(App& app, const Principal& p, json& body, bool given_wins);  // advisor.cc
Result<ContractTemplate> contract_floors(App& app, StoreTx& tx, const Contract& k);         // acceptance_runs.cc

namespace {

constexpr size_t kMaxResults = 500;

// Keys of the POC advisor's supplier entry a run takes at its top level.
const char* const kSupplierKeys[] = {"gpu_model", "gpus", "driver", "cuda", "image", "fp16_tflops", "nccl_busbw_gbps",
                                     "storage_gbps"};
// Keys of the advisor's input a run takes as they are.
const char* const kPlanKeys[] = {"start", "model", "max_slowdown_pct", "thresholds", "must_pass"};

// The advisor's input for the run's one supplier, its results the latest per item.
json advisor_input(const json& run) {
  json sup = {{"name", run.value("supplier", "supplier")}};
  for (const char* k : kSupplierKeys)
    if (run.contains(k)) sup[k] = run[k];
  json results = json::object();
  for (const json& r : run.value("results", json::array()))
    if (r.contains("item")) {
      json rec = json::object();
      for (const char* k : {"passed", "value", "note"})
        if (r.contains(k)) rec[k] = r[k];
      results[r["item"].get<std::string>()] = rec;
    }
  if (!results.empty()) sup["results"] = results;
  json runs = json::array();
  for (const json& r : run.value("results", json::array()))
    if (r.contains("acceptance_run")) runs.push_back(r["acceptance_run"]);
  if (!runs.empty()) sup["acceptance_runs"] = runs;
  json in = {{"suppliers", json::array({sup})}};
  for (const char* k : kPlanKeys)
    if (run.contains(k)) in[k] = run[k];
  return in;
}

// Errors of the advisor's parser name "suppliers[0].x": the run's field is "x".
Error as_run_error(Error e) {
  const std::string prefix = "suppliers[0].";
  for (FieldError& f : e.fields)
    if (f.field.rfind(prefix, 0) == 0) f.field = f.field.substr(prefix.size());
  for (size_t at; (at = e.message.find(prefix)) != std::string::npos;) e.message.erase(at, prefix.size());
  return e;
}

// The run judged now: the advisor's answer for its supplier.
Result<json> judge(App& app, const Principal& p, const json& run) {
  json in = advisor_input(run);
  if (auto s = fill_poc_from_acceptance(app, p, in, true); !s) return as_run_error(s.error());
  auto parsed = parse_poc_input(in);
  if (!parsed) return as_run_error(parsed.error());
  auto r = compute_poc(*parsed);
  if (!r) return as_run_error(r.error());
  json out = to_json(*r);
  json plan = out["suppliers"][0];
  plan["steps"] = out["steps"];
  plan["hours"] = out["hours"];
  return plan;
}

Result<Built> build_poc_run(App& app, const json& body, const Principal& p, StoreTx& tx) {
  if (!body.is_object()) return Error::invalid("", Message("field.object"));
  FieldErrors errs;
  Fields f(body, "", errs);
  const std::string name = f.str("name", {.max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
  const std::string tenant_ref = f.opt_str("tenant", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp}).value_or("");
  const std::string supplier_ref = f.str("supplier", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
  const std::optional<std::string> contract_ref =
      f.opt_str("contract", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
  json run = json::object();
  for (const char* k : kSupplierKeys)
    if (const json* v = f.raw(k)) run[k] = *v;
  for (const char* k : kPlanKeys)
    if (const json* v = f.raw(k)) run[k] = *v;
  f.ignore({"tenant_id", "supplier_id", "contract_id", "plan", "plan_error"});
  f.finish();
  if (!errs.empty()) return errs.to_error();
  auto tenant = owning_tenant(tx, p, tenant_ref);
  if (!tenant) return tenant.error();
  auto supplier = resolve_ref(tx, "suppliers", supplier_ref, {}, "supplier");
  if (!supplier) return supplier.error();
  run["name"] = name;
  run["tenant_id"] = tenant->id;
  run["supplier"] = supplier->name;
  run["supplier_id"] = supplier->id;
  run["results"] = json::array();
  if (contract_ref) {  // its floors are the pass marks the run does not set itself, per supplier or plan-wide
    auto kr = resolve_ref(tx, "contracts", *contract_ref, {{"tenant_id", tenant->id}}, "contract");
    if (!kr) return kr.error();
    if (kr->tenant_id != tenant->id || kr->supplier_id != supplier->id)
      return Error::invalid("contract", Message("api.poc_runs.contract_mismatch").arg("contract", kr->name).arg("supplier", supplier->name));
    auto k = decode_record(*kr, decode_contract, "no POC can be judged against it");
    if (!k) return k.error();
    auto floors = contract_floors(app, tx, *k);
    if (!floors) return floors.error();
    auto sets = [&](const char* key) {
      return run.contains(key) ||
             (run.contains("thresholds") && run["thresholds"].is_object() && run["thresholds"].contains(key));
    };
    if (floors->min_fp16_tflops_x10 && !sets("fp16_tflops"))
      run["fp16_tflops"] = fixed_text(*floors->min_fp16_tflops_x10, 1);
    if (floors->min_nccl_busbw_gbps && !sets("nccl_busbw_gbps"))
      run["nccl_busbw_gbps"] = std::to_string(*floors->min_nccl_busbw_gbps);
    run["contract"] = kr->name;
    run["contract_id"] = kr->id;
  }
  // Checked as the advisor checks its input (errors name the run's own fields).
  auto parsed = parse_poc_input(advisor_input(run));
  if (!parsed) return as_run_error(parsed.error());
  IndexCols idx;
  idx.name = name;
  idx.tenant_id = tenant->id;
  idx.supplier_id = supplier->id;
  return Built{std::move(run), idx};
}

// POST …/{id}/results: {item, passed | value, note?} or {acceptance_run, note?}.
void add_result(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto rec = find_visible(app.store, spec, p, req.matches[1]);
  if (!rec) return send_problem(res, rec.error(), req.path);
  if (!in_scope(write_scope(p, spec.object_kind), p, *rec))
    return send_problem(res, forbidden(Message("api.poc_runs.results_forbidden").arg("role", role_name(p.role))), req.path);
  auto body = parse_body(req);
  if (!body) return send_problem(res, body.error(), req.path);
  FieldErrors errs;
  Fields f(*body, "", errs);
  json entry = json::object();
  const std::optional<std::string> item = f.opt_str("item", {.max_len = 64});
  const std::optional<std::string> acc = f.opt_str("acceptance_run", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp});
  if (const json* v = f.raw("passed")) entry["passed"] = *v;
  if (const json* v = f.raw("value")) entry["value"] = *v;
  if (auto note = f.opt_str("note", {.min_len = 0, .max_len = 1000})) entry["note"] = *note;
  f.finish();
  if (!errs.empty()) return send_problem(res, errs.to_error(), req.path);
  if (item.has_value() == acc.has_value())
    return send_problem(res, Error::invalid("item", Message("api.poc_runs.item_or_run")), req.path);
  if (acc) {
    if (entry.contains("passed") || entry.contains("value"))
      return send_problem(res, Error::invalid("acceptance_run", Message("api.poc_runs.run_has_figures")), req.path);
    auto run = find_visible(app.store, app.kinds.at("acceptance-runs"), p, *acc);
    if (!run)
      return send_problem(
          res, Error::invalid("acceptance_run", Message("api.resources.not_found").arg("kind", "acceptance-runs").arg("ref", *acc)),
          req.path);
    if (run->supplier_id != rec->supplier_id)
      return send_problem(res, Error::invalid("acceptance_run", Message("api.poc_runs.run_other_supplier").arg("run", run->id)), req.path);
    entry["acceptance_run"] = run->id;
  } else {
    entry["item"] = *item;
  }
  entry["recorded_by"] = p.user_id;
  entry["at"] = format_rfc3339(app.clock.now());
  {  // The result must be one the advisor reads (a known item, passed for yes-items, a figure otherwise).
    json trial = rec->body;
    trial["results"].push_back(entry);
    auto judged = judge(app, p, trial);
    if (!judged) {
      Error e = judged.error();
      for (FieldError& fe : e.fields)
        if (fe.field.rfind("results.", 0) == 0) {
          const size_t dot = fe.field.find('.', 8);
          fe.field = dot == std::string::npos ? "item" : fe.field.substr(dot + 1);
        }
      return send_problem(res, e, req.path);
    }
  }
  Record out;
  Status st = app.loop.run([&](StoreTx& tx) -> Status {
    auto cur = tx.get(spec.kind, rec->id);
    if (!cur) return cur.error();
    if (cur->body.value("results", json::array()).size() >= kMaxResults)
      return Error::invalid("item", Message("api.poc_runs.too_many_results").arg("max", std::to_string(kMaxResults)));
    Record r = *cur;
    r.body["results"].push_back(entry);
    if (auto s = store_change(tx, *cur, r, p, "result", item.value_or(acc.value_or("")), app.clock.now()); !s) return s;
    out = std::move(r);
    return ok_status();
  });
  if (!st) return send_problem(res, st.error(), req.path);
  json answer = present(out);
  spec.decorate(app.store, out, p, answer);
  send_json(res, 200, answer);
}

std::string md(std::string s) {
  for (size_t at = 0; (at = s.find('|', at)) != std::string::npos; at += 2) s.replace(at, 1, "\\|");
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::string render_poc_report(const Record& run, json plan, const std::string& lang) {
  const bool zh = lang.rfind("zh", 0) == 0;
  localize_messages(plan, zh ? "zh" : "en");
  auto t = [&](const char* en, const char* cn) { return std::string(zh ? cn : en); };
  const json& b = run.body;
  std::string out = t("# POC ", "# POC 验证 ") + md(b.value("name", "")) + t(" of ", "：") + md(b.value("supplier", "")) + "\n\n";
  out += t("- Start: ", "- 开始：") + (b.contains("start") && b["start"].is_string() ? b["start"].get<std::string>() : "—") +
         t(" (48 hours)\n", "（48 小时）\n");
  if (b.contains("contract")) out += t("- Contract: ", "- 合同：") + md(b.value("contract", "")) + "\n";
  out += t("- Verdict: **", "- 结论：**") + plan.value("verdict", "") + "** — " + md(plan.value("reason", "")) + "\n";
  out += t("\n## Stages\n\n| hours | item | criterion | result | status |\n|---|---|---|---|---|\n",
           "\n## 阶段\n\n| 小时 | 项目 | 通过标准 | 结果 | 状态 |\n|---|---|---|---|---|\n");
  for (const json& it : plan.value("items", json::array())) {
    std::string result = "—";
    if (it.contains("result")) {
      const json& r = it["result"];
      result = r.contains("value") ? r["value"].get<std::string>() + " " + it.value("unit", "")
                                   : (r.value("passed", false) ? t("yes", "是") : t("no", "否"));
      if (!r.value("note", "").empty()) result += " (" + r.value("note", "") + ")";
    }
    const json& h = it["hours"];
    out += "| " + std::to_string(h.value("from", 0)) + "–" + std::to_string(h.value("to", 0)) + " | " + md(it.value("text", "")) +
           (it.value("must_pass", false) ? "" : t(" (optional)", "（可选）")) + " | " + md(it.value("criterion", "")) + " | " +
           md(result) + " | " + it.value("status", "") + " |\n";
  }
  out += t("\n## Arithmetic\n\n", "\n## 计算过程\n\n");
  for (const json& s : plan.value("steps", json::array()))
    out += "- " + md(s.value("text", "")) + (s.value("formula", "").empty() ? "" : ": `" + md(s.value("formula", "")) + "`") + "\n";
  return out;
}

void get_poc_report(App& app, const KindSpec& spec, const httplib::Request& req, httplib::Response& res, const Principal& p) {
  auto rec = find_visible(app.store, spec, p, req.matches[1]);
  if (!rec) return send_problem(res, rec.error(), req.path);
  auto plan = judge(app, p, rec->body);
  if (!plan) return send_problem(res, plan.error(), req.path);
  res.status = 200;
  res.set_content(render_poc_report(*rec, *plan, ResponseLanguage::current()), "text/markdown; charset=utf-8");
}

}  // namespace

void register_poc_run_routes(App& app, Router& srv) {
  KindSpec spec;
  spec.kind = "poc-runs";
  spec.id_prefix = "pcr";
  spec.object_kind = ObjectKind::kProject;
  spec.filters = {{"tenant", "tenant_id"}, {"supplier", "supplier_id"}, {"name", "name"}};
  spec.updatable = false;  // results are appended (POST …/results), the plan is fixed at creation
  spec.build = [&app](const json& body, const Principal& p, StoreTx& tx, const Record*) { return build_poc_run(app, body, p, tx); };
  spec.decorate = [&app](StoreReader&, const Record& r, const Principal& p, json& out) {
    auto plan = judge(app, p, r.body);
    if (plan)
      out["plan"] = *plan;
    else
      out["plan_error"] = plan.error().message;  // e.g. an attached run the reader may not see
  };
  register_crud(app, srv, spec);
  item_route(app, srv, "POST", "poc-runs", "results", add_result);
  item_route(app, srv, "GET", "poc-runs", "report", get_poc_report);
}

}  // namespace gpurent
