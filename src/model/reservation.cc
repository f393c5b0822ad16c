#include "model/reservation.h"

#include "core/json_put.h"

#include "model/record_codec.h"

#include <set>

namespace gpurent {

Result<Reservation> parse_reservation(const json& body) {
  FieldErrors errs;
  Fields f(body, "", errs);
  if (!f.valid_object()) return errs.to_error();
  Reservation r;
  const StrRule ref{.max_len = 63, .pattern = kRefPattern, .pattern_help = kRefHelp};
  r.name = f.str("name", {.max_len = 63, .pattern = kSlug, .pattern_help = "pattern.reservation_name"});
  r.tenant = f.str("tenant", ref);
  const size_t before = errs.list().size();
  r.nodes = f.str_list("nodes", ref, /*required=*/true, kMaxReservedNodes);
  if (errs.list().size() == before) {
    if (r.nodes.empty()) f.error("nodes", Message("reservation.nodes.empty"));
    std::set<std::string> seen;
    for (size_t i = 0; i < r.nodes.size(); ++i)
      if (!seen.insert(r.nodes[i]).second) f.error("nodes[" + std::to_string(i) + "]", Message("reservation.nodes.listed_twice"));
  }
  const bool has_start = f.has("starts_at"), has_end = f.has("ends_at");
  const auto starts = f.opt_time("starts_at");
  const auto ends = f.opt_time("ends_at");
  if (!has_start) f.error("starts_at", Message("reservation.time_required").arg("example", "2026-12-01T00:00:00Z"));
  if (!has_end) f.error("ends_at", Message("reservation.time_required").arg("example", "2027-12-01T00:00:00Z"));
  if (starts && ends && *ends <= *starts) f.error("ends_at", Message("reservation.ends_before_start"));
  r.starts_at = starts.value_or(0);
  r.ends_at = ends.value_or(0);
  r.offer = f.opt_str("offer", ref);
  r.note = f.opt_str("note", {.max_len = 1024});
  ignore_server_keys(f);
  f.ignore({"tenant_id", "node_ids", "offer_id"});
  f.finish();
  if (!errs.empty()) return errs.to_error();
  return r;
}

Result<Reservation> decode_reservation(const json& body) {
  return with_server_keys(parse_reservation(body), body, [](Fields& f, Reservation& r) {
    r.tenant_id = f.opt_str("tenant_id", kServerText).value_or("");
    r.node_ids = f.str_list("node_ids", kServerText, false, kMaxReservedNodes);
    r.offer_id = f.opt_str("offer_id", kServerText).value_or("");
  });
}

json to_json(const Reservation& r) {
  json j = {{"name", r.name},
            {"tenant", r.tenant},
            {"nodes", r.nodes},
            {"starts_at", format_rfc3339(r.starts_at)},
            {"ends_at", format_rfc3339(r.ends_at)}};
  put_opt(j, "offer", r.offer);
  put_opt(j, "note", r.note);
  if (!r.tenant_id.empty()) j["tenant_id"] = r.tenant_id;
  if (!r.node_ids.empty()) j["node_ids"] = r.node_ids;
  if (!r.offer_id.empty()) j["offer_id"] = r.offer_id;
  return j;
}

IndexCols index_of(const Reservation& r) {
  IndexCols c;
  c.name = r.name;
  c.tenant_id = r.tenant_id;
  return c;
}

}  // namespace gpurent
