#include "model/offer_version.h"

#include "core/fields.h"

namespace gpurent {

bool pricing_differs(const nlohmann::json& before, const nlohmann::json& after) {
  for (const char* k : {"prices", "served_models", "fees", "min_increment_seconds", "currency"}) {
    const bool a = before.contains(k), b = after.contains(k);
    if (a != b || (a && before[k] != after[k])) return true;
  }
  return false;
}

nlohmann::json to_json(const OfferVersionRecord& v) {
  return {{"offer_id", v.offer_id},           {"version", v.version},
          {"from", format_rfc3339(v.from)},    {"until", format_rfc3339(v.until)},
          {"changed_by", v.changed_by},        {"sheet", v.sheet}};
}

Result<OfferVersionRecord> decode_offer_version(const nlohmann::json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  OfferVersionRecord v;
  v.offer_id = f.str("offer_id", {.min_len = 1, .max_len = 64});
  v.version = f.integer("version", 1, INT64_MAX);
  v.from = f.time("from");
  v.until = f.time("until");
  v.changed_by = f.str("changed_by", {.min_len = 0, .max_len = 64});
  if (const nlohmann::json* s = f.raw("sheet"); !s || !s->is_object())
    f.error("sheet", Message("field.object"));
  else
    v.sheet = *s;
  f.finish();
  if (!errs.empty()) return errs.to_error();
  if (v.until < v.from) return Error::invalid("until", Message("time.after_from"));
  return v;
}

}  // namespace gpurent
