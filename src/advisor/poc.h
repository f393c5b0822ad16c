// POC acceptance plan: the 48-hour proof of concept a tenant runs on each shortlisted supplier —
// environment (driver/CUDA/image, RDMA), benchmarks (FP16 GEMM, NCCL all-reduce, storage), the
// tenant's own model against its baseline throughput, fault injection (kill a node: detection and
// restore time) and operations (ticket response, monitoring, export/exit) — as a checklist per
// supplier with hour slots, pass criteria and the recorded results, and a verdict:
//   reject  when the model runs MORE than max_slowdown_pct (10%) slower than the baseline, whatever
//           the price and whatever else is pending (exactly 10% slower is not rejected), or when a
//           recorded must-pass item failed;
//   pending when a must-pass item has no result yet;
//   accept  when every must-pass item passed.
// Figures are exact: decimals with up to 3 places held as integers in millionths ("micro" units).
// Rules and schema: docs/advisor/poc.md. Pure and deterministic; value types, thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "advisor/advisor_step.h"
#include "core/clock.h"
#include "core/fields.h"
#include "core/result.h"

namespace gpurent {

using json = nlohmann::json;

enum class PocCheck { kYes, kAtLeast, kAtMost };
inline constexpr EnumEntry<PocCheck> kPocChecks[] = {
    {PocCheck::kYes, "yes"}, {PocCheck::kAtLeast, "at_least"}, {PocCheck::kAtMost, "at_most"}};

// One line of the plan. Item ids: env_driver_cuda, env_rdma, bench_fp16_gemm, bench_nccl,
// bench_storage, model_throughput, fault_detect, fault_restore, ops_ticket_response,
// ops_monitoring, ops_export_exit.
struct PocItem {
  std::string id;
  std::string category;                // environment | benchmarks | model | fault_injection | operations
  int64_t hour_from = 0, hour_to = 0;  // slot within the 48 hours
  Message text;                        // what to do (advisor.poc.item.<id>)
  Message criterion;                   // the pass criterion (advisor.poc.criterion.<id>)
  PocCheck check = PocCheck::kYes;
  int64_t threshold_micro = 0;  // at_least / at_most, in `unit` × 10^6
  std::string unit;
  bool must_pass = true;
};

// A recorded result: `passed` for yes items, `value_micro` for figures.
struct PocRecord {
  std::optional<bool> passed;
  std::optional<int64_t> value_micro;
  std::string note;
};

struct PocModel {
  std::string name;
  std::string metric = "samples/s";  // unit of throughput (higher is better)
  int64_t baseline_micro = 0;        // > 0
  std::string baseline_note;         // where the baseline was measured
};

struct PocSupplier {
  std::string name;  // slug, unique
  std::string gpu_model;
  int64_t gpus = 8;
  std::optional<std::string> driver, cuda, image;  // what the supplier promised
  int64_t fp16_tflops_micro = 0;                   // pass marks (from the supplier's promise or the plan's thresholds)
  int64_t nccl_busbw_micro = 0;                    // GB/s
  int64_t storage_gbps_micro = 0;                  // GB/s
  std::map<std::string, PocRecord> results;        // by item id
};

struct PocThresholds {
  int64_t fault_detect_minutes = 30;
  int64_t restore_minutes = 120;
  int64_t ticket_response_minutes = 30;
};

struct PocInput {
  std::optional<TimeMs> start;  // when hour 0 is; slots get absolute times
  PocModel model;
  int64_t max_slowdown_pct = 10;
  PocThresholds thresholds;
  std::map<std::string, bool> must_pass;  // overrides by item id (not model_throughput: that rule always holds)
  std::vector<PocSupplier> suppliers;
};

// Body: {"start", "model": {...}, "max_slowdown_pct", "thresholds": {...}, "must_pass": {...},
//        "suppliers": [{"name", "gpu_model", "gpus", "driver", "cuda", "image", "fp16_tflops",
//                       "nccl_busbw_gbps", "storage_gbps", "results": {id: {"passed"|"value", "note"}}}]}.
Result<PocInput> parse_poc_input(const json& body);

// The plan for one supplier, in slot order.
std::vector<PocItem> poc_plan_items(const PocInput& in, const PocSupplier& s);

enum class PocStatus { kPass, kFail, kPending };
inline constexpr EnumEntry<PocStatus> kPocStatuses[] = {
    {PocStatus::kPass, "pass"}, {PocStatus::kFail, "fail"}, {PocStatus::kPending, "pending"}};
enum class PocVerdict { kAccept, kReject, kPending };
inline constexpr EnumEntry<PocVerdict> kPocVerdicts[] = {
    {PocVerdict::kAccept, "accept"}, {PocVerdict::kReject, "reject"}, {PocVerdict::kPending, "pending"}};

struct PocOutcome {
  PocItem item;
  std::optional<PocRecord> record;
  PocStatus status = PocStatus::kPending;
};

struct PocSupplierPlan {
  std::string name;
  std::vector<PocOutcome> items;
  PocVerdict verdict = PocVerdict::kPending;
  Message reason;                            // why the verdict (advisor.poc.reason.*)
  std::optional<int64_t> slowdown_bp;        // (baseline − measured) ÷ baseline, basis points; negative: faster
  std::vector<std::string> failed, pending;  // must-pass item ids
  std::vector<std::string> caveats;          // optional items that failed or are pending
};

// One line of the arithmetic shown to the user, as a message code, with its formula.
using PocStep = AdvisorStep;

struct PocResult {
  std::optional<TimeMs> start;
  PocModel model;
  int64_t max_slowdown_pct = 10;
  std::vector<PocSupplierPlan> suppliers;  // input order
  std::vector<PocStep> steps;
};

Result<PocResult> compute_poc(const PocInput& in);
// {"model", "max_slowdown_pct", "suppliers": [{name, verdict, reason, reason_message, slowdown_pct,
//   failed, pending, caveats, items:[{id, category, hours:{from,to}, at?, text, text_message, criterion,
//   criterion_message, check, threshold, unit, must_pass, result?, status}]}],
//   "summary": {accept, reject, pending}, "steps": [{text, text_message, formula, value}]}.
// Texts are English; the server renders each `X` beside an `X_message` in the reader's language.
json to_json(const PocResult& r);

}  // namespace gpurent
