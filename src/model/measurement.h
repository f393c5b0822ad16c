// Measurement: a fact about a supplier's hardware that contract clauses turn into credits
// (docs/billing.md) — a card's dense FP16 benchmark (`fp16_tflops`, holds from `at` until the
// card's next one), a node's NCCL all-reduce bus bandwidth over [from, to) (`nccl_busbw`), or an
// outage of a node over [from, to) (`incident`, optionally with `responded_at`: when the supplier
// first responded, which the advisor averages into a response time). Operators and the node's
// supplier record them; everyone who can see the node reads them. They are append-only: a wrong
// one is corrected by a new record naming it (`corrects`), which readers (invoices, the supplier
// score) use in its place; each carries how it was measured (`method`), its raw `evidence` and who
// recorded it. A tenant's admin may file one about a node its jobs ran on: a dispute (`status`
// disputed, `tenant_id` the filer) that counts toward credits only once the node's supplier or an
// operator accepts it (accepted; or rejected, with a note); operators' and suppliers' own records
// are `recorded` and count at once — except a supplier's correction of a measurement it did not
// type in itself, a dispute only an operator resolves. Schema: docs/resources/measurements.md.
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

enum class MeasurementStatus { kRecorded, kDisputed, kAccepted, kRejected };
inline constexpr EnumEntry<MeasurementStatus> kMeasurementStatusNames[] = {{MeasurementStatus::kRecorded, "recorded"},
                                                                           {MeasurementStatus::kDisputed, "disputed"},
                                                                           {MeasurementStatus::kAccepted, "accepted"},
                                                                           {MeasurementStatus::kRejected, "rejected"}};

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
  // Set by the server: recorded (an operator's or the supplier's), or a tenant's dispute and its
  // outcome; tenant_id is the tenant that filed it ("" otherwise).
  MeasurementStatus status = MeasurementStatus::kRecorded;
  std::string tenant_id;
  std::string resolved_by;          // accepted or rejected by (user id)
  std::optional<TimeMs> resolved_at;
  std::string resolution_note;
  // Set by the server: the acceptance run (acr_…) that made it (docs/acceptance.md); "" otherwise.
  std::string acceptance_run;
  bool operator==(const Measurement&) const = default;
};

// Whether a stored measurement's body counts toward credits and scores: recorded, or a dispute
// that was accepted (a pending or rejected dispute does not).
inline bool measurement_counts(const json& body) {
  if (!body.is_object()) return false;
  auto it = body.find("status");
  if (it == body.end() || !it->is_string()) return true;  // stored before disputes: recorded
  const auto& s = it->template get_ref<const std::string&>();
  return s == "recorded" || s == "accepted";
}

// The ids that stored measurements (anything with a json `body`) that count correct: readers skip
// those and use the corrections.
template <class Records>
std::set<std::string> corrected_ids(const Records& records) {
  std::set<std::string> out;
  for (const auto& r : records)
    if (measurement_counts(r.body))
      if (auto it = r.body.find("corrects"); it != r.body.end() && it->is_string()) out.insert(it->template get<std::string>());
  return out;
}

Result<Measurement> parse_measurement(const json& body);
Result<Measurement> decode_measurement(const json& body);  // a stored one: parse_measurement + node_id
json to_json(const Measurement& m);  // includes node_id when set
IndexCols index_of(const Measurement& m);  // state = kind (filterable), supplier_id set by the server

}  // namespace gpurent
