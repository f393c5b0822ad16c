// An offer's earlier price sheet: when a supplier or operator changes an offer's prices, fee rules,
// served-model prices or minimum increment, the sheet in force until then is kept as an
// "offer-versions" record (written by the server in the same transaction as the change, never
// changed or removed), so usage is rated by the sheet in force when it happened
// (billing/rating_input.h offer_history). Value types; thread-compatible.
#pragma once

#include <cstdint>
#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "nlohmann/json.hpp"

namespace gpurent {

struct OfferVersionRecord {
  std::string offer_id;
  int64_t version = 1;     // the offer record's version that carried this sheet
  TimeMs from = 0;         // when the sheet took effect (the offer's creation or the previous change)
  TimeMs until = 0;        // when the next sheet replaced it
  std::string changed_by;  // the user whose change ended it
  nlohmann::json sheet;    // the offer's canonical document as it was (model/offer.h to_json)
};

// The keys of an offer's document whose change starts a new version (what rating reads).
bool pricing_differs(const nlohmann::json& before, const nlohmann::json& after);

nlohmann::json to_json(const OfferVersionRecord& v);
// Strictly by type; the sheet must be an object (parse_offer reads it where it is used).
Result<OfferVersionRecord> decode_offer_version(const nlohmann::json& body);

}  // namespace gpurent
