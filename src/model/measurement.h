// Measurement: a fact about a supplier's hardware that contract clauses turn into credits
// (docs/billing.md) — a card's dense FP16 benchmark (`fp16_tflops`, holds from `at` until the
// card's next one), a node's NCCL all-reduce bus bandwidth over [from, to) (`nccl_busbw`), or an
// outage of a node over [from, to) (`incident`, optionally with `responded_at`: when the supplier
// first responded, which the advisor averages into a response time). Operators and the node's
// supplier record them; everyone who can see the node reads them. They are append-only: a wrong
// one is corrected by a new record naming it (`corrects`), which readers (invoices, the supplier
// score) use in its place; each carries how it was measured (`method`), its raw `evidence` and who
// recorded it. Schema: docs/resources/measurements.md.
// Value types and pure functions; thread-safe.
#pragma once

#include <optional>
#include <set>
#include <string>

#include "core/clock.h"
#include "model/resource.h"

namespace gpurent {

enum class MeasurementKind { kFp16Tflops, kNcclBusbw, kIncident };
inline constexpr EnumEntry<MeasurementKind> kMeasurementKindNames[] = {{MeasurementKind::kFp16Tflops, "fp16_tflops"},
                                                                       {MeasurementKind::kNcclBusbw, "nccl_busbw"},
                                                                       {MeasurementKind::kIncident, "incident"}};

enum class MeasurementMethod { kManual, kAcceptance, kDcgm };
inline constexpr EnumEntry<MeasurementMethod> kMeasurementMethodNames[] = {
    {MeasurementMethod::kManual, "manual"}, {MeasurementMethod::kAcceptance, "acceptance"}, {MeasurementMethod::kDcgm, "dcgm"}};

inline constexpr size_t kMaxEvidenceBytes = 64 * 1024;

struct Measurement {
  MeasurementKind kind = MeasurementKind::kFp16Tflops;
  std::string node;                 // reference as given (id or name)
  std::optional<int64_t> gpu;       // fp16_tflops: the card's index
  std::optional<TimeMs> at;         // fp16_tflops
  std::optional<TimeMs> from, to;   // nccl_busbw, incident
  std::optional<TimeMs> responded_at;  // incident, optional: first response, within [from, to]
  std::optional<int64_t> tflops_x10;  // fp16_tflops: "880.5" -> 8805
  std::optional<int64_t> busbw_gbps;  // nccl_busbw
  std::string note;                 // incident: the reason; otherwise free text ("nccl-tests 2.13, 8 GPUs, 1 GB")
  MeasurementMethod method = MeasurementMethod::kManual;  // how it was measured
  std::string evidence;             // the raw output it rests on (at most kMaxEvidenceBytes)
  std::optional<std::string> corrects;  // the id of the measurement this one replaces

  std::string node_id;      // set by the server
  std::string recorded_by;  // set by the server: the user who recorded it
  bool operator==(const Measurement&) const = default;
};

// The ids that stored measurements (anything with a json `body`) correct: readers skip those and
// use the corrections.
template <class Records>
std::set<std::string> corrected_ids(const Records& records) {
  std::set<std::string> out;
  for (const auto& r : records)
    if (r.body.is_object())
      if (auto it = r.body.find("corrects"); it != r.body.end() && it->is_string()) out.insert(it->template get<std::string>());
  return out;
}

Result<Measurement> parse_measurement(const json& body);
Result<Measurement> decode_measurement(const json& body);  // a stored one: parse_measurement + node_id
json to_json(const Measurement& m);  // includes node_id when set
IndexCols index_of(const Measurement& m);  // state = kind (filterable), supplier_id set by the server

}  // namespace gpurent
