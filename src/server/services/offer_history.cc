#include "server/services/offer_history.h"

#include <algorithm>

#include "core/ids.h"
#include "server/services/record_faults.h"

namespace gpurent {
namespace {

template <class Reader>
Result<std::vector<OfferVersionRecord>> versions_of(Reader& r, const std::string& offer_id) {
  auto recs = list_all(r, "offer-versions", {{"state", offer_id}});
  if (!recs) return recs.error();
  std::vector<OfferVersionRecord> out;
  for (const Record& rec : *recs) {
    auto v = decode_record(rec, decode_offer_version, "the offer's price history cannot be read without it");
    if (!v) return v.error();
    out.push_back(std::move(*v));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const OfferVersionRecord& a, const OfferVersionRecord& b) { return a.until < b.until; });
  return out;
}

}  // namespace

Status keep_offer_version(StoreTx& tx, const Record& before, const std::string& user_id, TimeMs now) {
  auto prior = versions_of(tx, before.id);
  if (!prior) return prior.error();
  OfferVersionRecord v;
  v.offer_id = before.id;
  v.version = before.version;
  v.from = prior->empty() ? before.created_at : prior->back().until;
  v.until = std::max(now, v.from);
  v.changed_by = user_id;
  v.sheet = before.body;
  Record r;
  r.kind = "offer-versions";
  r.id = new_id("ofv");
  r.name = before.id + "@" + std::to_string(before.version);
  r.supplier_id = before.supplier_id;
  r.state = before.id;
  r.region = before.region;
  r.gpu_model = before.gpu_model;
  r.created_at = r.updated_at = now;
  r.version = 1;
  r.body = to_json(v);
  return tx.insert(r);
}

Result<std::vector<OfferVersionRecord>> offer_versions(StoreReader& store, const std::string& offer_id) {
  return versions_of(store, offer_id);
}

}  // namespace gpurent
