// Project: a tenant's unit of work and of the resource and cost firewalls. Every job runs in a
// project; the project's quota bounds the GPUs its jobs may hold at once (per catalog GPU model),
// the size of one job, the number of jobs running together, and the money spent per month.
//
// A quota fails closed: a GPU model absent from gpus_per_model (and no "*" entry) gets 0 GPUs,
// so a new project runs nothing on GPUs until a tenant admin grants some.
// Value types and pure functions; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/money.h"
#include "model/resource.h"

namespace gpurent {

enum class BudgetAction {
  kAlert,  // notify when the monthly budget is reached; keep running and admitting
  kHold,   // notify, and admit no new jobs until the next month or a higher budget
};
const char* budget_action_name(BudgetAction a);

// Key in gpus_per_model that applies to every model not listed by name.
inline constexpr const char* kAnyGpuModel = "*";
inline constexpr int64_t kMaxQuotaGpus = 100000;
inline constexpr size_t kMaxQuotaModels = 256;

struct Quota {
  std::map<std::string, int64_t> gpus_per_model;  // catalog model id (or "*") -> GPUs held at once
  std::optional<int64_t> max_gpus_per_job;        // absent: bounded only by gpus_per_model
  std::optional<int64_t> max_concurrent_jobs;     // admitted + running; absent: unbounded
  std::optional<Money> monthly_budget;            // tenant's currency; absent: no budget
  BudgetAction budget_action = BudgetAction::kHold;

  // The GPU limit for one model: its own entry, else the "*" entry, else 0.
  int64_t gpu_limit(const std::string& model_id) const;

  bool operator==(const Quota&) const = default;
};

struct Project {
  std::string name;          // slug, unique within the tenant
  std::string tenant;        // reference as given (id or name); empty: the caller's tenant
  std::string display_name;  // defaults to name
  Quota quota;

  // Set by the server from the resolved reference (and from the stored record's column when a
  // document is loaded back); parse ignores the key.
  std::string tenant_id;

  bool operator==(const Project&) const = default;
};

// `currency` is the owning tenant's; budgets are stated in it. Body of POST /projects and PUT
// /projects/{id}.
Result<Project> parse_project(const json& body, Currency currency);
// Body of PUT /projects/{id}/quota; `path` prefixes the error fields ("" for a bare body,
// "quota" when nested).
Result<Quota> parse_quota(const json& body, Currency currency, const std::string& path);
// A stored project: parse_project + the server's tenant_id.
Result<Project> decode_project(const json& body, Currency currency);
json to_json(const Quota& q);
json to_json(const Project& p);
IndexCols index_of(const Project& p);

}  // namespace gpurent
