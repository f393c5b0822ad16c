#include "model/project.h"

#include "core/json_put.h"

#include <regex>

#include "model/record_codec.h"
#include "model/tenant.h"

namespace gpurent {
namespace {

bool valid_model_key(const std::string& k) {
  if (k.empty() || k.size() > 63) return false;  // before the regex: it recurses per character
  static const std::regex re(kSlug);
  return std::regex_match(k, re);
}

constexpr EnumEntry<BudgetAction> kBudgetActions[] = {{BudgetAction::kAlert, "alert"},
                                                      {BudgetAction::kHold, "hold"}};

// Reads the quota fields of f (the quota object itself) into q.
void read_quota(Fields& f, Currency currency, Quota& q) {
  const json* models = f.raw("gpus_per_model");
  if (models && models->is_object() && models->size() > kMaxQuotaModels) {
    f.error("gpus_per_model", Message("project.quota.too_many_models").arg("max", std::to_string(kMaxQuotaModels)));
  } else if (models) {
    f.object("gpus_per_model", false, [&](Fields& m) {
      for (auto it = models->begin(); it != models->end(); ++it) {
        const std::string& k = it.key();
        if (k != kAnyGpuModel && !valid_model_key(k)) {
          m.raw(k.c_str());
          m.error(k, Message("project.quota.bad_model_key"));
          continue;
        }
        if (it->is_null()) {  // opt_integer would take null for "absent"
          m.raw(k.c_str());
          m.error(k, Message("field.integer"));
          continue;
        }
        if (auto n = m.opt_integer(k.c_str(), 0, kMaxQuotaGpus)) q.gpus_per_model[k] = *n;
      }
    });
  }
  q.max_gpus_per_job = f.opt_integer("max_gpus_per_job", 0, kMaxQuotaGpus);
  q.max_concurrent_jobs = f.opt_integer("max_concurrent_jobs", 0, kMaxQuotaGpus);
  q.monthly_budget = f.opt_money("monthly_budget", currency);
  q.budget_action = f.enumeration("budget_action", kBudgetActions, std::optional(BudgetAction::kHold));
}

}  // namespace

const char* budget_action_name(BudgetAction a) { return enum_name(kBudgetActions, a); }

int64_t Quota::gpu_limit(const std::string& model_id) const {
  auto it = gpus_per_model.find(model_id);
  if (it == gpus_per_model.end()) it = gpus_per_model.find(kAnyGpuModel);
  return it == gpus_per_model.end() ? 0 : it->second;
}

Result<Quota> parse_quota(const json& body, Currency currency, const std::string& path) {
  FieldErrors errs;
  Fields f(body, path, errs);
  Quota q;
  if (f.valid_object()) {
    read_quota(f, currency, q);
    f.finish();
  }
  if (!errs.empty()) return errs.to_error();
  return q;
}

Result<Project> parse_project(const json& body, Currency currency) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Project p;
  p.name = f.str("name", {.max_len = 63, .pattern = kSlug, .pattern_help = kSlugHelp});
  p.tenant = f.opt_str("tenant", {.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp}).value_or("");
  p.display_name = f.opt_str("display_name", kDisplayNameRule).value_or(p.name);
  f.object("quota", false, [&](Fields& qf) { read_quota(qf, currency, p.quota); });
  ignore_server_keys(f);
  f.ignore({"tenant_id"});
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return p;
}

Result<Project> decode_project(const json& body, Currency currency) {
  return with_server_keys(parse_project(body, currency), body,
                          [](Fields& f, Project& p) { p.tenant_id = f.opt_str("tenant_id", kServerText).value_or(""); });
}

json to_json(const Quota& q) {
  json models = json::object();
  for (const auto& [k, v] : q.gpus_per_model) models[k] = v;
  json j = {{"gpus_per_model", models}, {"budget_action", budget_action_name(q.budget_action)}};
  put_opt(j, "max_gpus_per_job", q.max_gpus_per_job);
  put_opt(j, "max_concurrent_jobs", q.max_concurrent_jobs);
  put_opt_money(j, "monthly_budget", q.monthly_budget);
  return j;
}

json to_json(const Project& p) {
  json j = {{"name", p.name}, {"display_name", p.display_name}, {"quota", to_json(p.quota)}};
  if (!p.tenant.empty()) j["tenant"] = p.tenant;
  if (!p.tenant_id.empty()) j["tenant_id"] = p.tenant_id;
  return j;
}

IndexCols index_of(const Project& p) {
  IndexCols c;
  c.name = p.name;
  c.tenant_id = p.tenant_id;
  return c;
}

}  // namespace gpurent
