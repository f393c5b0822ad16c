// Offer price history in the store: the sheet an offer change replaces is kept as an
// "offer-versions" record (model/offer_version.h; state column = the offer's id), and invoices
// read the history back to rate usage by the sheet in force when it happened.
// Free functions; callers own the transaction or reader.
#pragma once

#include <string>
#include <vector>

#include "core/clock.h"
#include "model/offer_version.h"
#include "store/store.h"

namespace gpurent {

// Inside the transaction that replaces `before` (an offer record) with a body whose pricing
// differs: keeps `before`'s sheet as a version in force until `now`.
Status keep_offer_version(StoreTx& tx, const Record& before, const std::string& user_id, TimeMs now);

// The offer's earlier sheets, oldest first. A record that does not decode is an error.
Result<std::vector<OfferVersionRecord>> offer_versions(StoreReader& store, const std::string& offer_id);

}  // namespace gpurent
