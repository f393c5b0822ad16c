// Supplier score: a due-diligence checklist (default items plus the operator's own, each with a
// weight, some must-have) and the supplier's measured history (monthly failure rate, response and
// restore times, performance attainment against the promised FP16 and NCCL floors), graded into a
// score 0..100 with its arithmetic; a failed or unanswered must-have item blocks the supplier; the
// eligible suppliers share the procurement in integer per-mille summing to exactly 1000, in
// proportion to their score above a floor and capped per supplier for resilience.
// derive_supplier_history() computes the history from what the platform records (measurements of
// the supplier's nodes — incidents with their first response, benchmarks —, the floors its offers
// promise) so the server can score live.
// Explanations (item names, evidence, the split, the steps) are message codes with arguments
// (core/message.h, src/messages/<lang>.json, codes advisor.suppliers.*), rendered by the caller.
// Rules and formulas: docs/advisor/suppliers.md. Pure and deterministic; value types,
// thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "advisor/advisor_step.h"
#include "core/clock.h"
#include "core/result.h"
#include "model/measurement.h"
#include "model/node.h"
#include "model/offer.h"
#include "model/supplier.h"

namespace gpurent {

using json = nlohmann::json;

// How an operator's item is checked against the supplier's answer.
enum class SupplierCheck { kYesNo, kAtMost, kAtLeast };
inline constexpr EnumEntry<SupplierCheck> kSupplierChecks[] = {
    {SupplierCheck::kYesNo, "yes_no"}, {SupplierCheck::kAtMost, "at_most"}, {SupplierCheck::kAtLeast, "at_least"}};

// Built-in items (evaluated from the Supplier record and the history) have these ids:
// gpu_supply_30d, allreduce_120ms, fault_30m_restore_2h, cuda_7d, iso27001_mlps3, exit_path_tested.
struct SupplierChecklistItem {
  std::string id;      // slug, unique
  Message text;        // its name: a catalogue code (built-in items), verbatim(name) (the operator's)
  int64_t weight = 0;  // points, 0..100
  bool must_have = false;
  bool builtin = false;
  SupplierCheck check = SupplierCheck::kYesNo;  // operator items
  int64_t threshold = 0;                        // at_most / at_least
  std::string unit;
};

// A graded history criterion: full credit (1000‰) at `good` or better, none at `bad` or worse,
// linear between (lower is better when good < bad). Ids: failure_rate (basis points a month),
// restore_time (minutes), response_time (minutes), fp16_attainment and nccl_attainment (‰).
struct SupplierHistoryRule {
  std::string id;
  int64_t weight = 0;
  int64_t good = 0, bad = 0;
};

// What the supplier's record shows over a window. Every figure is absent until there is evidence.
struct SupplierHistory {
  std::optional<int64_t> monthly_failure_rate_bp;   // failed GPUs per 730-hour month, basis points of the fleet
  std::optional<int64_t> response_minutes;          // mean first response: incidents' responded_at − from, else entered
  std::optional<int64_t> restore_minutes;           // mean outage duration
  std::optional<int64_t> max_restore_minutes;       // longest outage, rounded up
  std::optional<int64_t> fp16_attainment_permille;  // Σ measured ÷ Σ promised FP16 TFLOPS of benchmarked cards
  std::optional<int64_t> nccl_attainment_permille;  // time-weighted measured ÷ promised NCCL bus bandwidth
  std::optional<int64_t> worst_nccl_busbw_gbps;     // lowest NCCL bus bandwidth measured
  std::optional<int64_t> allreduce_8gpu_1gb_ms;     // entered; a measured worst_nccl_busbw_gbps takes precedence
  // Evidence behind the derived figures.
  int64_t fleet_gpus = 0, incidents = 0, benchmarks = 0, nccl_runs = 0;
  std::vector<std::string> entered;  // names of the figures typed in rather than derived (merge_history)

