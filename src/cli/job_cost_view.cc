#include "cli/job_cost_view.h"

#include <map>
#include <string>
#include <vector>

#include "cli/output.h"
#include "core/money.h"
#include "cli/views.h"

namespace gpurent {
namespace {

std::string job_cost_text(const json& doc, std::string_view path) { return cell_text(at_path(doc, path)); }

const json& items(const json& doc, const char* key) {
  static const json kEmpty = json::array();
  const json& v = at_path(doc, key);
  return v.is_array() ? v : kEmpty;
}

// "n1:0-3, n2:0-3": each node by name with its GPU indexes.
std::string nodes_cell(const json& nodes) {
  std::string out;
  if (!nodes.is_array()) return out;
  for (const auto& n : nodes) {
    std::vector<int64_t> gpus;
    for (const auto& g : items(n, "gpus"))
      if (g.is_number_integer()) gpus.push_back(g.get<int64_t>());
    std::string name = job_cost_text(n, "node");
    if (name.empty()) name = job_cost_text(n, "node_id");
    out += (out.empty() ? "" : ", ") + printable(name) + (gpus.empty() ? "" : ":" + index_ranges(gpus));
  }
  return out;
}

// "on_demand"; "spot (on_demand price)" when the run is rated at another price than its mode's.
std::string mode_cell(const json& a) {
  const std::string mode = job_cost_text(a, "billing_mode"), basis = job_cost_text(a, "price_basis");
  return basis.empty() || basis == mode ? mode : mode + " (" + basis + " price)";
}

// "charges X  credits Y  total Z CUR", and the GPU time a reserved commitment covered when there
// was some (its value is billed with the commitment, so it is not in the total).
void print_currency_sums(std::ostream& out, const json& c, const std::string& cur, const std::string& pad) {
  out << pad << "charges " << job_cost_text(c, "charges") << "  credits " << job_cost_text(c, "credits") << "  total " << job_cost_text(c, "total")
      << " " << cur << "\n";
  std::string covered = job_cost_text(c, "reserved_covered_value");
  if (covered.find_first_not_of("0.") == std::string::npos) return;
  // Derived micro-exact: shown to the cent, half to even, as the dashboard shows it.
  auto currency = parse_currency(cur);
  auto exact = currency ? Money::parse(covered, *currency) : Result<Money>(currency.error());
  if (exact) covered = exact->round_to_cents().amount_string();
  out << pad << "covered by a reserved commitment: " << covered << " " << cur
      << " (billed with the commitment, not in the total)\n";
}

}  // namespace

void print_job_runs(std::ostream& out, const json& cost) {
  const json& runs = items(cost, "allocations");
  if (runs.empty()) {
    out << "\nBilled under: nothing yet (the job has not run)\n";
    return;
  }
  out << "\nBilled under (" << runs.size() << (runs.size() == 1 ? " run" : " runs") << "):\n";
  Table t({{"OFFER"},
           {"SUPPLIER"},
           {"MODE"},
           {"PRICE/GPU-HOUR", Align::kRight},
           {"CURRENCY"},
           {"RUNNING_AT"},
           {"ENDED_AT"},
           {"NODES"}});  // last: a gang's node list may be long
  bool unpriced = false;
  for (const auto& a : runs) {
    if (at_path(a, "offer").is_null()) unpriced = true;
    t.add_row({printable(job_cost_text(a, "offer")), printable(job_cost_text(a, "supplier")), mode_cell(a), job_cost_text(a, "unit_price"),
               job_cost_text(a, "currency"), job_cost_text(a, "running_at"),
               at_path(a, "ended_at").is_null() ? "running" : job_cost_text(a, "ended_at"), nodes_cell(at_path(a, "nodes"))});
  }
  t.print(out, 2);
  if (unpriced) out << "  note: a run without an offer ran on nodes no offer sells; it is not billed\n";
}

void print_job_cost_totals(std::ostream& out, const json& cost, size_t indent) {
  const json& costs = at_path(cost, "costs");
  const std::string pad(indent, ' ');
  if (!costs.is_object() || costs.empty()) {
    out << pad << "nothing billed yet\n";
    return;
  }
  for (const auto& [cur, c] : costs.items()) print_currency_sums(out, c, cur, pad);
}

void print_job_cost(std::ostream& out, const json& cost) {
  KvList head;
  head.emplace_back("job", job_cost_text(cost, "job") + " (project " + job_cost_text(cost, "project") + ")");
  head.emplace_back("period", job_cost_text(cost, "period/from") + " .. " + job_cost_text(cost, "period/to"));
  if (at_path(cost, "period_capped") == json(true))
    head.emplace_back(
        "note", "submitted " + job_cost_text(cost, "job_created_at") +
                    ": only the last 400 days are rated (`gpurent invoices show --from --to` reads earlier periods)");
  print_kv(out, head);
  const json& costs = at_path(cost, "costs");
  if (costs.is_object())
    for (const auto& [cur, c] : costs.items()) {
      out << "\n" << cur << "\n";
      Table t({{"KIND"},
               {"RULE"},
               {"OFFER"},
               {"MODE"},
               {"QUANTITY", Align::kRight},
               {"UNIT"},
               {"UNIT PRICE", Align::kRight},
               {"PER"},
               {"AMOUNT", Align::kRight}});
      for (const auto& l : items(c, "lines"))
        t.add_row({job_cost_text(l, "kind"), job_cost_text(l, "rule"), printable(job_cost_text(l, "offer")), job_cost_text(l, "billing_mode"),
                   job_cost_text(l, "quantity"), job_cost_text(l, "unit"), job_cost_text(l, "unit_price"), job_cost_text(l, "price_unit"),
                   job_cost_text(l, "amount")});
      t.print(out, 2);
      print_currency_sums(out, c, cur, "  ");
    }
  if (!costs.is_object() || costs.empty()) out << "\nnothing billed yet\n";
  print_job_runs(out, cost);
}

json with_node_names(const json& job, const json& cost) {
  std::map<std::string, std::string> names;
  for (const auto& a : items(cost, "allocations"))
    for (const auto& n : items(a, "nodes"))
      if (!job_cost_text(n, "node_id").empty() && !job_cost_text(n, "node").empty()) names[job_cost_text(n, "node_id")] = job_cost_text(n, "node");
  json out = job;
  json* placement = nullptr;
  if (out.is_object() && out.contains("status") && out["status"].is_object() && out["status"].contains("placement"))
    placement = &out["status"]["placement"];
  if (!placement || !placement->is_array()) return out;
  for (auto& w : *placement)
    if (w.is_object() && w.contains("node") && w["node"].is_string())
      if (auto it = names.find(w["node"].get<std::string>()); it != names.end()) w["node"] = it->second;
  return out;
}

}  // namespace gpurent
