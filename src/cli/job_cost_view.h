// How the CLI shows a job's cost (GET /api/v1/jobs/{ref}/cost): the runs it was billed under
// (offer, supplier, billing mode, unit price and currency, nodes by name) and what it has cost so
// far per currency, charges and credits apart. Used by `jobs get` (after the placement) and
// `jobs cost`. Stateless; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

namespace gpurent {

using json = nlohmann::json;

// "Billed under (N runs):" and a table of the cost document's allocations.
void print_job_runs(std::ostream& out, const json& cost);
// One "charges X  credits Y  total Z CUR" line per currency (indented), or "nothing billed yet".
void print_job_cost_totals(std::ostream& out, const json& cost, size_t indent);
// The whole `jobs cost` view: job and period, each currency's lines then its sums, the runs.
void print_job_cost(std::ostream& out, const json& cost);
// A copy of `job` whose placement names its nodes (node ids replaced by the names the cost
// document's allocations carry; an id no allocation names stays as it is).
json with_node_names(const json& job, const json& cost);

}  // namespace gpurent