  bool operator==(const SupplierHistory&) const = default;
};

// Fills every figure `measured` lacks from `entered` (measurements beat what someone typed in) and
// lists the names of the figures so filled in `entered`.
SupplierHistory merge_history(SupplierHistory measured, const SupplierHistory& entered);

struct SupplierNodeRecord {
  std::string id;  // the server's node id (measurements may name a node by id or by name)
  Node node;
};

// The history over [from, to) from the supplier's nodes, its offers (the floors they promise for
// the nodes they cover) and the measurements recorded on those nodes; other measurements are ignored.
Result<SupplierHistory> derive_supplier_history(const std::vector<SupplierNodeRecord>& nodes,
                                                const std::vector<Offer>& offers,
                                                const std::vector<Measurement>& measurements, TimeMs from, TimeMs to);

struct SupplierCandidate {
  Supplier supplier;
  std::map<std::string, int64_t> answers;  // operator items: yes_no 1/0, else the figure
  SupplierHistory history;
};

struct SupplierSplitRule {
  int64_t floor = 60;    // score a supplier must exceed to get a share
  int64_t cap_pct = 60;  // the most any one supplier gets
};

struct SupplierScoreInput {
  std::vector<SupplierChecklistItem> checklist;
  std::vector<SupplierHistoryRule> history_rules;
  std::vector<SupplierCandidate> suppliers;
  SupplierSplitRule split;
};

std::vector<SupplierChecklistItem> default_supplier_checklist();  // 60 points
std::vector<SupplierHistoryRule> default_history_rules();         // 40 points

// Body: {"checklist": {"use_defaults", "overrides": {id: {weight, must_have}}, "items": [...]},
//        "history_rules": {id: {weight, good, bad}}, "split": {"floor", "cap_pct"},
//        "suppliers": [{"supplier": object | "name", "answers": {...}, "history": {...}}]}.
// A supplier named by a string is one of `known` (the server's, with measured history); a
// "history" given for it only fills the figures not measured.
// At most `max_suppliers` suppliers (50 for a list the caller wrote; the server passes the
// platform's count when it fills in every supplier itself).
Result<SupplierScoreInput> parse_supplier_score_input(const json& body,
                                                      const std::vector<SupplierCandidate>& known = {},
                                                      size_t max_suppliers = 50);

// kPartial: a graded history criterion between its good and bad marks.
enum class SupplierItemStatus { kPass, kPartial, kFail, kUnknown };
inline constexpr EnumEntry<SupplierItemStatus> kSupplierItemStatuses[] = {{SupplierItemStatus::kPass, "pass"},
                                                                          {SupplierItemStatus::kPartial, "partial"},
                                                                          {SupplierItemStatus::kFail, "fail"},
                                                                          {SupplierItemStatus::kUnknown, "unknown"}};

struct SupplierItemResult {
  std::string id;
  Message text;          // the item's name
  bool history = false;  // a graded history criterion (else a checklist item)
  int64_t weight = 0;
  bool must_have = false;
  SupplierItemStatus status = SupplierItemStatus::kUnknown;
  int64_t credit_permille = 0;
  std::string source;  // measured | entered | declared | answer | none (or "a+b" for two-part items)
  Message evidence;
};

// One line of the arithmetic shown to the user, with its formula (plain arithmetic) and value.
using SupplierStep = AdvisorStep;

struct SupplierScore {
  std::string name, display_name;
  std::vector<SupplierItemResult> items;   // checklist items, then history criteria
  int64_t score_x10 = 0;                   // 0..1000 = 0.0..100.0
  bool blocked = false;                    // a must-have item failed or is unanswered
  std::vector<std::string> hard_failures;  // ids of those items
  bool eligible = false;                   // not blocked and score above the floor
  int64_t share_permille = 0;
  SupplierHistory history;
};

struct SupplierScoreResult {
  std::vector<SupplierScore> suppliers;  // by score (highest first), then name
  int64_t floor_x10 = 0;
  int64_t cap_permille = 0;            // as asked
  int64_t effective_cap_permille = 0;  // raised to ceil(1000 / eligible) when too few suppliers qualify
  Message split;                       // how the procurement is shared (or why it is not)
  std::vector<SupplierStep> steps;
};

Result<SupplierScoreResult> compute_supplier_score(const SupplierScoreInput& in);
json to_json(const SupplierHistory& h);
// {"suppliers":[{name, score, score_x10, blocked, hard_failures, eligible, share_permille, share_pct,
//   items:[{id, text, text_message, kind, ..., evidence, evidence_message}], history}],
//  "split":{floor, cap_pct, effective_cap_pct, text, text_message},
//  "steps":[{text, text_message, formula, value}]}: every text in English, its code beside it.
json to_json(const SupplierScoreResult& r);

}  // namespace gpurent
