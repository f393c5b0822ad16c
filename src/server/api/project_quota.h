// A project's quota as the API answers it (GET and PUT /api/v1/projects/{id}/quota): the quota,
// this month's spending against its monthly budget (the costs dashboard's burn-down,
// server/dashboard/costs.h), the budget hold in force, and — after a write — what a limit now
// below the project's present use means for its work. Also the budget re-check a quota change
// runs inside its own write (services/cost_firewall.h: recheck_budget), shared with POST and PUT
// /api/v1/projects. Route handlers' helpers: they read through app.store (any HTTP thread), and
// quota_recheck runs inside the writer's transaction.
#pragma once

#include <optional>
#include <vector>

#include "model/project.h"
#include "server/api/resources.h"

namespace gpurent {

// GET and PUT /api/v1/projects/{id}/quota (after the projects kind is registered).
void register_project_quota_routes(App& app, Router& srv);

// Checks every model of the quota against the catalog and rewrites aliases to catalog ids, so the
// scheduler and the submission checks compare like with like. `path` prefixes the error fields.
Status check_quota_models(Quota& q, const GpuCatalog& catalog, const std::string& path);

struct MonthToDate;  // services/cost_firewall.h

// Inside the write that stores `quota` for the project (id, name, tenant): when a cost firewall
// runs and the budget or its action differs from `before` (null: none readable), the firewall's
// budget rule for the project (services/cost_firewall.h recheck_budget), its hold set or lifted
// in the same transaction. Uses the tenant's month to date `rated` before the write, off the
// control loop; without it (a project just `created` has spent nothing) rates it here, inside the
// write, which only a race with another change of the budget should come to.
Status quota_recheck(App& app, StoreTx& tx, const std::string& tenant_id, const std::string& project_id,
                     const std::string& project, const Quota* before, const Quota& quota, bool created = false,
                     const MonthToDate* rated = nullptr);

// Before a write of the project's quota (off the control loop): the tenant's month to date when a
// cost firewall runs and `quota` changes the budget or its action from `before`; none otherwise.
Result<std::optional<MonthToDate>> rate_for_recheck(App& app, const std::string& tenant_id, const Quota* before,
                                                    const Quota& quota);

// What the caller of a write should know about the project's quota that is not an error: a GPU,
// concurrent-job or per-job limit below what its admitted and running jobs use, a budget its
// month-to-date spending has reached — each saying what happens to the work. Reads the store;
// a job that no longer decodes is reported and left out.
std::vector<Message> quota_warnings(App& app, const Record& project, const Quota& quota, Currency currency);

// The currency of a stored tenant (a 500 naming the record when it does not decode): its
// projects' budgets are in it.
Result<Currency> tenant_currency(const Record& tenant);

}  // namespace gpurent
